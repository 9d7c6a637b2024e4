//! RFC 6570 URI templates: the parser, shared by the `#[resource]` macro and the runtime.
//!
//! `#[resource]` parses its template with this crate at compile time, and the runtime parses
//! templates built at run time with it and builds its matcher on the result, so both sides
//! accept exactly the same templates. It uses nothing but `std`, so a proc-macro crate can
//! depend on it without pulling in the runtime.
//!
//! The grammar is [RFC 6570 §2](https://www.rfc-editor.org/rfc/rfc6570#section-2), levels 1 to 4,
//! with one restriction of ours: a variable appears once per template, because a URI binds each
//! variable to one value. Errors carry the byte range of the text to fix, so the macro can point
//! at the exact `{...}`.
//!
//! ```
//! use mcp_uri_template::{Operator, Part, parse};
//!
//! let template = parse("notes://{id}{?q}").unwrap();
//! let names: Vec<&str> = template.variables().map(|v| v.name.as_str()).collect();
//! assert_eq!(names, ["id", "q"]);
//! let Part::Expression(query) = &template.parts[2] else { unreachable!() };
//! assert_eq!(query.operator, Operator::Query);
//!
//! let error = parse("notes://{id").unwrap_err();
//! assert_eq!(&"notes://{id"[error.span], "{id");
//! ```

use std::fmt;
use std::ops::Range;

/// A parsed URI template: literal text and `{...}` expressions, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// Literals and expressions in template order; two literals are never adjacent.
    pub parts: Vec<Part>,
}

/// A run of literal text, or one `{...}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text, exactly as written (percent-encoded triplets kept as they are).
    Literal(String),
    /// A `{...}` expression.
    Expression(Expression),
}

/// One `{...}` expression: an operator and its variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expression {
    /// The character after `{`, or [`Operator::Simple`] when there is none.
    pub operator: Operator,
    /// The variables, in the order written; at least one.
    pub variables: Vec<VarSpec>,
    /// The byte range of the whole expression, braces included.
    pub span: Range<usize>,
}

/// The operator of an expression ([RFC 6570 §3.2](https://www.rfc-editor.org/rfc/rfc6570#section-3.2)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `{v}`: simple string expansion.
    Simple,
    /// `{+v}`: reserved expansion, reserved characters pass through.
    Reserved,
    /// `{#v}`: fragment expansion, `#` then as `{+v}`.
    Fragment,
    /// `{.v}`: label expansion, `.` before each value.
    Label,
    /// `{/v}`: path segments, `/` before each value.
    PathSegment,
    /// `{;v}`: path-style parameters, `;name=value`.
    PathParam,
    /// `{?v}`: form-style query, `?name=value&...`.
    Query,
    /// `{&v}`: form-style query continuation, `&name=value`.
    QueryContinuation,
}

impl Operator {
    /// The operator for the character after `{`, if it is one.
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '+' => Self::Reserved,
            '#' => Self::Fragment,
            '.' => Self::Label,
            '/' => Self::PathSegment,
            ';' => Self::PathParam,
            '?' => Self::Query,
            '&' => Self::QueryContinuation,
            _ => return None,
        })
    }

    /// The character written after `{`; `None` for [`Operator::Simple`].
    pub fn symbol(self) -> Option<char> {
        match self {
            Self::Simple => None,
            Self::Reserved => Some('+'),
            Self::Fragment => Some('#'),
            Self::Label => Some('.'),
            Self::PathSegment => Some('/'),
            Self::PathParam => Some(';'),
            Self::Query => Some('?'),
            Self::QueryContinuation => Some('&'),
        }
    }

    /// What the expansion starts with when any variable is defined ("first" in RFC 6570
    /// Appendix A).
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Simple | Self::Reserved => "",
            Self::Fragment => "#",
            Self::Label => ".",
            Self::PathSegment => "/",
            Self::PathParam => ";",
            Self::Query => "?",
            Self::QueryContinuation => "&",
        }
    }

    /// What goes between two defined variables, and between the items of an exploded list
    /// ("sep").
    pub fn separator(self) -> char {
        match self {
            Self::Simple | Self::Reserved | Self::Fragment => ',',
            Self::Label => '.',
            Self::PathSegment => '/',
            Self::PathParam => ';',
            Self::Query | Self::QueryContinuation => '&',
        }
    }

    /// Whether values are written `name=value` ("named").
    pub fn named(self) -> bool {
        matches!(
            self,
            Self::PathParam | Self::Query | Self::QueryContinuation
        )
    }

    /// What follows the name of a named variable whose value is empty ("ifemp").
    pub fn if_empty(self) -> &'static str {
        match self {
            Self::Query | Self::QueryContinuation => "=",
            _ => "",
        }
    }

    /// Whether reserved characters pass through unencoded ("allow": U+R rather than U).
    pub fn allow_reserved(self) -> bool {
        matches!(self, Self::Reserved | Self::Fragment)
    }
}

