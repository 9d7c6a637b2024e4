//! The rules that span more than one attribute or token, each in one function, run on the model
//! before anything is expanded.

use std::collections::BTreeMap;

use syn::{FnArg, Pat, Type};

use super::ast::{Tool, is_args_pattern};
use super::ctxt::Ctxt;

pub(crate) fn check_tool(cx: &Ctxt, tool: &Tool<'_>) {
    check_name(cx, tool);
    check_signature(cx, tool);
    check_params(cx, tool);
    check_output(cx, tool);
}

/// Tool names: 1 to 64 characters of `A-Z a-z 0-9 _ - .` (SEP-986, and the length the
/// conformance suite checks).
fn check_name(cx: &Ctxt, tool: &Tool<'_>) {
    let name = &tool.name;
    let valid = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !valid {
        let reason = if name.is_empty() {
            "it is empty".to_owned()
        } else if name.len() > 64 {
            format!("it has {} characters", name.len())
        } else {
            let bad: String = name
                .chars()
                .filter(|c| !c.is_ascii_alphanumeric() && !"_-.".contains(*c))
                .collect();
            format!("`{bad}` is not allowed")
        };
        cx.syn_error(syn::Error::new(
            tool.name_span,
            format!("invalid tool name `{name}`: {reason}; use 1 to 64 characters of `A-Z a-z 0-9 _ - .`"),
        ));
    }
}

fn check_signature(cx: &Ctxt, tool: &Tool<'_>) {
    let sig = &tool.original.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "a `#[tool]` function cannot be generic: its argument and return types must be concrete to build its schemas",
        );
    }
    if let Some(receiver) = sig.receiver() {
        cx.error_spanned_by(
            receiver,
            "`self` is only allowed on a `#[tool]` inside a `#[server]` impl block; a free `#[tool]` function takes state from a context parameter",
        );
    }
    if sig.constness.is_some() {
        cx.error_spanned_by(sig.constness, "a `#[tool]` function cannot be `const`");
    }
    if let syn::Safety::Unsafe(_) = sig.safety {
        cx.error_spanned_by(&sig.safety, "a `#[tool]` function cannot be `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a `#[tool]` function cannot have an `extern` ABI");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "a `#[tool]` function cannot be variadic");
    }
}

fn check_params(cx: &Ctxt, tool: &Tool<'_>) {
    let mut names: BTreeMap<&str, ()> = BTreeMap::new();
    for input in &tool.original.sig.inputs {
        if let FnArg::Typed(pat_type) = input {
            check_param_type(cx, &pat_type.ty);
        }
    }
    for param in &tool.params {
        let plain = matches!(param.pat, Pat::Ident(_));
        if !plain && param.attrs.rename.is_none() && !is_args_pattern(param.pat) {
            cx.error_spanned_by(
                param.pat,
                "a destructured `#[tool]` parameter needs a name on the wire: add `#[arg(rename = \"...\")]`",
            );
            continue;
        }
        if let Some(rename) = param.attrs.rename.as_ref().filter(|r| r.value().is_empty()) {
            cx.error_spanned_by(rename, "an argument name cannot be empty");
        }
        if !is_args_pattern(param.pat) && names.insert(&param.wire_name, ()).is_some() {
            let at: &dyn quote::ToTokens = match &param.attrs.rename {
                Some(rename) => rename,
                None => param.pat,
            };
            cx.error_spanned_by(at, format!("duplicate argument name `{}`", param.wire_name));
        }
    }
}

fn check_param_type(cx: &Ctxt, ty: &Type) {
    match ty {
        Type::Reference(reference) => {
            let is_str = matches!(&*reference.elem, Type::Path(p) if p.path.is_ident("str"));
            let advice = if is_str {
                "use `String` instead of `&str`"
            } else {
                "use an owned type instead of a reference"
            };
            cx.error_spanned_by(
                ty,
                format!("`#[tool]` parameters are taken by value: {advice}"),
            );
        }
        Type::ImplTrait(_) => {
            cx.error_spanned_by(
                ty,
                "`impl Trait` cannot be a `#[tool]` parameter type; name a concrete type",
            );
        }
        _ => {}
    }
}

fn check_output(cx: &Ctxt, tool: &Tool<'_>) {
    if let Type::ImplTrait(_) = &tool.output {
        cx.error_spanned_by(
            &tool.output,
            "a `#[tool]` cannot return `impl Trait`; name the return type",
        );
    }
}
