//! `///` comments to descriptions, as clap does for help text.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the doc comments among `attrs`: one leading space stripped from each line, lines
/// joined with newlines, surrounding blank lines trimmed. `None` when there is no text.
pub(crate) fn text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            continue;
        };
        let value = s.value();
        for line in value.split('\n') {
            let line = line.strip_prefix(' ').unwrap_or(line);
            lines.push(line.trim_end().to_owned());
        }
    }
    let text = lines.join("\n");
    let text = text.trim_matches('\n').trim();
    (!text.is_empty()).then(|| text.to_owned())
}
