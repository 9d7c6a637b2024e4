//! Attribute arguments to plain structs: `#[tool(..)]` and `#[arg(..)]` on parameters.
//!
//! Problems are recorded in the [`Ctxt`] and parsing goes on, so every mistake in an attribute is
//! reported in one build. Each error is spanned on the token to fix.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Attribute, Expr, ExprLit, Lit, LitBool, LitStr};

use super::ctxt::Ctxt;
use super::symbol::{self, ArgKey, Key, PromptKey, ResourceKey, ServerKey, ToolKey};

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
    /// `scopes = [..]`: the OAuth scopes a caller needs.
    pub(crate) scopes: Option<Expr>,
    pub(crate) meta: Option<Expr>,
    /// `inline`: a sync tool runs on the request's task instead of tokio's blocking pool.
    pub(crate) inline: Option<LitBool>,
    /// `ui = "ui://…"`: the MCP Apps page the tool links to (`_meta.ui.resourceUri`).
    pub(crate) ui: Option<LitStr>,
    /// `task = "optional" | "required"`: the tool may (or must) run as a task.
    pub(crate) task: Option<LitStr>,
    /// `layer = expr`: middleware around this tool's calls only.
    pub(crate) layer: Option<Expr>,
    pub(crate) krate: Option<syn::Path>,
}

/// What `#[arg(..)]` on a parameter said.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    pub(crate) rename: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) default: Option<Expr>,
    pub(crate) examples: Vec<Expr>,
    pub(crate) complete: Option<Expr>,
    /// The `complete` key itself, to point at when it is not allowed.
    pub(crate) complete_key: Option<syn::Path>,
    /// `header = "Name"`: the tool argument is mirrored in the `Mcp-Param-Name` HTTP header.
    pub(crate) header: Option<LitStr>,
}

/// What `#[resource("uri", ..)]` said.
#[derive(Default)]
pub(crate) struct ResourceAttrs {
    pub(crate) uri: Option<LitStr>,
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) size: Option<Expr>,
    pub(crate) audience: Option<Expr>,
    pub(crate) priority: Option<Expr>,
    pub(crate) last_modified: Option<LitStr>,
    pub(crate) icons: Option<Expr>,
    /// `scopes = [..]`: the OAuth scopes a caller needs.
    pub(crate) scopes: Option<Expr>,
    pub(crate) meta: Option<Expr>,
    pub(crate) list: Option<Expr>,
    pub(crate) allow_traversal: Option<LitBool>,
    /// `layer = expr`: middleware around this resource's reads only.
    pub(crate) layer: Option<Expr>,
    pub(crate) krate: Option<syn::Path>,
}

/// What `#[prompt(..)]` said.
#[derive(Default)]
pub(crate) struct PromptAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) icons: Option<Expr>,
    /// `scopes = [..]`: the OAuth scopes a caller needs.
    pub(crate) scopes: Option<Expr>,
    pub(crate) meta: Option<Expr>,
    /// `layer = expr`: middleware around this prompt's `prompts/get` only.
    pub(crate) layer: Option<Expr>,
    pub(crate) krate: Option<syn::Path>,
}

/// What `#[server(..)]` said.
#[derive(Default)]
pub(crate) struct ServerAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) version: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) instructions: Option<LitStr>,
    pub(crate) website_url: Option<LitStr>,
    pub(crate) icons: Option<Expr>,
    /// `scopes = [..]`: the OAuth scopes a caller needs.
    pub(crate) scopes: Option<Expr>,
    pub(crate) krate: Option<syn::Path>,
}

