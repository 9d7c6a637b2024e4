//! RFC 6570 URI templates at run time: matching the URI of a `resources/read` back to a
//! template's variables, and expanding a template with values.
//!
//! The parser is the `mcp-uri-template` crate, the one the macros use to check every
//! `#[resource]` template at compile time, so both sides accept exactly the same templates.
//!
//! Matching inverts expansion in one pass without backtracking, with a matcher built when the
//! template is parsed: literals match exactly, each variable takes the longest run of the
//! characters its operator allows that still leaves the next literal, values are
//! percent-decoded, `{?a,b}{&c}` read the query in any order (missing parameters absent, unknown
//! ones no match). Among several templates that match one URI the most specific wins: more
//! literal characters, then fewer wide variables, then fewer optional ones, then the text. The
//! full rules are on [`UriTemplate`], where rustdoc shows them.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use mcp_uri_template::{self as parse, Operator, Part, Template};

/// Why a URI template does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// What is wrong and how to fix it.
    pub message: String,
    /// Byte offsets of the offending text in the template.
    pub span: Range<usize>,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

impl From<parse::TemplateError> for TemplateError {
    fn from(error: parse::TemplateError) -> Self {
        Self {
            message: error.message,
            span: error.span,
        }
    }
}

/// The value of one template variable: what a URI bound, or what an expansion writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// No value: a query parameter the URI left out, an exploded variable with no items. An
    /// expansion skips it.
    Absent,
    /// One value, percent-decoded.
    Single(String),
    /// A list: an exploded variable's items, or a value written `a,b,c`; each percent-decoded.
    List(Vec<String>),
}

/// The variables a URI bound, in template order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bindings(Vec<(String, Binding)>);

impl Bindings {
    /// The binding of `name`, if the template has such a variable.
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    /// Every variable and its binding, in template order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Binding)> {
        self.0.iter().map(|(n, b)| (n.as_str(), b))
    }

    pub(crate) fn into_map(self) -> HashMap<String, Binding> {
        self.0.into_iter().collect()
    }
}

/// A parsed RFC 6570 URI template (levels 1 to 4), with its matcher.
///
/// # Matching
///
/// [`UriTemplate::match_uri`] inverts [expansion](https://www.rfc-editor.org/rfc/rfc6570#section-3.2).
/// The matcher is built once, when the template is parsed; matching walks the URI once, without
/// backtracking, and allocates only the bindings it returns.
///
/// - Literal text matches exactly, byte for byte (case-sensitive, `%XX` not decoded).
/// - `{v}` takes a non-empty run of unreserved characters (`A-Z a-z 0-9 - . _ ~`), `%XX`
///   triplets, non-ASCII characters, and, as JavaScript's `encodeURIComponent` leaves them,
///   `!`, `'`, `(`, `)`, `*`. Other reserved characters (`/ ? # : @ & = + $ ; [ ]`) end it
///   unless percent-encoded, so `%2F` inside `{v}` decodes to `/`.
/// - `{+v}` also takes reserved characters except `?` and `#`, so it may span `/`; `{#v}` follows
///   `#` and takes everything else, `?` included.
/// - `{.v}`, `{/v}` and `{;v}` follow their `.`, `/`, `;`; a value of `{.v}` cannot hold a raw
///   `.` (nor `{/v}` a raw `/`). `{;v}` is `;v` (empty) or `;v=value`, names in template order.
/// - An expression's text ends where the text after it can start: a variable takes the longest
///   run that is followed by the next literal (or the next expression's `.`, `/`, `;`, `#`).
/// - Several variables in one expression (`{x,y}`, `{/a,b}`) split its text at the operator's
///   separator, one piece each, all required. An exploded variable (`{/path*}`, `{list*}`,
///   `{;p*}`) takes every piece the others leave (the first exploded one, if several), as
///   [`Binding::List`]; with no pieces at all it is [`Binding::Absent`].
/// - After that split, a non-exploded value that still holds a raw `,` is a
///   [`Binding::List`] (the RFC writes a list as `a,b,c`); an encoded `%2C` stays in its value.
/// - `{?a,b}` and the `{&c}` right after it read the whole query string, parameters in any
///   order: a missing parameter is [`Binding::Absent`], `?a` or `?a=` is an empty value, a
///   parameter that names no variable means no match, and so does a non-exploded one given
///   twice; an exploded one (`{?tag*}`) collects every `tag=...`. `+` is a plus, not a space.
///   Query values may hold any URI character but `&` and `#`.
/// - Values are percent-decoded; invalid UTF-8 means no match. A `:n` prefix variable matches
///   at most `n` characters. Every value bound is non-empty, except `{;v}` and `{?v}` values.
///
/// # Choosing among templates
///
/// Several templates may match one URI (`x://users/{id}` and `x://{+rest}` both match
/// `x://users/7`). [`UriTemplate::specificity`] orders them, most specific first: more literal
/// characters, then fewer wide variables (`{+v}`, `{#v}`, exploded), then fewer variables that
/// may be absent (query, exploded), then the template text. A registry sorts its templates once
/// and reads a URI with the first that matches. Two templates that can never be told apart
/// ([`UriTemplate::indistinguishable`]) should be refused when the server is built.
///
/// # Expansion
///
/// [`UriTemplate::expand`] follows RFC 6570 §3.2 to the letter: undefined (absent) variables and
/// empty lists are skipped, `:n` keeps the first `n` characters, `*` explodes a list, `{+v}` and
/// `{#v}` pass reserved characters and existing `%XX` triplets through. Associative arrays
/// (the RFC's `keys`) are not modelled: a template variable binds a string or a list.
#[derive(Clone)]
pub struct UriTemplate {
    text: String,
    template: Template,
    vars: Vec<Var>,
    pieces: Vec<Piece>,
}

