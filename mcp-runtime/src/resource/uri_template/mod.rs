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

mod expand;
mod matching;

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

fn is_triplet(bytes: &[u8], at: usize) -> bool {
    bytes.get(at) == Some(&b'%')
        && bytes.get(at + 1).is_some_and(u8::is_ascii_hexdigit)
        && bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests;
