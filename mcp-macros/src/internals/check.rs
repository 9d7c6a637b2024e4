//! The rules that span more than one attribute or token, each in one function, run on the model
//! before anything is expanded.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use mcp_uri_template::{Operator, Part};
use proc_macro2::Span;
use syn::{FnArg, Pat, Type};

use super::ast::{
    Function, Kind, Param, Receiver, Template, Variable, is_args_pattern, is_extension_pattern,
    last_segment,
};
use super::attr::{ResourceAttrs, ToolAttrs};
use super::ctxt::Ctxt;

/// Every check of a function, whatever the item.
pub(crate) fn check_function(cx: &Ctxt, kind: Kind, function: &Function<'_>) {
    if kind != Kind::Resource {
        check_name(cx, kind, function);
    }
    check_signature(cx, kind, function);
    check_params(cx, kind, function);
    if let Type::ImplTrait(_) = &function.output {
        cx.error_spanned_by(
            &function.output,
            format!(
                "a `{}` cannot return `impl Trait`; name the return type",
                kind.attr()
            ),
        );
    }
}

/// Names: 1 to 64 characters of `A-Z a-z 0-9 _ - .` (SEP-986, and the length the conformance
/// suite checks), for prompts as for tools.
fn check_name(cx: &Ctxt, kind: Kind, function: &Function<'_>) {
    let name = &function.name;
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
            function.name_span,
            format!(
                "invalid {} name `{name}`: {reason}; use 1 to 64 characters of `A-Z a-z 0-9 _ - .`",
                kind.noun()
            ),
        ));
    }
}

/// What only a tool is checked for: `inline` is for a sync function, since an `async fn`
/// already runs on the request's task.
pub(crate) fn check_tool(cx: &Ctxt, attrs: &ToolAttrs, function: &Function<'_>) {
    if let Some(ui) = &attrs.ui {
        let uri = ui.value();
        let rest = uri.strip_prefix("ui://").unwrap_or_default();
        if rest.is_empty() || uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
            cx.error_spanned_by(
                ui,
                format!(
                    "`ui` names an MCP Apps page by its `ui://` URI, for example `ui = \"ui://weather/view\"`; `{uri}` is not one"
                ),
            );
        }
    }
    if let Some(inline) = attrs.inline.as_ref().filter(|flag| flag.value)
        && function.is_async
    {
        cx.error_spanned_by(
            inline,
            "`inline` is for a sync `#[tool]`: an `async fn` already runs on the request's task; remove `inline`, or make the function sync",
        );
    }
}

fn check_signature(cx: &Ctxt, kind: Kind, function: &Function<'_>) {
    let sig = function.sig;
    let attr = kind.attr();
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            format!("a `{attr}` function cannot be generic: its parameter and return types must be concrete"),
        );
    }
    if let Some(receiver) = sig.receiver() {
        match function.receiver {
            Receiver::None => cx.error_spanned_by(
                receiver,
                format!("`self` is only allowed on a `{attr}` inside a `#[server]` impl block; a free `{attr}` function takes state from a context parameter"),
            ),
            _ => {
                let by_shared_ref =
                    matches!(&receiver.kind, syn::ReceiverKind::Reference(_, _, None)) && receiver.mutability.is_none();
                if !by_shared_ref {
                    cx.error_spanned_by(
                        receiver,
                        format!("a `{attr}` method takes `&self`: calls run concurrently, so mutable state needs a `Mutex` or an atomic inside"),
                    );
                }
            }
        }
    }
    if sig.constness.is_some() {
        cx.error_spanned_by(
            sig.constness,
            format!("a `{attr}` function cannot be `const`"),
        );
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        cx.error_spanned_by(token, format!("a `{attr}` function cannot be `unsafe`"));
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            format!("a `{attr}` function cannot have an `extern` ABI"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, format!("a `{attr}` function cannot be variadic"));
    }
}