/// Parses `key = value, flag, ...` with the closed key set `K`: unknown and duplicate keys are
/// recorded and skipped, and `on_key` reads the value of every accepted key.
pub(crate) fn parse_keys<K: Key>(
    cx: &Ctxt,
    args: TokenStream,
    attr: &str,
    on_key: impl FnMut(K, &ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    let mut seen = Vec::new();
    if let Err(error) = syn::meta::parser(on_meta(cx, attr, &mut seen, on_key)).parse2(args) {
        cx.syn_error(error);
    }
}

/// [`parse_keys`] over every `#[name(..)]` among `attrs` (a parameter may carry several
/// `#[arg]`), a key counted once across all of them.
pub(crate) fn parse_attr_keys<K: Key>(
    cx: &Ctxt,
    attrs: &[Attribute],
    name: &str,
    mut on_key: impl FnMut(K, &ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    let mut seen = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident(name)) {
        if let Err(error) = attr.parse_nested_meta(on_meta(cx, name, &mut seen, &mut on_key)) {
            cx.syn_error(error);
        }
    }
}

/// The handler of one `key` or `key = value`: the key looked up in `K`'s table, then passed on.
fn on_meta<'c, K: Key>(
    cx: &'c Ctxt,
    attr: &'c str,
    seen: &'c mut Vec<K>,
    mut on_key: impl FnMut(K, &ParseNestedMeta<'_>) -> syn::Result<()> + 'c,
) -> impl FnMut(ParseNestedMeta<'_>) -> syn::Result<()> + 'c {
    move |meta| {
        let name = key_of(&meta);
        // An attribute reads `#[tool]`; a function-like macro (`openapi!`) as it is.
        let shown = if attr.ends_with('!') {
            attr.to_owned()
        } else {
            format!("#[{attr}]")
        };
        let Some(&(_, key)) = K::ALL.iter().find(|(text, _)| *text == name) else {
            cx.error_spanned_by(
                &meta.path,
                format!(
                    "unknown `{shown}` key `{name}`; expected one of {}",
                    symbol::list::<K>()
                ),
            );
            return skip_rest(&meta);
        };
        if seen.contains(&key) && !key.repeatable() {
            cx.error_spanned_by(&meta.path, format!("duplicate `{shown}` key `{name}`"));
            return skip_rest(&meta);
        }
        seen.push(key);
        on_key(key, &meta)
    }
}

pub(crate) fn string_value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
    attr: &str,
) -> syn::Result<Option<LitStr>> {
    Ok(value(cx, meta, key, attr)?.and_then(|e| string(cx, e, key)))
}

pub(crate) fn crate_path(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    attr: &str,
) -> syn::Result<Option<syn::Path>> {
    let Some(path) = string_value(cx, meta, "crate", attr)? else {
        return Ok(None);
    };
    match path.parse::<syn::Path>() {
        Ok(parsed) => Ok(Some(parsed)),
        Err(_) => {
            cx.error_spanned_by(
                &path,
                "`crate` takes a path, for example `crate = \"::mcp_runtime\"`",
            );
            Ok(None)
        }
    }
}

impl ResourceAttrs {
    pub(crate) fn from_args(cx: &Ctxt, args: TokenStream) -> Self {
        let mut attrs = Self::default();
        let mut rest = args.clone();
        // The URI comes first, unnamed: `#[resource("notes://{id}", ..)]`.
        let mut tokens = args.into_iter();
        if let Some(proc_macro2::TokenTree::Literal(literal)) = tokens.next() {
            let lit: syn::Lit = syn::Lit::new(literal);
            match lit {
                syn::Lit::Str(uri) => {
                    attrs.uri = Some(uri);
                    let after: TokenStream = tokens.collect();
                    let mut after = after.into_iter().peekable();
                    if matches!(after.peek(), Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == ',')
                    {
                        after.next();
                    }
                    rest = after.collect();
                }
                other => {
                    cx.error_spanned_by(
                        other,
                        "the resource URI is a string literal: `#[resource(\"scheme://path\")]`",
                    );
                    return attrs;
                }
            }
        }
        parse_keys(cx, rest, "resource", |key, meta| {
            let attr = "#[resource]";
            let name = &key_of(meta);
            match key {
                ResourceKey::Name => attrs.name = string_value(cx, meta, name, attr)?,
                ResourceKey::Title => attrs.title = string_value(cx, meta, name, attr)?,
                ResourceKey::Description => {
                    attrs.description = string_value(cx, meta, name, attr)?;
                }
                ResourceKey::MimeType => attrs.mime_type = string_value(cx, meta, name, attr)?,
                ResourceKey::LastModified => {
                    attrs.last_modified = string_value(cx, meta, name, attr)?;
                }
                ResourceKey::Size => attrs.size = value(cx, meta, name, attr)?,
                ResourceKey::Audience => attrs.audience = value(cx, meta, name, attr)?,
                ResourceKey::Priority => attrs.priority = value(cx, meta, name, attr)?,
                ResourceKey::Icons => attrs.icons = value(cx, meta, name, attr)?,
                ResourceKey::Scopes => attrs.scopes = value(cx, meta, name, attr)?,
                ResourceKey::Meta => attrs.meta = value(cx, meta, name, attr)?,
                ResourceKey::List => attrs.list = value(cx, meta, name, attr)?,
                ResourceKey::AllowTraversal => attrs.allow_traversal = flag(cx, meta, name)?,
                ResourceKey::Layer => attrs.layer = value(cx, meta, name, attr)?,
                ResourceKey::Crate => attrs.krate = crate_path(cx, meta, attr)?,
            }
            Ok(())
        });
        attrs
    }
}

impl PromptAttrs {
    pub(crate) fn from_args(cx: &Ctxt, args: TokenStream) -> Self {
        let mut attrs = Self::default();
        parse_keys(cx, args, "prompt", |key, meta| {
            let attr = "#[prompt]";
            let name = &key_of(meta);
            match key {
                PromptKey::Name => attrs.name = string_value(cx, meta, name, attr)?,
                PromptKey::Title => attrs.title = string_value(cx, meta, name, attr)?,
                PromptKey::Description => attrs.description = string_value(cx, meta, name, attr)?,
                PromptKey::Icons => attrs.icons = value(cx, meta, name, attr)?,
                PromptKey::Scopes => attrs.scopes = value(cx, meta, name, attr)?,
                PromptKey::Meta => attrs.meta = value(cx, meta, name, attr)?,
                PromptKey::Layer => attrs.layer = value(cx, meta, name, attr)?,
                PromptKey::Crate => attrs.krate = crate_path(cx, meta, attr)?,
            }
            Ok(())
        });
        attrs
    }
}

impl ServerAttrs {
    pub(crate) fn from_args(cx: &Ctxt, args: TokenStream) -> Self {
        let mut attrs = Self::default();
        parse_keys(cx, args, "server", |key, meta| {
            let attr = "#[server]";
            let name = &key_of(meta);
            match key {
                ServerKey::Name => attrs.name = string_value(cx, meta, name, attr)?,
                ServerKey::Version => attrs.version = string_value(cx, meta, name, attr)?,
                ServerKey::Title => attrs.title = string_value(cx, meta, name, attr)?,
                ServerKey::Description => attrs.description = string_value(cx, meta, name, attr)?,
                ServerKey::Instructions => {
                    attrs.instructions = string_value(cx, meta, name, attr)?;
                }
                ServerKey::WebsiteUrl => attrs.website_url = string_value(cx, meta, name, attr)?,
                ServerKey::Icons => attrs.icons = value(cx, meta, name, attr)?,
                ServerKey::Scopes => attrs.scopes = value(cx, meta, name, attr)?,
                ServerKey::Crate => attrs.krate = crate_path(cx, meta, attr)?,
            }
            Ok(())
        });
        attrs
    }
}

/// Reads the value after `key =` as an expression, or records that one is missing.
pub(crate) fn value(
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
pub(crate) fn flag(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
) -> syn::Result<Option<LitBool>> {
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

pub(crate) fn key_of(meta: &ParseNestedMeta<'_>) -> String {
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
        parse_keys(cx, args, "tool", |key, meta| {
            let attr = "#[tool]";
            let name = &key_of(meta);
            match key {
                ToolKey::Name => attrs.name = string_value(cx, meta, name, attr)?,
                ToolKey::Title => attrs.title = string_value(cx, meta, name, attr)?,
                ToolKey::Description => attrs.description = string_value(cx, meta, name, attr)?,
                ToolKey::ReadOnly => attrs.read_only = flag(cx, meta, name)?,
                ToolKey::Destructive => attrs.destructive = flag(cx, meta, name)?,
                ToolKey::Idempotent => attrs.idempotent = flag(cx, meta, name)?,
                ToolKey::OpenWorld => attrs.open_world = flag(cx, meta, name)?,
                ToolKey::Icons => attrs.icons = value(cx, meta, name, attr)?,
                ToolKey::Scopes => attrs.scopes = value(cx, meta, name, attr)?,
                ToolKey::Meta => attrs.meta = value(cx, meta, name, attr)?,
                ToolKey::Inline => attrs.inline = flag(cx, meta, name)?,
                ToolKey::Ui => attrs.ui = string_value(cx, meta, name, attr)?,
                ToolKey::Task => {
                    attrs.task = string_value(cx, meta, name, attr)?;
                    if let Some(task) = &attrs.task
                        && !matches!(task.value().as_str(), "optional" | "required")
                    {
                        cx.error_spanned_by(task, "`task` takes \"optional\" or \"required\"");
                        attrs.task = None;
                    }
                }
                ToolKey::Layer => attrs.layer = value(cx, meta, name, attr)?,
                ToolKey::Crate => attrs.krate = crate_path(cx, meta, attr)?,
            }
            Ok(())
        });
        attrs
    }
}

impl ArgAttrs {
    /// Reads every `#[arg(..)]` among a parameter's attributes.
    pub(crate) fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        parse_attr_keys(cx, attrs, "arg", |key, meta| {
            let name = &key_of(meta);
            if key == ArgKey::Complete {
                out.complete_key = Some(meta.path.clone());
            }
            let Some(expr) = value(cx, meta, name, "#[arg]")? else {
                return Ok(());
            };
            match key {
                ArgKey::Rename => out.rename = string(cx, expr, name),
                ArgKey::Description => out.description = string(cx, expr, name),
                ArgKey::Default => out.default = Some(expr),
                ArgKey::Complete => out.complete = Some(expr),
                ArgKey::Header => out.header = string(cx, expr, name),
                ArgKey::Example => out.examples.push(expr),
            }
            Ok(())
        });
        out
    }
}