/// One variable of an expression: `name`, `name*` or `name:n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarSpec {
    /// The name as written (it may contain `.` and `%XX`).
    pub name: String,
    /// `name*`: a list, one item per separator.
    pub explode: bool,
    /// `name:n`: at most the first `n` characters of the value (1 to 9999).
    pub prefix: Option<u16>,
    /// The byte range of the variable, modifier included.
    pub span: Range<usize>,
}

/// Why a template does not parse, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// What is wrong and how to fix it, lower case, code in backticks.
    pub message: String,
    /// The byte range of the text to fix; never empty, always on character boundaries.
    pub span: Range<usize>,
}

impl TemplateError {
    fn new(message: impl Into<String>, span: Range<usize>) -> Self {
        Self {
            message: message.into(),
            span,
        }
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

impl Template {
    /// The expressions, in order.
    pub fn expressions(&self) -> impl Iterator<Item = &Expression> {
        self.parts.iter().filter_map(|part| match part {
            Part::Expression(expression) => Some(expression),
            Part::Literal(_) => None,
        })
    }

    /// Every variable, in order.
    pub fn variables(&self) -> impl Iterator<Item = &VarSpec> {
        self.expressions()
            .flat_map(|expression| &expression.variables)
    }

    /// Whether the template has no expression: it is one fixed URI.
    pub fn is_static(&self) -> bool {
        self.expressions().next().is_none()
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in &self.parts {
            match part {
                Part::Literal(text) => f.write_str(text)?,
                Part::Expression(expression) => write!(f, "{expression}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        if let Some(symbol) = self.operator.symbol() {
            write!(f, "{symbol}")?;
        }
        for (i, var) in self.variables.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{var}")?;
        }
        f.write_str("}")
    }
}

impl fmt::Display for VarSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if self.explode {
            f.write_str("*")?;
        }
        if let Some(prefix) = self.prefix {
            write!(f, ":{prefix}")?;
        }
        Ok(())
    }
}

/// Parses `text` as an RFC 6570 template (levels 1 to 4).
pub fn parse(text: &str) -> Result<Template, TemplateError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut seen: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        match c {
            '{' => {
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                let expression = parse_expression(text, i)?;
                for var in &expression.variables {
                    if seen.contains(&var.name) {
                        return Err(TemplateError::new(
                            format!(
                                "variable `{}` appears twice: a URI binds each variable once, so rename or remove one",
                                var.name
                            ),
                            var.span.clone(),
                        ));
                    }
                    seen.push(var.name.clone());
                }
                i = expression.span.end;
                parts.push(Part::Expression(expression));
            }
            '}' => {
                return Err(TemplateError::new(
                    "`}` without `{`: remove it, or write it as `%7D`",
                    i..i + 1,
                ));
            }
            '%' => {
                let triplet = percent_triplet(text, i)?;
                literal.push_str(triplet);
                i += triplet.len();
            }
            c if forbidden_in_literal(c) => {
                let what = match c {
                    ' ' => "a space".to_owned(),
                    c if c.is_control() => format!("control character U+{:04X}", u32::from(c)),
                    c => format!("`{c}`"),
                };
                let mut utf8 = [0; 4];
                let encoded: String = c
                    .encode_utf8(&mut utf8)
                    .bytes()
                    .map(|b| format!("%{b:02X}"))
                    .collect();
                return Err(TemplateError::new(
                    format!("{what} is not allowed in a URI template: write it as `{encoded}`"),
                    i..i + c.len_utf8(),
                ));
            }
            c => {
                literal.push(c);
                i += c.len_utf8();
            }
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(Template { parts })
}

/// Characters a literal may not contain unencoded (RFC 6570 §2.1: controls, space, `"`, `<`,
/// `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`). `'` is accepted: it is a URI sub-delimiter.
fn forbidden_in_literal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            ' ' | '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}'
        )
}

