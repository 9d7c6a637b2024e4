//! `openapi!("file", key = value, ..)` into [`Args`].

use proc_macro2::{TokenStream, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprArray, ExprLit, Lit, LitStr};

use crate::internals::attr::{crate_path, flag, key_of, parse_keys, string_value, value};
use crate::internals::ctxt::Ctxt;
use crate::internals::symbol::OpenapiKey;

/// What the invocation said.
pub(crate) struct Args {
    pub(crate) file: Option<LitStr>,
    pub(crate) include_tags: Vec<LitStr>,
    pub(crate) exclude_tags: Vec<LitStr>,
    pub(crate) include_paths: Vec<LitStr>,
    pub(crate) exclude_paths: Vec<LitStr>,
    pub(crate) include_operations: Vec<LitStr>,
    pub(crate) exclude_operations: Vec<LitStr>,
    pub(crate) prefix: Option<LitStr>,
    /// `(operation, name)` pairs: the operation's tool and function take `name`.
    pub(crate) rename: Vec<(LitStr, LitStr)>,
    pub(crate) replace: Vec<LitStr>,
    pub(crate) output_schemas: bool,
    pub(crate) krate: Option<syn::Path>,
}

impl Args {
    pub(crate) fn parse(cx: &Ctxt, input: TokenStream) -> Self {
        let mut args = Self {
            file: None,
            include_tags: Vec::new(),
            exclude_tags: Vec::new(),
            include_paths: Vec::new(),
            exclude_paths: Vec::new(),
            include_operations: Vec::new(),
            exclude_operations: Vec::new(),
            prefix: None,
            rename: Vec::new(),
            replace: Vec::new(),
            output_schemas: true,
            krate: None,
        };
        let mut tokens = input.into_iter().peekable();
        match tokens.next() {
            Some(TokenTree::Literal(literal)) => match Lit::new(literal) {
                Lit::Str(file) => args.file = Some(file),
                other => cx.error_spanned_by(other, EXPECTED),
            },
            Some(other) => {
                cx.error_spanned_by(other, EXPECTED);
                return args;
            }
            None => {
                cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), EXPECTED));
                return args;
            }
        }
        if matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ',') {
            tokens.next();
        }
        let rest: TokenStream = tokens.collect();
        parse_keys(cx, rest, "openapi!", |key, meta| {
            let attr = "openapi!";
            let name = &key_of(meta);
            match key {
                OpenapiKey::IncludeTags => args.include_tags = strings(cx, meta, name)?,
                OpenapiKey::ExcludeTags => args.exclude_tags = strings(cx, meta, name)?,
                OpenapiKey::IncludePaths => args.include_paths = strings(cx, meta, name)?,
                OpenapiKey::ExcludePaths => args.exclude_paths = strings(cx, meta, name)?,
                OpenapiKey::IncludeOperations => args.include_operations = strings(cx, meta, name)?,
                OpenapiKey::ExcludeOperations => args.exclude_operations = strings(cx, meta, name)?,
                OpenapiKey::Replace => args.replace = strings(cx, meta, name)?,
                OpenapiKey::Rename => args.rename = pairs(cx, meta, name)?,
                OpenapiKey::Prefix => args.prefix = string_value(cx, meta, name, attr)?,
                OpenapiKey::OutputSchemas => {
                    args.output_schemas = flag(cx, meta, name)?.is_none_or(|b| b.value);
                }
                OpenapiKey::Crate => args.krate = crate_path(cx, meta, attr)?,
            }
            Ok(())
        });
        args
    }
}

const EXPECTED: &str = "expected the description's file as a string: `openapi!(\"api.yaml\", ..)`";

/// `key = ["a", "b"]`: string literals only.
fn strings(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Vec<LitStr>> {
    let Some(expr) = value(cx, meta, key, "openapi!")? else {
        return Ok(Vec::new());
    };
    let Expr::Array(ExprArray { elems, .. }) = expr else {
        cx.error_spanned_by(
            expr,
            format!("`{key}` takes a list of strings: `{key} = [\"..\"]`"),
        );
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for elem in elems {
        match elem {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => out.push(s),
            other => cx.error_spanned_by(other, format!("`{key}` takes string literals")),
        }
    }
    Ok(out)
}

/// `key = [("a", "b"), ..]`: pairs of string literals.
fn pairs(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Vec<(LitStr, LitStr)>> {
    let Some(expr) = value(cx, meta, key, "openapi!")? else {
        return Ok(Vec::new());
    };
    let usage =
        format!("`{key}` takes a list of pairs: `{key} = [(\"operationId\", \"new_name\")]`");
    let Expr::Array(ExprArray { elems, .. }) = expr else {
        cx.error_spanned_by(expr, usage);
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for elem in elems {
        let pair = match &elem {
            Expr::Tuple(tuple) if tuple.elems.len() == 2 => {
                match (&tuple.elems[0], &tuple.elems[1]) {
                    (
                        Expr::Lit(ExprLit {
                            lit: Lit::Str(from),
                            ..
                        }),
                        Expr::Lit(ExprLit {
                            lit: Lit::Str(to), ..
                        }),
                    ) => Some((from.clone(), to.clone())),
                    _ => None,
                }
            }
            _ => None,
        };
        match pair {
            Some(pair) => out.push(pair),
            None => cx.error_spanned_by(elem, usage.clone()),
        }
    }
    Ok(out)
}