/// One variable, flattened out of its expression.
#[derive(Debug, Clone)]
struct Var {
    name: String,
    operator: Operator,
    explode: bool,
    prefix: Option<u16>,
}

/// One step of the matcher.
#[derive(Debug, Clone)]
enum Piece {
    Literal(String),
    Expression(ExpressionMatcher),
    /// A `{?...}` expression and the `{&...}` ones right after it, or `{&...}` ones alone.
    Query(QueryMatcher),
}

#[derive(Debug, Clone)]
struct ExpressionMatcher {
    operator: Operator,
    /// The expression's variables, as indices into `UriTemplate::vars`.
    vars: Range<usize>,
    /// The characters the expression's text may hold (`%XX` and non-ASCII always).
    class: Class,
    /// Whether the text is split at the operator's separator: several variables, or exploded.
    split: bool,
    /// Whether every variable is exploded, so the expression may be missing altogether.
    optional: bool,
    /// What follows the expression: the text ends at the last place this starts within it.
    /// Empty: the text runs as far as its class allows.
    anchor: String,
    /// Whether the anchor must be found (a literal, or a required expression's prefix).
    anchor_required: bool,
}

#[derive(Debug, Clone)]
struct QueryMatcher {
    vars: Range<usize>,
    /// `?`, or `&` for `{&...}` that continues a query written in a literal.
    lead: char,
}

/// A set of ASCII characters.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Class([bool; 128]);

impl fmt::Debug for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chars: String = (0u8..128)
            .filter(|&b| self.0[usize::from(b)])
            .map(char::from)
            .collect();
        f.debug_tuple("Class").field(&chars).finish()
    }
}

/// RFC 3986 reserved characters (gen-delims and sub-delims).
const RESERVED: &str = ":/?#[]@!$&'()*+,;=";
/// Sub-delimiters JavaScript's `encodeURIComponent` leaves unencoded.
const JS_UNENCODED: &str = "!'()*";

impl Class {
    /// Unreserved characters and `chars`.
    fn unreserved_and(chars: &str) -> Self {
        let mut table = [false; 128];
        for b in 0u8..128 {
            table[usize::from(b)] = b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        }
        Self(table).with(chars)
    }

    fn with(mut self, chars: &str) -> Self {
        for b in chars.bytes() {
            self.0[usize::from(b & 0x7f)] = true;
        }
        self
    }

    fn without(mut self, chars: &str) -> Self {
        for b in chars.bytes() {
            self.0[usize::from(b & 0x7f)] = false;
        }
        self
    }

    fn allows(&self, b: u8) -> bool {
        self.0.get(usize::from(b)).copied().unwrap_or(false)
    }

    /// The class of a value of an expression with `operator`.
    fn for_operator(operator: Operator) -> Self {
        let plain = Self::unreserved_and(JS_UNENCODED);
        match operator {
            Operator::Reserved => Self::unreserved_and(RESERVED).without("?#"),
            Operator::Fragment => Self::unreserved_and(RESERVED).without("#"),
            Operator::Label => plain.without("."),
            Operator::Query | Operator::QueryContinuation => {
                Self::unreserved_and(RESERVED).without("&#")
            }
            Operator::Simple | Operator::PathSegment | Operator::PathParam => plain,
        }
    }
}

impl ExpressionMatcher {
    fn new(operator: Operator, vars: Range<usize>, specs: &[parse::VarSpec]) -> Self {
        let split = specs.len() > 1 || specs.iter().any(|v| v.explode);
        // `,` always: it joins the items of a non-exploded list.
        let mut class = Class::for_operator(operator).with(",");
        if operator == Operator::PathParam {
            class = class.with("=");
        }
        if split {
            class = class.with(&operator.separator().to_string());
        }
        Self {
            operator,
            vars,
            class,
            split,
            optional: specs.iter().all(|v| v.explode),
            anchor: String::new(),
            anchor_required: false,
        }
    }
}

