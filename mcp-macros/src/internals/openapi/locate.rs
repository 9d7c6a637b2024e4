//! Where JSON pointers' targets are written in a file's text, as lines and columns, for
//! messages: for an object's member its key, for an array's item the item. JSON is scanned
//! directly and YAML through the parser's events (whose marks are positions), each in one pass
//! for all the pointers. `None` when the text does not say (a place reached through a YAML
//! alias, a text that is not JSON or YAML).

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// A line and a column, both from 1; the column counts characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// Where each of `pointers` (JSON pointers, already percent-decoded) is written in `text`, a
/// JSON or YAML file.
pub(crate) fn locate(text: &str, yaml: bool, pointers: &[&str]) -> Vec<Option<Position>> {
    let targets: Vec<Vec<String>> = pointers
        .iter()
        .map(|pointer| {
            pointer
                .split('/')
                .skip(1)
                .map(|t| t.replace("~1", "/").replace("~0", "~"))
                .collect()
        })
        .collect();
    if yaml {
        return in_yaml(text, &targets);
    }
    let mut found = vec![None; targets.len()];
    let mut json = Json { text, at: 0 };
    json.whitespace();
    let mut live = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        if target.is_empty() {
            found[i] = Some(json.at);
        } else {
            live.push(i);
        }
    }
    if !live.is_empty() {
        // Text that stops parsing leaves what was found before it.
        let _ = json.find(&targets, &live, 0, &mut found);
    }
    found
        .into_iter()
        .map(|offset| position(text, offset?))
        .collect()
}

/// A cursor over JSON text that is known to parse.
struct Json<'t> {
    text: &'t str,
    /// A byte offset, always at an ASCII character or the end.
    at: usize,
}

impl Json<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Past the string that starts here.
    fn skip_string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => break,
                _ => self.at += 1,
            }
        }
        self.at += 1;
        Some(())
    }

    /// Past the string that starts here; its text (escapes decoded).
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        self.skip_string()?;
        let raw = self.text.get(start..self.at)?;
        match raw.get(1..raw.len() - 1) {
            Some(plain) if !plain.contains('\\') => Some(plain.to_owned()),
            _ => serde_json::from_str(raw).ok(),
        }
    }

    /// Past the value that starts here.
    fn skip(&mut self) -> Option<()> {
        self.whitespace();
        match self.peek()? {
            b'"' => self.skip_string()?,
            b'{' | b'[' => {
                let mut depth = 0_usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
                        break;
                    }
                    self.at += 1;
                }
            }
        }
        Some(())
    }

    /// Reads the value that starts here, recording in `found` the byte offset of each target
    /// in `live`: those whose first `depth` tokens lead here.
    fn find(
        &mut self,
        targets: &[Vec<String>],
        live: &[usize],
        depth: usize,
        found: &mut [Option<usize>],
    ) -> Option<()> {
        self.whitespace();
        match self.peek()? {
            b'{' => {
                self.at += 1;
                loop {
                    self.whitespace();
                    match self.peek()? {
                        b'}' => {
                            self.at += 1;
                            return Some(());
                        }
                        b',' => {
                            self.at += 1;
                            continue;
                        }
                        b'"' => {}
                        _ => return None,
                    }
                    let key_at = self.at;
                    let key = self.string()?;
                    self.whitespace();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.at += 1;
                    let next: Vec<usize> = live
                        .iter()
                        .copied()
                        .filter(|&i| targets[i].get(depth) == Some(&key))
                        .collect();
                    self.member(targets, &next, depth, key_at, found)?;
                }
            }
            b'[' => {
                self.at += 1;
                let mut index = 0_usize;
                loop {
                    self.whitespace();
                    match self.peek()? {
                        b']' => {
                            self.at += 1;
                            return Some(());
                        }
                        b',' => {
                            self.at += 1;
                            continue;
                        }
                        _ => {}
                    }
                    let item_at = self.at;
                    let next: Vec<usize> = live
                        .iter()
                        .copied()
                        .filter(|&i| {
                            targets[i].get(depth).and_then(|t| t.parse().ok()) == Some(index)
                        })
                        .collect();
                    self.member(targets, &next, depth, item_at, found)?;
                    index += 1;
                }
            }
            _ => self.skip(),
        }
    }

    /// A member or item written at `at`, whose value starts here: the targets in `next` that
    /// end with it are found; the value is read for those that go on, else skipped. Of two
    /// members with one name, the last wins, as the parser keeps it.
    fn member(
        &mut self,
        targets: &[Vec<String>],
        next: &[usize],
        depth: usize,
        at: usize,
        found: &mut [Option<usize>],
    ) -> Option<()> {
        let mut deeper = Vec::new();
        for &i in next {
            if targets[i].len() == depth + 1 {
                found[i] = Some(at);
            } else {
                deeper.push(i);
            }
        }
        if deeper.is_empty() {
            self.skip()
        } else {
            self.find(targets, &deeper, depth + 1, found)
        }
    }
}

/// The line and column of the byte `offset` of `text`.
fn position(text: &str, offset: usize) -> Option<Position> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some(Position {
        line: before.matches('\n').count() + 1,
        column: before.get(line_start..)?.chars().count() + 1,
    })
}

fn in_yaml(text: &str, targets: &[Vec<String>]) -> Vec<Option<Position>> {
    let mut finder = Finder {
        targets,
        frames: Vec::new(),
        found: vec![None; targets.len()],
    };
    if Parser::new_from_str(text).load(&mut finder, false).is_err() {
        return vec![None; targets.len()];
    }
    finder
        .found
        .into_iter()
        .map(|mark| {
            mark.map(|mark| Position {
                line: mark.line(),
                // The scanner counts columns from 0.
                column: mark.col() + 1,
            })
        })
        .collect()
}

