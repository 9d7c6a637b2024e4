//! `#[tool]` on a free function: the function stays as written, and beside it, in one anonymous
//! `const` block, a definition builder, a call adapter and an `inventory` registration.
//!
//! The adapter is thin on purpose: it asks the runtime, per parameter and for the return type,
//! to do the generic work (schema, conversion, result shaping). Which runtime code runs for a
//! type is chosen by trait, through autoref specialization on `__private::Probe<T>`, with every
//! dispatch spanned at the user's type so a type that fits nowhere gets its error there.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::wrap_in_const;
use crate::internals::ast::{ItemFn, Tool};
use crate::internals::attr::ToolAttrs;
use crate::internals::check;
use crate::internals::ctxt::Ctxt;

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        // Not a function: say so, and leave the item for rustc to report on.
        Err(_) => {
            let error = syn::Error::new(Span::call_site(), "`#[tool]` goes on a function");
            let error = error.to_compile_error();
            return quote! { #error #input };
        }
    };
    let cx = Ctxt::new();
    let attrs = ToolAttrs::from_args(&cx, args);
    let tool = Tool::from_ast(&cx, attrs, &item);
    check::check_tool(&cx, &tool);
    let plain = item.to_plain_tokens();
    match cx.check() {
        // Keep the user's function on error: one mistake should not cascade into "cannot find
        // function" everywhere it is used.
        Err(error) => {
            let error = error.to_compile_error();
            quote! { #plain #error }
        }
        Ok(()) => {
            let generated = wrap_in_const(generate(&tool));
            quote! { #plain #generated }
        }
    }
}

fn generate(tool: &Tool<'_>) -> TokenStream {
    let krate = match &tool.attrs.krate {
        Some(path) => quote!(#path),
        None => quote!(::mcp_runtime),
    };
    let fn_ident = &tool.original.sig.ident;
    let name = &tool.name;
    let output = &tool.output;

    let mut setup = Vec::new();
    if let Some(description) = &tool.description {
        setup.push(quote! { __builder.description(#description); });
    }
    if let Some(title) = &tool.attrs.title {
        setup.push(quote! { __builder.title(#title); });
    }
    let hint = |flag: &Option<syn::LitBool>| match flag {
        Some(b) => quote!(__mcp::Option::Some(#b)),
        None => quote!(__mcp::Option::None),
    };
    let a = &tool.attrs;
    if a.read_only.is_some()
        || a.destructive.is_some()
        || a.idempotent.is_some()
        || a.open_world.is_some()
    {
        let (read_only, destructive, idempotent, open_world) = (
            hint(&a.read_only),
            hint(&a.destructive),
            hint(&a.idempotent),
            hint(&a.open_world),
        );
        setup.push(quote! {
            __builder.annotations(__mcp::ToolAnnotations {
                title: __mcp::Option::None,
                read_only_hint: #read_only,
                destructive_hint: #destructive,
                idempotent_hint: #idempotent,
                open_world_hint: #open_world,
            });
        });
    }
    if let Some(icons) = &a.icons {
        setup.push(quote_spanned! {icons.span()=> __builder.icons(#icons); });
    }
    if let Some(meta) = &a.meta {
        setup.push(quote_spanned! {meta.span()=> __builder.meta(#meta); });
    }

    let mut metas = Vec::new();
    let mut declares = Vec::new();
    let mut extracts = Vec::new();
    let mut values = Vec::new();
    for (index, param) in tool.params.iter().enumerate() {
        let ty = param.ty;
        let meta_ident = format_ident!("__MCP_PARAM_{}", index);
        let value_ident = format_ident!("__mcp_arg_{}", index);
        let wire = &param.wire_name;
        let description = match &param.description {
            Some(text) => quote!(__mcp::Option::Some(#text)),
            None => quote!(__mcp::Option::None),
        };
        let (default, default_json) = match &param.attrs.default {
            Some(expr) => (
                quote_spanned! {expr.span()=> __mcp::Option::Some(|| -> #ty { #expr }) },
                quote_spanned! {expr.span()=> __mcp::Option::Some(|| __mcp::default_json::<#ty>(|| -> #ty { #expr })) },
            ),
            None => (quote!(__mcp::Option::None), quote!(__mcp::Option::None)),
        };
        let examples = if param.attrs.examples.is_empty() {
            quote!(__mcp::Option::None)
        } else {
            let examples = &param.attrs.examples;
            quote!(__mcp::Option::Some(|| __mcp::Vec::from([#(__mcp::example_json(&#examples)),*])))
        };
        metas.push(quote! {
            const #meta_ident: __mcp::ParamMeta<#ty> = __mcp::ParamMeta {
                name: #wire,
                description: #description,
                default: #default,
                default_json: #default_json,
                examples: #examples,
            };
        });
        declares.push(quote_spanned! {ty.span()=>
            {
                use __mcp::param::{ViaArgsStruct as _, ViaContext as _, ViaArgument as _, ViaUnsupported as _};
                (&&&__mcp::Probe::<#ty>::new()).declare(&mut __builder, &#meta_ident);
            }
        });
        extracts.push(quote_spanned! {ty.span()=>
            let #value_ident = {
                use __mcp::param::{ViaArgsStruct as _, ViaContext as _, ViaArgument as _, ViaUnsupported as _};
                (&&&__mcp::Probe::<#ty>::new()).extract(&mut __call, &#meta_ident)
            };
        });
        values.push(value_ident);
    }

    let await_call = if tool.is_async {
        quote!(.await)
    } else {
        quote!()
    };
    let ret_span = output.span();
    let declare_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _, ViaContent as _, ViaStructured as _, ViaUnsupportedReturn as _};
            let __inner = (&__mcp::Probe::<#output>::new()).inner();
            (&&__inner).declare_output(&mut __builder);
        }
    };
    let convert_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _, ViaContent as _, ViaStructured as _, ViaUnsupportedReturn as _};
            match (&__mcp::Probe::<#output>::new()).split(__out) {
                __mcp::Result::Ok(__value) => (&&__mcp::probe_of(&__value)).into_result(__value, &__call),
                __mcp::Result::Err(__failure) => __failure.into_result(),
            }
        }
    };

    quote! {
        use #krate::__private as __mcp;

        #(#metas)*

        fn __mcp_build() -> __mcp::ToolDef {
            let mut __builder = __mcp::ToolBuilder::new(#name, __mcp_call);
            __builder.location(::core::file!(), ::core::line!());
            #(#setup)*
            #(#declares)*
            #declare_output
            __builder.build()
        }

        fn __mcp_call(mut __call: __mcp::ToolCall) -> __mcp::BoxFuture<__mcp::CallToolResult> {
            __mcp::Box::pin(async move {
                #(#extracts)*
                match (#(#values,)*) {
                    (#(__mcp::Option::Some(#values),)*) if __mcp::arguments_ok(&mut __call) => {
                        let __out = #fn_ident(#(#values),*) #await_call;
                        #convert_output
                    }
                    _ => __mcp::argument_error(&__call),
                }
            })
        }

        fn __mcp_type_id() -> ::core::any::TypeId {
            __mcp::type_id_of(&#fn_ident)
        }

        __mcp::inventory::submit! {
            __mcp::ToolEntry {
                build: __mcp_build,
                type_id: __mcp_type_id,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                crate_version: ::core::env!("CARGO_PKG_VERSION"),
            }
        }
    }
}