impl UriTemplate {
    /// Parses `text` as an RFC 6570 template (levels 1 to 4) and builds its matcher.
    ///
    /// A variable may appear only once in a template.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let template = parse::parse(text)?;
        let mut vars = Vec::new();
        let mut pieces = Vec::new();
        for part in &template.parts {
            let expression = match part {
                Part::Literal(literal) => {
                    pieces.push(Piece::Literal(literal.clone()));
                    continue;
                }
                Part::Expression(expression) => expression,
            };
            let first = vars.len();
            vars.extend(expression.variables.iter().map(|v| Var {
                name: v.name.clone(),
                operator: expression.operator,
                explode: v.explode,
                prefix: v.prefix,
            }));
            let range = first..vars.len();
            match expression.operator {
                Operator::Query => pieces.push(Piece::Query(QueryMatcher {
                    vars: range,
                    lead: '?',
                })),
                Operator::QueryContinuation => match pieces.last_mut() {
                    Some(Piece::Query(query)) => query.vars.end = range.end,
                    _ => pieces.push(Piece::Query(QueryMatcher {
                        vars: range,
                        lead: '&',
                    })),
                },
                operator => pieces.push(Piece::Expression(ExpressionMatcher::new(
                    operator,
                    range,
                    &expression.variables,
                ))),
            }
        }
        let anchors: Vec<(String, bool)> = (0..pieces.len())
            .map(|i| match pieces.get(i + 1) {
                None => (String::new(), false),
                Some(Piece::Literal(literal)) => (literal.clone(), true),
                Some(Piece::Expression(next)) => {
                    (next.operator.prefix().to_owned(), !next.optional)
                }
                Some(Piece::Query(next)) => (next.lead.to_string(), false),
            })
            .collect();
        for (piece, (anchor, required)) in pieces.iter_mut().zip(anchors) {
            if let Piece::Expression(matcher) = piece {
                matcher.anchor = anchor;
                matcher.anchor_required = required;
            }
        }
        Ok(Self {
            text: text.to_owned(),
            template,
            vars,
            pieces,
        })
    }

    /// The template text, as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the template has no expression: it names one fixed URI.
    pub fn is_static(&self) -> bool {
        self.template.is_static()
    }

    /// The variable names, in template order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.vars.iter().map(|v| v.name.as_str())
    }

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

    /// The sort key of the [tie-break rule](UriTemplate#choosing-among-templates): sorting templates
    /// by it, ascending, puts the most specific first.
    ///
    /// The key is: more literal characters, then fewer wide variables (`{+v}`, `{#v}`,
    /// exploded), then fewer variables that may be absent (query, exploded), then the template
    /// text in byte order.
    pub fn specificity(&self) -> impl Ord + use<> {
        let literal: usize = self
            .pieces
            .iter()
            .map(|piece| match piece {
                Piece::Literal(literal) => literal.chars().count(),
                _ => 0,
            })
            .sum();
        let wide = self
            .vars
            .iter()
            .filter(|v| v.explode || v.operator.allow_reserved())
            .count();
        let optional = self
            .vars
            .iter()
            .filter(|v| {
                v.explode || matches!(v.operator, Operator::Query | Operator::QueryContinuation)
            })
            .count();
        (Reverse(literal), wide, optional, self.text.clone())
    }

    /// Whether two templates can never be told apart: the same literals and the same operator
    /// structure (each variable exploded or prefixed alike), differing only in the names of
    /// variables that do not appear in the URI, such as `notes://{id}` and `notes://{name}`.
    ///
    /// Names of `{;v}`, `{?v}` and `{&v}` variables are written in the URI, so they count; the
    /// order of query variables does not.
    pub fn indistinguishable(a: &Self, b: &Self) -> bool {
        let same_var = |x: &Var, y: &Var, named: bool| {
            x.explode == y.explode && x.prefix == y.prefix && (!named || x.name == y.name)
        };
        a.pieces.len() == b.pieces.len()
            && a.pieces.iter().zip(&b.pieces).all(|pair| match pair {
                (Piece::Literal(x), Piece::Literal(y)) => x == y,
                (Piece::Expression(x), Piece::Expression(y)) => {
                    let (xs, ys) = (&a.vars[x.vars.clone()], &b.vars[y.vars.clone()]);
                    x.operator == y.operator
                        && xs.len() == ys.len()
                        && xs
                            .iter()
                            .zip(ys)
                            .all(|(v, w)| same_var(v, w, x.operator.named()))
                }
                (Piece::Query(x), Piece::Query(y)) => {
                    let (xs, ys) = (&a.vars[x.vars.clone()], &b.vars[y.vars.clone()]);
                    x.lead == y.lead
                        && xs.len() == ys.len()
                        && xs.iter().all(|v| ys.iter().any(|w| same_var(v, w, true)))
                }
                _ => false,
            })
    }

    /// The first bound value that would escape a root directory, with the variable's name and
    /// why ([`escapes`]).
    ///
    /// Every variable is screened, not only `{+v}` and exploded ones: a percent-encoded `/`
    /// (`%2F`) makes any decoded value a path.
    pub(crate) fn escaping_variable<'b>(
        &self,
        bindings: &'b Bindings,
    ) -> Option<(&'b str, &'static str)> {
        bindings.iter().find_map(|(name, binding)| {
            let reason = match binding {
                Binding::Absent => None,
                Binding::Single(value) => escapes(value),
                Binding::List(items) => items.iter().find_map(|item| escapes(item)),
            }?;
            Some((name, reason))
        })
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UriTemplate").field(&self.text).finish()
    }
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for UriTemplate {}

/// Why a decoded value bound to a template variable would escape the directory a handler
/// serves, or `None` when it is safe: it contains NUL, starts with `/` or `\` (absolute, UNC),
/// starts with a Windows drive (`C:`), or has more `..` segments (between `/` or `\`) than
/// the names before them, so that it would climb out of the directory: `a/..` and `a/../b` stay
/// inside, `a/../..` does not.
///
/// The value is screened after percent-decoding, so `%2e%2e/x` is caught as `../x`.
pub(crate) fn escapes(value: &str) -> Option<&'static str> {
    if value.contains('\0') {
        return Some("it contains a NUL character");
    }
    if value.starts_with(['/', '\\']) {
        return Some("it is an absolute path");
    }
    if let [drive, b':', ..] = value.as_bytes()
        && drive.is_ascii_alphabetic()
    {
        return Some("it starts with a Windows drive");
    }
    // A `..` is fine as long as it stays inside: `a/..` is the directory itself, `a/../b` is `b`.
    let mut depth = 0usize;
    for segment in value.split(['/', '\\']) {
        match segment {
            ".." => match depth.checked_sub(1) {
                Some(up) => depth = up,
                None => return Some("it climbs out of its directory with `..`"),
            },
            "" | "." => {}
            _ => depth += 1,
        }
    }
    None
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

