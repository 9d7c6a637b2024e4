//! `#[resource("uri")]`: a static resource, or a URI template whose variables are the function's
//! parameters. The template is parsed and matched against the parameters at compile time, by
//! `check::check_resource`; what a variable asks of its parameter's type (a list, an optional
//! value) is asked of the compiler here, spanned at that type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::common::{
    build_with_layer, call_user_fn, completer, description_title, expand_free_fn, handler,
    icons_meta_scopes, meta_ident, param_meta, result_error_type, result_value_type, spanned_ref,
    spanned_value, value_ident,
};
use crate::internals::ast::{Item, Receiver};
use crate::internals::attr::ResourceAttrs;
use crate::internals::check::{self, Role};

/// A `#[resource]` function, modelled and checked.
pub(crate) type Resource<'a> = Item<'a, ResourceAttrs>;

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_free_fn(args, input, ResourceAttrs::from_args, build_expr)
}

/// The roles of a checked `audience = [..]` list ([`check::check_resource`] rejects anything
/// else, and nothing is expanded then).
fn audience(expr: &syn::Expr) -> TokenStream {
    let syn::Expr::Array(array) = expr else {
        return quote!(__mcp::Vec::new());
    };
    let roles = array
        .elems
        .iter()
        .filter_map(|elem| match check::role(elem)? {
            Role::User => Some(quote!(__mcp::Role::User)),
            Role::Assistant => Some(quote!(__mcp::Role::Assistant)),
        });
    quote!(__mcp::Vec::from([#(#roles),*]))
}

/// The expression that builds the resource's `ResourceDef`.
pub(crate) fn build_expr(resource: &Resource<'_>) -> TokenStream {
    let function = &resource.function;
    let name = &function.name;
    let output = &function.output;
    let attrs = &resource.attrs;
    // `Item::from_ast` gives every resource its template; there is nothing to build without.
    let Some(template) = &resource.template else {
        return TokenStream::new();
    };
    let uri = &template.uri;
    let mut setup = description_title(function, attrs.title.as_ref());
    if let Some(mime_type) = &attrs.mime_type {
        setup.push(quote! { __builder.mime_type(#mime_type); });
    }
    if let Some(size) = &attrs.size {
        setup.push(quote_spanned! {size.span()=> __builder.size(#size); });
    }
    if attrs.audience.is_some() || attrs.priority.is_some() || attrs.last_modified.is_some() {
        let audience = match &attrs.audience {
            Some(expr) => {
                let roles = audience(expr);
                quote!(__mcp::Option::Some(#roles))
            }
            None => quote!(__mcp::Option::None),
        };
        let priority = match &attrs.priority {
            Some(expr) => quote_spanned! {expr.span()=> __mcp::Option::Some(#expr) },
            None => quote!(__mcp::Option::None),
        };
        let last_modified = match &attrs.last_modified {
            Some(lit) => quote!(__mcp::Option::Some(__mcp::From::from(#lit))),
            None => quote!(__mcp::Option::None),
        };
        setup.push(quote! {
            __builder.annotations(__mcp::Annotations { audience: #audience, priority: #priority, last_modified: #last_modified });
        });
    }
    setup.extend(icons_meta_scopes(
        attrs.icons.as_ref(),
        attrs.meta.as_ref(),
        attrs.scopes.as_ref(),
    ));
    if let Some(list) = &attrs.list {
        // Free functions list without state; in a `#[server]`, `list` may take `&self`.
        let (capture, state) = match function.receiver {
            Receiver::None => (quote!(), quote!(&())),
            _ => (
                quote!(let __this = __mcp::Arc::clone(&__this);),
                quote!(&*__this),
            ),
        };
        setup.push(quote_spanned! {list.span()=>
            __builder.list({
                #capture
                move || -> __mcp::BoxFuture<__mcp::Vec<__mcp::ResourceInfo>> {
                    #capture
                    __mcp::Box::pin(async move {
                        use __mcp::list::{ViaFuture as _, ViaValue as _};
                        let __listed = __mcp::list::call(#state, &#list);
                        (&&__mcp::probe_of(&__listed)).resolve(__listed).await
                    })
                }
            });
        });
    }
    if attrs
        .allow_traversal
        .as_ref()
        .is_some_and(syn::LitBool::value)
    {
        setup.push(quote! { __builder.allow_traversal(); });
    }
    let metas = function
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| param_meta(i, p));
    let mut extracts = Vec::new();
    for (index, param) in function.params.iter().enumerate() {
        let ty = param.ty;
        let meta = meta_ident(index, ty);
        let value = value_ident(index);
        if let Some(variable) = template.variables.get(&param.wire_name) {
            setup.push(completer(param));
            let verdict_at = spanned_ref(&format_ident!("__verdict"), ty);
            setup.push(quote_spanned! {ty.span()=>
                {
                    use __mcp::resource_param::{ViaContext as _, ViaList as _, ViaOptional as _, ViaSingle as _, ViaUnsupported as _};
                    let __verdict = (&&&__mcp::Probe::<#ty>::new()).verdict();
                    __mcp::bounds::ResourceVariableFromStr::check(#verdict_at);
                }
            });
            let probe_at = spanned_ref(&format_ident!("__probe"), ty);
            if variable.explode {
                setup.push(quote_spanned! {ty.span()=>
                    {
                        let __probe = __mcp::Probe::<#ty>::new();
                        __mcp::bounds::ExplodedVariable::check(#probe_at);
                    }
                });
            }
            if variable.optional {
                setup.push(quote_spanned! {ty.span()=>
                    {
                        let __probe = __mcp::Probe::<#ty>::new();
                        __mcp::bounds::OptionalVariable::check(#probe_at);
                    }
                });
            }
            extracts.push(quote_spanned! {ty.span()=>
                let #value = {
                    use __mcp::resource_param::{ViaContext as _, ViaList as _, ViaOptional as _, ViaSingle as _, ViaUnsupported as _};
                    (&&&__mcp::Probe::<#ty>::new()).extract(&mut __call, &#meta)
                };
            });
        } else {
            // Not a variable: it must be a context parameter, and the error says so.
            extracts.push(quote_spanned! {ty.span()=>
                let #value = {
                    let __context = <#ty as __mcp::bounds::ContextParameter>::extract(&__call);
                    __mcp::resource_context(&mut __call, &#meta, __context)
                };
            });
        }
    }
    let values: Vec<_> = (0..function.params.len()).map(value_ident).collect();
    let call = call_user_fn(function);
    let ret_span = output.span();
    let verdict_at = spanned_ref(&format_ident!("__verdict"), result_value_type(output));
    // A `Result`'s error type is checked where its `Err` is converted: blame its `E` when it
    // is spelled out, the whole type otherwise.
    let error_at = spanned_value(
        &format_ident!("__error"),
        result_error_type(output).unwrap_or(output),
    );
    let check_output = quote_spanned! {ret_span=>
        {
            use __mcp::resource_ret::{SplitResult as _, SplitPlain as _, ViaContents as _, ViaJson as _, ViaUnsupported as _};
            let __inner = (&__mcp::Probe::<#output>::new()).inner();
            let __verdict = (&&__inner).verdict();
            __mcp::bounds::ResourceOutputSerialize::check(#verdict_at);
        }
    };
    let convert_output = quote_spanned! {ret_span=>
        {
            use __mcp::resource_ret::{SplitResult as _, SplitPlain as _, ViaContents as _, ViaJson as _, ViaUnsupported as _};
            match (&__mcp::Probe::<#output>::new()).split(__out) {
                __mcp::Result::Ok(__value) => (&&__mcp::probe_of(&__value)).into_contents(__value, &__call),
                __mcp::Result::Err(__error) => __mcp::Result::Err(
                    __mcp::bounds::ResourceFailure::into_resource_error(#error_at),
                ),
            }
        }
    };
    let body = quote! {
        #(#extracts)*
        match (#(#values,)*) {
            (#(__mcp::Option::Some(#values),)*) if __mcp::resource_variables_ok(&__call) => {
                let __out = #call;
                #convert_output
            }
            _ => __mcp::Result::Err(__mcp::resource_variable_error(&__call)),
        }
    };
    let handler = handler(
        function,
        quote!(__mcp::ResourceCall),
        quote!(__mcp::Result<__mcp::Vec<__mcp::ResourceContents>, __mcp::ResourceError>),
        body,
    );
    let build = build_with_layer(attrs.layer.as_ref());
    quote! {
        #(#metas)*
        let mut __builder = __mcp::ResourceBuilder::new(#uri, #name, #handler);
        __builder.location(::core::file!(), ::core::line!());
        #(#setup)*
        #check_output
        #build
    }
}
