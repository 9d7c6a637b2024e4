//! Matching a URI back to a template's variables: one pass, no backtracking (see
//! [the rules](UriTemplate#matching)), with the percent-decoding of what each variable takes.

use mcp_uri_template::Operator;

use super::{
    Binding, Bindings, Class, ExpressionMatcher, Piece, QueryMatcher, UriTemplate, Var, is_triplet,
};

impl UriTemplate {
    /// The variables `uri` binds, or `None` when the template does not match it.
    ///
    /// Every variable of the template is in the result, [`Binding::Absent`] when the URI left
    /// it out. See [the rules](UriTemplate#matching).
    pub fn match_uri(&self, uri: &str) -> Option<Bindings> {
        let mut values: Vec<Binding> = self.vars.iter().map(|_| Binding::Absent).collect();
        let mut pos = 0;
        for piece in &self.pieces {
            pos = match piece {
                Piece::Literal(literal) => {
                    if !uri.get(pos..)?.starts_with(literal.as_str()) {
                        return None;
                    }
                    pos + literal.len()
                }
                Piece::Expression(matcher) => {
                    self.match_expression(matcher, uri, pos, &mut values)?
                }
                Piece::Query(query) => self.match_query(query, uri, pos, &mut values)?,
            };
        }
        if pos != uri.len() {
            return None;
        }
        Some(Bindings(
            self.vars
                .iter()
                .map(|v| v.name.clone())
                .zip(values)
                .collect(),
        ))
    }

    /// Matches one non-query expression at `pos`; where its text ends.
    fn match_expression(
        &self,
        matcher: &ExpressionMatcher,
        uri: &str,
        pos: usize,
        values: &mut [Binding],
    ) -> Option<usize> {
        let prefix = matcher.operator.prefix();
        let mut start = pos;
        if !prefix.is_empty() {
            if uri.get(pos..)?.starts_with(prefix) {
                start += prefix.len();
            } else if matcher.optional {
                return Some(pos);
            } else {
                return None;
            }
        }
        let run_end = scan(uri, start, &matcher.class);
        let end = if matcher.anchor.is_empty() {
            run_end
        } else {
            match last_anchor(uri, start, run_end, &matcher.anchor) {
                Some(end) => end,
                None if matcher.anchor_required => return None,
                None => run_end,
            }
        };
        self.bind_expression(matcher, uri.get(start..end)?, !prefix.is_empty(), values)?;
        Some(end)
    }

    /// Binds the variables of one non-query expression from its text (prefix removed).
    fn bind_expression(
        &self,
        matcher: &ExpressionMatcher,
        text: &str,
        prefixed: bool,
        values: &mut [Binding],
    ) -> Option<()> {
        let vars = &self.vars[matcher.vars.clone()];
        if !matcher.split {
            values[matcher.vars.start] = value_binding(&vars[0], text)?;
            return Some(());
        }
        let separator = matcher.operator.separator();
        let count = if text.is_empty() && !prefixed {
            0
        } else {
            text.split(separator).count()
        };
        let required = vars.iter().filter(|v| !v.explode).count();
        let mut spare = count.checked_sub(required)?;
        let mut pieces = text.split(separator).take(count);
        for (offset, var) in vars.iter().enumerate() {
            values[matcher.vars.start + offset] = if var.explode {
                match std::mem::take(&mut spare) {
                    0 => Binding::Absent,
                    n => Binding::List(
                        pieces
                            .by_ref()
                            .take(n)
                            .map(|piece| list_item(var, piece))
                            .collect::<Option<_>>()?,
                    ),
                }
            } else {
                value_binding(var, pieces.next()?)?
            };
        }
        (spare == 0).then_some(())
    }

