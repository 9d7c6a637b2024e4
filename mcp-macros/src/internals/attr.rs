//! Attribute arguments to plain structs: `#[tool(..)]` and `#[arg(..)]` on parameters.
//!
//! Problems are recorded in the [`Ctxt`] and parsing goes on, so every mistake in an attribute is
//! reported in one build. Each error is spanned on the token to fix.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Attribute, Expr, ExprLit, Lit, LitBool, LitStr};

use super::ctxt::Ctxt;
use super::symbol::{self, ARG_KEYS, TOOL_KEYS};

/// What `#[tool(..)]` said.
#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: Option<LitBool>,
    pub(crate) destructive: Option<LitBool>,
    pub(crate) idempotent: Option<LitBool>,
    pub(crate) open_world: Option<LitBool>,
    pub(crate) icons: Option<Expr>,
    pub(crate) meta: Option<Expr>,
    pub(crate) krate: Option<syn::Path>,
}

/// What `#[arg(..)]` on a parameter said.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    pub(crate) rename: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) default: Option<Expr>,
    pub(crate) examples: Vec<Expr>,
}

/// Reads the value after `key =` as an expression, or records that one is missing.
fn value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
    attr: &str,
) -> syn::Result<Option<Expr>> {
    if meta.input.peek(syn::Token![=]) {
        Ok(Some(meta.value()?.parse::<Expr>()?))
    } else {
        cx.error_spanned_by(
            &meta.path,
            format!("`{attr}` key `{key}` needs a value: `{key} = ...`"),
        );
        skip_rest(meta)?;
        Ok(None)
    }
}

/// Consumes whatever follows a key the parser will not use, so parsing can go on.
fn skip_rest(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

fn string(cx: &Ctxt, expr: Expr, key: &str) -> Option<LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        other => {
            cx.error_spanned_by(other, format!("`{key}` takes a string literal"));
            None
        }
    }
}

/// A hint flag: bare `read_only` is `true`, `read_only = false` says so explicitly.
fn flag(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Option<LitBool>> {
    if meta.input.peek(syn::Token![=]) {
        match meta.value()?.parse::<Expr>()? {
            Expr::Lit(ExprLit {
                lit: Lit::Bool(b), ..
            }) => Ok(Some(b)),
            other => {
                cx.error_spanned_by(other, format!("`{key}` takes `true` or `false`"));
                Ok(None)
            }
        }
    } else if meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` takes no list; write `{key}` or `{key} = false`"),
        );
        skip_rest(meta)?;
        Ok(None)
    } else {
        Ok(Some(LitBool::new(true, meta.path.segments[0].ident.span())))
    }
}

fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| {
            meta.path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>()
                .join("::")
        })
}

impl ToolAttrs {
    pub(crate) fn from_args(cx: &Ctxt, args: TokenStream) -> Self {
        let mut attrs = Self::default();
        let mut seen = BTreeSet::new();
        let parser = syn::meta::parser(|meta| {
            let key = key_of(&meta);
            if !TOOL_KEYS.contains(&key.as_str()) {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown `#[tool]` key `{key}`; expected one of {}",
                        symbol::list(TOOL_KEYS)
                    ),
                );
                return skip_rest(&meta);
            }
            if !seen.insert(key.clone()) {
                cx.error_spanned_by(&meta.path, format!("duplicate `#[tool]` key `{key}`"));
                return skip_rest(&meta);
            }
            match key.as_str() {
                "name" => {
                    attrs.name =
                        value(cx, &meta, &key, "#[tool]")?.and_then(|e| string(cx, e, &key));
                }
                "title" => {
                    attrs.title =
                        value(cx, &meta, &key, "#[tool]")?.and_then(|e| string(cx, e, &key));
                }
                "description" => {
                    attrs.description =
                        value(cx, &meta, &key, "#[tool]")?.and_then(|e| string(cx, e, &key));
                }
                "read_only" => attrs.read_only = flag(cx, &meta, &key)?,
                "destructive" => attrs.destructive = flag(cx, &meta, &key)?,
                "idempotent" => attrs.idempotent = flag(cx, &meta, &key)?,
                "open_world" => attrs.open_world = flag(cx, &meta, &key)?,
                "icons" => attrs.icons = value(cx, &meta, &key, "#[tool]")?,
                "meta" => attrs.meta = value(cx, &meta, &key, "#[tool]")?,
                _ => {
                    if let Some(path) =
                        value(cx, &meta, &key, "#[tool]")?.and_then(|e| string(cx, e, &key))
                    {
                        match path.parse::<syn::Path>() {
                            Ok(parsed) => attrs.krate = Some(parsed),
                            Err(_) => cx.error_spanned_by(
                                &path,
                                "`crate` takes a path, for example `crate = \"::mcp_runtime\"`",
                            ),
                        }
                    }
                }
            }
            Ok(())
        });
        if let Err(error) = parser.parse2(args) {
            cx.syn_error(error);
        }
        attrs
    }
}

impl ArgAttrs {
    /// Reads every `#[arg(..)]` among a parameter's attributes.
    pub(crate) fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        let mut seen = BTreeSet::new();
        for attr in attrs.iter().filter(|a| a.path().is_ident("arg")) {
            let result = attr.parse_nested_meta(|meta| {
                let key = key_of(&meta);
                if !ARG_KEYS.contains(&key.as_str()) {
                    cx.error_spanned_by(
                        &meta.path,
                        format!(
                            "unknown `#[arg]` key `{key}`; expected one of {}",
                            symbol::list(ARG_KEYS)
                        ),
                    );
                    return skip_rest(&meta);
                }
                if key != "example" && !seen.insert(key.clone()) {
                    cx.error_spanned_by(&meta.path, format!("duplicate `#[arg]` key `{key}`"));
                    return skip_rest(&meta);
                }
                let Some(expr) = value(cx, &meta, &key, "#[arg]")? else {
                    return Ok(());
                };
                match key.as_str() {
                    "rename" => out.rename = string(cx, expr, &key),
                    "description" => out.description = string(cx, expr, &key),
                    "default" => out.default = Some(expr),
                    _ => out.examples.push(expr),
                }
                Ok(())
            });
            if let Err(error) = result {
                cx.syn_error(error);
            }
        }
        out
    }
}
