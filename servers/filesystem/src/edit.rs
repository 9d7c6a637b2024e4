//! `edit_file`: text replacements, applied in order, and the unified diff of the result.
//!
//! Each edit replaces the first exact occurrence of its `oldText`; failing that, the first run
//! of lines equal to its lines once leading and trailing whitespace is ignored, re-indented to
//! where it was found. Line endings are compared as `\n`. The diff is written as the original's
//! (the `diff` package's `createTwoFilesPatch`): an `Index:` line, the `---`/`+++` header,
//! hunks with four lines of context, in a code fence longer than any run of backticks inside.

use std::fmt::Write as _;

use serde::Deserialize;
use similar::{ChangeTag, TextDiff};

use mcp_runtime::prelude::JsonSchema;

/// One replacement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Edit {
    /// Text to search for - must match exactly
    #[serde(rename = "oldText")]
    pub old_text: String,
    /// Text to replace with
    #[serde(rename = "newText")]
    pub new_text: String,
}

/// `text` with `\r\n` as `\n`.
pub fn normalize_line_endings(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// Applies `edits` to `content` (line endings already normalized).
pub fn apply(content: &str, edits: &[Edit]) -> Result<String, String> {
    let mut modified = content.to_owned();
    for edit in edits {
        let old = normalize_line_endings(&edit.old_text);
        let new = normalize_line_endings(&edit.new_text);
        if let Some(at) = modified.find(&old) {
            modified.replace_range(at..at + old.len(), &new);
            continue;
        }
        match replace_lines(&modified, &old, &new) {
            Some(replaced) => modified = replaced,
            None => {
                return Err(format!(
                    "Could not find exact match for edit:\n{}",
                    edit.old_text
                ));
            }
        }
    }
    Ok(modified)
}

/// The first run of lines matching `old`'s lines (each trimmed) replaced by `new`'s, the first
/// taking the found line's indentation and the others keeping their indentation relative to
/// `old`'s.
fn replace_lines(content: &str, old: &str, new: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.split('\n').collect();
    let mut lines: Vec<String> = content.split('\n').map(str::to_owned).collect();
    let last_start = lines.len().checked_sub(old_lines.len())?;
    let start = (0..=last_start).find(|&i| {
        old_lines
            .iter()
            .zip(&lines[i..])
            .all(|(o, c)| o.trim() == c.trim())
    })?;
    let indent = leading_whitespace(&lines[start]).to_owned();
    let replacement: Vec<String> = new
        .split('\n')
        .enumerate()
        .map(|(j, line)| {
            if j == 0 {
                return format!("{indent}{}", line.trim_start());
            }
            let old_indent = old_lines.get(j).map_or("", |l| leading_whitespace(l));
            let new_indent = leading_whitespace(line);
            if old_indent.is_empty() || new_indent.is_empty() {
                return line.to_owned();
            }
            let relative = new_indent
                .chars()
                .count()
                .saturating_sub(old_indent.chars().count());
            format!("{indent}{}{}", " ".repeat(relative), line.trim_start())
        })
        .collect();
    lines.splice(start..start + old_lines.len(), replacement);
    Some(lines.join("\n"))
}

fn leading_whitespace(line: &str) -> &str {
    let end = line
        .find(|c: char| !c.is_whitespace())
        .unwrap_or(line.len());
    line.get(..end).unwrap_or_default()
}

/// The unified diff of `old` against `new`, both named `path`, in a code fence.
pub fn fenced_diff(path: &str, old: &str, new: &str) -> String {
    let diff = unified_diff(path, old, new);
    let mut ticks = 3;
    while diff.contains(&"`".repeat(ticks)) {
        ticks += 1;
    }
    let fence = "`".repeat(ticks);
    format!("{fence}diff\n{diff}{fence}\n\n")
}

/// The patch `createTwoFilesPatch(path, path, old, new, "original", "modified")` writes.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let mut out = format!(
        "Index: {path}\n===================================================================\n\
         --- {path}\toriginal\n+++ {path}\tmodified\n"
    );
    let diff = TextDiff::from_lines(old, new);
    for group in diff.grouped_ops(4) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let old_len = last.old_range().end - old_start;
        let new_start = first.new_range().start;
        let new_len = last.new_range().end - new_start;
        // An empty side starts at the line before, as the `diff` package numbers it.
        let shown = |start: usize, len: usize| if len == 0 { start } else { start + 1 };
        let _ = writeln!(
            out,
            "@@ -{},{old_len} +{},{new_len} @@",
            shown(old_start, old_len),
            shown(new_start, new_len)
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let line = change.value();
                out.push(sign);
                out.push_str(line);
                if !line.ends_with('\n') {
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_text: old.to_owned(),
            new_text: new.to_owned(),
        }
    }

    #[test]
    fn the_diff_is_written_as_the_diff_package_writes_it() {
        assert_eq!(
            unified_diff("/p/f.txt", "a\nb\nc", "a\nB\nc"),
            "Index: /p/f.txt\n===================================================================\n\
             --- /p/f.txt\toriginal\n+++ /p/f.txt\tmodified\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\
             \\ No newline at end of file\n"
        );
        assert_eq!(
            unified_diff("/p/f.txt", "", "x"),
            "Index: /p/f.txt\n===================================================================\n\
             --- /p/f.txt\toriginal\n+++ /p/f.txt\tmodified\n@@ -0,0 +1,1 @@\n+x\n\
             \\ No newline at end of file\n"
        );
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n";
        let new = "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\n11\n12\nY\n14\n15\n";
        assert!(unified_diff("f", old, new).ends_with(
            "@@ -1,7 +1,7 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n 7\n\
             @@ -9,7 +9,7 @@\n 9\n 10\n 11\n 12\n-13\n+Y\n 14\n 15\n"
        ));
    }

    #[test]
    fn a_whitespace_insensitive_match_keeps_the_found_indentation() {
        let content = "fn main() {\n    let x = 1;\n    let y = 2;\n}\n";
        let out = apply(
            content,
            &[edit("let x = 1;\nlet y = 2;", "let x = 3;\nlet y = 4;")],
        );
        assert_eq!(
            out.as_deref(),
            Ok("fn main() {\n    let x = 3;\nlet y = 4;\n}\n")
        );
        let missing = apply(content, &[edit("nope", "x")]);
        assert_eq!(
            missing,
            Err("Could not find exact match for edit:\nnope".to_owned())
        );
    }

    #[test]
    fn the_fence_outgrows_backticks_in_the_diff() {
        let fenced = fenced_diff("f", "a\n", "```\n");
        assert!(fenced.starts_with("````diff\n") && fenced.ends_with("````\n\n"));
    }
}
