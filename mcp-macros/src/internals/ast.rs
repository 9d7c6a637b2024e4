//! The model of an annotated function, built from the parsed item and its attributes: what every
//! check and every expansion reads.

use std::collections::BTreeMap;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, FnArg, Pat, ReturnType, Signature, Type, Visibility};

use super::attr::{ArgAttrs, PromptAttrs, ResourceAttrs, ToolAttrs};
use super::check;
use super::ctxt::Ctxt;
use super::doc;

/// A function item whose body is kept as raw tokens, as tokio-macros does: a body with a syntax
/// error still expands, so the user sees rustc's own message and nothing cascades.
pub(crate) struct ItemFn {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    pub(crate) body: TokenStream,
}

impl Parse for ItemFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        let body: TokenStream = input.parse()?;
        Ok(Self {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// Removes what only the macros read from a signature: `#[arg]` and `///` on parameters, which
/// rustc would reject there.
pub(crate) fn strip_param_attrs(sig: &mut Signature) {
    for input in &mut sig.inputs {
        let attrs = match input {
            FnArg::Typed(pat_type) => &mut pat_type.attrs,
            FnArg::Receiver(receiver) => &mut receiver.attrs,
        };
        attrs.retain(|a| !a.path().is_ident("arg") && !a.path().is_ident("doc"));
    }
}

impl ItemFn {
    /// The function as the user wrote it, minus the parameter attributes only the macro reads.
    pub(crate) fn to_plain_tokens(&self) -> TokenStream {
        let mut sig = self.sig.clone();
        strip_param_attrs(&mut sig);
        let attrs = &self.attrs;
        let vis = &self.vis;
        let body = &self.body;
        quote::quote! { #(#attrs)* #vis #sig #body }
    }
}

/// Which item a function is: the macro, and the word used in messages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Resource,
    Prompt,
}

impl Kind {
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Self::Tool => "#[tool]",
            Self::Resource => "#[resource]",
            Self::Prompt => "#[prompt]",
        }
    }

    /// The item's name in the runtime: `ToolDef`, `Item::Tool`.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Self::Tool => "Tool",
            Self::Resource => "Resource",
            Self::Prompt => "Prompt",
        }
    }

    pub(crate) fn noun(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
        }
    }
}

/// What the model reads from an item's attribute, whichever the item.
pub(crate) trait ItemAttrs {
    /// The item these attributes are for.
    const KIND: Kind;
    /// `name = ".."`: the wire name instead of the identifier.
    fn name(&self) -> Option<&syn::LitStr>;
    /// `description = ".."`: instead of the doc comments.
    fn description(&self) -> Option<&syn::LitStr>;
    /// `crate = ".."`: the path of the runtime.
    fn krate(&self) -> Option<&syn::Path>;
    /// The resource attribute, for the checks only a resource has.
    fn resource(&self) -> Option<&ResourceAttrs> {
        None
    }
    /// The tool attribute, for the checks only a tool has.
    fn tool(&self) -> Option<&ToolAttrs> {
        None
    }
}

impl ItemAttrs for ToolAttrs {
    const KIND: Kind = Kind::Tool;
    fn name(&self) -> Option<&syn::LitStr> {
        self.name.as_ref()
    }
    fn description(&self) -> Option<&syn::LitStr> {
        self.description.as_ref()
    }
    fn krate(&self) -> Option<&syn::Path> {
        self.krate.as_ref()
    }
    fn tool(&self) -> Option<&ToolAttrs> {
        Some(self)
    }
}

impl ItemAttrs for PromptAttrs {
    const KIND: Kind = Kind::Prompt;
    fn name(&self) -> Option<&syn::LitStr> {
        self.name.as_ref()
    }
    fn description(&self) -> Option<&syn::LitStr> {
        self.description.as_ref()
    }
    fn krate(&self) -> Option<&syn::Path> {
        self.krate.as_ref()
    }
}

impl ItemAttrs for ResourceAttrs {
    const KIND: Kind = Kind::Resource;
    fn name(&self) -> Option<&syn::LitStr> {
        self.name.as_ref()
    }
    fn description(&self) -> Option<&syn::LitStr> {
        self.description.as_ref()
    }
    fn krate(&self) -> Option<&syn::Path> {
        self.krate.as_ref()
    }
    fn resource(&self) -> Option<&ResourceAttrs> {
        Some(self)
    }
}

/// One `#[tool]`, `#[resource]` or `#[prompt]` function, free or in a `#[server]` impl: the one
/// model every check reads and every expansion writes out.
pub(crate) struct Item<'a, A> {
    pub(crate) attrs: A,
    pub(crate) function: Function<'a>,
    /// A resource's URI and variables; `None` for a tool or a prompt.
    pub(crate) template: Option<Template>,
}

