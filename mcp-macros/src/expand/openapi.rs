//! `openapi!("api.yaml", ..)`: an OpenAPI description read when the crate compiles, and for each
//! selected operation what a user could have written by hand.
//!
//! Beside the invocation it declares `pub static API: Api` (where the operations are sent;
//! configured at run time), and for each operation:
//!
//! - a `pub async fn` named after the operation (`listPets` as `list_pets`), whose parameters
//!   are the operation's arguments, typed (`String`, `i64`, `f64`, `bool`, `Vec<T>`, `Value`;
//!   optional ones in `Option`), documented with the operation's text;
//! - a `pub static` [`Operation`](mcp_runtime::openapi::Operation) in the hidden module
//!   `__mcp_openapi`: the operation's method, path, parameters, body and schemas, as data;
//! - unless `replace` names it, the registration of its tool, as `#[tool]` registers one.
//!
//! Every file read is tracked with `include_bytes!`, so cargo rebuilds the crate when one
//! changes. Every problem is a compile error at the file's string (or at the filter entry at
//! fault), naming the file and the JSON pointer of the construct.

use std::path::PathBuf;

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::LitStr;

use super::common::runtime_path;
use crate::internals::ctxt::Ctxt;
use crate::internals::openapi::args::Args;
use crate::internals::openapi::model::{self, Argument, Kind, Model, Operation};

/// Expands `openapi!(..)`; `call_file` is the file the macro was called in, when known.
pub(crate) fn expand(input: TokenStream, call_file: Option<PathBuf>) -> TokenStream {
    let cx = Ctxt::new();
    let args = Args::parse(&cx, input);
    let generated = args
        .file
        .as_ref()
        .and_then(|file| match read(&args, file, call_file) {
            Ok(model) => Some(generate(&args, file, &model)),
            Err(problems) => {
                for (span, message) in problems {
                    cx.syn_error(syn::Error::new(
                        span.unwrap_or_else(|| file.span()),
                        format!("openapi!: {message}"),
                    ));
                }
                None
            }
        });
    match cx.check() {
        Ok(()) => generated.unwrap_or_default(),
        Err(error) => error.to_compile_error(),
    }
}

type Problems = Vec<(Option<proc_macro2::Span>, String)>;

fn read(args: &Args, file: &LitStr, call_file: Option<PathBuf>) -> Result<Model, Problems> {
    let base = super::call_dir(call_file, "openapi!").map_err(|e| vec![(None, e)])?;
    let given = file.value();
    if std::path::Path::new(&given).is_absolute() {
        return Err(vec![(
            None,
            format!(
                "`{given}` is absolute; give the path relative to this file, as `include_bytes!` takes it"
            ),
        )]);
    }
    // Messages name files as given, not by this machine's absolute paths.
    let base_text = format!("{}/", base.display());
    model::read(args, &base.join(&given)).map_err(|problems| {
        problems
            .into_iter()
            .map(|p| (p.span, p.message.replace(&base_text, "")))
            .collect()
    })
}

