//! The YAML frontmatter of a `SKILL.md`: the block between a leading `---` line and the next
//! `---` line, parsed into a [`Yaml`] value.
//!
//! Only the block subset skills use is understood: mappings and sequences by indentation, plain,
//! single- and double-quoted scalars, `|` and `>` block scalars, comments. Anything else (flow
//! collections, anchors, tags, multi-line plain scalars, duplicate keys) is refused with a
//! message, so what the server sends as `frontmatter` is never a guess at what a YAML parser
//! would make of the file. Plain scalars resolve as the YAML 1.2 core schema does: `null`, `~`
//! and nothing are null, `true`/`false` booleans, integers and floats numbers, the rest strings.

use std::fmt::Write as _;

use crate::ManifestError;

/// A parsed YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    /// `null`, `~`, or nothing.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A block sequence.
    Seq(Vec<Yaml>),
    /// A block mapping, in the file's order.
    Map(Vec<(String, Yaml)>),
}

impl Yaml {
    /// The value at `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Self::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as JSON text (the frontmatter object of `skills/list`).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Self::Null => out.push_str("null"),
            Self::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Self::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Self::Float(f) if f.is_finite() => {
                let _ = write!(out, "{f:?}");
            }
            Self::Float(_) => out.push_str("null"),
            Self::Str(s) => json_string(s, out),
            Self::Seq(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Self::Map(entries) => {
                out.push('{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    json_string(key, out);
                    out.push(':');
                    value.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A `SKILL.md`'s frontmatter, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    /// The YAML value.
    pub value: Yaml,
    /// The line of the file each top-level key is on, in the file's order.
    pub key_lines: Vec<(String, usize)>,
}

impl Frontmatter {
    /// The line `key` is on, if it is a top-level key.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.key_lines
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, line)| *line)
    }
}

/// Splits `text` into its frontmatter block (without the `---` lines) and parses it.
///
/// The file must start with `---` on its own line; the block ends at the next line that is
/// `---` (trailing spaces allowed).
pub fn parse(text: &str) -> Result<Yaml, ManifestError> {
    read(text).map(|frontmatter| frontmatter.value)
}

/// [`parse`], with the line of each top-level key. Errors name the line of the file (1 is the
/// opening `---`).
pub fn read(text: &str) -> Result<Frontmatter, ManifestError> {
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or_default();
    if first.trim_end_matches('\r') != "---" {
        return Err(at(
            1,
            "SKILL.md must start with a `---` line opening the YAML frontmatter",
        ));
    }
    let mut block = Vec::new();
    let mut closed = false;
    for line in lines {
        let line = line.trim_end_matches('\r');
        if line.trim_end_matches([' ', '\t']) == "---" {
            closed = true;
            break;
        }
        block.push(line);
    }
    if !closed {
        return Err(at(
            1,
            "the YAML frontmatter of SKILL.md has no closing `---` line",
        ));
    }
    read_block(&block)
}

/// Parses the lines of a YAML block (no `---` lines; the first is line 2 of its file).
pub fn parse_block(lines: &[&str]) -> Result<Yaml, ManifestError> {
    read_block(lines).map(|frontmatter| frontmatter.value)
}

fn read_block(lines: &[&str]) -> Result<Frontmatter, ManifestError> {
    let lines: Vec<Line<'_>> = lines
        .iter()
        .enumerate()
        .map(|(i, text)| Line {
            number: i + 2,
            text,
        })
        .collect();
    let mut parser = Parser {
        lines,
        at: 0,
        root_indent: 0,
        key_lines: Vec::new(),
    };
    parser.skip_blank();
    if parser.at == parser.lines.len() {
        return Ok(Frontmatter {
            value: Yaml::Map(Vec::new()),
            key_lines: Vec::new(),
        });
    }
    let indent = parser.lines[parser.at].indent()?;
    parser.root_indent = indent;
    let value = parser.node(indent)?;
    parser.skip_blank();
    if let Some(line) = parser.lines.get(parser.at) {
        return Err(at(line.number, "unexpected indentation"));
    }
    Ok(Frontmatter {
        value,
        key_lines: parser.key_lines,
    })
}

/// An error at line `line` of the file.
fn at(line: usize, message: impl Into<String>) -> ManifestError {
    ManifestError {
        line,
        message: message.into(),
    }
}

