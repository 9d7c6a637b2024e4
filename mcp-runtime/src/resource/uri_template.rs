//! RFC 6570 URI templates at run time: matching a URI back to its template, and expanding one.
//!
//! The parser is shared with the macros (which check every `#[resource]` template at compile
//! time): this module includes the same file.
//!
//! The matching rules and the tie-break between templates are documented on [`UriTemplate`].

#[path = "../../../mcp-macros/src/uri_template.rs"]
mod parse;

use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt;

use self::parse::{Expression, Operator, Part, Template};

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// What is wrong, and what to do.
    pub message: String,
    /// Byte offsets of the offending text in the template.
    pub span: std::ops::Range<usize>,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

/// The value a URI gave a template variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// The URI had no value for it (an absent query parameter).
    Absent,
    /// One value, percent-decoded.
    Single(String),
    /// A list: an exploded variable, or unencoded commas.
    List(Vec<String>),
}

/// The variables a URI bound, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bindings(Vec<(String, Binding)>);

impl Bindings {
    /// The binding of `name`.
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    pub(crate) fn into_map(self) -> HashMap<String, Binding> {
        self.0.into_iter().collect()
    }

    fn set(&mut self, name: &str, binding: Binding) {
        self.0.push((name.to_owned(), binding));
    }

    fn truncate(&mut self, len: usize) {
        self.0.truncate(len);
    }
}

