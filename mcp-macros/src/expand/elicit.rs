//! `#[derive(Elicit)]`: the restricted form schema of elicitation, from a struct's fields (a
//! form) or a fieldless enum's variants (a choice). Each field's schema comes from the runtime's
//! `ElicitField` trait, spanned at the field's type, so a field the form cannot express is an
//! error there.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use super::common::runtime_path;
use super::wrap_in_const;
use crate::internals::ast::unraw;
use crate::internals::attr;
use crate::internals::ctxt::Ctxt;
use crate::internals::doc;
use crate::internals::symbol::{ElicitEnumKey, ElicitFieldKey, ElicitVariantKey, Key};

const FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// What `#[elicit(..)]` said on a field, variant or enum: each key's value, a bare flag `true`.
#[derive(Default)]
struct ElicitAttrs {
    values: Vec<(&'static str, syn::Expr)>,
}

impl ElicitAttrs {
    /// Reads every `#[elicit(..)]` among `attrs`, with the keys `K` allows there.
    fn from_attrs<K: Key>(cx: &Ctxt, attrs: &[syn::Attribute]) -> Self {
        let mut out = Self::default();
        attr::parse_attr_keys(cx, attrs, "elicit", |key: K, meta| {
            let value = if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?
            } else {
                syn::parse_quote!(true)
            };
            out.values.push((key.name(), value));
            Ok(())
        });
        out
    }

    fn get(&self, key: &str) -> Option<&syn::Expr> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    fn string(&self, cx: &Ctxt, key: &str) -> Option<String> {
        match self.get(key)? {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            other => {
                cx.error_spanned_by(other, format!("`{key}` takes a string literal"));
                None
            }
        }
    }
}

/// The `rename_all` rule of a `#[serde(..)]` container attribute, so wire names match what
/// serde deserializes.
fn serde_rename_all(attrs: &[syn::Attribute]) -> Option<String> {
    let mut rule = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename_all") {
                if let Ok(value) = meta.value().and_then(|v| v.parse::<syn::LitStr>()) {
                    rule = Some(value.value());
                }
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.input.parse::<proc_macro2::Group>()?;
            }
            Ok(())
        });
    }
    rule
}

/// A `#[serde(rename = "..")]` on a field or variant.
fn serde_rename(attrs: &[syn::Attribute]) -> Option<String> {
    let mut rename = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") && meta.input.peek(syn::Token![=]) {
                if let Ok(value) = meta.value().and_then(|v| v.parse::<syn::LitStr>()) {
                    rename = Some(value.value());
                }
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.input.parse::<proc_macro2::Group>()?;
            }
            Ok(())
        });
    }
    rename
}

fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in name.chars() {
        if c == '_' || c == '-' {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        } else if c.is_uppercase() && !current.is_empty() {
            words.push(std::mem::take(&mut current));
            current.extend(c.to_lowercase());
        } else {
            current.extend(c.to_lowercase());
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn apply_rule(rule: Option<&str>, name: &str) -> String {
    let capitalize = |w: &String| {
        let mut chars = w.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    let w = words(name);
    match rule {
        Some("lowercase") => name.to_lowercase(),
        Some("UPPERCASE") => name.to_uppercase(),
        Some("snake_case") => w.join("_"),
        Some("SCREAMING_SNAKE_CASE") => w.join("_").to_uppercase(),
        Some("kebab-case") => w.join("-"),
        Some("SCREAMING-KEBAB-CASE") => w.join("-").to_uppercase(),
        Some("camelCase") => w
            .iter()
            .enumerate()
            .map(|(i, x)| if i == 0 { x.clone() } else { capitalize(x) })
            .collect(),
        Some("PascalCase") => w.iter().map(capitalize).collect(),
        _ => name.to_owned(),
    }
}

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let cx = Ctxt::new();
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`#[derive(Elicit)]` does not take generic types",
        );
    }
    let krate = runtime_path(None);
    let ident = &input.ident;
    let rule = serde_rename_all(&input.attrs);
    let body = match &input.data {
        Data::Struct(data) => {
            match &data.fields {
                Fields::Named(fields) => {
                    let mut entries = Vec::new();
                    for field in &fields.named {
                        let attrs = ElicitAttrs::from_attrs::<ElicitFieldKey>(&cx, &field.attrs);
                        let Some(field_ident) = &field.ident else {
                            continue;
                        };
                        let wire = attrs
                            .string(&cx, "rename")
                            .or_else(|| serde_rename(&field.attrs))
                            .unwrap_or_else(|| apply_rule(rule.as_deref(), &unraw(field_ident)));
                        let ty = &field.ty;
                        let mut inserts = Vec::new();
                        if let Some(title) = attrs.string(&cx, "title") {
                            inserts.push(quote!(__schema.insert("title".into(), __mcp::Value::from(#title));));
                        }
                        let description = attrs
                            .string(&cx, "description")
                            .or_else(|| doc::text(&field.attrs));
                        if let Some(description) = description {
                            inserts.push(quote!(__schema.insert("description".into(), __mcp::Value::from(#description));));
                        }
                        if let Some(format) = attrs.string(&cx, "format") {
                            if !FORMATS.contains(&format.as_str()) {
                                let at = attrs.get("format");
                                cx.error_spanned_by(at, format!("unknown string format `{format}`; elicitation forms know `email`, `uri`, `date` and `date-time`"));
                            }
                            inserts.push(quote!(__schema.insert("format".into(), __mcp::Value::from(#format));));
                        }
                        for (key, wire_key) in [
                            ("min_length", "minLength"),
                            ("max_length", "maxLength"),
                            ("minimum", "minimum"),
                            ("maximum", "maximum"),
                            ("min_items", "minItems"),
                            ("max_items", "maxItems"),
                            ("default", "default"),
                        ] {
                            if let Some(value) = attrs.get(key) {
                                inserts.push(quote_spanned! {value.span()=>
                                if let __mcp::Option::Some(__value) = __mcp::schema_json(&(#value)) {
                                    __schema.insert(#wire_key.into(), __value);
                                }
                            });
                            }
                        }
                        let has_default = attrs.get("default").is_some();
                        entries.push(quote_spanned! {ty.span()=>
                        {
                            let mut __schema = <#ty as __mcp::ElicitField>::field_schema();
                            #(#inserts)*
                            (#wire, __schema, <#ty as __mcp::ElicitField>::REQUIRED && !#has_default)
                        }
                    });
                    }
                    quote! {
                        impl __mcp::Elicit for #ident {
                            fn requested_schema() -> __mcp::Map<__mcp::String, __mcp::Value> {
                                __mcp::form_schema(__mcp::Vec::from([#(#entries),*]))
                            }
                        }
                    }
                }
                _ => {
                    cx.error_spanned_by(ident, "`#[derive(Elicit)]` on a struct needs named fields: each is one field of the form");
                    quote!()
                }
            }
        }
        Data::Enum(data) => {
            let legacy = ElicitAttrs::from_attrs::<ElicitEnumKey>(&cx, &input.attrs)
                .get("enum_names")
                .is_some();
            let mut options = Vec::new();
            for variant in &data.variants {
                if !matches!(variant.fields, Fields::Unit) {
                    cx.error_spanned_by(
                        &variant.fields,
                        "an elicitation choice is a fieldless enum: this variant carries data",
                    );
                    continue;
                }
                let attrs = ElicitAttrs::from_attrs::<ElicitVariantKey>(&cx, &variant.attrs);
                let value = attrs
                    .string(&cx, "rename")
                    .or_else(|| serde_rename(&variant.attrs))
                    .unwrap_or_else(|| apply_rule(rule.as_deref(), &unraw(&variant.ident)));
                let title = match attrs.string(&cx, "title") {
                    Some(title) => quote!(__mcp::Option::Some(#title)),
                    None => quote!(__mcp::Option::None),
                };
                options.push(quote!((#value, #title)));
            }
            quote! {
                impl __mcp::ElicitEnum for #ident {
                    const ENUM_NAMES: bool = #legacy;

                    fn options() -> __mcp::Vec<(&'static str, __mcp::Option<&'static str>)> {
                        __mcp::Vec::from([#(#options),*])
                    }
                }

                impl __mcp::ElicitField for #ident {
                    fn field_schema() -> __mcp::Map<__mcp::String, __mcp::Value> {
                        __mcp::enum_schema::<Self>()
                    }
                }
            }
        }
        Data::Union(_) => {
            cx.error_spanned_by(
                ident,
                "`#[derive(Elicit)]` goes on a struct (a form) or a fieldless enum (a choice)",
            );
            quote!()
        }
    };
    if let Err(error) = cx.check() {
        let error = error.to_compile_error();
        let fallback = fallback(&input, &krate);
        return quote! { #error #fallback };
    }
    wrap_in_const(quote! {
        use #krate::__private as __mcp;
        #body
    })
}

/// On error, impls whose bodies are never reached (as thiserror does for `Error`), so the one
/// error the user sees is the real one, not a second "`T: Elicit` is not satisfied" where the
/// type is asked for. A struct is a form (`Elicit`), an enum a choice (`ElicitEnum` and
/// `ElicitField`); none for a union or a generic type, which have no impl to stand in for.
fn fallback(input: &DeriveInput, krate: &TokenStream) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let body = match &input.data {
        Data::Struct(_) => quote! {
            impl __mcp::Elicit for #ident {
                fn requested_schema() -> __mcp::Map<__mcp::String, __mcp::Value> {
                    ::core::unreachable!()
                }
            }
        },
        Data::Enum(_) => quote! {
            impl __mcp::ElicitEnum for #ident {
                fn options() -> __mcp::Vec<(&'static str, __mcp::Option<&'static str>)> {
                    ::core::unreachable!()
                }
            }

            impl __mcp::ElicitField for #ident {
                fn field_schema() -> __mcp::Map<__mcp::String, __mcp::Value> {
                    ::core::unreachable!()
                }
            }
        },
        Data::Union(_) => return TokenStream::new(),
    };
    wrap_in_const(quote! {
        use #krate::__private as __mcp;
        #body
    })
}