impl<'a, A: ItemAttrs> Item<'a, A> {
    /// Models the function and runs every check on the model, recording problems in `cx`.
    /// `None` when the item is too broken to model (a resource without a URI).
    pub(crate) fn from_ast(
        cx: &Ctxt,
        attrs: A,
        sig: &'a Signature,
        fn_attrs: &[Attribute],
        in_impl: bool,
    ) -> Option<Self> {
        let function = Function::from_ast(
            cx,
            sig,
            fn_attrs,
            attrs.name(),
            attrs.description(),
            in_impl,
        );
        check::check_function(cx, A::KIND, &function);
        if let Some(tool) = attrs.tool() {
            check::check_tool(cx, tool, &function);
        }
        let template = match attrs.resource() {
            Some(resource) => Some(check::check_resource(cx, resource, &function)?),
            None => None,
        };
        Some(Self {
            attrs,
            function,
            template,
        })
    }
}

/// A resource's URI or URI template, and what each variable asks of its parameter.
pub(crate) struct Template {
    /// The literal, to expand and to point errors at.
    pub(crate) uri: syn::LitStr,
    /// The variables by name; empty for a static resource.
    pub(crate) variables: BTreeMap<String, Variable>,
}

/// What a template asks of the parameter bound to one of its variables. The macro cannot judge
/// a type by its spelling (an alias hides `Option`), so the expansion asks the compiler.
#[derive(Clone, Copy)]
pub(crate) struct Variable {
    /// `{name*}`: the parameter's type must be a list.
    pub(crate) explode: bool,
    /// `{?name}` or `{&name}` without `#[arg(default)]`: the type must allow absence.
    pub(crate) optional: bool,
}

/// One parameter of an annotated function.
pub(crate) struct Param<'a> {
    pub(crate) pat: &'a Pat,
    pub(crate) ty: &'a Type,
    /// The name on the wire: the identifier, or `#[arg(rename)]`.
    pub(crate) wire_name: String,
    pub(crate) description: Option<String>,
    pub(crate) attrs: ArgAttrs,
}

/// How the function is reached from generated code.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// A free function.
    None,
    /// An associated function of a `#[server]` impl, without `self`.
    Associated,
    /// A `&self` method of a `#[server]` impl.
    Ref,
}

/// An annotated function: name, docs, parameters, return type.
pub(crate) struct Function<'a> {
    pub(crate) sig: &'a Signature,
    /// The wire name and the span to blame for it.
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) description: Option<String>,
    pub(crate) params: Vec<Param<'a>>,
    /// The return type; `()` when there is none.
    pub(crate) output: Type,
    pub(crate) is_async: bool,
    pub(crate) receiver: Receiver,
}

impl<'a> Function<'a> {
    /// `name` and `description` override the identifier and the doc comments.
    pub(crate) fn from_ast(
        cx: &Ctxt,
        sig: &'a Signature,
        fn_attrs: &[Attribute],
        name: Option<&syn::LitStr>,
        description: Option<&syn::LitStr>,
        in_impl: bool,
    ) -> Self {
        let (name, name_span) = match name {
            Some(lit) => (lit.value(), lit.span()),
            None => (unraw(&sig.ident), sig.ident.span()),
        };
        let description = match description {
            Some(lit) => Some(lit.value()),
            None => doc::text(fn_attrs),
        };
        let mut params = Vec::new();
        for input in &sig.inputs {
            let FnArg::Typed(pat_type) = input else {
                continue;
            };
            let arg = ArgAttrs::from_attrs(cx, &pat_type.attrs);
            let wire_name = match (&arg.rename, &*pat_type.pat) {
                (Some(rename), _) => rename.value(),
                (None, Pat::Ident(ident)) => unraw(&ident.ident),
                (None, other) => other.to_token_stream().to_string(),
            };
            let description = match &arg.description {
                Some(lit) => Some(lit.value()),
                None => doc::text(&pat_type.attrs),
            };
            params.push(Param {
                pat: &pat_type.pat,
                ty: &pat_type.ty,
                wire_name,
                description,
                attrs: arg,
            });
        }
        let output = match &sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        };
        let receiver = match (in_impl, sig.receiver()) {
            (false, _) => Receiver::None,
            (true, None) => Receiver::Associated,
            (true, Some(_)) => Receiver::Ref,
        };
        Self {
            sig,
            name,
            name_span,
            description,
            params,
            output,
            is_async: sig.asyncness.is_some(),
            receiver,
        }
    }
}

/// An identifier as written on the wire: `r#type` is `type`.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// Whether a pattern is `Args(..)` (any path ending in `Args`), the one destructuring pattern
/// that needs no wire name.
pub(crate) fn is_args_pattern(pat: &Pat) -> bool {
    is_tuple_struct(pat, "Args")
}

/// `Extension(x)`: a middleware extension taken apart; a context parameter, never on the wire.
pub(crate) fn is_extension_pattern(pat: &Pat) -> bool {
    is_tuple_struct(pat, "Extension")
}

fn is_tuple_struct(pat: &Pat, name: &str) -> bool {
    match pat {
        Pat::TupleStruct(tuple) => tuple.path.segments.last().is_some_and(|s| s.ident == name),
        _ => false,
    }
}

/// The last path segment of a type, when it is a plain path: `Option` for `Option<u8>`.
pub(crate) fn last_segment(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            path.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    }
}