/// A parsed RFC 6570 template (levels 1 to 4).
///
/// # Matching
///
/// [`match_uri`](Self::match_uri) inverts expansion. Literal text must match exactly. Each
/// expression takes the shortest-to-longest run that lets the rest of the template match,
/// trying the longest first, and values are percent-decoded (invalid UTF-8 is no match):
///
/// - `{v}` takes a value without `/`, `?` or `#`; `{+v}` may take `/` and `?` (leaving a later
///   query or fragment expression its own text); `{#v}` follows `#`;
/// - `{.v}`, `{/v}`, `{;v}` follow their prefix; exploded, `{/v*}` takes `/a/b/c` as a list;
/// - `{?a,b}` and `{&c}` read the query in any order; a missing parameter is absent, an unknown
///   one means no match;
/// - a non-exploded value with unencoded commas (`a,b`) is a list; a scalar parameter gets the
///   list joined with commas again.
///
/// # Choosing among templates
///
/// When several templates match a URI, the most specific wins: the one with more literal
/// characters, then fewer multi-segment variables (`{+v}`, `{#v}`, exploded), then fewer
/// expressions, then the template text in byte order. Two templates that match exactly the same
/// URIs ([`indistinguishable`](Self::indistinguishable)) are refused when the server is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    template: Template,
    /// Every variable of a query expression, for `{?a}{&b}` reading one query string.
    query_variables: Vec<String>,
}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let template = parse::parse(text).map_err(|e| TemplateError {
            message: e.message,
            span: e.span,
        })?;
        let query_variables = template
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::Expression(e)
                    if matches!(e.operator, Operator::Query | Operator::QueryContinuation) =>
                {
                    Some(e.variables.iter().map(|v| v.name.clone()))
                }
                _ => None,
            })
            .flatten()
            .collect();
        Ok(Self {
            template,
            query_variables,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.template.text
    }

    /// Whether the template has no expressions.
    pub fn is_static(&self) -> bool {
        self.template.is_static()
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.template.variables().map(|v| v.name.as_str())
    }

    /// The sort key described under "Choosing among templates": smaller is more specific.
    pub fn specificity(&self) -> impl Ord + use<> {
        let mut literal = 0usize;
        let mut wide = 0usize;
        let mut expressions = 0usize;
        for part in &self.template.parts {
            match part {
                Part::Literal(text) => literal += text.len(),
                Part::Expression(e) => {
                    expressions += 1;
                    wide += e
                        .variables
                        .iter()
                        .filter(|v| {
                            v.explode
                                || matches!(e.operator, Operator::Reserved | Operator::Fragment)
                        })
                        .count();
                }
            }
        }
        (
            Reverse(literal),
            wide,
            expressions,
            self.template.text.clone(),
        )
    }

    /// Whether two templates match exactly the same URIs: the same literals and the same
    /// expressions, differing at most in variable names.
    pub fn indistinguishable(a: &Self, b: &Self) -> bool {
        a.template.parts.len() == b.template.parts.len()
            && a.template
                .parts
                .iter()
                .zip(&b.template.parts)
                .all(|pair| match pair {
                    (Part::Literal(x), Part::Literal(y)) => x == y,
                    (Part::Expression(x), Part::Expression(y)) => {
                        x.operator == y.operator
                            && x.variables.len() == y.variables.len()
                            && x.variables
                                .iter()
                                .zip(&y.variables)
                                .all(|(v, w)| v.explode == w.explode && v.prefix == w.prefix)
                    }
                    _ => false,
                })
    }

    /// Matches `uri` against the template; the bound variables, or `None`.
    pub fn match_uri(&self, uri: &str) -> Option<Bindings> {
        let mut bindings = Bindings::default();
        self.match_from(0, uri, &mut bindings).then_some(bindings)
    }

    fn match_from(&self, index: usize, rest: &str, bindings: &mut Bindings) -> bool {
        let Some(part) = self.template.parts.get(index) else {
            return rest.is_empty();
        };
        match part {
            Part::Literal(text) => rest
                .strip_prefix(text.as_str())
                .is_some_and(|r| self.match_from(index + 1, r, bindings)),
            Part::Expression(expression) => {
                self.match_expression(index, expression, rest, bindings)
            }
        }
    }

    fn match_expression(
        &self,
        index: usize,
        e: &Expression,
        rest: &str,
        bindings: &mut Bindings,
    ) -> bool {
        let mark = bindings.0.len();
        match e.operator {
            Operator::Query | Operator::QueryContinuation => {
                let first = if e.operator == Operator::Query {
                    '?'
                } else {
                    '&'
                };
                // The first query expression reads the whole query; later ones match nothing.
                if e.variables.iter().any(|v| bindings.get(&v.name).is_some()) {
                    return self.match_from(index + 1, rest, bindings);
                }
                let (query, after) = match rest.strip_prefix(first) {
                    Some(q) => q.split_at(q.find('#').unwrap_or(q.len())),
                    None => ("", rest),
                };
                if !self.bind_query(query, bindings) {
                    bindings.truncate(mark);
                    return false;
                }
                if self.match_from(index + 1, after, bindings) {
                    return true;
                }
                bindings.truncate(mark);
                false
            }
            operator => {
                let (body, prefixed) = match operator.first() {
                    "" => (rest, true),
                    prefix => match rest.strip_prefix(prefix) {
                        Some(body) => (body, true),
                        None => (rest, false),
                    },
                };
                if !prefixed {
                    // The expansion is empty: every variable is absent.
                    for var in &e.variables {
                        bindings.set(&var.name, Binding::Absent);
                    }
                    if self.match_from(index + 1, rest, bindings) {
                        return true;
                    }
                    bindings.truncate(mark);
                    return false;
                }
                // A wide variable leaves a later query or fragment expression its own text.
                let later = &self.template.parts[index + 1..];
                let query_follows = later.iter().any(|p| {
                    matches!(p, Part::Expression(x) if matches!(x.operator, Operator::Query | Operator::QueryContinuation))
                });
                let fragment_follows = later
                    .iter()
                    .any(|p| matches!(p, Part::Expression(x) if x.operator == Operator::Fragment));
                let limit = body
                    .find(|c| {
                        stops(operator, e, c)
                            || (c == '?' && query_follows)
                            || (c == '#' && fragment_follows)
                    })
                    .unwrap_or(body.len());
                let mut end = limit;
                loop {
                    if self.bind_run(e, &body[..end], bindings)
                        && self.match_from(index + 1, &body[end..], bindings)
                    {
                        return true;
                    }
                    bindings.truncate(mark);
                    if end == 0 {
                        return false;
                    }
                    end = body[..end].char_indices().next_back().map_or(0, |(i, _)| i);
                }
            }
        }
    }

    /// Binds the variables of one non-query expression from its run of text.
    fn bind_run(&self, e: &Expression, run: &str, bindings: &mut Bindings) -> bool {
        let separator = e.operator.separator();
        let values: Vec<&str> = if e.variables.len() == 1 && e.variables[0].explode {
            run.split(separator).collect()
        } else if e.variables.len() == 1 {
            vec![run]
        } else {
            let parts: Vec<&str> = run
                .split(if e.operator.named() { separator } else { ',' })
                .collect();
            if parts.len() != e.variables.len() {
                return false;
            }
            parts
        };
        if e.variables.len() == 1 && e.variables[0].explode {
            let var = &e.variables[0];
            let mut items = Vec::with_capacity(values.len());
            for value in values {
                let value = if e.operator.named() {
                    match value
                        .strip_prefix(var.name.as_str())
                        .and_then(|v| v.strip_prefix('=').or(v.is_empty().then_some("")))
                    {
                        Some(v) => v,
                        None => return false,
                    }
                } else {
                    value
                };
                match decode(value) {
                    Some(v) => items.push(v),
                    None => return false,
                }
            }
            if items.len() == 1 && items[0].is_empty() && run.is_empty() {
                items.clear();
            }
            bindings.set(&var.name, Binding::List(items));
            return true;
        }
        for (var, value) in e.variables.iter().zip(values) {
            let value = if e.operator.named() {
                match value.strip_prefix(var.name.as_str()) {
                    Some("") => "",
                    Some(v) => match v.strip_prefix('=') {
                        Some(v) => v,
                        None => return false,
                    },
                    None => return false,
                }
            } else {
                value
            };
            if value.is_empty() && e.operator == Operator::Simple && e.variables.len() == 1 {
                return false;
            }
            match scalar_or_list(value) {
                Some(binding) => bindings.set(&var.name, binding),
                None => return false,
            }
        }
        true
    }

    /// Binds every query variable from `k=v&k=v` pairs, in any order.
    fn bind_query(&self, query: &str, bindings: &mut Bindings) -> bool {
        let mut found: HashMap<&str, Vec<&str>> = HashMap::new();
        if !query.is_empty() {
            for pair in query.split('&') {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                if !self.query_variables.iter().any(|v| v == key) {
                    return false;
                }
                found.entry(key).or_default().push(value);
            }
        }
        for name in &self.query_variables {
            let exploded = self
                .template
                .variables()
                .any(|v| &v.name == name && v.explode);
            let binding = match found.remove(name.as_str()) {
                None => Binding::Absent,
                Some(values) if exploded || values.len() > 1 => {
                    let mut items = Vec::new();
                    for value in values {
                        match decode(value) {
                            Some(v) => items.push(v),
                            None => return false,
                        }
                    }
                    Binding::List(items)
                }
                Some(values) => match scalar_or_list(values[0]) {
                    Some(binding) => binding,
                    None => return false,
                },
            };
            bindings.set(name, binding);
        }
        true
    }

    /// Expands the template with `values` (RFC 6570 §3.2).
    pub fn expand(&self, values: &HashMap<&str, Binding>) -> String {
        let mut out = String::new();
        for part in &self.template.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Expression(e) => expand_expression(e, values, &mut out),
            }
        }
        out
    }

    /// The first variable whose value escapes its root, with why: a `..` segment, an absolute
    /// path, a NUL. Every variable is screened, since a percent-encoded `/` makes any value a
    /// path.
    pub(crate) fn escaping_variable(&self, bindings: &Bindings) -> Option<(String, &'static str)> {
        bindings.0.iter().find_map(|(name, binding)| {
            let reason = match binding {
                Binding::Absent => None,
                Binding::Single(value) => escapes(value),
                Binding::List(values) => values.iter().find_map(|v| escapes(v)),
            }?;
            Some((name.clone(), reason))
        })
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a run of text for an expression must stop.
fn stops(operator: Operator, e: &Expression, c: char) -> bool {
    let exploded = e.variables.iter().any(|v| v.explode);
    match operator {
        Operator::Reserved | Operator::Fragment => false,
        Operator::PathSegment if exploded => c == '?' || c == '#',
        Operator::Label if exploded => c == '/' || c == '?' || c == '#',
        Operator::PathParam => c == '/' || c == '?' || c == '#',
        Operator::Label => c == '.' || c == '/' || c == '?' || c == '#',
        _ => c == '/' || c == '?' || c == '#',
    }
}

fn scalar_or_list(value: &str) -> Option<Binding> {
    if value.contains(',') {
        value
            .split(',')
            .map(decode)
            .collect::<Option<Vec<_>>>()
            .map(Binding::List)
    } else {
        decode(value).map(Binding::Single)
    }
}

/// Percent-decodes; `None` for a malformed escape or invalid UTF-8.
fn decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn encode(value: &str, allow_reserved: bool, out: &mut String) {
    for byte in value.bytes() {
        let c = byte as char;
        let unreserved = c.is_ascii_alphanumeric() || "-._~".contains(c);
        let reserved = ":/?#[]@!$&'()*+,;=".contains(c);
        if unreserved || (allow_reserved && reserved) {
            out.push(c);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

fn expand_expression(e: &Expression, values: &HashMap<&str, Binding>, out: &mut String) {
    let op = e.operator;
    let mut first = true;
    for var in &e.variables {
        let value = match values.get(var.name.as_str()) {
            None | Some(Binding::Absent) => continue,
            Some(Binding::List(items)) if items.is_empty() => continue,
            Some(value) => value,
        };
        out.push_str(if first {
            op.first()
        } else {
            match op.separator() {
                ',' => ",",
                '.' => ".",
                '/' => "/",
                ';' => ";",
                _ => "&",
            }
        });
        first = false;
        match value {
            Binding::Single(text) => {
                let text: String = match var.prefix {
                    Some(n) => text.chars().take(usize::from(n)).collect(),
                    None => text.clone(),
                };
                if op.named() {
                    out.push_str(&var.name);
                    if text.is_empty() {
                        out.push_str(op.if_empty());
                        continue;
                    }
                    out.push('=');
                }
                encode(&text, op.allow_reserved(), out);
            }
            Binding::List(items) => {
                if var.explode {
                    let separator = op.separator().to_string();
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(&separator);
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
                } else {
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
            }
            Binding::Absent => {}
        }
    }
}

/// Why a decoded value would escape a root directory, if it would.
pub(crate) fn escapes(value: &str) -> Option<&'static str> {
    if value.contains('\0') {
        return Some("it contains a NUL byte");
    }
    if value.starts_with('/') || value.starts_with('\\') {
        return Some("it is an absolute path");
    }
    let bytes = value.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Some("it is an absolute path");
    }
    if value.split(['/', '\\']).any(|segment| segment == "..") {
        return Some("it climbs out of its root with `..`");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> UriTemplate {
        UriTemplate::parse(text).unwrap()
    }

    fn single(s: &str) -> Binding {
        Binding::Single(s.to_owned())
    }

    fn list(items: &[&str]) -> Binding {
        Binding::List(items.iter().map(|s| (*s).to_owned()).collect())
    }

    fn bound(template: &str, uri: &str) -> Option<Vec<(String, Binding)>> {
        t(template).match_uri(uri).map(|b| b.0)
    }

    #[test]
    fn rfc_6570_examples_expand() {
        let values: HashMap<&str, Binding> = HashMap::from([
            ("var", single("value")),
            ("hello", single("Hello World!")),
            ("path", single("/foo/bar")),
            ("list", list(&["red", "green", "blue"])),
            ("empty", single("")),
            ("x", single("1024")),
            ("y", single("768")),
        ]);
        let cases = [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("X{#var}", "X#value"),
            ("map?{x,y}", "map?1024,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("X{.var}", "X.value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{var:3}", "val"),
            ("{list}", "red,green,blue"),
            ("{list*}", "red,green,blue"),
            ("{/list*}", "/red/green/blue"),
            ("{?list*}", "?list=red&list=green&list=blue"),
            ("{.list}", ".red,green,blue"),
            ("{#path:6}/here", "#/foo/b/here"),
        ];
        for (template, expected) in cases {
            assert_eq!(t(template).expand(&values), expected, "{template}");
        }
    }

    #[test]
    fn uris_match_back_to_their_variables() {
        assert_eq!(
            bound("notes://{id}", "notes://42"),
            Some(vec![("id".into(), single("42"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://caf%C3%A9"),
            Some(vec![("id".into(), single("café"))])
        );
        assert_eq!(
            bound("notes://{id}", "notes://a%2Fb"),
            Some(vec![("id".into(), single("a/b"))])
        );
        assert_eq!(bound("notes://{id}", "notes://a/b"), None);
        assert_eq!(bound("notes://{id}", "notes://"), None);
        assert_eq!(bound("notes://{id}", "notes://%ff"), None);
        assert_eq!(
            bound("files://{+path}", "files://a/b/c.txt"),
            Some(vec![("path".into(), single("a/b/c.txt"))])
        );
        assert_eq!(
            bound("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".into(), single("123"))])
        );
        assert_eq!(
            bound("tree://root{/segments*}", "tree://root/a/b"),
            Some(vec![("segments".into(), list(&["a", "b"]))])
        );
        assert_eq!(
            bound("tree://root{/segments*}", "tree://root"),
            Some(vec![("segments".into(), Binding::Absent)])
        );
        assert_eq!(
            bound("x://{a}.{b}", "x://one.two"),
            Some(vec![
                ("a".into(), single("one")),
                ("b".into(), single("two"))
            ])
        );
        assert_eq!(
            bound("x://{a,b}", "x://1,2"),
            Some(vec![("a".into(), single("1")), ("b".into(), single("2"))])
        );
        assert_eq!(
            bound("x://f{.ext}", "x://f.txt"),
            Some(vec![("ext".into(), single("txt"))])
        );
        assert_eq!(
            bound("x://m{;v}", "x://m;v=3"),
            Some(vec![("v".into(), single("3"))])
        );
        assert_eq!(
            bound("x://{page}{#section}", "x://intro#part-2"),
            Some(vec![
                ("page".into(), single("intro")),
                ("section".into(), single("part-2"))
            ])
        );
        assert_eq!(
            bound("x://{ids}", "x://1,2,3"),
            Some(vec![("ids".into(), list(&["1", "2", "3"]))])
        );
    }

    #[test]
    fn queries_bind_in_any_order() {
        let template = "search://items{?q,limit}";
        assert_eq!(
            bound(template, "search://items?limit=3&q=a%20b"),
            Some(vec![
                ("q".into(), single("a b")),
                ("limit".into(), single("3"))
            ])
        );
        assert_eq!(
            bound(template, "search://items"),
            Some(vec![
                ("q".into(), Binding::Absent),
                ("limit".into(), Binding::Absent)
            ])
        );
        assert_eq!(bound(template, "search://items?other=1"), None);
        assert_eq!(
            bound("s://x{?tag*}", "s://x?tag=a&tag=b"),
            Some(vec![("tag".into(), list(&["a", "b"]))])
        );
        assert_eq!(
            bound("s://x{?a}{&b}", "s://x?b=2&a=1"),
            Some(vec![("a".into(), single("1")), ("b".into(), single("2"))])
        );
    }

    #[test]
    fn expansion_round_trips_through_matching() {
        let template = t("x://{a}/{+b}{?c,d}");
        let values: HashMap<&str, Binding> = HashMap::from([
            ("a", single("é x")),
            ("b", single("p/q r")),
            ("c", single("1")),
            ("d", Binding::Absent),
        ]);
        let uri = template.expand(&values);
        let bindings = template.match_uri(&uri).unwrap();
        assert_eq!(bindings.get("a"), Some(&single("é x")));
        assert_eq!(bindings.get("b"), Some(&single("p/q r")));
        assert_eq!(bindings.get("c"), Some(&single("1")));
        assert_eq!(bindings.get("d"), Some(&Binding::Absent));
    }

    #[test]
    fn escapes_are_screened() {
        for (value, escaping) in [
            ("../etc/passwd", true),
            ("a/../../b", true),
            ("..", true),
            ("/abs", true),
            ("\\\\server\\share", true),
            ("C:\\x", true),
            ("a\0b", true),
            ("docs/readme.md", false),
            ("a..b/c", false),
            ("", false),
        ] {
            assert_eq!(escapes(value).is_some(), escaping, "{value:?}");
        }
    }

    #[test]
    fn the_most_specific_template_sorts_first() {
        let mut templates = [
            t("x://{+rest}"),
            t("x://users/{id}"),
            t("x://{a}/{b}"),
            t("x://users/me"),
        ];
        templates.sort_by_key(UriTemplate::specificity);
        let order: Vec<&str> = templates.iter().map(UriTemplate::as_str).collect();
        assert_eq!(
            order,
            [
                "x://users/me",
                "x://users/{id}",
                "x://{a}/{b}",
                "x://{+rest}"
            ]
        );
    }

    #[test]
    fn indistinguishable_templates_differ_only_in_names() {
        assert!(UriTemplate::indistinguishable(
            &t("notes://{id}"),
            &t("notes://{name}")
        ));
        assert!(!UriTemplate::indistinguishable(
            &t("notes://{id}"),
            &t("notes://{+id}")
        ));
        assert!(!UriTemplate::indistinguishable(
            &t("notes://{id}"),
            &t("notes://x{id}")
        ));
    }
}