fn check_params(cx: &Ctxt, kind: Kind, function: &Function<'_>) {
    let attr = kind.attr();
    for input in &function.sig.inputs {
        if let FnArg::Typed(pat_type) = input {
            check_param_type(cx, attr, &pat_type.ty);
        }
    }
    let mut names = BTreeSet::new();
    let mut headers = BTreeSet::new();
    for param in &function.params {
        if let Some(header) = &param.attrs.header {
            check_header(cx, kind, header, &mut headers);
        }
        let plain = matches!(param.pat, Pat::Ident(_));
        // `Args(x)` is the whole arguments object; `Extension(x)` is injected, not an argument.
        let args = (kind == Kind::Tool && is_args_pattern(param.pat))
            || (kind != Kind::Resource && is_extension_pattern(param.pat));
        if !plain && param.attrs.rename.is_none() && !args {
            cx.error_spanned_by(
                param.pat,
                format!("a destructured `{attr}` parameter needs a name on the wire: add `#[arg(rename = \"...\")]`"),
            );
            continue;
        }
        if let Some(rename) = param.attrs.rename.as_ref().filter(|r| r.value().is_empty()) {
            cx.error_spanned_by(rename, "an argument name cannot be empty");
        }
        if !args && !names.insert(param.wire_name.clone()) {
            let at: &dyn quote::ToTokens = match &param.attrs.rename {
                Some(rename) => rename,
                None => param.pat,
            };
            cx.error_spanned_by(at, format!("duplicate argument name `{}`", param.wire_name));
        }
        if kind == Kind::Tool
            && let Some(key) = &param.attrs.complete_key
        {
            cx.error_spanned_by(
                    key,
                    "`complete` is for `#[prompt]` arguments and `#[resource]` template variables; tool arguments are not completed",
                );
        }
    }
}

/// `#[arg(header = "Name")]`: a tool argument only, named by an HTTP token (RFC 9110), unique
/// without regard to case.
fn check_header(cx: &Ctxt, kind: Kind, header: &syn::LitStr, seen: &mut BTreeSet<String>) {
    if kind != Kind::Tool {
        cx.error_spanned_by(
            header,
            "`header` is for `#[tool]` arguments: it mirrors one in an `Mcp-Param-*` HTTP header",
        );
        return;
    }
    let name = header.value();
    let token = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if name.is_empty() {
        cx.error_spanned_by(header, "a header name cannot be empty");
    } else if !token {
        cx.error_spanned_by(
            header,
            format!(
                "`{name}` is not an HTTP header name: use letters, digits and ``!#$%&'*+-.^_`|~``"
            ),
        );
    } else if !seen.insert(name.to_ascii_lowercase()) {
        cx.error_spanned_by(
            header,
            format!("two arguments use the header `Mcp-Param-{name}`"),
        );
    }
}

fn check_param_type(cx: &Ctxt, attr: &str, ty: &Type) {
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
                format!("`{attr}` parameters are taken by value: {advice}"),
            );
        }
        Type::ImplTrait(_) => {
            cx.error_spanned_by(
                ty,
                format!("`impl Trait` cannot be a `{attr}` parameter type; name a concrete type"),
            );
        }
        _ => {}
    }
}

/// A resource: its URI is there, its template parses, template and parameters agree both ways
/// (every error points at the template), and `audience` names roles. `None` without a URI.
pub(crate) fn check_resource(
    cx: &Ctxt,
    attrs: &ResourceAttrs,
    function: &Function<'_>,
) -> Option<Template> {
    let Some(uri) = &attrs.uri else {
        cx.syn_error(syn::Error::new(
            Span::call_site(),
            "`#[resource]` needs its URI first: `#[resource(\"scheme://path/{variable}\")]`",
        ));
        return None;
    };
    if let Some(audience) = &attrs.audience {
        check_audience(cx, audience);
    }
    let variables = check_template(cx, uri, function, attrs);
    Some(Template {
        uri: uri.clone(),
        variables,
    })
}

/// `audience = ["user", "assistant"]`: a list of roles.
fn check_audience(cx: &Ctxt, expr: &syn::Expr) {
    let syn::Expr::Array(array) = expr else {
        cx.error_spanned_by(
            expr,
            "`audience` is a list: `audience = [\"user\", \"assistant\"]`",
        );
        return;
    };
    for elem in &array.elems {
        if role(elem).is_none() {
            cx.error_spanned_by(elem, "an audience is `\"user\"` or `\"assistant\"`");
        }
    }
}

/// A role an `audience` list may name.
pub(crate) enum Role {
    User,
    Assistant,
}

/// The role an element of an `audience` list names, if it is one.
pub(crate) fn role(elem: &syn::Expr) -> Option<Role> {
    match elem {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => match s.value().as_str() {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        },
        _ => None,
    }
}