fn is_triplet(bytes: &[u8], at: usize) -> bool {
    bytes.get(at) == Some(&b'%')
        && bytes.get(at + 1).is_some_and(u8::is_ascii_hexdigit)
        && bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> UriTemplate {
        UriTemplate::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn single(s: &str) -> Binding {
        Binding::Single(s.to_owned())
    }

    fn list(items: &[&str]) -> Binding {
        Binding::List(items.iter().map(|s| (*s).to_owned()).collect())
    }

    /// The bindings of `uri`, as `(name, binding)` pairs in template order.
    fn bound(template: &str, uri: &str) -> Option<Vec<(String, Binding)>> {
        t(template).match_uri(uri).map(|b| b.0)
    }

    fn pairs(expected: &[(&str, Binding)]) -> Option<Vec<(String, Binding)>> {
        Some(
            expected
                .iter()
                .map(|(n, b)| ((*n).to_owned(), b.clone()))
                .collect(),
        )
    }

    /// The variables of RFC 6570 §1.2 and §3.2. `keys` (an associative array in the RFC) is
    /// modelled as the flat list of its keys and values, which expands exactly as the RFC says
    /// when it is not exploded; the RFC's `{keys*}` examples are left out.
    fn rfc_values() -> HashMap<&'static str, Binding> {
        HashMap::from([
            ("var", single("value")),
            ("hello", single("Hello World!")),
            ("path", single("/foo/bar")),
            ("list", list(&["red", "green", "blue"])),
            ("keys", list(&["semi", ";", "dot", ".", "comma", ","])),
            ("empty", single("")),
            ("x", single("1024")),
            ("y", single("768")),
            ("half", single("50%")),
            ("base", single("http://example.com/home/")),
            ("empty_list", Binding::List(Vec::new())),
            ("undef", Binding::Absent),
        ])
    }

    fn expand_rfc(template: &str) -> String {
        let values = rfc_values();
        t(template).expand(|name| values.get(name))
    }

    #[test]
    fn rfc_6570_level_1_and_2_examples_expand() {
        let cases = [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"),
        ];
        for (template, expected) in cases {
            assert_eq!(expand_rfc(template), expected, "{template}");
        }
    }

    #[test]
    fn rfc_6570_level_3_examples_expand() {
        let cases = [
            ("map?{x,y}", "map?1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("{#path,x}/here", "#/foo/bar,1024/here"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"),
            ("{/var}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
        ];
        for (template, expected) in cases {
            assert_eq!(expand_rfc(template), expected, "{template}");
        }
    }

    #[test]
    fn rfc_6570_level_4_examples_expand() {
        // `{/var:1,var}` repeats a variable, which templates here may not do.
        assert!(UriTemplate::parse("{/var:1,var}").is_err());
        let cases = [
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            ("{list}", "red,green,blue"),
            ("{list*}", "red,green,blue"),
            ("{keys}", "semi,%3B,dot,.,comma,%2C"),
            ("{+path:6}/here", "/foo/b/here"),
            ("{+list}", "red,green,blue"),
            ("{+list*}", "red,green,blue"),
            ("{+keys}", "semi,;,dot,.,comma,,"),
            ("{#path:6}/here", "#/foo/b/here"),
            ("{#list}", "#red,green,blue"),
            ("{#list*}", "#red,green,blue"),
            ("{#keys}", "#semi,;,dot,.,comma,,"),
            ("X{.var:3}", "X.val"),
            ("X{.list}", "X.red,green,blue"),
            ("X{.list*}", "X.red.green.blue"),
            ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
            ("{/list}", "/red,green,blue"),
            ("{/list*}", "/red/green/blue"),
            ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
            ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
            ("{;hello:5}", ";hello=Hello"),
            ("{;list}", ";list=red,green,blue"),
            ("{;list*}", ";list=red;list=green;list=blue"),
            ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
            ("{?var:3}", "?var=val"),
            ("{?list}", "?list=red,green,blue"),
            ("{?list*}", "?list=red&list=green&list=blue"),
            ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
            ("{&var:3}", "&var=val"),
            ("{&list}", "&list=red,green,blue"),
            ("{&list*}", "&list=red&list=green&list=blue"),
            ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
        ];
        for (template, expected) in cases {
            assert_eq!(expand_rfc(template), expected, "{template}");
        }
    }

    #[test]
    fn rfc_6570_section_3_expansion_details() {
        let cases = [
            // Undefined variables and empty lists are skipped, with their prefix.
            ("{undef}", ""),
            ("{?undef,empty_list}", ""),
            ("{/undef}x", "x"),
            ("{x,undef,y}", "1024,768"),
            ("{?x,undef}", "?x=1024"),
            ("{;empty_list,x}", ";x=1024"),
            // Reserved expansion keeps existing triplets, encodes a lone `%`.
            ("{+half}", "50%25"),
            ("{half}", "50%25"),
            ("{+base}index", "http://example.com/home/index"),
            ("{base}", "http%3A%2F%2Fexample.com%2Fhome%2F"),
            ("{empty}", ""),
            ("X{.empty}", "X."),
            ("{/empty}", "/"),
        ];
        for (template, expected) in cases {
            assert_eq!(expand_rfc(template), expected, "{template}");
        }
        let encoded = single("%2F%zz");
        assert_eq!(t("{+v}").expand(|_| Some(&encoded)), "%2F%25zz");
        let unicode = single("café ☕");
        assert_eq!(t("{v}").expand(|_| Some(&unicode)), "caf%C3%A9%20%E2%98%95");
        assert_eq!(t("{v:4}").expand(|_| Some(&unicode)), "caf%C3%A9");
        assert_eq!(t("s://x{?v}").expand(|_| None), "s://x");
    }

    /// Expands `values` into `template`, matches the URI back, and expects the same values
    /// (absent for those not given).
    fn round_trip(template: &str, values: &[(&str, Binding)]) {
        let template = t(template);
        let map: HashMap<&str, &Binding> = values.iter().map(|(n, b)| (*n, b)).collect();
        let uri = template.expand(|name| map.get(name).copied());
        let bindings = template
            .match_uri(&uri)
            .unwrap_or_else(|| panic!("{template} does not match its expansion {uri:?}"));
        for name in template.variables() {
            let expected = map.get(name).copied().cloned().unwrap_or(Binding::Absent);
            assert_eq!(
                bindings.get(name),
                Some(&expected),
                "{template} -> {uri} -> `{name}`"
            );
        }
    }

    #[test]
    fn expansions_match_back_to_their_values() {
        for id in [
            "42",
            "café",
            "a/b",
            "a b?c#d&e=f",
            "100%",
            "a,b",
            "..",
            "-._~!'()*",
            "日本語",
            "%41",
        ] {
            round_trip("notes://{id}", &[("id", single(id))]);
            round_trip("notes://{id}/raw", &[("id", single(id))]);
        }
        for path in ["docs/readme.md", "a b/c", "x:y@z/[v6]/$&+;=", "/abs", "é/ü"] {
            round_trip("files://{+path}", &[("path", single(path))]);
            round_trip("files://{+path}/meta", &[("path", single(path))]);
        }
        round_trip(
            "tree://root{/segments*}",
            &[("segments", list(&["a", "b c", "é", "x%y"]))],
        );
        round_trip("tree://root{/segments*}", &[]);
        round_trip(
            "tree://root{/segments*}{?depth}",
            &[("segments", list(&["a"])), ("depth", single("2"))],
        );
        round_trip(
            "search://items{?q,limit}",
            &[("q", single("rust lang & more=ok")), ("limit", single("3"))],
        );
        round_trip("search://items{?q,limit}", &[("limit", single("3"))]);
        round_trip("search://items{?q,limit}", &[]);
        round_trip("search://items{?q}", &[("q", single(""))]);
        round_trip(
            "search://items{?tag*}",
            &[("tag", list(&["a", "b,c", "d&e"]))],
        );
        round_trip(
            "search://items{?list}",
            &[("list", list(&["red", "green"]))],
        );
        round_trip(
            "search://items?fixed=1{&page,size}",
            &[("page", single("2"))],
        );
        round_trip("x://{a}.{b}", &[("a", single("one")), ("b", single("two"))]);
        round_trip(
            "x://{name}.{ext}",
            &[("name", single("archive.tar")), ("ext", single("gz"))],
        );
        round_trip("x://{a,b}", &[("a", single("1,2")), ("b", single("3"))]);
        round_trip("x://{list}", &[("list", list(&["red", "green", "blue"]))]);
        round_trip("x://{list*}", &[("list", list(&["red", "green"]))]);
        round_trip("x://{+list*}", &[("list", list(&["a/b", "c"]))]);
        round_trip("x://f{.ext}", &[("ext", single("txt"))]);
        round_trip("x://www{.dom*}", &[("dom", list(&["example", "com"]))]);
        round_trip("x://m{;v,w}", &[("v", single("3")), ("w", single(""))]);
        round_trip("x://m{;list*}", &[("list", list(&["a", "b"]))]);
        round_trip(
            "x://{/list*,path:4}",
            &[("list", list(&["red", "green"])), ("path", single("/foo"))],
        );
        round_trip(
            "x://{/a,b}/end",
            &[("a", single("1")), ("b", single("two words"))],
        );
        round_trip(
            "x://{page}{#section}",
            &[("page", single("intro")), ("section", single("part 2/x?y"))],
        );
        round_trip(
            "x://{page}{?q}{#section}",
            &[
                ("page", single("intro")),
                ("q", single("1")),
                ("section", single("s")),
            ],
        );
        round_trip("x://{id:3}", &[("id", single("abc"))]);
        round_trip(
            "x://{a}/{+b}{?c,d}",
            &[
                ("a", single("é x")),
                ("b", single("p/q r")),
                ("c", single("1")),
            ],
        );
    }

    #[test]
    fn values_are_percent_decoded() {
        assert_eq!(
            bound("notes://{id}", "notes://caf%C3%A9"),
            pairs(&[("id", single("café"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://caf%c3%a9"),
            pairs(&[("id", single("café"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://café"),
            pairs(&[("id", single("café"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://a%2Fb"),
            pairs(&[("id", single("a/b"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://%34%32"),
            pairs(&[("id", single("42"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://a%2Cb"),
            pairs(&[("id", single("a,b"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://a,b%2Cc"),
            pairs(&[("id", list(&["a", "b,c"]))])
        );
        assert_eq!(
            bound("files://{+path}", "files://%2e%2e/x"),
            pairs(&[("path", single("../x"))])
        );
        assert_eq!(
            bound("s://x{?q}", "s://x?q=a%20b+c"),
            pairs(&[("q", single("a b+c"))])
        );
        // Invalid UTF-8 after decoding, or a broken triplet: no match.
        assert_eq!(bound("notes://{id}", "notes://%ff"), None);
        assert_eq!(bound("notes://{id}", "notes://%C3"), None);
        assert_eq!(bound("notes://{id}", "notes://a%zz"), None);
        assert_eq!(bound("notes://{id}", "notes://a%2"), None);
        assert_eq!(bound("files://{+path}", "files://a%"), None);
        assert_eq!(bound("s://x{?q}", "s://x?q=%E9"), None);
        assert_eq!(bound("s://x{?q}", "s://x?q=%zz"), None);
    }

    #[test]
    fn uris_that_do_not_match() {
        let no = [
            ("notes://{id}", "notes://"),
            ("notes://{id}", "notes://a/b"),
            ("notes://{id}", "notes://42?x=1"),
            ("notes://{id}", "notes://42#top"),
            ("notes://{id}", "NOTES://42"),
            ("notes://{id}", "other://42"),
            ("notes://{id}", "notes://a:b"),
            ("notes://{id}", "notes://a b"),
            ("notes://{id}", "notes://a=b"),
            ("notes://{id}/raw", "notes://42/RAW"),
            ("notes://{id}/raw", "notes://42/raw/"),
            ("notes://{id}.json", "notes://.json"),
            ("files://{+path}", "files://"),
            ("files://{+path}", "files://a?b"),
            ("files://{+path}", "files://a#b"),
            ("tree://root{/segments*}", "tree://root/"),
            ("tree://root{/segments*}", "tree://root/a//b"),
            ("tree://root{/segments*}", "tree://rootx"),
            ("x://{a,b}", "x://1"),
            ("x://{a,b}", "x://1,2,3"),
            ("x://{a,b}", "x://1,"),
            ("x://{list}", "x://a,,b"),
            ("x://{id:3}", "x://abcd"),
            ("x://f{.ext}", "x://f.tar.gz"),
            ("x://f{.ext}", "x://f"),
            ("x://m{;v}", "x://m;w=3"),
            ("x://m{;v}", "x://m;vv=3"),
            ("x://m{;v}", "x://m"),
            ("x://{/a}", "x://"),
            // Only query and exploded variables may be left out.
            ("x://{page}{#section}", "x://intro"),
            ("x://{a}2F", "x://b%2F"),
            ("test://static", "test://static/"),
            ("test://static", "test://Static"),
        ];
        for (template, uri) in no {
            assert_eq!(
                bound(template, uri),
                None,
                "{template} should not match {uri}"
            );
        }
    }

    #[test]
    fn uris_match_their_variables() {
        let yes = [
            ("notes://{id}", "notes://-1", vec![("id", single("-1"))]),
            (
                "notes://{id}.json",
                "notes://a.json.json",
                vec![("id", single("a.json"))],
            ),
            (
                "x://{name}.{ext}",
                "x://archive.tar.gz",
                vec![("name", single("archive.tar")), ("ext", single("gz"))],
            ),
            (
                "test://template/{id}/data",
                "test://template/123/data",
                vec![("id", single("123"))],
            ),
            (
                "files://{+path}",
                "files://a/b/c.txt",
                vec![("path", single("a/b/c.txt"))],
            ),
            (
                "files://{+path}/meta",
                "files://a/meta/b/meta",
                vec![("path", single("a/meta/b"))],
            ),
            (
                "tree://root{/segments*}",
                "tree://root/a/b",
                vec![("segments", list(&["a", "b"]))],
            ),
            (
                "tree://root{/segments*}",
                "tree://root",
                vec![("segments", Binding::Absent)],
            ),
            (
                "x:{/list*}{/last}",
                "x:/a/b/c",
                vec![("list", list(&["a", "b"])), ("last", single("c"))],
            ),
            (
                "x:{/list*,path:4}",
                "x:/red/green/%2Ffoo",
                vec![("list", list(&["red", "green"])), ("path", single("/foo"))],
            ),
            ("x://{a}2F", "x://b%2F2F", vec![("a", single("b/"))]),
            (
                "x://{ids}",
                "x://1,2,3",
                vec![("ids", list(&["1", "2", "3"]))],
            ),
            (
                "x://{ids*}",
                "x://1,2,3",
                vec![("ids", list(&["1", "2", "3"]))],
            ),
            ("x://{ids*}", "x://", vec![("ids", Binding::Absent)]),
            ("x://m{;v}", "x://m;v", vec![("v", single(""))]),
            (
                "x://m{;v,w}",
                "x://m;v=1;w=2",
                vec![("v", single("1")), ("w", single("2"))],
            ),
            (
                "x://m{;v*}",
                "x://m;v=1;v=2",
                vec![("v", list(&["1", "2"]))],
            ),
            (
                "x://{page}{#section}",
                "x://intro#part-2",
                vec![("page", single("intro")), ("section", single("part-2"))],
            ),
            (
                "x://p{#a,b}",
                "x://p#1,2",
                vec![("a", single("1")), ("b", single("2"))],
            ),
            (
                "x://{word}",
                "x://Hello%20World!",
                vec![("word", single("Hello World!"))],
            ),
            ("test://static", "test://static", vec![]),
        ];
        for (template, uri, expected) in yes {
            assert_eq!(
                bound(template, uri),
                pairs(&expected),
                "{template} on {uri}"
            );
        }
    }

    #[test]
    fn queries_bind_in_any_order() {
        let template = "search://items{?q,limit}";
        let both = pairs(&[("q", single("a b")), ("limit", single("3"))]);
        assert_eq!(bound(template, "search://items?q=a%20b&limit=3"), both);
        assert_eq!(bound(template, "search://items?limit=3&q=a%20b"), both);
        assert_eq!(
            bound(template, "search://items?limit=3"),
            pairs(&[("q", Binding::Absent), ("limit", single("3"))])
        );
        let none = pairs(&[("q", Binding::Absent), ("limit", Binding::Absent)]);
        assert_eq!(bound(template, "search://items"), none);
        assert_eq!(bound(template, "search://items?"), none);
        assert_eq!(
            bound(template, "search://items?q"),
            pairs(&[("q", single("")), ("limit", Binding::Absent)])
        );
        assert_eq!(
            bound(template, "search://items?q=&&limit=3&"),
            pairs(&[("q", single("")), ("limit", single("3"))])
        );
        assert_eq!(
            bound(template, "search://items?q=a/b:c?d"),
            pairs(&[("q", single("a/b:c?d")), ("limit", Binding::Absent)])
        );
        // Unknown or repeated parameters: no match.
        assert_eq!(bound(template, "search://items?other=1"), None);
        assert_eq!(bound(template, "search://items?q=1&other=1"), None);
        assert_eq!(bound(template, "search://items?q=1&q=2"), None);
        assert_eq!(bound(template, "search://items?Q=1"), None);
        assert_eq!(bound(template, "search://items?q=a b"), None);
        assert_eq!(bound(template, "search://items/?q=1"), None);
        // Exploded variables collect every occurrence.
        assert_eq!(
            bound("s://x{?tag*}", "s://x?tag=a&tag=b"),
            pairs(&[("tag", list(&["a", "b"]))])
        );
        assert_eq!(
            bound("s://x{?tag*,q}", "s://x?tag=a&q=1&tag=b"),
            pairs(&[("tag", list(&["a", "b"])), ("q", single("1"))])
        );
        // `{&...}` right after `{?...}` reads the same query string.
        assert_eq!(
            bound("s://x{?a}{&b}", "s://x?b=2&a=1"),
            pairs(&[("a", single("1")), ("b", single("2"))])
        );
        // `{&...}` alone continues a query written in the literal, whose order is fixed.
        let fixed = "s://x?fixed=yes{&a,b}";
        assert_eq!(
            bound(fixed, "s://x?fixed=yes&b=2&a=1"),
            pairs(&[("a", single("1")), ("b", single("2"))])
        );
        assert_eq!(
            bound(fixed, "s://x?fixed=yes"),
            pairs(&[("a", Binding::Absent), ("b", Binding::Absent)])
        );
        assert_eq!(bound(fixed, "s://x?a=1&fixed=yes"), None);
        // A fragment after the query.
        assert_eq!(
            bound("s://x{?q}{#f}", "s://x?q=1#top"),
            pairs(&[("q", single("1")), ("f", single("top"))])
        );
        assert_eq!(
            bound("s://x{?q}{#f}", "s://x#top"),
            pairs(&[("q", Binding::Absent), ("f", single("top"))])
        );
        assert_eq!(bound("s://x{?q}", "s://x?q=1#top"), None);
    }

    #[test]
    fn escapes_are_screened() {
        for (value, reason) in [
            (
                "../etc/passwd",
                Some("it climbs out of its directory with `..`"),
            ),
            (
                "a/../../b",
                Some("it climbs out of its directory with `..`"),
            ),
            ("..", Some("it climbs out of its directory with `..`")),
            ("a/../..", Some("it climbs out of its directory with `..`")),
            (
                "a/./../../x",
                Some("it climbs out of its directory with `..`"),
            ),
            (
                "a\\..\\..\\b",
                Some("it climbs out of its directory with `..`"),
            ),
            ("a/..", None),
            ("a/../b", None),
            ("a\\..\\b", None),
            ("a//../b", None),
            ("/abs", Some("it is an absolute path")),
            ("\\\\server\\share", Some("it is an absolute path")),
            ("C:\\x", Some("it starts with a Windows drive")),
            ("c:", Some("it starts with a Windows drive")),
            ("a\0b", Some("it contains a NUL character")),
            ("docs/readme.md", None),
            ("a..b/c", None),
            ("./x", None),
            (".hidden/...", None),
            ("12:30", None),
            ("", None),
        ] {
            assert_eq!(escapes(value), reason, "{value:?}");
        }
    }

    #[test]
    fn escaping_values_are_found_after_decoding() {
        let files = t("files://{+path}");
        let escaping = |template: &UriTemplate, uri: &str| {
            let bindings = template.match_uri(uri).unwrap_or_else(|| panic!("{uri}"));
            template
                .escaping_variable(&bindings)
                .map(|(name, reason)| (name.to_owned(), reason))
        };
        for uri in [
            "files://../etc/passwd",
            "files://a/../../b",
            "files://%2e%2e/x",
            "files://.%2E/x",
            "files:///abs",
            "files://C:%5Cx",
            "files://a%00b",
        ] {
            assert_eq!(
                escaping(&files, uri).map(|(name, _)| name),
                Some("path".to_owned()),
                "{uri}"
            );
        }
        assert_eq!(escaping(&files, "files://docs/readme.md"), None);
        assert_eq!(escaping(&files, "files://a..b/c"), None);
        // Every variable is screened: `%2F` makes a `{v}` value a path.
        let notes = t("notes://{id}");
        assert_eq!(
            escaping(&notes, "notes://..%2F..%2Fetc"),
            Some(("id".to_owned(), "it climbs out of its directory with `..`"))
        );
        assert_eq!(escaping(&notes, "notes://42"), None);
        let tree = t("tree://root{/segments*}");
        assert_eq!(
            escaping(&tree, "tree://root/a/%2E%2E/b"),
            Some((
                "segments".to_owned(),
                "it climbs out of its directory with `..`"
            ))
        );
        assert_eq!(escaping(&tree, "tree://root"), None);
    }

    #[test]
    fn indistinguishable_templates_differ_only_in_names() {
        let same = [
            ("notes://{id}", "notes://{name}"),
            ("notes://{id}", "notes://{id}"),
            ("x://{a}/{+b}", "x://{c}/{+d}"),
            ("x://{/a*}", "x://{/b*}"),
            ("x://{a:3}", "x://{b:3}"),
            ("s://x{?a,b}", "s://x{?b,a}"),
            ("s://x{?a}{&b}", "s://x{?a,b}"),
            ("x://m{;v}", "x://m{;v}"),
        ];
        for (a, b) in same {
            assert!(UriTemplate::indistinguishable(&t(a), &t(b)), "{a} and {b}");
            assert!(UriTemplate::indistinguishable(&t(b), &t(a)), "{b} and {a}");
        }
        let different = [
            ("notes://{id}", "notes://{+id}"),
            ("notes://{id}", "notes://x{id}"),
            ("notes://{id}", "notes://{id*}"),
            ("notes://{id}", "notes://{id:3}"),
            ("notes://{id}", "notes://{a,b}"),
            ("notes://{id}", "notes://{id}/"),
            ("notes://{id}", "notes://{/id}"),
            ("s://x{?a}", "s://x{?b}"),
            ("s://x{?a}", "s://x{?a*}"),
            ("s://x{?a}", "s://x{?a,b}"),
            ("x://m{;v}", "x://m{;w}"),
            ("x://?q=1{&a}", "x://?q=1{?a}"),
        ];
        for (a, b) in different {
            assert!(!UriTemplate::indistinguishable(&t(a), &t(b)), "{a} and {b}");
            assert!(!UriTemplate::indistinguishable(&t(b), &t(a)), "{b} and {a}");
        }
    }

    #[test]
    fn the_most_specific_template_sorts_first() {
        let mut templates = [
            t("x://{rest*}"),
            t("x://{+rest}"),
            t("x://{b}/{a}"),
            t("x://{a}/{b}"),
            t("x://users/{id}{?q}"),
            t("x://users/{id}"),
            t("x://users/me"),
        ];
        templates.sort_by_key(UriTemplate::specificity);
        let order: Vec<&str> = templates.iter().map(UriTemplate::as_str).collect();
        assert_eq!(
            order,
            [
                "x://users/me",
                "x://users/{id}",
                "x://users/{id}{?q}",
                "x://{a}/{b}",
                "x://{b}/{a}",
                "x://{+rest}",
                "x://{rest*}"
            ]
        );
        // A registry reads a URI with the first template that matches.
        let first = |uri: &str| {
            templates
                .iter()
                .find(|t| t.match_uri(uri).is_some())
                .map(UriTemplate::as_str)
        };
        assert_eq!(first("x://users/me"), Some("x://users/me"));
        assert_eq!(first("x://users/7"), Some("x://users/{id}"));
        assert_eq!(first("x://users/7?q=1"), Some("x://users/{id}{?q}"));
        assert_eq!(first("x://a/b"), Some("x://{a}/{b}"));
        assert_eq!(first("x://a/b/c"), Some("x://{+rest}"));
        assert_eq!(first("x://a,b"), Some("x://{+rest}"));
        assert_eq!(first("x://a?b"), None);
    }

    #[test]
    fn parse_errors_keep_message_and_span() {
        let error = UriTemplate::parse("notes://{id").unwrap_err();
        assert_eq!(
            error,
            TemplateError {
                message: "unclosed expression `{id`: add `}`".to_owned(),
                span: 8..11
            }
        );
        assert_eq!(error.to_string(), "unclosed expression `{id`: add `}`");
        let error = UriTemplate::parse("x://{a}/{a}").unwrap_err();
        assert_eq!(error.span, 9..10);
    }

    #[test]
    fn accessors() {
        let template = t("search://items{?q,limit}{&page}");
        assert_eq!(template.as_str(), "search://items{?q,limit}{&page}");
        assert_eq!(template.to_string(), template.as_str());
        assert_eq!(
            format!("{template:?}"),
            "UriTemplate(\"search://items{?q,limit}{&page}\")"
        );
        assert_eq!(
            template.variables().collect::<Vec<_>>(),
            ["q", "limit", "page"]
        );
        assert!(!template.is_static());
        assert!(t("test://static").is_static());
        let bindings = template.match_uri("search://items?page=2").unwrap();
        assert_eq!(
            bindings.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            ["q", "limit", "page"]
        );
        assert_eq!(bindings.get("page"), Some(&single("2")));
        assert_eq!(bindings.get("nope"), None);
        let map = bindings.into_map();
        assert_eq!(map.len(), 3);
        assert_eq!(map["q"], Binding::Absent);
    }

    /// Every short string over an alphabet of awkward characters, against templates of every
    /// operator: matching never panics, and what matches expands back to a URI that matches
    /// with the same bindings.
    #[test]
    fn matching_never_panics_and_matches_are_stable() {
        let alphabet = [
            "a", "/", "%", "2", "F", ".", "?", "=", "&", "#", "é", ",", ";", "e",
        ];
        let templates = [
            t("{v}"),
            t("{+v}"),
            t("{#v}"),
            t("a{.v}"),
            t("{/v*}"),
            t("{;v,w}"),
            t("{?v,w*}"),
            t("a{&v}"),
            t("{v}.{w}"),
            t("{/a*}{/b}"),
            t("{v:2}{?w}{#x}"),
        ];
        let mut uris = vec![String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..4 {
            frontier = frontier
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            uris.extend(frontier.iter().cloned());
        }
        let mut matched = 0;
        for template in &templates {
            for uri in &uris {
                let Some(bindings) = template.match_uri(uri) else {
                    continue;
                };
                matched += 1;
                let again = template.expand(|name| bindings.get(name));
                assert_eq!(
                    template.match_uri(&again).as_ref(),
                    Some(&bindings),
                    "{template}: {uri} -> {again}"
                );
            }
        }
        assert!(matched > 1000, "{matched}");
    }
}