struct Line<'a> {
    number: usize,
    text: &'a str,
}

impl Line<'_> {
    fn indent(&self) -> Result<usize, ManifestError> {
        let spaces = self.text.len() - self.text.trim_start_matches(' ').len();
        if self.text[spaces..].starts_with('\t') {
            return Err(at(self.number, "tabs cannot indent YAML"));
        }
        Ok(spaces)
    }

    fn blank(&self) -> bool {
        let t = self.text.trim_start();
        t.is_empty() || t.starts_with('#')
    }
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
    /// The indentation of the top level.
    root_indent: usize,
    /// The top-level keys and their lines.
    key_lines: Vec<(String, usize)>,
}

impl Parser<'_> {
    fn skip_blank(&mut self) {
        while self.lines.get(self.at).is_some_and(Line::blank) {
            self.at += 1;
        }
    }

    /// A mapping or a sequence whose lines are indented exactly `indent`.
    fn node(&mut self, indent: usize) -> Result<Yaml, ManifestError> {
        let line = &self.lines[self.at];
        let content = &line.text[indent..];
        if content == "-" || content.starts_with("- ") {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        }
    }

    fn sequence(&mut self, indent: usize) -> Result<Yaml, ManifestError> {
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self.lines.get(self.at) else {
                break;
            };
            let here = line.indent()?;
            if here < indent {
                break;
            }
            let number = line.number;
            let content = &line.text[indent..];
            let is_item = content == "-" || content.starts_with("- ");
            if here == indent && !is_item {
                break;
            }
            if here > indent {
                return Err(at(number, "expected a `- ` sequence item"));
            }
            let rest = content[1..].trim_start();
            self.at += 1;
            if rest.is_empty() || rest.starts_with('#') {
                items.push(self.nested(indent, number)?);
            } else if rest.starts_with("- ") || looks_like_key(rest) {
                return Err(at(
                    number,
                    "only scalars and indented blocks are supported as sequence items",
                ));
            } else {
                items.push(self.scalar_value(rest, indent, number)?);
            }
        }
        Ok(Yaml::Seq(items))
    }

    fn mapping(&mut self, indent: usize) -> Result<Yaml, ManifestError> {
        let mut entries: Vec<(String, Yaml)> = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self.lines.get(self.at) else {
                break;
            };
            let here = line.indent()?;
            if here < indent {
                break;
            }
            let number = line.number;
            if here > indent {
                return Err(at(number, "unexpected indentation"));
            }
            let content = &line.text[indent..];
            let (key, rest) = split_key(content)
                .ok_or_else(|| at(number, format!("expected `key: value`, found `{content}`")))?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(at(number, format!("duplicate key `{key}`")));
            }
            if indent == self.root_indent {
                self.key_lines.push((key.clone(), number));
            }
            self.at += 1;
            let value = if rest.is_empty() || rest.starts_with('#') {
                self.nested(indent, number)?
            } else {
                self.scalar_value(rest, indent, number)?
            };
            entries.push((key, value));
        }
        Ok(Yaml::Map(entries))
    }

    /// The block under a key or `-` with nothing after it: more indented lines, else null. A
    /// sequence may sit at the key's own indentation.
    fn nested(&mut self, indent: usize, number: usize) -> Result<Yaml, ManifestError> {
        self.skip_blank();
        let Some(line) = self.lines.get(self.at) else {
            return Ok(Yaml::Null);
        };
        let here = line.indent()?;
        let content = &line.text[here..];
        let is_item = content == "-" || content.starts_with("- ");
        if here > indent || (here == indent && is_item && self.in_mapping(indent, number)) {
            self.node(here)
        } else {
            Ok(Yaml::Null)
        }
    }

    /// Whether line `number` (a `key:` line) belongs to a mapping, which lets its sequence sit
    /// at the same indentation.
    fn in_mapping(&self, indent: usize, number: usize) -> bool {
        self.lines
            .iter()
            .find(|l| l.number == number)
            .is_some_and(|l| {
                let c = &l.text[indent.min(l.text.len())..];
                !(c == "-" || c.starts_with("- "))
            })
    }

    fn scalar_value(
        &mut self,
        rest: &str,
        indent: usize,
        number: usize,
    ) -> Result<Yaml, ManifestError> {
        let rest = rest.trim_end();
        if let Some(style) = rest.strip_prefix('|') {
            return self.block_scalar(true, style, indent, number);
        }
        if let Some(style) = rest.strip_prefix('>') {
            return self.block_scalar(false, style, indent, number);
        }
        let value = scalar(rest, number)?;
        // A plain scalar continued on the next, more indented line is not supported.
        if let Some(next) = self.lines.get(self.at)
            && !next.blank()
            && next.indent()? > indent
        {
            return Err(at(
                next.number,
                "a value spread over several lines must use `|` or `>`",
            ));
        }
        Ok(value)
    }

    fn block_scalar(
        &mut self,
        literal: bool,
        style: &str,
        indent: usize,
        number: usize,
    ) -> Result<Yaml, ManifestError> {
        let style = style.split('#').next().unwrap_or_default().trim();
        let chomp = match style {
            "" => Chomp::Clip,
            "-" => Chomp::Strip,
            "+" => Chomp::Keep,
            other => {
                return Err(at(
                    number,
                    format!("unsupported block scalar header `{other}`"),
                ));
            }
        };
        let mut body: Vec<&str> = Vec::new();
        let mut block_indent = None;
        while let Some(line) = self.lines.get(self.at) {
            let trimmed = line.text.trim_start_matches(' ');
            if trimmed.is_empty() {
                body.push("");
                self.at += 1;
                continue;
            }
            let here = line.text.len() - trimmed.len();
            if here <= indent {
                break;
            }
            let base = *block_indent.get_or_insert(here);
            if here < base {
                break;
            }
            body.push(&line.text[base..]);
            self.at += 1;
        }
        let trailing = body.iter().rev().take_while(|l| l.is_empty()).count();
        let content = &body[..body.len() - trailing];
        let mut text = String::new();
        if literal {
            for line in content {
                text.push_str(line);
                text.push('\n');
            }
        } else {
            let mut previous_empty = true;
            for (i, line) in content.iter().enumerate() {
                if line.is_empty() {
                    text.push('\n');
                    previous_empty = true;
                    continue;
                }
                if i > 0 && !previous_empty {
                    text.push(' ');
                }
                text.push_str(line);
                previous_empty = false;
            }
            if !content.is_empty() {
                text.push('\n');
            }
        }
        match chomp {
            Chomp::Strip => {
                while text.ends_with('\n') {
                    text.pop();
                }
            }
            Chomp::Clip => {}
            Chomp::Keep => {
                for _ in 0..trailing {
                    text.push('\n');
                }
            }
        }
        Ok(Yaml::Str(text))
    }
}