/// The `%XX` triplet at `at`, or an error spanning `%` and the (up to two) characters after it.
fn percent_triplet(text: &str, at: usize) -> Result<&str, TemplateError> {
    let bytes = text.as_bytes();
    let valid = bytes.len() >= at + 3
        && bytes[at + 1].is_ascii_hexdigit()
        && bytes[at + 2].is_ascii_hexdigit();
    if valid {
        return Ok(&text[at..at + 3]);
    }
    let end = text[at..]
        .char_indices()
        .nth(3)
        .map_or(text.len(), |(offset, _)| at + offset);
    Err(TemplateError::new(
        format!(
            "invalid percent-encoding `{}`: `%` starts `%XX` with two hex digits; write `%` itself as `%25`",
            &text[at..end]
        ),
        at..end,
    ))
}

/// Parses the expression whose `{` is at `start`.
fn parse_expression(text: &str, start: usize) -> Result<Expression, TemplateError> {
    let after = start + 1;
    let close = match text[after..].find(['{', '}']) {
        Some(offset) if text.as_bytes()[after + offset] == b'}' => after + offset,
        found => {
            let stop = found.map_or(text.len(), |offset| after + offset);
            let excerpt = text[start..stop].trim_end();
            return Err(TemplateError::new(
                format!("unclosed expression `{excerpt}`: add `}}`"),
                start..start + excerpt.len(),
            ));
        }
    };
    let span = start..close + 1;
    let (operator, list_start) = match text[after..close].chars().next() {
        None => {
            return Err(TemplateError::new(
                "empty expression `{}`: name a variable",
                span,
            ));
        }
        Some(c @ ('=' | ',' | '!' | '@' | '|')) => {
            return Err(TemplateError::new(
                format!("operator `{c}` is reserved for future extensions: remove it"),
                after..after + 1,
            ));
        }
        Some(c) => match Operator::from_char(c) {
            Some(operator) => (operator, after + 1),
            None => (Operator::Simple, after),
        },
    };
    let list = &text[list_start..close];
    if list.is_empty() {
        return Err(TemplateError::new(
            format!(
                "empty expression `{}`: name a variable",
                &text[span.clone()]
            ),
            span,
        ));
    }
    let mut variables = Vec::new();
    let mut offset = list_start;
    for spec in list.split(',') {
        if spec.is_empty() {
            return Err(TemplateError::new(
                format!(
                    "empty variable name in `{}`: name a variable or remove the extra `,`",
                    &text[span.clone()]
                ),
                span,
            ));
        }
        variables.push(parse_varspec(spec, offset..offset + spec.len())?);
        offset += spec.len() + 1;
    }
    Ok(Expression {
        operator,
        variables,
        span,
    })
}

/// Parses one `varspec` (`name`, `name*`, `name:n`) found at `span`.
fn parse_varspec(spec: &str, span: Range<usize>) -> Result<VarSpec, TemplateError> {
    let name_end = spec.find([':', '*']).unwrap_or(spec.len());
    let (name, modifier) = spec.split_at(name_end);
    let name_span = span.start..span.start + name_end;
    let modifier_span = name_span.end..span.end;
    if name.is_empty() {
        return Err(TemplateError::new(
            format!("`{modifier}` needs a variable name before it"),
            span,
        ));
    }
    if !valid_name(name) {
        return Err(TemplateError::new(
            format!(
                "invalid variable name `{name}`: use letters, digits, `_` and `%XX`, with single `.` between them"
            ),
            name_span,
        ));
    }
    let mut var = VarSpec {
        name: name.to_owned(),
        explode: false,
        prefix: None,
        span: span.clone(),
    };
    if modifier == "*" {
        var.explode = true;
    } else if let Some(rest) = modifier.strip_prefix('*') {
        return Err(if rest.contains(':') {
            TemplateError::new("a variable cannot have both `*` and `:n`: keep one", span)
        } else {
            TemplateError::new(
                format!(
                    "invalid modifier `{modifier}`: use `*` to explode a list or `:n` for a prefix"
                ),
                modifier_span,
            )
        });
    } else if let Some(digits) = modifier.strip_prefix(':') {
        if digits.contains('*') {
            return Err(TemplateError::new(
                "a variable cannot have both `*` and `:n`: keep one",
                span,
            ));
        }
        // RFC 6570: max-length = %x31-39 0*3DIGIT
        let valid = (1..=4).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0');
        match digits.parse::<u16>() {
            Ok(n) if valid => var.prefix = Some(n),
            _ => {
                return Err(TemplateError::new(
                    format!("prefix `{modifier}` must be 1 to 9999"),
                    modifier_span,
                ));
            }
        }
    }
    Ok(var)
}

/// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let mut i = 0;
    let mut after_varchar = false;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_alphanumeric() || b == b'_' {
            after_varchar = true;
            i += 1;
        } else if b == b'%'
            && bytes.len() >= i + 3
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            after_varchar = true;
            i += 3;
        } else if b == b'.' && after_varchar {
            after_varchar = false;
            i += 1;
        } else {
            return false;
        }
    }
    after_varchar
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message and the text its span covers.
    fn error(text: &str) -> (String, &str) {
        let error = parse(text).expect_err(text);
        (error.message, &text[error.span])
    }

    fn var(name: &str, explode: bool, prefix: Option<u16>, span: Range<usize>) -> VarSpec {
        VarSpec {
            name: name.to_owned(),
            explode,
            prefix,
            span,
        }
    }

    #[test]
    fn parses_literals_and_expressions_with_spans() {
        let template = parse("notes://{id}/x{?q,limit:3,tag*}").unwrap();
        assert_eq!(
            template.parts,
            vec![
                Part::Literal("notes://".to_owned()),
                Part::Expression(Expression {
                    operator: Operator::Simple,
                    variables: vec![var("id", false, None, 9..11)],
                    span: 8..12
                }),
                Part::Literal("/x".to_owned()),
                Part::Expression(Expression {
                    operator: Operator::Query,
                    variables: vec![
                        var("q", false, None, 16..17),
                        var("limit", false, Some(3), 18..25),
                        var("tag", true, None, 26..30)
                    ],
                    span: 14..31,
                }),
            ]
        );
        let names: Vec<&str> = template.variables().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["id", "q", "limit", "tag"]);
        assert!(!template.is_static());
    }

    #[test]
    fn every_operator_parses() {
        let cases = [
            ("{v}", Operator::Simple),
            ("{+v}", Operator::Reserved),
            ("{#v}", Operator::Fragment),
            ("{.v}", Operator::Label),
            ("{/v}", Operator::PathSegment),
            ("{;v}", Operator::PathParam),
            ("{?v}", Operator::Query),
            ("{&v}", Operator::QueryContinuation),
        ];
        for (text, operator) in cases {
            let template = parse(text).unwrap();
            let expression = template.expressions().next().unwrap();
            assert_eq!(expression.operator, operator, "{text}");
            assert_eq!(
                expression
                    .operator
                    .symbol()
                    .map(String::from)
                    .unwrap_or_default(),
                &text[1..text.len() - 2]
            );
            assert_eq!(expression.variables[0].name, "v");
        }
    }

    #[test]
    fn operator_table_follows_rfc_6570_appendix_a() {
        use Operator::*;
        let table = [
            (Simple, "", ',', false, "", false),
            (Reserved, "", ',', false, "", true),
            (Label, ".", '.', false, "", false),
            (PathSegment, "/", '/', false, "", false),
            (PathParam, ";", ';', true, "", false),
            (Query, "?", '&', true, "=", false),
            (QueryContinuation, "&", '&', true, "=", false),
            (Fragment, "#", ',', false, "", true),
        ];
        for (op, first, sep, named, ifemp, allow) in table {
            assert_eq!(op.prefix(), first, "{op:?}");
            assert_eq!(op.separator(), sep, "{op:?}");
            assert_eq!(op.named(), named, "{op:?}");
            assert_eq!(op.if_empty(), ifemp, "{op:?}");
            assert_eq!(op.allow_reserved(), allow, "{op:?}");
        }
    }

    #[test]
    fn static_templates_and_percent_encoded_literals() {
        let template = parse("test://caf%C3%A9/a'b!").unwrap();
        assert!(template.is_static());
        assert_eq!(
            template.parts,
            vec![Part::Literal("test://caf%C3%A9/a'b!".to_owned())]
        );
        assert_eq!(template.variables().count(), 0);
        assert_eq!(parse("").unwrap().parts, vec![]);
        assert!(parse("").unwrap().is_static());
        assert!(parse("file:///é/日本").unwrap().is_static());
    }

    #[test]
    fn variable_names_may_have_dots_and_percent_encoding() {
        let template = parse("{a.b,c%20d,_1,X9}").unwrap();
        let names: Vec<&str> = template.variables().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["a.b", "c%20d", "_1", "X9"]);
    }

    #[test]
    fn display_reproduces_the_text() {
        for text in [
            "notes://{id}",
            "{+path:6}/here",
            "X{.list*}",
            "{/var:1,other}",
            "{;x,y,empty}",
            "search{?q,limit}{&page}#top",
            "{#keys*}",
            "caf%C3%A9/{a.b}",
            "",
            "no-expressions",
        ] {
            assert_eq!(parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn unclosed_expression() {
        assert_eq!(
            error("notes://{id"),
            ("unclosed expression `{id`: add `}`".to_owned(), "{id")
        );
        assert_eq!(
            error("a{b{c}"),
            ("unclosed expression `{b`: add `}`".to_owned(), "{b")
        );
        assert_eq!(
            error("x{"),
            ("unclosed expression `{`: add `}`".to_owned(), "{")
        );
        let error = parse("notes://{id").unwrap_err();
        assert_eq!(error.span, 8..11);
    }

    #[test]
    fn empty_expression() {
        assert_eq!(
            error("a{}b"),
            ("empty expression `{}`: name a variable".to_owned(), "{}")
        );
        assert_eq!(
            error("a{+}b"),
            ("empty expression `{+}`: name a variable".to_owned(), "{+}")
        );
        assert_eq!(
            error("{a,}"),
            (
                "empty variable name in `{a,}`: name a variable or remove the extra `,`".to_owned(),
                "{a,}"
            )
        );
        assert_eq!(error("{?a,,b}").1, "{?a,,b}");
    }

    #[test]
    fn invalid_variable_names() {
        let message = |name: &str| {
            format!(
                "invalid variable name `{name}`: use letters, digits, `_` and `%XX`, with single `.` between them"
            )
        };
        assert_eq!(error("x/{a b}"), (message("a b"), "a b"));
        assert_eq!(error("{ok,a-b}"), (message("a-b"), "a-b"));
        assert_eq!(error("{.a.}"), (message("a."), "a."));
        assert_eq!(error("{a..b}"), (message("a..b"), "a..b"));
        assert_eq!(error("{é}"), (message("é"), "é"));
        assert_eq!(error("{a%2}"), (message("a%2"), "a%2"));
        assert_eq!(error("{/ x}"), (message(" x"), " x"));
        assert_eq!(
            error("{*}"),
            ("`*` needs a variable name before it".to_owned(), "*")
        );
        assert_eq!(
            error("{:3}"),
            ("`:3` needs a variable name before it".to_owned(), ":3")
        );
    }

    #[test]
    fn prefixes_must_be_1_to_9999() {
        assert_eq!(
            error("{a:0}"),
            ("prefix `:0` must be 1 to 9999".to_owned(), ":0")
        );
        assert_eq!(
            error("{a:10000}"),
            ("prefix `:10000` must be 1 to 9999".to_owned(), ":10000")
        );
        assert_eq!(
            error("{a:07}"),
            ("prefix `:07` must be 1 to 9999".to_owned(), ":07")
        );
        assert_eq!(
            error("{a:}"),
            ("prefix `:` must be 1 to 9999".to_owned(), ":")
        );
        assert_eq!(
            error("{a:x}"),
            ("prefix `:x` must be 1 to 9999".to_owned(), ":x")
        );
        assert_eq!(
            parse("{a:9999}")
                .unwrap()
                .variables()
                .next()
                .unwrap()
                .prefix,
            Some(9999)
        );
        assert_eq!(
            parse("{a:1}").unwrap().variables().next().unwrap().prefix,
            Some(1)
        );
    }

    #[test]
    fn explode_and_prefix_together() {
        let message = "a variable cannot have both `*` and `:n`: keep one".to_owned();
        assert_eq!(error("{a*:3}"), (message.clone(), "a*:3"));
        assert_eq!(error("{x,a:3*}"), (message, "a:3*"));
        assert_eq!(
            error("{a**}"),
            (
                "invalid modifier `**`: use `*` to explode a list or `:n` for a prefix".to_owned(),
                "**"
            )
        );
    }

    #[test]
    fn reserved_operators() {
        for op in ['=', ',', '!', '@', '|'] {
            let text = format!("x{{{op}a}}");
            let (message, at) = error(&text);
            assert_eq!(
                message,
                format!("operator `{op}` is reserved for future extensions: remove it")
            );
            assert_eq!(at, op.to_string());
        }
    }

    #[test]
    fn closing_brace_without_opening() {
        assert_eq!(
            error("a}b"),
            (
                "`}` without `{`: remove it, or write it as `%7D`".to_owned(),
                "}"
            )
        );
        assert_eq!(parse("{a}}").unwrap_err().span, 3..4);
    }

    #[test]
    fn variables_appear_once() {
        let message =
            "variable `x` appears twice: a URI binds each variable once, so rename or remove one"
                .to_owned();
        let error = parse("{x}/{x}").unwrap_err();
        assert_eq!((error.message, error.span), (message.clone(), 5..6));
        let error = parse("{/x:1,x}").unwrap_err();
        assert_eq!((error.message, error.span), (message.clone(), 6..7));
        let error = parse("{?x}{&y,x*}").unwrap_err();
        assert_eq!((error.message, error.span), (message, 8..10));
    }

    #[test]
    fn literal_characters_that_must_be_encoded() {
        assert_eq!(
            error("a b"),
            (
                "a space is not allowed in a URI template: write it as `%20`".to_owned(),
                " "
            )
        );
        for (c, encoded) in [
            ('"', "%22"),
            ('<', "%3C"),
            ('>', "%3E"),
            ('\\', "%5C"),
            ('^', "%5E"),
            ('`', "%60"),
            ('|', "%7C"),
        ] {
            let text = format!("x{c}y");
            assert_eq!(
                error(&text),
                (
                    format!("`{c}` is not allowed in a URI template: write it as `{encoded}`"),
                    &text[1..2]
                )
            );
        }
        assert_eq!(
            error("a\tb"),
            (
                "control character U+0009 is not allowed in a URI template: write it as `%09`"
                    .to_owned(),
                "\t"
            )
        );
        assert_eq!(
            error("a\u{7f}").0,
            "control character U+007F is not allowed in a URI template: write it as `%7F`"
        );
        assert_eq!(
            error("a\u{85}").0,
            "control character U+0085 is not allowed in a URI template: write it as `%C2%85`"
        );
    }

    #[test]
    fn invalid_percent_encoding_in_literals() {
        let message = |s: &str| {
            format!(
                "invalid percent-encoding `{s}`: `%` starts `%XX` with two hex digits; write `%` itself as `%25`"
            )
        };
        assert_eq!(error("50%"), (message("%"), "%"));
        assert_eq!(error("a%zzb"), (message("%zz"), "%zz"));
        assert_eq!(error("a%4"), (message("%4"), "%4"));
        assert_eq!(error("a%éé"), (message("%éé"), "%éé"));
    }

    #[test]
    fn error_spans_are_on_character_boundaries() {
        for text in [
            "é{",
            "é{é é}",
            "é}",
            "é%é",
            "{é:0}",
            "é é",
            "{a,é,a}",
            "{a:é}",
            "é{}",
            "é{,}",
        ] {
            let error = parse(text).unwrap_err();
            assert!(
                text.is_char_boundary(error.span.start) && text.is_char_boundary(error.span.end),
                "{text}: {error:?}"
            );
            assert!(
                error.span.start < error.span.end && error.span.end <= text.len(),
                "{text}: {error:?}"
            );
        }
    }
}
