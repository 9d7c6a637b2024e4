//! Expanding a template with values (RFC 6570 §3.2), with the percent-encoding each operator
//! asks for.

use mcp_uri_template::{self as parse, Part};

use super::{Binding, RESERVED, UriTemplate, is_triplet};

impl UriTemplate {
    /// Expands the template with the values `value_of` gives each variable (RFC 6570 §3.2).
    ///
    /// `None` and [`Binding::Absent`] are both undefined: the variable is skipped, as is an
    /// empty list. With a map: `template.expand(|name| map.get(name))`.
    pub fn expand<'v>(&self, value_of: impl Fn(&str) -> Option<&'v Binding>) -> String {
        let mut out = String::new();
        for part in &self.template.parts {
            match part {
                Part::Literal(literal) => out.push_str(literal),
                Part::Expression(expression) => expand_expression(expression, &value_of, &mut out),
            }
        }
        out
    }
}

/// Appends `value`, percent-encoding every character outside the unreserved set (and, when
/// `allow_reserved`, the reserved set and existing `%XX` triplets).
fn encode(value: &str, allow_reserved: bool, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let bytes = value.as_bytes();
    for (i, c) in value.char_indices() {
        let unreserved = c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~');
        if unreserved
            || (allow_reserved && (RESERVED.contains(c) || (c == '%' && is_triplet(bytes, i))))
        {
            out.push(c);
        } else {
            for &b in &bytes[i..i + c.len_utf8()] {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
    }
}

/// Appends the expansion of one expression (RFC 6570 Appendix A).
fn expand_expression<'v>(
    expression: &parse::Expression,
    value_of: &dyn Fn(&str) -> Option<&'v Binding>,
    out: &mut String,
) {
    let op = expression.operator;
    let mut first = true;
    for var in &expression.variables {
        let value = match value_of(&var.name) {
            None | Some(Binding::Absent) => continue,
            Some(Binding::List(items)) if items.is_empty() => continue,
            Some(value) => value,
        };
        if first {
            out.push_str(op.prefix());
            first = false;
        } else {
            out.push(op.separator());
        }
        match value {
            Binding::Single(text) => {
                if op.named() {
                    out.push_str(&var.name);
                    if text.is_empty() {
                        out.push_str(op.if_empty());
                        continue;
                    }
                    out.push('=');
                }
                let text = match var.prefix {
                    Some(n) => text
                        .char_indices()
                        .nth(usize::from(n))
                        .map_or(text.as_str(), |(end, _)| &text[..end]),
                    None => text,
                };
                encode(text, op.allow_reserved(), out);
            }
            Binding::List(items) if var.explode => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(op.separator());
                    }
                    if op.named() {
                        out.push_str(&var.name);
                        if item.is_empty() {
                            out.push_str(op.if_empty());
                            continue;
                        }
                        out.push('=');
                    }
                    encode(item, op.allow_reserved(), out);
                }
            }
            Binding::List(items) => {
                if op.named() {
                    out.push_str(&var.name);
                    out.push('=');
                }
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    encode(item, op.allow_reserved(), out);
                }
            }
            Binding::Absent => {}
        }
    }
}