fn generate(args: &Args, file: &LitStr, model: &Model) -> TokenStream {
    let krate = runtime_path(args.krate.as_ref());
    let source = file.value();
    let tracked = model.files.iter().map(|path| {
        let path = path.to_string_lossy().into_owned();
        quote! { const _: &[u8] = ::core::include_bytes!(#path); }
    });
    let default_url = match &model.default_base_url {
        Some(url) => quote!(::core::option::Option::Some(#url)),
        None => quote!(::core::option::Option::None),
    };
    let definitions = Literal::string(&model.definitions);
    let api_doc = format!(
        " The API of `{source}` ({} {}): where its operations are sent. Configure it once, \
         before serving, with `API.configure(Upstream::new(url)?)`{}.",
        model.title,
        model.version,
        match &model.default_base_url {
            Some(url) => format!("; until then calls go to `{url}`"),
            None => String::new(),
        }
    );
    let statics = model
        .operations
        .iter()
        .map(|op| operation_static(&krate, op));
    let functions = model
        .operations
        .iter()
        .map(|op| function(&krate, &source, op));
    quote! {
        #(#tracked)*

        #[doc = #api_doc]
        pub static API: #krate::openapi::Api = #krate::openapi::Api::new(#source, #default_url, #definitions);

        /// The operations of the description, as `openapi!` read them.
        #[doc(hidden)]
        pub mod __mcp_openapi {
            #(#statics)*
        }

        #(#functions)*
    }
}

fn operation_static(krate: &TokenStream, op: &Operation) -> TokenStream {
    let ident = format_ident!("{}", op.constant);
    let tool = &op.tool;
    let method = &op.method;
    let path = &op.path;
    let description = option_str(op.description.as_deref());
    let parameters = op.params.iter().map(|p| {
        let name = &p.argument.name;
        let location = format_ident!("{}", p.location);
        let style = format_ident!("{}", p.style);
        let kind = kind_tokens(krate, p.argument.kind);
        let required = p.argument.required;
        quote! {
            #krate::openapi::Parameter {
                name: #name,
                argument: #name,
                location: #krate::openapi::Location::#location,
                style: #krate::openapi::Style::#style,
                kind: #kind,
                required: #required,
            }
        }
    });
    let body = match &op.body {
        None => quote!(::core::option::Option::None),
        Some(body) => {
            let content_type = &body.content_type;
            let encoding = format_ident!("{}", body.encoding);
            let required = body.required;
            let shape = match &body.properties {
                None => quote!(#krate::openapi::BodyShape::Whole("body")),
                Some(names) => {
                    let needed = &body.property_required;
                    quote!(#krate::openapi::BodyShape::Properties { names: &[#(#names),*], required: &[#(#needed),*] })
                }
            };
            quote! {
                ::core::option::Option::Some(#krate::openapi::Body {
                    content_type: #content_type,
                    encoding: #krate::openapi::Encoding::#encoding,
                    required: #required,
                    shape: #shape,
                })
            }
        }
    };
    let input = Literal::string(&op.input_schema);
    let output = match &op.output_schema {
        Some(schema) => {
            let schema = Literal::string(schema);
            quote!(::core::option::Option::Some(#schema))
        }
        None => quote!(::core::option::Option::None),
    };
    let wrap = op.wrap_output;
    let (read_only, destructive, idempotent) = match op.method.as_str() {
        "GET" | "HEAD" | "OPTIONS" | "TRACE" => (true, false, true),
        "POST" => (false, false, false),
        "PATCH" => (false, true, false),
        _ => (false, true, true),
    };
    let doc = format!(" `{} {}`: the tool `{}`.", op.method, op.path, op.tool);
    quote! {
        #[doc = #doc]
        pub static #ident: #krate::openapi::Operation = #krate::openapi::Operation {
            tool: #tool,
            method: #method,
            path: #path,
            description: #description,
            parameters: &[#(#parameters),*],
            body: #body,
            input_schema: #input,
            output_schema: #output,
            wrap_output: #wrap,
            hints: #krate::openapi::Hints {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
            },
        };
    }
}

fn function(krate: &TokenStream, source: &str, op: &Operation) -> TokenStream {
    let ident: syn::Ident = syn::parse_str(&op.function)
        .unwrap_or_else(|_| format_ident!("operation_{}", op.constant.to_ascii_lowercase()));
    let constant = format_ident!("{}", op.constant);
    let arguments: Vec<&Argument> = op
        .params
        .iter()
        .map(|p| &p.argument)
        .chain(op.body.iter().flat_map(|b| b.arguments.iter()))
        .collect();
    let mut docs = Vec::new();
    if let Some(description) = &op.description {
        docs.extend(description.lines().map(|l| format!(" {l}")));
        docs.push(String::new());
    }
    let id = op
        .operation_id
        .as_deref()
        .map(|id| format!(", the operation `{id}`"))
        .unwrap_or_default();
    docs.push(format!(" `{} {}`{id} of `{source}`.", op.method, op.path));
    if !arguments.is_empty() {
        docs.push(String::new());
        docs.push(" # Arguments".to_owned());
        docs.push(String::new());
        for argument in &arguments {
            let need = if argument.required {
                "required"
            } else {
                "optional"
            };
            let text = argument
                .doc
                .as_deref()
                .map(|d| format!(": {}", d.split_whitespace().collect::<Vec<_>>().join(" ")))
                .unwrap_or_default();
            docs.push(format!(" - `{}` ({need}){text}", argument.name));
        }
    }
    if !op.register {
        docs.push(String::new());
        docs.push(" Not registered as a tool: `replace` names it.".to_owned());
    }
    let ctx = if arguments.iter().any(|a| a.ident == "ctx") {
        format_ident!("context")
    } else {
        format_ident!("ctx")
    };
    let params = arguments.iter().map(|argument| {
        let ident = argument_ident(argument);
        let ty = rust_type(krate, argument);
        quote!(#ident: #ty)
    });
    let withs = arguments.iter().map(|argument| {
        let ident = argument_ident(argument);
        let name = &argument.name;
        quote!(.with(#name, &#ident)?)
    });
    let registration = op.register.then(|| {
        quote! {
            #[doc(hidden)]
            const _: () = {
                use #krate::__private as __mcp;

                fn __mcp_build() -> __mcp::ToolDef {
                    API.tool(&__mcp_openapi::#constant)
                }

                fn __mcp_type_id() -> ::core::any::TypeId {
                    __mcp::type_id_of(&#ident)
                }

                __mcp::inventory::submit! {
                    __mcp::Entry {
                        item: __mcp::Item::Tool(__mcp_build),
                        type_id: __mcp_type_id,
                        crate_name: ::core::env!("CARGO_PKG_NAME"),
                        crate_version: ::core::env!("CARGO_PKG_VERSION"),
                    }
                }
            };
        }
    });
    quote! {
        #(#[doc = #docs])*
        #[allow(clippy::too_many_arguments)]
        pub async fn #ident(
            #ctx: &#krate::Context,
            #(#params,)*
        ) -> ::core::result::Result<#krate::openapi::Response, #krate::ToolError> {
            let __arguments = #krate::openapi::Arguments::new() #(#withs)* .into_map();
            API.call(#ctx, &__mcp_openapi::#constant, __arguments).await
        }

        #registration
    }
}

fn argument_ident(argument: &Argument) -> syn::Ident {
    let text = argument.ident.strip_prefix("r#").unwrap_or(&argument.ident);
    if argument.ident.starts_with("r#") {
        syn::Ident::new_raw(text, proc_macro2::Span::call_site())
    } else {
        syn::Ident::new(text, proc_macro2::Span::call_site())
    }
}

fn rust_type(krate: &TokenStream, argument: &Argument) -> TokenStream {
    let scalar = |kind: Kind| match kind {
        Kind::String => quote!(::std::string::String),
        Kind::Integer => quote!(i64),
        Kind::Number => quote!(f64),
        Kind::Boolean => quote!(bool),
        Kind::Array | Kind::Object | Kind::Any => quote!(#krate::openapi::Value),
    };
    let ty = match argument.kind {
        Kind::Array => {
            let items = scalar(argument.items);
            quote!(::std::vec::Vec<#items>)
        }
        kind => scalar(kind),
    };
    if argument.required {
        ty
    } else {
        quote!(::core::option::Option<#ty>)
    }
}

fn kind_tokens(krate: &TokenStream, kind: Kind) -> TokenStream {
    let variant = format_ident!(
        "{}",
        match kind {
            Kind::String => "String",
            Kind::Integer => "Integer",
            Kind::Number => "Number",
            Kind::Boolean => "Boolean",
            Kind::Array => "Array",
            Kind::Object => "Object",
            Kind::Any => "Any",
        }
    );
    quote!(#krate::openapi::Kind::#variant)
}

fn option_str(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}
