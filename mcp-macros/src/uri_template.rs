//! RFC 6570 URI templates, levels 1 to 4: the parser.
//!
//! This file is shared: the macros parse every `#[resource]` template with it at compile time,
//! and the runtime includes the same file (`#[path]`) to parse templates registered at run time.
//! It therefore uses nothing but `std`.

#![allow(dead_code)]

use std::fmt;
use std::ops::Range;

/// The operator of an expression: what comes before the variables, how they are separated and
/// whether reserved characters pass unencoded (RFC 6570 appendix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Operator {
    /// `{v}`
    Simple,
    /// `{+v}`
    Reserved,
    /// `{#v}`
    Fragment,
    /// `{.v}`
    Label,
    /// `{/v}`
    PathSegment,
    /// `{;v}`
    PathParam,
    /// `{?v}`
    Query,
    /// `{&v}`
    QueryContinuation,
}

impl Operator {
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

    /// The operator's character in the template (`""` for simple expansion).
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Self::Simple => "",
            Self::Reserved => "+",
            Self::Fragment => "#",
            Self::Label => ".",
            Self::PathSegment => "/",
            Self::PathParam => ";",
            Self::Query => "?",
            Self::QueryContinuation => "&",
        }
    }

    /// What an expansion starts with when any variable is defined.
    pub(crate) fn first(self) -> &'static str {
        match self {
            Self::Simple | Self::Reserved => "",
            other => other.symbol(),
        }
    }

    /// What separates values.
    pub(crate) fn separator(self) -> char {
        match self {
            Self::Simple | Self::Reserved | Self::Fragment => ',',
            Self::Label => '.',
            Self::PathSegment => '/',
            Self::PathParam => ';',
            Self::Query | Self::QueryContinuation => '&',
        }
    }

    /// Whether values are written `name=value`.
    pub(crate) fn named(self) -> bool {
        matches!(
            self,
            Self::PathParam | Self::Query | Self::QueryContinuation
        )
    }

    /// What follows the name of an empty value (`;x` but `?x=`).
    pub(crate) fn if_empty(self) -> &'static str {
        match self {
            Self::Query | Self::QueryContinuation => "=",
            _ => "",
        }
    }

    /// Whether reserved characters are left unencoded.
    pub(crate) fn allow_reserved(self) -> bool {
        matches!(self, Self::Reserved | Self::Fragment)
    }
}

/// One variable of an expression: `name`, `name*` or `name:3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VarSpec {
    pub(crate) name: String,
    pub(crate) explode: bool,
    pub(crate) prefix: Option<u16>,
    /// Byte range of the variable in the template text.
    pub(crate) span: Range<usize>,
}

/// One `{...}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expression {
    pub(crate) operator: Operator,
    pub(crate) variables: Vec<VarSpec>,
    /// Byte range of the whole expression, braces included.
    pub(crate) span: Range<usize>,
}

/// A piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Literal text, matched exactly.
    Literal(String),
    /// An expression.
    Expression(Expression),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pub(crate) parts: Vec<Part>,
    pub(crate) text: String,
}