    /// Binds the variables of a query group from the query string at `pos`, if there is one.
    fn match_query(
        &self,
        query: &QueryMatcher,
        uri: &str,
        pos: usize,
        values: &mut [Binding],
    ) -> Option<usize> {
        if !uri.get(pos..)?.starts_with(query.lead) {
            return Some(pos);
        }
        let start = pos + query.lead.len_utf8();
        let end = uri.get(start..)?.find('#').map_or(uri.len(), |i| start + i);
        let class = Class::for_operator(Operator::Query);
        for parameter in uri.get(start..end)?.split('&') {
            if parameter.is_empty() {
                continue;
            }
            let (name, raw) = parameter.split_once('=').unwrap_or((parameter, ""));
            let offset = self.vars[query.vars.clone()]
                .iter()
                .position(|v| v.name == name)?;
            let index = query.vars.start + offset;
            let var = &self.vars[index];
            if !raw
                .bytes()
                .all(|b| b >= 0x80 || b == b'%' || class.allows(b))
            {
                return None;
            }
            if var.explode {
                let item = decode(raw)?;
                match &mut values[index] {
                    Binding::List(items) => items.push(item),
                    slot => *slot = Binding::List(vec![item]),
                }
            } else {
                if values[index] != Binding::Absent {
                    return None;
                }
                values[index] = if raw.is_empty() {
                    Binding::Single(String::new())
                } else {
                    scalar(var, raw)?
                };
            }
        }
        Some(end)
    }
}

/// Where the run of characters of `class` (and `%XX` triplets, and non-ASCII) from `start`
/// ends. Always a character boundary, never inside a triplet.
fn scan(uri: &str, start: usize, class: &Class) -> usize {
    let bytes = uri.as_bytes();
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            if is_triplet(bytes, i) {
                i += 3;
                continue;
            }
            break;
        }
        if b >= 0x80 || class.allows(b) {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The last position in `start..=run_end` where `anchor` starts, on a character boundary and
/// outside any `%XX` triplet.
fn last_anchor(uri: &str, start: usize, run_end: usize, anchor: &str) -> Option<usize> {
    let bytes = uri.as_bytes();
    (start..=run_end).rev().find(|&end| {
        let inside_triplet =
            (end > start && bytes[end - 1] == b'%') || (end > start + 1 && bytes[end - 2] == b'%');
        uri.is_char_boundary(end) && !inside_triplet && uri[end..].starts_with(anchor)
    })
}

/// Removes `name=` (or a bare `name`) from a value of a named operator (`{;v}`).
fn unname<'a>(var: &Var, text: &'a str) -> Option<&'a str> {
    if !var.operator.named() {
        return Some(text);
    }
    match text.strip_prefix(var.name.as_str())? {
        "" => Some(""),
        rest => rest.strip_prefix('='),
    }
}

/// The binding of a non-exploded variable from its text.
fn value_binding(var: &Var, text: &str) -> Option<Binding> {
    let raw = unname(var, text)?;
    if raw.is_empty() {
        return var.operator.named().then(|| Binding::Single(String::new()));
    }
    scalar(var, raw)
}

/// A non-empty value: a list when it has raw commas, else one decoded string within its prefix.
fn scalar(var: &Var, raw: &str) -> Option<Binding> {
    if raw.contains(',') {
        let items = raw
            .split(',')
            .map(|item| if item.is_empty() { None } else { decode(item) });
        return items.collect::<Option<_>>().map(Binding::List);
    }
    let value = decode(raw)?;
    match var.prefix {
        Some(n) if value.chars().count() > usize::from(n) => None,
        _ => Some(Binding::Single(value)),
    }
}

/// One item of an exploded variable.
fn list_item(var: &Var, text: &str) -> Option<String> {
    let raw = unname(var, text)?;
    if raw.is_empty() && !var.operator.named() {
        return None;
    }
    decode(raw)
}

/// Percent-decodes; `None` for a malformed triplet or invalid UTF-8.
fn decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let high = hex_value(*bytes.get(i + 1)?)?;
            let low = hex_value(*bytes.get(i + 2)?)?;
            out.push(high << 4 | low);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hex_value(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}