/// Follows the parser's events, knowing at each node its path from the root.
struct Finder<'t> {
    targets: &'t [Vec<String>],
    frames: Vec<Frame>,
    /// Where each target is, once seen.
    found: Vec<Option<Marker>>,
}

enum Frame {
    /// In a mapping: the key being read or whose value is being read (`None`: not a scalar).
    Map {
        key: Option<String>,
        awaiting_key: bool,
    },
    Sequence {
        index: usize,
    },
}

impl Finder<'_> {
    /// Whether the path to the current node is `target`.
    fn at(&self, target: &[String]) -> bool {
        self.frames.len() == target.len()
            && self
                .frames
                .iter()
                .zip(target)
                .all(|(frame, token)| match frame {
                    Frame::Map { key, .. } => key.as_deref() == Some(token.as_str()),
                    Frame::Sequence { index } => token.parse() == Ok(*index),
                })
    }

    /// A node starts: a mapping's key (a scalar's `text`), or a value.
    fn start(&mut self, text: Option<String>, mark: Marker) {
        let is_key = match self.frames.last_mut() {
            Some(Frame::Map { key, awaiting_key }) if *awaiting_key => {
                *key = text;
                true
            }
            Some(Frame::Map { .. }) => false,
            Some(Frame::Sequence { .. }) | None => true,
        };
        // A member is where its key is written; an item (or the root) where it starts. Of two
        // members with one name, the last, as the loader keeps it.
        if is_key {
            for (i, target) in self.targets.iter().enumerate() {
                if self.at(target) {
                    self.found[i] = Some(mark);
                }
            }
        }
    }

    /// A node ends.
    fn finish(&mut self) {
        match self.frames.last_mut() {
            Some(Frame::Map { awaiting_key, .. }) => *awaiting_key = !*awaiting_key,
            Some(Frame::Sequence { index }) => *index += 1,
            None => {}
        }
    }
}

impl MarkedEventReceiver for Finder<'_> {
    fn on_event(&mut self, event: Event, mark: Marker) {
        match event {
            Event::Scalar(text, ..) => {
                self.start(Some(text), mark);
                self.finish();
            }
            Event::Alias(_) => {
                self.start(None, mark);
                self.finish();
            }
            Event::MappingStart(..) => {
                self.start(None, mark);
                self.frames.push(Frame::Map {
                    key: None,
                    awaiting_key: true,
                });
            }
            Event::SequenceStart(..) => {
                self.start(None, mark);
                self.frames.push(Frame::Sequence { index: 0 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.frames.pop();
                self.finish();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Position, locate};

    fn at(line: usize, column: usize) -> Option<Position> {
        Some(Position { line, column })
    }

    fn one(text: &str, yaml: bool, pointer: &str) -> Option<Position> {
        locate(text, yaml, &[pointer])[0]
    }

    #[test]
    fn json_members_and_items() {
        let text = "{\n  \"a\": [1, {\"b~/\": {\"$ref\": \"#/x\"}}],\n  \"é\": {\"$ref\": 2}\n}";
        assert_eq!(one(text, false, "/a/1/b~0~1/$ref"), at(2, 21));
        assert_eq!(one(text, false, "/a/1"), at(2, 12));
        assert_eq!(one(text, false, "/é/$ref"), at(3, 9));
        assert_eq!(one(text, false, "/a/2"), None);
        assert_eq!(one(text, false, "/missing"), None);
        assert_eq!(one(text, false, ""), at(1, 1));
    }

    #[test]
    fn json_many_at_once() {
        let text = "[{\"a\": 1}, {\"$ref\": \"#\"}, [{\"$ref\": \"#\"}]]";
        assert_eq!(
            locate(text, false, &["/2/0/$ref", "/1/$ref", "/0/b", "/0/a", ""]),
            vec![at(1, 29), at(1, 13), None, at(1, 3), at(1, 1)]
        );
    }

    #[test]
    fn json_escaped_keys_and_duplicates() {
        let text = r##"{"a\"]": {"x": "}{"}, "k": 1, "k": {"$ref": "#"}}"##;
        assert_eq!(one(text, false, "/a\"]/x"), at(1, 11));
        assert_eq!(one(text, false, "/k/$ref"), at(1, 37));
    }

    #[test]
    fn yaml_block_and_flow() {
        let text = "paths:\n  /pets:\n    get:\n      parameters:\n        - $ref: \"#/x\"\n        - {name: a, schema: {$ref: '#/y'}}\n";
        assert_eq!(
            one(text, true, "/paths/~1pets/get/parameters/0/$ref"),
            at(5, 11)
        );
        assert_eq!(one(text, true, "/paths/~1pets/get/parameters/1"), at(6, 11));
        assert_eq!(
            one(text, true, "/paths/~1pets/get/parameters/1/schema/$ref"),
            at(6, 30)
        );
        assert_eq!(one(text, true, "/paths/~1pets/post"), None);
    }

    #[test]
    fn yaml_many_at_once() {
        let text = "a: {$ref: '#/x'}\nb:\n  - $ref: '#/y'\na: {$ref: '#/z'}\n";
        assert_eq!(
            locate(text, true, &["/b/0/$ref", "/a/$ref", "/c"]),
            vec![at(3, 5), at(4, 5), None]
        );
    }

    #[test]
    fn yaml_through_an_alias_is_unknown() {
        let text = "a: &s {$ref: '#/x'}\nb: *s\n";
        assert_eq!(one(text, true, "/a/$ref"), at(1, 8));
        assert_eq!(one(text, true, "/b/$ref"), None);
    }
}