enum Chomp {
    Strip,
    Clip,
    Keep,
}

fn looks_like_key(text: &str) -> bool {
    split_key(text).is_some()
}

/// `key: rest` (or `key:` at the end of the line): the key, and what follows the colon.
fn split_key(content: &str) -> Option<(String, &str)> {
    if content.starts_with(['"', '\'']) {
        let quote = content.chars().next()?;
        let end = content[1..].find(quote)? + 1;
        let key = content[1..end].to_owned();
        let after = content[end + 1..].strip_prefix(':')?;
        if !(after.is_empty() || after.starts_with(' ')) {
            return None;
        }
        return Some((key, after.trim_start()));
    }
    let mut search = 0;
    loop {
        let colon = content[search..].find(':')? + search;
        let after = &content[colon + 1..];
        if after.is_empty() || after.starts_with(' ') {
            let key = content[..colon].trim_end();
            if key.is_empty() || key.starts_with(['-', '#', '[', '{', '&', '*', '!', '?', '|', '>'])
            {
                return None;
            }
            return Some((key.to_owned(), after.trim_start()));
        }
        search = colon + 1;
    }
}

/// One scalar written on a line (comment included).
fn scalar(text: &str, number: usize) -> Result<Yaml, ManifestError> {
    let unsupported = |what: &str| {
        Err(at(
            number,
            format!("{what} are not supported in skill frontmatter"),
        ))
    };
    match text.chars().next() {
        Some('"') => {
            let (value, rest) =
                double_quoted(&text[1..]).ok_or_else(|| at(number, "unterminated `\"` string"))?;
            trailing_ok(rest, number)?;
            Ok(Yaml::Str(value))
        }
        Some('\'') => {
            let mut value = String::new();
            let mut chars = text[1..].char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if c == '\'' {
                    if chars.peek().is_some_and(|(_, c)| *c == '\'') {
                        chars.next();
                        value.push('\'');
                        continue;
                    }
                    trailing_ok(&text[1 + i + 1..], number)?;
                    return Ok(Yaml::Str(value));
                }
                value.push(c);
            }
            Err(at(number, "unterminated `'` string"))
        }
        Some('[' | '{') => unsupported("flow collections (`[...]`, `{...}`)"),
        Some('&' | '*') => unsupported("anchors and aliases"),
        Some('!') => unsupported("tags"),
        Some('@' | '`' | '%') => Err(at(
            number,
            format!("a plain value cannot start with `{}`", &text[..1]),
        )),
        _ => {
            let plain = match text.find(" #") {
                Some(i) => &text[..i],
                None => text,
            }
            .trim_end();
            if plain.contains(": ") || plain.ends_with(':') {
                return Err(at(number, "a value containing `: ` must be quoted"));
            }
            Ok(resolve(plain))
        }
    }
}

