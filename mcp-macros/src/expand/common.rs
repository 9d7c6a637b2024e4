//! What the expansions of `#[tool]`, `#[resource]` and `#[prompt]` share: the runtime path, the
//! per-parameter metadata, how the user's function is called, and the expansion of a free
//! function with its registration.

use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

use proc_macro2::{Span, TokenTree};

use super::wrap_in_const;
use crate::internals::ast::{Function, Item, ItemAttrs, ItemFn, Param, Receiver};
use crate::internals::ctxt::Ctxt;

/// The path generated code names the runtime by: `::mcp_runtime` unless `crate = ".."` says.
pub(crate) fn runtime_path(krate: Option<&syn::Path>) -> TokenStream {
    match krate {
        Some(path) => quote!(#path),
        None => quote!(::mcp_runtime),
    }
}

/// The name of the `ParamMeta` constant of parameter `index`, spanned at the parameter's type so
/// an expression that names it keeps the type's span (an error there points at the type).
pub(crate) fn meta_ident(index: usize, ty: &syn::Type) -> syn::Ident {
    format_ident!("__MCP_PARAM_{}", index, span = ty.span())
}

/// The name of the local holding the converted value of parameter `index`.
pub(crate) fn value_ident(index: usize) -> syn::Ident {
    format_ident!("__mcp_arg_{}", index)
}

/// `const __MCP_PARAM_i: ParamMeta<T> = ..;` for one parameter: wire name, description, default,
/// examples.
pub(crate) fn param_meta(index: usize, param: &Param<'_>) -> TokenStream {
    let ty = param.ty;
    let ident = meta_ident(index, ty);
    let wire = &param.wire_name;
    let description = match &param.description {
        Some(text) => quote!(__mcp::Option::Some(#text)),
        None => quote!(__mcp::Option::None),
    };
    let (default, default_json) = match &param.attrs.default {
        Some(expr) => {
            // A string literal is the text of a string-like parameter (`default = "x"` for a
            // `String`), converted by a trait whose message names the types it fits; any other
            // expression must be of the parameter's type.
            let value = match expr {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(_),
                    ..
                }) => {
                    quote_spanned! {expr.span()=> <#ty as __mcp::FromStrLiteral>::from_str_literal(#expr) }
                }
                _ => quote!(#expr),
            };
            (
                quote_spanned! {expr.span()=> __mcp::Option::Some(|| { let __default: #ty = #value; __default }) },
                quote_spanned! {expr.span()=> __mcp::Option::Some(|| __mcp::default_json::<#ty>(|| { let __default: #ty = #value; __default })) },
            )
        }
        None => (quote!(__mcp::Option::None), quote!(__mcp::Option::None)),
    };
    let examples = if param.attrs.examples.is_empty() {
        quote!(__mcp::Option::None)
    } else {
        let examples = &param.attrs.examples;
        quote!(__mcp::Option::Some(|| __mcp::Vec::from([#(__mcp::example_json(&#examples)),*])))
    };
    let header = match &param.attrs.header {
        Some(header) => quote!(__mcp::Option::Some(#header)),
        None => quote!(__mcp::Option::None),
    };
    quote! {
        const #ident: __mcp::ParamMeta<#ty> = __mcp::ParamMeta {
            name: #wire,
            description: #description,
            default: #default,
            default_json: #default_json,
            examples: #examples,
            header: #header,
        };
    }
}

/// The call of the user's function with the converted parameter values, awaited when it is
/// `async`: `add(__mcp_arg_0, ..)`, `Self::add(..)` or `Self::add(&*__this, ..)`.
pub(crate) fn call_user_fn(function: &Function<'_>) -> TokenStream {
    let ident = &function.sig.ident;
    let values = (0..function.params.len()).map(value_ident);
    let await_call = if function.is_async {
        quote!(.await)
    } else {
        quote!()
    };
    match function.receiver {
        Receiver::None => quote!(#ident(#(#values),*) #await_call),
        Receiver::Associated => quote!(Self::#ident(#(#values),*) #await_call),
        // A path call, not a method call: `__this` is an `Arc<Self>`, and a method named like
        // one of `McpServer`'s (`items`) must still be the user's inherent one.
        Receiver::Ref => quote!(Self::#ident(&*__this, #(#values),*) #await_call),
    }
}

/// Wraps a handler body into the closure a builder takes. Free functions get a closure that
/// captures nothing; `&self` methods clone the shared `Arc<Self>` into each call.
pub(crate) fn handler(
    function: &Function<'_>,
    call_ty: TokenStream,
    output_ty: TokenStream,
    body: TokenStream,
) -> TokenStream {
    match function.receiver {
        Receiver::Ref => quote! {
            {
                let __this = __mcp::Arc::clone(&__this);
                move |mut __call: #call_ty| -> __mcp::BoxFuture<#output_ty> {
                    let __this = __mcp::Arc::clone(&__this);
                    __mcp::Box::pin(async move { #body })
                }
            }
        },
        _ => quote! {
            |mut __call: #call_ty| -> __mcp::BoxFuture<#output_ty> {
                __mcp::Box::pin(async move { #body })
            }
        },
    }
}

/// `.scopes(..)`, `.icons(..)` and `.meta(..)` on a builder, spanned at the user's expressions.
pub(crate) fn icons_meta_scopes(
    icons: Option<&syn::Expr>,
    meta: Option<&syn::Expr>,
    scopes: Option<&syn::Expr>,
) -> Vec<TokenStream> {
    let mut out = Vec::new();
    if let Some(scopes) = scopes {
        out.push(quote_spanned! {scopes.span()=> __builder.scopes(#scopes); });
    }
    if let Some(icons) = icons {
        out.push(quote_spanned! {icons.span()=> __builder.icons(#icons); });
    }
    if let Some(meta) = meta {
        out.push(quote_spanned! {meta.span()=> __builder.meta(#meta); });
    }
    out
}

/// The completer for a parameter: `#[arg(complete = f)]`, else the values of an enum type.
pub(crate) fn completer(param: &Param<'_>) -> TokenStream {
    let wire = &param.wire_name;
    let ty = param.ty;
    match &param.attrs.complete {
        Some(f) => {
            quote_spanned! {f.span()=> __builder.completer(#wire, __mcp::completer_fn(#f)); }
        }
        None => quote! {
            {
                use __mcp::enum_values::{ViaOptionSchema as _, ViaSchema as _, ViaNothing as _};
                if let __mcp::Option::Some(__values) = (&&__mcp::Probe::<#ty>::new()).enum_values() {
                    __builder.completer(#wire, __mcp::completer_values(__values));
                }
            }
        },
    }
}

/// The expansion every free-function macro shares: parse the function, read the attribute's
/// arguments with `parse_attrs`, model and check the item, then emit the function unchanged
/// beside one anonymous `const` block holding the definition `build_expr` builds and its
/// `inventory` registration. On error the user's function is kept, so one mistake does not
/// cascade into "cannot find function" everywhere it is used.
pub(crate) fn expand_free_fn<A: ItemAttrs>(
    args: TokenStream,
    input: TokenStream,
    parse_attrs: fn(&Ctxt, TokenStream) -> A,
    build_expr: fn(&Item<'_, A>) -> TokenStream,
) -> TokenStream {
    let item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = not_a_function(A::KIND.attr(), &input).to_compile_error();
            return quote! { #error #input };
        }
    };
    let cx = Ctxt::new();
    let attrs = parse_attrs(&cx, args);
    let generated = Item::from_ast(&cx, attrs, &item.sig, &item.attrs, false)
        .map(|model| (runtime_path(model.attrs.krate()), build_expr(&model)));
    let plain = item.to_plain_tokens();
    match (cx.check(), generated) {
        (Ok(()), Some((krate, build))) => {
            let ident = &item.sig.ident;
            let def = format_ident!("{}Def", A::KIND.variant());
            let variant = format_ident!("{}", A::KIND.variant());
            let generated = wrap_in_const(quote! {
                use #krate::__private as __mcp;

                fn __mcp_build() -> __mcp::#def {
                    #build
                }

                fn __mcp_type_id() -> ::core::any::TypeId {
                    __mcp::type_id_of(&#ident)
                }

                __mcp::inventory::submit! {
                    __mcp::Entry {
                        item: __mcp::Item::#variant(__mcp_build),
                        type_id: __mcp_type_id,
                        crate_name: ::core::env!("CARGO_PKG_NAME"),
                        crate_version: ::core::env!("CARGO_PKG_VERSION"),
                    }
                }
            });
            quote! { #plain #generated }
        }
        (result, _) => {
            let error = result.err().map(|e| e.to_compile_error());
            quote! { #plain #error }
        }
    }
}

/// `.description(..)` (from `description = ".."` or the doc comments) and `.title(..)` on a
/// builder.
pub(crate) fn description_title(
    function: &Function<'_>,
    title: Option<&syn::LitStr>,
) -> Vec<TokenStream> {
    let mut out = Vec::new();
    if let Some(description) = &function.description {
        out.push(quote! { __builder.description(#description); });
    }
    if let Some(title) = title {
        out.push(quote! { __builder.title(#title); });
    }
    out
}

/// The error for `attr` on an item that is not a function, spanned on the item's head
/// (`struct Lookup`) rather than on the attribute.
pub(crate) fn not_a_function(attr: &str, input: &TokenStream) -> syn::Error {
    let head = |stream: syn::parse::ParseStream<'_>| -> syn::Result<TokenStream> {
        stream.call(syn::Attribute::parse_outer)?;
        stream.parse::<syn::Visibility>()?;
        let mut head = TokenStream::new();
        while let Some(tree) = stream.parse::<Option<TokenTree>>()? {
            let done = !head.is_empty()
                && matches!(&tree, TokenTree::Ident(i) if i != "unsafe" && i != "auto" && i != "extern");
            head.extend([tree]);
            if done {
                break;
            }
        }
        stream.parse::<TokenStream>()?;
        Ok(head)
    };
    let head = syn::parse::Parser::parse2(head, input.clone()).unwrap_or_default();
    let keyword = head.to_string();
    let keyword = keyword
        .split_whitespace()
        .find(|w| !matches!(*w, "unsafe" | "auto" | "extern"));
    let kind = match keyword {
        Some("struct") => "a struct",
        Some("enum") => "an enum",
        Some("union") => "a union",
        Some("trait") => "a trait",
        Some("impl") => "an `impl` block",
        Some("mod") => "a module",
        Some("const") => "a constant",
        Some("static") => "a static",
        Some("type") => "a type alias",
        Some("use") => "a `use` declaration",
        _ => "this item",
    };
    let message = format!("`{attr}` goes on a function, not on {kind}");
    if head.is_empty() {
        syn::Error::new(Span::call_site(), message)
    } else {
        syn::Error::new_spanned(head, message)
    }
}

/// The built definition, wrapped in the item's `layer = ..` when it has one: spanned at the
/// expression, so a value that is no layer is blamed there.
pub(crate) fn build_with_layer(layer: Option<&syn::Expr>) -> TokenStream {
    match layer {
        Some(layer) => quote_spanned! {layer.span()=>
            __mcp::item_layer(__builder.build(), #layer)
        },
        None => quote!(__builder.build()),
    }
}

/// The spans of the first and last tokens of `tokens`.
pub(crate) fn first_last_spans(tokens: &impl ToTokens) -> (Span, Span) {
    let mut iter = tokens.to_token_stream().into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    let last = iter.last().map_or(first, |t| t.span());
    (first, last)
}

/// `&ident`, spanned from the first to the last token of `over`. rustc blames a failed bound on
/// the argument whose type names the failing type parameter, and spans an expression from its
/// first token to its last, so the error underlines all of `over` (a stable `Span` cannot join).
pub(crate) fn spanned_ref(ident: &Ident, over: &impl ToTokens) -> TokenStream {
    let (first, last) = first_last_spans(over);
    let mut ident = ident.clone();
    ident.set_span(last);
    quote_spanned!(first=> &#ident)
}

/// `ident` by value, spanned like [`spanned_ref`]: `::core::convert::identity(ident)` with the
/// path at the first token of `over` and the parentheses at its last.
pub(crate) fn spanned_value(ident: &Ident, over: &impl ToTokens) -> TokenStream {
    let (first, last) = first_last_spans(over);
    let path = quote_spanned!(first=> ::core::convert::identity);
    let mut args = proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, quote!(#ident));
    args.set_span(last);
    quote!(#path #args)
}

/// `T` and `E` when `ty` is spelled `..Result<T, E>`.
pub(crate) fn result_types(ty: &Type) -> Option<(&Type, &Type)> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    if last.ident != "Result" || args.args.len() != 2 {
        return None;
    }
    match (args.args.first()?, args.args.last()?) {
        (GenericArgument::Type(value), GenericArgument::Type(error)) => Some((value, error)),
        _ => None,
    }
}

/// `E` when `ty` is spelled `..Result<T, E>`.
pub(crate) fn result_error_type(ty: &Type) -> Option<&Type> {
    result_types(ty).map(|(_, error)| error)
}

/// `T` when `ty` is spelled `..Result<T, E>`, else `ty`: what a check of the returned value
/// blames.
pub(crate) fn result_value_type(ty: &Type) -> &Type {
    result_types(ty).map_or(ty, |(value, _)| value)
}
