//! The model of a `#[tool]` function, built from the parsed item and its attributes.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, FnArg, Pat, ReturnType, Signature, Type, Visibility};

use super::attr::{ArgAttrs, ToolAttrs};
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

impl ItemFn {
    /// The function as the user wrote it, minus what only the macro reads: `#[arg]` and `///`
    /// on parameters, which rustc would reject there.
    pub(crate) fn to_plain_tokens(&self) -> TokenStream {
        let mut sig = self.sig.clone();
        for input in &mut sig.inputs {
            let attrs = match input {
                FnArg::Typed(pat_type) => &mut pat_type.attrs,
                FnArg::Receiver(receiver) => &mut receiver.attrs,
            };
            attrs.retain(|a| !a.path().is_ident("arg") && !a.path().is_ident("doc"));
        }
        let attrs = &self.attrs;
        let vis = &self.vis;
        let body = &self.body;
        quote::quote! { #(#attrs)* #vis #sig #body }
    }
}

/// One parameter of a tool function.
pub(crate) struct Param<'a> {
    pub(crate) pat: &'a Pat,
    pub(crate) ty: &'a Type,
    /// The name in the arguments object: the identifier, or `#[arg(rename)]`.
    pub(crate) wire_name: String,
    pub(crate) description: Option<String>,
    pub(crate) attrs: ArgAttrs,
}

/// A `#[tool]` function: the model every check and the expansion read.
pub(crate) struct Tool<'a> {
    pub(crate) original: &'a ItemFn,
    pub(crate) attrs: ToolAttrs,
    /// The tool's wire name and the span to blame for it.
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) description: Option<String>,
    pub(crate) params: Vec<Param<'a>>,
    /// The return type; `()` when there is none.
    pub(crate) output: Type,
    pub(crate) is_async: bool,
}

impl<'a> Tool<'a> {
    pub(crate) fn from_ast(cx: &Ctxt, attrs: ToolAttrs, item: &'a ItemFn) -> Self {
        let (name, name_span) = match &attrs.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (unraw(&item.sig.ident), item.sig.ident.span()),
        };
        let description = match &attrs.description {
            Some(lit) => Some(lit.value()),
            None => doc::text(&item.attrs),
        };
        let mut params = Vec::new();
        for input in &item.sig.inputs {
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
        let output = match &item.sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        };
        Self {
            original: item,
            attrs,
            name,
            name_span,
            description,
            params,
            output,
            is_async: item.sig.asyncness.is_some(),
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
    match pat {
        Pat::TupleStruct(tuple) => tuple
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Args"),
        _ => false,
    }
}