fn trailing_ok(rest: &str, number: usize) -> Result<(), ManifestError> {
    let rest = rest.trim();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err(at(
            number,
            format!("unexpected `{rest}` after a quoted string"),
        ))
    }
}

fn double_quoted(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &text[i + 1..])),
            '\\' => {
                let (_, escape) = chars.next()?;
                match escape {
                    'n' => value.push('\n'),
                    't' => value.push('\t'),
                    'r' => value.push('\r'),
                    '0' => value.push('\0'),
                    '"' => value.push('"'),
                    '\\' => value.push('\\'),
                    '/' => value.push('/'),
                    ' ' => value.push(' '),
                    'u' => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, c)| c))
                            .collect();
                        value.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    _ => return None,
                }
            }
            c => value.push(c),
        }
    }
    None
}

/// A plain scalar under the YAML 1.2 core schema.
fn resolve(plain: &str) -> Yaml {
    match plain {
        "" | "~" | "null" | "Null" | "NULL" => return Yaml::Null,
        "true" | "True" | "TRUE" => return Yaml::Bool(true),
        "false" | "False" | "FALSE" => return Yaml::Bool(false),
        _ => {}
    }
    let digits = plain.strip_prefix(['-', '+']).unwrap_or(plain);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(i) = plain.parse::<i64>()
    {
        return Yaml::Int(i);
    }
    if is_float(digits)
        && let Ok(f) = plain.parse::<f64>()
    {
        return Yaml::Float(f);
    }
    Yaml::Str(plain.to_owned())
}

/// `[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?` with at least one digit before the exponent.
fn is_float(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(int)
        && frac.is_none_or(digits)
        && (!int.is_empty() || frac.is_some_and(|f| !f.is_empty()))
        && (frac.is_some() || exponent.is_some());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_skill_subset() {
        let text = "---\nname: pdf-processing\ndescription: \"Fill: forms\" # note\nversion: 1.5\ncount: 3\nflag: true\nnothing:\nmetadata:\n  author: me\n  tags:\n    - a\n    - 'b c'\nlist:\n- x\nlong: >\n  one\n  two\n\n  three\nlit: |-\n  keep\n   this\n---\n# Body\n";
        let yaml = parse(text).unwrap();
        assert_eq!(
            yaml.to_json(),
            r#"{"name":"pdf-processing","description":"Fill: forms","version":1.5,"count":3,"flag":true,"nothing":null,"metadata":{"author":"me","tags":["a","b c"]},"list":["x"],"long":"one two\nthree\n","lit":"keep\n this"}"#
        );
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        for (text, wanted) in [
            ("name: x\n", "must start"),
            ("---\nname: x\n", "closing"),
            ("---\nname: [a]\n---\n", "flow"),
            ("---\nname: a\nname: b\n---\n", "duplicate"),
            ("---\nname: a\n  b\n---\n", "several lines"),
            ("---\nname: &x a\n---\n", "anchors"),
            ("---\nd: a: b\n---\n", "quoted"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.message.contains(wanted), "{text:?}: {error}");
        }
    }
}