impl Template {
    /// Every variable, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &VarSpec> {
        self.parts.iter().flat_map(|part| match part {
            Part::Expression(expression) => expression.variables.iter(),
            Part::Literal(_) => [].iter(),
        })
    }

    /// Whether the template has no expressions: a plain URI.
    pub(crate) fn is_static(&self) -> bool {
        self.parts
            .iter()
            .all(|part| matches!(part, Part::Literal(_)))
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a template does not parse, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateError {
    pub(crate) message: String,
    /// Byte range of the offending text.
    pub(crate) span: Range<usize>,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

fn error(message: impl Into<String>, span: Range<usize>) -> TemplateError {
    TemplateError {
        message: message.into(),
        span,
    }
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// Parses a template.
pub(crate) fn parse(text: &str) -> Result<Template, TemplateError> {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i..].chars().next().unwrap_or('\0');
        match c {
            '{' => {
                let Some(close) = text[i..].find('}') else {
                    return Err(error(
                        format!("unclosed expression `{}`: add `}}`", &text[i..]),
                        i..text.len(),
                    ));
                };
                let end = i + close + 1;
                if let Some(open) = text[i + 1..end - 1].find('{') {
                    let at = i + 1 + open;
                    return Err(error(
                        format!("unclosed expression `{}`: add `}}`", &text[i..at]),
                        i..at,
                    ));
                }
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(Part::Expression(parse_expression(text, i, end)?));
                i = end;
            }
            '}' => {
                return Err(error(
                    "`}` without `{`: remove it or open an expression",
                    i..i + 1,
                ));
            }
            '%' => {
                if i + 2 < bytes.len() && is_hex(bytes[i + 1]) && is_hex(bytes[i + 2]) {
                    literal.push_str(&text[i..i + 3]);
                    i += 3;
                } else {
                    return Err(error(
                        "`%` must start a percent-encoding such as `%20`",
                        i..(i + 3).min(text.len()),
                    ));
                }
            }
            c if c.is_control() || " \"'<>\\^`|".contains(c) => {
                return Err(error(
                    format!("{c:?} is not allowed in a URI template; percent-encode it"),
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
    let template = Template {
        parts,
        text: text.to_owned(),
    };
    let mut seen: Vec<&VarSpec> = Vec::new();
    for var in template.variables() {
        if seen.iter().any(|v| v.name == var.name) {
            return Err(error(
                format!("variable `{}` appears twice", var.name),
                var.span.clone(),
            ));
        }
        seen.push(var);
    }
    Ok(template)
}

fn parse_expression(text: &str, start: usize, end: usize) -> Result<Expression, TemplateError> {
    let inner_start = start + 1;
    let inner = &text[inner_start..end - 1];
    if inner.is_empty() {
        return Err(error("empty expression `{}`: name a variable", start..end));
    }
    let first = inner.chars().next().unwrap_or(' ');
    let (operator, list_start) = match Operator::from_char(first) {
        Some(operator) => (operator, inner_start + 1),
        None if "=,!@|".contains(first) => {
            return Err(error(
                format!("operator `{first}` is reserved for future extensions"),
                inner_start..inner_start + 1,
            ));
        }
        None => (Operator::Simple, inner_start),
    };
    let list = &text[list_start..end - 1];
    if list.is_empty() {
        return Err(error(
            format!("expression `{}` names no variable", &text[start..end]),
            start..end,
        ));
    }
    let mut variables = Vec::new();
    let mut offset = list_start;
    for spec in list.split(',') {
        let span = offset..offset + spec.len();
        offset += spec.len() + 1;
        variables.push(parse_varspec(spec, span)?);
    }
    Ok(Expression {
        operator,
        variables,
        span: start..end,
    })
}

fn parse_varspec(spec: &str, span: Range<usize>) -> Result<VarSpec, TemplateError> {
    if spec.contains('*') && spec.contains(':') {
        return Err(error(
            format!("`{spec}`: a variable cannot have both `*` and `:n`"),
            span,
        ));
    }
    let (name, explode, prefix) = if let Some(name) = spec.strip_suffix('*') {
        (name, true, None)
    } else if let Some((name, digits)) = spec.split_once(':') {
        let prefix = digits
            .parse::<u16>()
            .ok()
            .filter(|n| (1..=9999).contains(n) && !digits.starts_with('0'))
            .ok_or_else(|| {
                error(
                    format!("prefix `:{digits}` must be 1 to 9999"),
                    span.clone(),
                )
            })?;
        (name, false, Some(prefix))
    } else {
        (spec, false, None)
    };
    if !valid_name(name) {
        return Err(error(
            format!("invalid variable name `{name}`: use letters, digits, `_` and `%XX`"),
            span,
        ));
    }
    Ok(VarSpec {
        name: name.to_owned(),
        explode,
        prefix,
        span,
    })
}

fn valid_name(name: &str) -> bool {
    if name.is_empty() || name.starts_with('.') || name.ends_with('.') || name.contains("..") {
        return false;
    }
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                if !(is_hex(bytes[i + 1]) && is_hex(bytes[i + 2])) {
                    return false;
                }
                i += 3;
            }
            b'%' => return false,
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => i += 1,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> TemplateError {
        parse(text).unwrap_err()
    }

    #[test]
    fn every_operator_parses() {
        let t = parse("a{b}{+c}{#d}{.e}{/f*}{;g}{?h,i:3}{&j}z").unwrap();
        let ops: Vec<Operator> = t
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Expression(e) => Some(e.operator),
                Part::Literal(_) => None,
            })
            .collect();
        use Operator::*;
        assert_eq!(
            ops,
            [
                Simple,
                Reserved,
                Fragment,
                Label,
                PathSegment,
                PathParam,
                Query,
                QueryContinuation
            ]
        );
        let vars: Vec<&VarSpec> = t.variables().collect();
        assert!(vars[4].explode && vars[4].name == "f");
        assert_eq!(vars[7].prefix, Some(3));
        assert!(parse("notes://x").unwrap().is_static());
        assert_eq!(parse("x%20y{a.b}").unwrap().to_string(), "x%20y{a.b}");
    }

    #[test]
    fn mistakes_are_reported_with_their_span() {
        assert_eq!(err("a://{id").message, "unclosed expression `{id`: add `}`");
        assert_eq!(err("a://{id").span, 4..7);
        assert_eq!(
            err("a://{}").message,
            "empty expression `{}`: name a variable"
        );
        assert_eq!(
            err("a://{a b}").message,
            "invalid variable name `a b`: use letters, digits, `_` and `%XX`"
        );
        assert_eq!(err("a://{a:0}").message, "prefix `:0` must be 1 to 9999");
        assert_eq!(
            err("a://{a:10000}").message,
            "prefix `:10000` must be 1 to 9999"
        );
        assert_eq!(
            err("a://{a*:3}").message,
            "`a*:3`: a variable cannot have both `*` and `:n`"
        );
        assert_eq!(
            err("a://{=a}").message,
            "operator `=` is reserved for future extensions"
        );
        assert_eq!(
            err("a://a}").message,
            "`}` without `{`: remove it or open an expression"
        );
        assert_eq!(err("a://{x}/{x}").message, "variable `x` appears twice");
        assert_eq!(err("a://{x}/{x}").span, 9..10);
        assert_eq!(
            err("a://b c").message,
            "' ' is not allowed in a URI template; percent-encode it"
        );
        assert_eq!(
            err("a://%zz").message,
            "`%` must start a percent-encoding such as `%20`"
        );
        assert_eq!(err("a://{?}").message, "expression `{?}` names no variable");
        assert_eq!(
            err("a://{a{b}").message,
            "unclosed expression `{a`: add `}`"
        );
    }
}
