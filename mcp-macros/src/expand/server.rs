//! `#[server]` on an impl block: its `#[tool]`, `#[resource]` and `#[prompt]` methods become the
//! items of one server, sharing `&self` as their state.
//!
//! The attribute runs before the inner ones would, takes them off the methods, and implements
//! `McpServer` for the type: `server_defaults` from the attribute (name and version defaulting to
//! the crate's), and `items`, which builds every definition around one shared `Arc<Self>`.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use super::common::runtime_path;
use super::prompt::{self, Prompt};
use super::resource::{self, Resource};
use super::tool::{self, Tool};
use super::wrap_in_const;
use crate::internals::ast::{Kind, strip_param_attrs};
use crate::internals::attr::{PromptAttrs, ResourceAttrs, ServerAttrs, ToolAttrs};
use crate::internals::ctxt::Ctxt;

/// The item a method attribute makes, by its last path segment (`#[mcp_runtime::tool]` too).
fn item_kind(attr: &syn::Attribute) -> Option<Kind> {
    let last = attr.path().segments.last()?.ident.to_string();
    match last.as_str() {
        "tool" => Some(Kind::Tool),
        "resource" => Some(Kind::Resource),
        "prompt" => Some(Kind::Prompt),
        _ => None,
    }
}

fn attr_args(attr: &syn::Attribute) -> TokenStream {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        _ => TokenStream::new(),
    }
}

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut item: syn::ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "`#[server]` goes on an impl block: `#[server] impl MyServer { .. }`",
            )
            .to_compile_error();
            return quote! { #error #input };
        }
    };
    let cx = Ctxt::new();
    let attrs = ServerAttrs::from_args(&cx, args);
    if let Some((path, _)) = &item.trait_ {
        cx.error_spanned_by(
            path,
            "`#[server]` goes on an inherent impl block, not a trait impl",
        );
    }
    if !item.generics.params.is_empty() {
        cx.error_spanned_by(&item.generics, "a `#[server]` impl block cannot be generic");
    }

    // Take the item attributes off the methods, keeping what each method said.
    let mut annotated = Vec::new();
    for impl_item in &mut item.items {
        let syn::ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let mut found: Vec<(Kind, syn::Attribute)> = Vec::new();
        method.attrs.retain(|attr| match item_kind(attr) {
            Some(kind) => {
                found.push((kind, attr.clone()));
                false
            }
            None => true,
        });
        if found.len() > 1 {
            cx.error_spanned_by(
                &found[1].1,
                "a method is one item: only one of `#[tool]`, `#[resource]` and `#[prompt]`",
            );
        }
        if let Some((kind, attr)) = found.into_iter().next() {
            annotated.push((kind, attr, method.sig.clone(), method.attrs.clone()));
            strip_param_attrs(&mut method.sig);
        }
    }

    let mut builds = Vec::new();
    for (kind, attr, sig, fn_attrs) in &annotated {
        let args = attr_args(attr);
        let build = match kind {
            Kind::Tool => Tool::from_ast(&cx, ToolAttrs::from_args(&cx, args), sig, fn_attrs, true)
                .map(|tool| {
                    let build = tool::build_expr(&tool);
                    quote! { __items.tools.push({ #build }); }
                }),
            Kind::Resource => Resource::from_ast(
                &cx,
                ResourceAttrs::from_args(&cx, args),
                sig,
                fn_attrs,
                true,
            )
            .map(|resource| {
                let build = resource::build_expr(&resource);
                quote! { __items.resources.push({ #build }); }
            }),
            Kind::Prompt => {
                Prompt::from_ast(&cx, PromptAttrs::from_args(&cx, args), sig, fn_attrs, true).map(
                    |prompt| {
                        let build = prompt::build_expr(&prompt);
                        quote! { __items.prompts.push({ #build }); }
                    },
                )
            }
        };
        builds.extend(build);
    }
    let krate = runtime_path(attrs.krate.as_ref());
    let self_ty = &item.self_ty;
    if let Err(error) = cx.check() {
        let error = error.to_compile_error();
        let fallback = fallback(&item, &krate);
        return quote! { #item #error #fallback };
    }

    let string = |lit: &Option<syn::LitStr>| match lit {
        Some(lit) => quote!(__mcp::Option::Some(__mcp::From::from(#lit))),
        None => quote!(__mcp::Option::None),
    };
    let name = match &attrs.name {
        Some(lit) => quote!(__mcp::From::from(#lit)),
        None => quote!(__mcp::From::from(::core::env!("CARGO_PKG_NAME"))),
    };
    let version = match &attrs.version {
        Some(lit) => quote!(__mcp::From::from(#lit)),
        None => quote!(__mcp::From::from(::core::env!("CARGO_PKG_VERSION"))),
    };
    let (title, description, instructions, website_url) = (
        string(&attrs.title),
        string(&attrs.description),
        string(&attrs.instructions),
        string(&attrs.website_url),
    );
    let icons = match &attrs.icons {
        Some(icons) => quote!(__mcp::icons(#icons)),
        None => quote!(__mcp::Vec::new()),
    };
    let server_scopes = match &attrs.scopes {
        Some(scopes) => quote!(__mcp::add_scopes(&mut __items, #scopes);),
        None => TokenStream::new(),
    };
    let generated = wrap_in_const(quote! {
        use #krate::__private as __mcp;

        impl __mcp::McpServer for #self_ty {
            fn server_defaults() -> __mcp::ServerDefaults {
                __mcp::ServerDefaults {
                    name: #name,
                    version: #version,
                    title: #title,
                    description: #description,
                    website_url: #website_url,
                    instructions: #instructions,
                    icons: #icons,
                }
            }

            fn items(self: __mcp::Arc<Self>) -> __mcp::Items {
                let __this = self;
                let mut __items = __mcp::Items::default();
                #(#builds)*
                #server_scopes
                __items
            }
        }
    });
    quote! { #item #generated }
}

/// On error, an `McpServer` impl whose bodies are never reached (as thiserror does for `Error`),
/// so the one error the user sees is the real one, not a second "`T: McpServer` is not
/// satisfied" wherever the type is served. None for a generic or trait impl: the fallback would
/// be wrong there too, and those errors say why already.
fn fallback(item: &syn::ItemImpl, krate: &TokenStream) -> TokenStream {
    if item.trait_.is_some() || !item.generics.params.is_empty() {
        return TokenStream::new();
    }
    let self_ty = &item.self_ty;
    wrap_in_const(quote! {
        use #krate::__private as __mcp;

        impl __mcp::McpServer for #self_ty {
            fn server_defaults() -> __mcp::ServerDefaults {
                ::core::unreachable!()
            }

            fn items(self: __mcp::Arc<Self>) -> __mcp::Items {
                ::core::unreachable!()
            }
        }
    })
}
