//! `#[resource("uri")]`: a static resource, or a URI template whose variables are the function's
//! parameters. The template is parsed here, at compile time, and every mismatch between its
//! variables and the parameters is an error pointing at the template.

use std::collections::BTreeMap;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::common::{
    Generated, call_user_fn, completer, expand_free_fn, handler, icons_and_meta, meta_ident,
    param_meta, runtime_path, value_ident,
};
use crate::internals::ast::{Function, Param, Receiver, last_segment};
use crate::internals::attr::ResourceAttrs;
use crate::internals::check::{self, Kind};
use crate::internals::ctxt::Ctxt;
use mcp_uri_template::{self as uri_template, Operator, Part};

/// A `#[resource]` function, checked.
pub(crate) struct Resource<'a> {
    pub(crate) attrs: ResourceAttrs,
    pub(crate) function: Function<'a>,
    /// The URI or template literal.
    pub(crate) uri: syn::LitStr,
    /// The template's variables by name; empty for a static resource.
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

impl<'a> Resource<'a> {
    pub(crate) fn from_ast(
        cx: &Ctxt,
        attrs: ResourceAttrs,
        sig: &'a syn::Signature,
        fn_attrs: &[syn::Attribute],
        in_impl: bool,
    ) -> Option<Self> {
        let function = Function::from_ast(
            cx,
            sig,
            fn_attrs,
            attrs.name.as_ref(),
            attrs.description.as_ref(),
            in_impl,
        );
        check::check_function(cx, Kind::Resource, &function);
        let Some(uri) = attrs.uri.clone() else {
            cx.syn_error(syn::Error::new(
                Span::call_site(),
                "`#[resource]` needs its URI first: `#[resource(\"scheme://path/{variable}\")]`",
            ));
            return None;
        };
        let variables = check_template(cx, &uri, &function, &attrs);
        Some(Self {
            attrs,
            function,
            uri,
            variables,
        })
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
    let template = match uri_template::parse(&text) {
        Ok(template) => template,
        Err(error) => {
            let excerpt = &text[error.span.start.min(text.len())..error.span.end.min(text.len())];
            cx.error_spanned_by(
                uri,
                format!("invalid URI template: {} (at `{excerpt}`)", error.message),
            );
            return BTreeMap::new();
        }
    };
    let params: Vec<&Param<'_>> = function.params.iter().collect();
    let mut variables = BTreeMap::new();
    for part in &template.parts {
        let Part::Expression(expression) = part else {
            continue;
        };
        for var in &expression.variables {
            let Some(param) = params.iter().find(|p| p.wire_name == var.name) else {
                cx.error_spanned_by(
                    uri,
                    format!("template variable `{}` has no parameter: add a parameter `{}: T` to the function", var.name, var.name),
                );
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

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_free_fn("#[resource]", input, |cx, item| {
        let attrs = ResourceAttrs::from_args(cx, args);
        let resource = Resource::from_ast(cx, attrs, &item.sig, &item.attrs, false)?;
        Some(Generated {
            krate: runtime_path(resource.attrs.krate.as_ref()),
            kind: "Resource",
            build: build_expr(&resource),
        })
    })
}

fn audience(cx: &Ctxt, expr: &syn::Expr) -> TokenStream {
    let syn::Expr::Array(array) = expr else {
        cx.error_spanned_by(
            expr,
            "`audience` is a list: `audience = [\"user\", \"assistant\"]`",
        );
        return quote!();
    };
    let roles = array.elems.iter().map(|elem| match elem {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) if s.value() == "user" => quote!(__mcp::Role::User),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) if s.value() == "assistant" => {
            quote!(__mcp::Role::Assistant)
        }
        other => {
            cx.error_spanned_by(other, "an audience is `\"user\"` or `\"assistant\"`");
            quote!()
        }
    });
    quote!(__mcp::Vec::from([#(#roles),*]))
}

/// The expression that builds the resource's `ResourceDef`.
pub(crate) fn build_expr(resource: &Resource<'_>) -> TokenStream {
    let function = &resource.function;
    let name = &function.name;
    let output = &function.output;
    let attrs = &resource.attrs;
    let uri = &resource.uri;
    let mut setup = Vec::new();
    if let Some(description) = &function.description {
        setup.push(quote! { __builder.description(#description); });
    }
    if let Some(title) = &attrs.title {
        setup.push(quote! { __builder.title(#title); });
    }
    if let Some(mime_type) = &attrs.mime_type {
        setup.push(quote! { __builder.mime_type(#mime_type); });
    }
    if let Some(size) = &attrs.size {
        setup.push(quote_spanned! {size.span()=> __builder.size(#size); });
    }
    if attrs.audience.is_some() || attrs.priority.is_some() || attrs.last_modified.is_some() {
        let cx = Ctxt::new();
        let audience = match &attrs.audience {
            Some(expr) => {
                let roles = audience(&cx, expr);
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
        let errors = cx.check().err().map(|e| e.to_compile_error());
        setup.push(quote! {
            #errors
            __builder.annotations(__mcp::Annotations { audience: #audience, priority: #priority, last_modified: #last_modified });
        });
    }
    setup.extend(icons_and_meta(attrs.icons.as_ref(), attrs.meta.as_ref()));
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
        if let Some(variable) = resource.variables.get(&param.wire_name) {
            setup.push(completer(param));
            if variable.explode {
                setup.push(quote_spanned! {ty.span()=> __mcp::exploded_variable::<#ty>(); });
            }
            if variable.optional {
                setup.push(quote_spanned! {ty.span()=> __mcp::optional_variable::<#ty>(); });
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
                let #value = __mcp::resource_context::<#ty>(&mut __call, &#meta);
            });
        }
    }
    let values: Vec<_> = (0..function.params.len()).map(value_ident).collect();
    let call = call_user_fn(function);
    let ret_span = output.span();
    let check_output = quote_spanned! {ret_span=>
        {
            use __mcp::resource_ret::{SplitResult as _, SplitPlain as _, ViaContents as _, ViaJson as _, ViaUnsupported as _};
            let __inner = (&__mcp::Probe::<#output>::new()).inner();
            (&&__inner).check();
        }
    };
    let convert_output = quote_spanned! {ret_span=>
        {
            use __mcp::resource_ret::{SplitResult as _, SplitPlain as _, ViaContents as _, ViaJson as _, ViaUnsupported as _};
            match (&__mcp::Probe::<#output>::new()).split(__out) {
                __mcp::Result::Ok(__value) => (&&__mcp::probe_of(&__value)).into_contents(__value, &__call),
                __mcp::Result::Err(__error) => __mcp::Result::Err(__error),
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
    quote! {
        #(#metas)*
        let mut __builder = __mcp::ResourceBuilder::new(#uri, #name, #handler);
        __builder.location(::core::file!(), ::core::line!());
        #(#setup)*
        #check_output
        __builder.build()
    }
}
