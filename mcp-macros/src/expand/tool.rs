//! `#[tool]`: the function stays as written, and beside it, in one anonymous `const` block, a
//! definition builder and an `inventory` registration (or, inside `#[server]`, an entry of the
//! impl's item list).
//!
//! The handler is thin on purpose: it asks the runtime, per parameter and for the return type,
//! to do the generic work (schema, conversion, result shaping). Which runtime code runs for a
//! type is chosen by trait, through autoref specialization on `__private::Probe<T>`, with every
//! dispatch spanned at the user's type so a type that fits nowhere gets its error there.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::common::{
    build_with_layer, call_user_fn, description_title, expand_free_fn, handler, icons_meta_scopes,
    meta_ident, param_meta, result_error_type, result_value_type, spanned_ref, value_ident,
};
use crate::internals::ast::Item;
use crate::internals::attr::ToolAttrs;

/// A `#[tool]` function, modelled and checked.
pub(crate) type Tool<'a> = Item<'a, ToolAttrs>;

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_free_fn(args, input, ToolAttrs::from_args, build_expr)
}

/// The expression that builds the tool's `ToolDef`. Needs `__mcp` in scope, and `__this:
/// Arc<Self>` for a `&self` method.
pub(crate) fn build_expr(tool: &Tool<'_>) -> TokenStream {
    let function = &tool.function;
    let name = &function.name;
    let output = &function.output;
    let attrs = &tool.attrs;

    let mut setup = description_title(function, attrs.title.as_ref());
    let hint = |flag: &Option<syn::LitBool>| match flag {
        Some(b) => quote!(__mcp::Option::Some(#b)),
        None => quote!(__mcp::Option::None),
    };
    if attrs.read_only.is_some()
        || attrs.destructive.is_some()
        || attrs.idempotent.is_some()
        || attrs.open_world.is_some()
    {
        let (read_only, destructive, idempotent, open_world) = (
            hint(&attrs.read_only),
            hint(&attrs.destructive),
            hint(&attrs.idempotent),
            hint(&attrs.open_world),
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
    setup.extend(icons_meta_scopes(
        attrs.icons.as_ref(),
        attrs.meta.as_ref(),
        attrs.scopes.as_ref(),
    ));
    if let Some(ui) = &attrs.ui {
        // After `meta`, which replaces `_meta` whole.
        setup.push(quote! { __builder.ui(#ui); });
    }
    if let Some(task) = &attrs.task {
        let support = match task.value().as_str() {
            "required" => quote!(__mcp::TaskSupport::Required),
            _ => quote!(__mcp::TaskSupport::Optional),
        };
        setup.push(quote! { __builder.task_support(#support); });
    }

    let metas = function
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| param_meta(i, p));
    let mut declares = Vec::new();
    let mut extracts = Vec::new();
    for (index, param) in function.params.iter().enumerate() {
        let ty = param.ty;
        let meta = meta_ident(index, ty);
        let value = value_ident(index);
        let verdict_at = spanned_ref(&format_ident!("__verdict"), ty);
        declares.push(quote_spanned! {ty.span()=>
            {
                use __mcp::param::{ViaArgsStruct as _, ViaContext as _, ViaArgument as _, ViaUnsupported as _};
                let __verdict = (&&&__mcp::Probe::<#ty>::new()).declare(&mut __builder, &#meta);
                __mcp::bounds::ToolArgumentDeserialize::check(#verdict_at);
                __mcp::bounds::ToolArgumentSchema::check(#verdict_at);
            }
        });
        extracts.push(quote_spanned! {ty.span()=>
            let #value = {
                use __mcp::param::{ViaArgsStruct as _, ViaContext as _, ViaArgument as _, ViaUnsupported as _};
                (&&&__mcp::Probe::<#ty>::new()).extract(&mut __call, &#meta)
            };
        });
    }
    let values: Vec<_> = (0..function.params.len()).map(value_ident).collect();
    let call = call_user_fn(function);
    // A sync tool runs on tokio's blocking pool, so one that blocks does not hold up the
    // connection; `#[tool(inline)]` keeps a trivial one on the request's task.
    let inline = attrs.inline.as_ref().is_some_and(|flag| flag.value);
    let call = if function.is_async || inline {
        call
    } else {
        quote! { __mcp::run_blocking(move || #call).await }
    };
    let ret_span = output.span();
    let verdict_at = spanned_ref(&format_ident!("__verdict"), result_value_type(output));
    // A `Result`'s error type is checked where its `Err` becomes text: blame its `E` when it is
    // spelled out, the whole type otherwise.
    let error_at = spanned_ref(
        &format_ident!("__error"),
        result_error_type(output).unwrap_or(output),
    );
    let declare_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _, ViaContent as _, ViaStructured as _, ViaUnsupportedReturn as _};
            let __inner = (&__mcp::Probe::<#output>::new()).inner();
            let __verdict = (&&__inner).declare_output(&mut __builder);
            __mcp::bounds::ToolOutputSerialize::check(#verdict_at);
            __mcp::bounds::ToolOutputSchema::check(#verdict_at);
        }
    };
    let convert_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _, ViaContent as _, ViaStructured as _, ViaUnsupportedReturn as _};
            match (&__mcp::Probe::<#output>::new()).split(__out) {
                __mcp::Result::Ok(__value) => (&&__mcp::probe_of(&__value)).into_result(__value, &__call),
                __mcp::Result::Err(__error) => __mcp::ret::Failure::new(
                    __mcp::bounds::ErrorDisplay::error_message(#error_at),
                )
                .into_result(),
            }
        }
    };
    let body = quote! {
        #(#extracts)*
        // Checked before the match, not in its guard: a guard after a missing argument's `None`
        // never runs, and the unknown ones would go unnamed.
        let __arguments_ok = __mcp::arguments_ok(&mut __call);
        match (#(#values,)*) {
            (#(__mcp::Option::Some(#values),)*) if __arguments_ok => {
                let __out = #call;
                #convert_output
            }
            _ => __mcp::argument_error(&__call),
        }
    };
    let handler = handler(
        function,
        quote!(__mcp::ToolCall),
        quote!(__mcp::ToolReply),
        body,
    );
    let build = build_with_layer(attrs.layer.as_ref());
    quote! {
        #(#metas)*
        let mut __builder = __mcp::tool_builder(#name, #handler);
        __builder.location(::core::file!(), ::core::line!());
        #(#setup)*
        #(#declares)*
        #declare_output
        #build
    }
}
