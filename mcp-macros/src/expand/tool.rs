//! `#[tool]`: the function stays as written, and beside it, in one anonymous `const` block, a
//! definition builder and an `inventory` registration (or, inside `#[server]`, an entry of the
//! impl's item list).
//!
//! The handler is thin on purpose: it asks the runtime, per parameter and for the return type,
//! to do the generic work (schema, conversion, result shaping). Which runtime code runs for a
//! type is chosen by trait, through autoref specialization on `__private::Probe<T>`, with every
//! dispatch spanned at the user's type so a type that fits nowhere gets its error there.

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

use super::common::{
    Generated, build_with_layer, call_user_fn, expand_free_fn, handler, icons_meta_scopes,
    meta_ident, param_meta, runtime_path, value_ident,
};
use crate::internals::ast::Item;
use crate::internals::attr::ToolAttrs;

/// A `#[tool]` function, modelled and checked.
pub(crate) type Tool<'a> = Item<'a, ToolAttrs>;

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_free_fn("#[tool]", input, |cx, item| {
        let attrs = ToolAttrs::from_args(cx, args);
        let tool = Tool::from_ast(cx, attrs, &item.sig, &item.attrs, false)?;
        Some(Generated {
            krate: runtime_path(tool.attrs.krate.as_ref()),
            kind: "Tool",
            build: build_expr(&tool),
        })
    })
}

/// The expression that builds the tool's `ToolDef`. Needs `__mcp` in scope, and `__this:
/// Arc<Self>` for a `&self` method.
pub(crate) fn build_expr(tool: &Tool<'_>) -> TokenStream {
    let function = &tool.function;
    let name = &function.name;
    let output = &function.output;
    let attrs = &tool.attrs;

    let mut setup = Vec::new();
    if let Some(description) = &function.description {
        setup.push(quote! { __builder.description(#description); });
    }
    if let Some(title) = &attrs.title {
        setup.push(quote! { __builder.title(#title); });
    }
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
        let meta_at = spanned_ref(&meta, ty);
        declares.push(quote_spanned! {ty.span()=>
            {
                use __mcp::param::{ViaArgsStruct as _, ViaContext as _, ViaArgument as _, ViaUnsupported as _};
                (&&&__mcp::Probe::<#ty>::new()).declare(&mut __builder, #meta_at);
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
    let inner_at = spanned_ref(&format_ident!("__inner"), output);
    // A `Result`'s error type is checked where the value is split: blame its `E` when it is
    // spelled out, the whole type otherwise.
    let (error_first, error_last) = first_last_spans(result_error_type(output).unwrap_or(output));
    let split = Ident::new("split", error_first);
    let out_at = {
        let path = quote_spanned!(error_first=> ::core::convert::identity);
        let mut args = Group::new(Delimiter::Parenthesis, quote!(__out));
        args.set_span(error_last);
        quote!(#path #args)
    };
    let declare_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _, ViaContent as _, ViaStructured as _, ViaUnsupportedReturn as _};
            let __inner = (&__mcp::Probe::<#output>::new()).inner();
            (&&__inner).declare_output(&mut __builder, #inner_at);
        }
    };
    let convert_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _, ViaContent as _, ViaStructured as _, ViaUnsupportedReturn as _};
            match (&__mcp::Probe::<#output>::new()).#split(#out_at) {
                __mcp::Result::Ok(__value) => (&&__mcp::probe_of(&__value)).into_result(__value, &__call),
                __mcp::Result::Err(__failure) => __failure.into_result(),
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
        quote!(__mcp::CallToolResult),
        body,
    );
    let build = build_with_layer(attrs.layer.as_ref());
    quote! {
        #(#metas)*
        let mut __builder = __mcp::ToolBuilder::new(#name, #handler);
        __builder.location(::core::file!(), ::core::line!());
        #(#setup)*
        #(#declares)*
        #declare_output
        #build
    }
}

/// The spans of the first and last tokens of `tokens`.
fn first_last_spans(tokens: &impl ToTokens) -> (Span, Span) {
    let mut iter = tokens.to_token_stream().into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    let last = iter.last().map_or(first, |t| t.span());
    (first, last)
}

/// `&ident`, spanned from the first to the last token of `over`. rustc blames a failed bound on
/// the argument whose type names the failing type parameter, and spans an expression from its
/// first token to its last, so the error underlines all of `over` (a stable `Span` cannot join).
fn spanned_ref(ident: &Ident, over: &impl ToTokens) -> TokenStream {
    let (first, last) = first_last_spans(over);
    let mut ident = ident.clone();
    ident.set_span(last);
    quote_spanned!(first=> &#ident)
}

/// `E` when `ty` is spelled `..Result<T, E>`.
fn result_error_type(ty: &Type) -> Option<&Type> {
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
    match args.args.last()? {
        GenericArgument::Type(error) => Some(error),
        _ => None,
    }
}