/// Parses the template and checks it against the parameters, both ways; every error points at
/// the template.
fn check_template(
    cx: &Ctxt,
    uri: &syn::LitStr,
    function: &Function<'_>,
    attrs: &ResourceAttrs,
) -> BTreeMap<String, Variable> {
    let text = uri.value();
    let template = match mcp_uri_template::parse(&text) {
        Ok(template) => template,
        Err(error) => {
            let excerpt = &text[error.span.start.min(text.len())..error.span.end.min(text.len())];
            cx.syn_error(syn::Error::new(
                template_span(uri, error.span.clone()),
                format!("invalid URI template: {} (at `{excerpt}`)", error.message),
            ));
            return BTreeMap::new();
        }
    };
    let params: Vec<&Param<'_>> = function.params.iter().collect();
    let mut variables = BTreeMap::new();
    let mut after_expression = false;
    for part in &template.parts {
        let Part::Expression(expression) = part else {
            after_expression = false;
            continue;
        };
        // `{a}{b}`: a URI could not tell where `a` ends and `b` begins. An operator that
        // writes a prefix (`{/b}`, `{?b}`, ...) separates them; `{b}` and `{+b}` do not.
        if after_expression && expression.operator.prefix().is_empty() {
            cx.syn_error(syn::Error::new(
                template_span(uri, expression.span.clone()),
                format!(
                    "`{expression}` follows another expression with nothing between them, so a URI could not tell where one value ends: put a literal between them, such as `/` or `-`"
                ),
            ));
        }
        after_expression = true;
        for var in &expression.variables {
            let Some(param) = params.iter().find(|p| p.wire_name == var.name) else {
                cx.syn_error(syn::Error::new(
                    template_span(uri, expression.span.clone()),
                    format!("template variable `{}` has no parameter: add a parameter `{}: T` to the function", var.name, var.name),
                ));
                continue;
            };
            let query = matches!(
                expression.operator,
                Operator::Query | Operator::QueryContinuation
            );
            variables.insert(
                var.name.clone(),
                Variable {
                    explode: var.explode,
                    optional: query && param.attrs.default.is_none(),
                },
            );
        }
    }
    if template.is_static() && attrs.list.is_some() {
        cx.error_spanned_by(
            uri,
            "`list` is for URI templates; a URI without `{}` expressions is listed already",
        );
    }
    for param in &params {
        if variables.contains_key(&param.wire_name) {
            continue;
        }
        // Types that are certainly not context parameters: say so now, at the template.
        let plain = matches!(
            last_segment(param.ty).as_deref(),
            Some(
                "String"
                    | "Option"
                    | "Vec"
                    | "bool"
                    | "char"
                    | "u8"
                    | "u16"
                    | "u32"
                    | "u64"
                    | "u128"
                    | "usize"
                    | "i8"
                    | "i16"
                    | "i32"
                    | "i64"
                    | "i128"
                    | "isize"
                    | "f32"
                    | "f64"
                    | "PathBuf"
            )
        );
        if plain {
            cx.error_spanned_by(
                uri,
                format!(
                    "parameter `{}` is not a variable of the template `{text}`: add `{{{}}}` to the template, or remove the parameter",
                    param.wire_name, param.wire_name
                ),
            );
        }
        if let Some(key) = &param.attrs.complete_key {
            cx.error_spanned_by(
                key,
                "`complete` is for template variables; this parameter is not one",
            );
        }
    }
    variables
}

/// Where to point for bytes `range` of the template: just that `{...}` where the compiler can
/// point inside a string literal (`Literal::subspan`; stable compilers cannot yet) and the
/// literal is written out verbatim (an escape would shift the offsets); else the whole literal.
fn template_span(uri: &syn::LitStr, range: Range<usize>) -> Span {
    let token = uri.token();
    let source = token.to_string();
    let value = uri.value();
    // The value starts after the first `"`, also in `r"..."` and `r#"..."#`.
    let Some(start) = source.find('"').map(|quote| quote + 1) else {
        return uri.span();
    };
    if source.get(start..start + value.len()) != Some(value.as_str()) {
        return uri.span();
    }
    token
        .subspan(start + range.start..start + range.end)
        .unwrap_or_else(|| uri.span())
}
