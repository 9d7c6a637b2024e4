//! `#[prompt]`: arguments from parameters (strings on the wire, parsed with `FromStr`), messages
//! from the return value.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::common::{
    build_with_layer, call_user_fn, completer, description_title, expand_free_fn, handler,
    icons_meta_scopes, meta_ident, param_meta, result_error_type, result_value_type, spanned_ref,
    value_ident,
};
use crate::internals::ast::Item;
use crate::internals::attr::PromptAttrs;

/// A `#[prompt]` function, modelled and checked.
pub(crate) type Prompt<'a> = Item<'a, PromptAttrs>;

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_free_fn(args, input, PromptAttrs::from_args, build_expr)
}

/// The expression that builds the prompt's `PromptDef`.
pub(crate) fn build_expr(prompt: &Prompt<'_>) -> TokenStream {
    let function = &prompt.function;
    let name = &function.name;
    let output = &function.output;
    let attrs = &prompt.attrs;
    let mut setup = description_title(function, attrs.title.as_ref());
    setup.extend(icons_meta_scopes(
        attrs.icons.as_ref(),
        attrs.meta.as_ref(),
        attrs.scopes.as_ref(),
    ));
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
        let complete = completer(param);
        let verdict_at = spanned_ref(&format_ident!("__verdict"), ty);
        declares.push(quote_spanned! {ty.span()=>
            {
                use __mcp::prompt_param::{ViaContext as _, ViaOptional as _, ViaRequired as _, ViaUnsupported as _};
                let __verdict = (&&&__mcp::Probe::<#ty>::new()).declare(&mut __builder, &#meta);
                __mcp::bounds::PromptArgumentFromStr::check(#verdict_at);
            }
        });
        declares.push(complete);
        extracts.push(quote_spanned! {ty.span()=>
            let #value = {
                use __mcp::prompt_param::{ViaContext as _, ViaOptional as _, ViaRequired as _, ViaUnsupported as _};
                (&&&__mcp::Probe::<#ty>::new()).extract(&mut __call, &#meta)
            };
        });
    }
    let values: Vec<_> = (0..function.params.len()).map(value_ident).collect();
    let call = call_user_fn(function);
    let ret_span = output.span();
    let inner_at = spanned_ref(&format_ident!("__inner"), result_value_type(output));
    // A `Result`'s error type is checked where its `Err` becomes text: blame its `E` when it is
    // spelled out, the whole type otherwise.
    let error_at = spanned_ref(
        &format_ident!("__error"),
        result_error_type(output).unwrap_or(output),
    );
    let check_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _};
            let __inner = (&__mcp::Probe::<#output>::new()).inner();
            __mcp::bounds::PromptOutput::check(#inner_at);
        }
    };
    let convert_output = quote_spanned! {ret_span=>
        {
            use __mcp::ret::{SplitResult as _, SplitPlain as _};
            use __mcp::prompt_ret::{ViaPrompt as _, ViaUnsupported as _};
            match (&__mcp::Probe::<#output>::new()).split(__out) {
                __mcp::Result::Ok(__value) => __mcp::Result::Ok((&&__mcp::probe_of(&__value)).into_prompt_result(__value)),
                __mcp::Result::Err(__error) => __mcp::Result::Err(__mcp::prompt_ret::failure(
                    __mcp::bounds::ErrorDisplay::error_message(#error_at),
                )),
            }
        }
    };
    let body = quote! {
        #(#extracts)*
        match (#(#values,)*) {
            (#(__mcp::Option::Some(#values),)*) if __mcp::prompt_arguments_ok(&__call) => {
                let __out = #call;
                #convert_output
            }
            _ => __mcp::Result::Err(__mcp::prompt_argument_error(&__call)),
        }
    };
    let handler = handler(
        function,
        quote!(__mcp::PromptCall),
        quote!(__mcp::Result<__mcp::GetPromptResult, __mcp::ErrorObject>),
        body,
    );
    let build = build_with_layer(attrs.layer.as_ref());
    quote! {
        #(#metas)*
        let mut __builder = __mcp::PromptBuilder::new(#name, #handler);
        __builder.location(::core::file!(), ::core::line!());
        #(#setup)*
        #(#declares)*
        #check_output
        #build
    }
}
