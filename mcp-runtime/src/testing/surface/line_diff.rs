//! A unified line diff of two texts, for failure messages.

use std::fmt::Write as _;

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Above this many cells the middle is shown as removed-then-added rather than aligned.
const MAX_CELLS: usize = 4_000_000;

enum Op<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// `old` and `new` as a unified diff: each hunk opens with `@@`, then lines with `-` (removed),
/// `+` (added) or two spaces (context, three lines around each change). Empty when they are equal.
pub(super) fn unified(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = align(&a, &b);
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let mut out = String::new();
    let mut shown_until = 0usize;
    let mut i = 0;
    while i < changed.len() {
        // A hunk: changes closer than twice the context merge.
        let start = changed[i].saturating_sub(CONTEXT).max(shown_until);
        let mut end = changed[i];
        while i + 1 < changed.len() && changed[i + 1] <= end + 2 * CONTEXT + 1 {
            i += 1;
            end = changed[i];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        out.push_str("@@\n");
        for op in &ops[start..end] {
            let _ = match op {
                Op::Same(line) => writeln!(out, "  {line}"),
                Op::Removed(line) => writeln!(out, "- {line}"),
                Op::Added(line) => writeln!(out, "+ {line}"),
            };
        }
        shown_until = end;
        i += 1;
    }
    out
}

/// A shortest edit script by longest common subsequence, after trimming the common ends.
fn align<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op<'a>> = a[..prefix].iter().map(|l| Op::Same(l)).collect();
    if ma.len().saturating_mul(mb.len()) > MAX_CELLS {
        ops.extend(ma.iter().map(|l| Op::Removed(l)));
        ops.extend(mb.iter().map(|l| Op::Added(l)));
    } else {
        // lcs[i][j]: the LCS length of ma[i..] and mb[j..].
        let width = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * width];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * width + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                ops.push(Op::Same(ma[i]));
                i += 1;
                j += 1;
            } else if i < ma.len()
                && (j == mb.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
            {
                // Removals before additions, as `diff -u` shows them.
                ops.push(Op::Removed(ma[i]));
                i += 1;
            } else {
                ops.push(Op::Added(mb[j]));
                j += 1;
            }
        }
    }
    ops.extend(a[a.len() - suffix..].iter().map(|l| Op::Same(l)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_an_empty_diff() {
        assert_eq!(unified("a\nb\n", "a\nb\n"), "");
    }

    #[test]
    fn changes_show_with_context_and_far_apart_ones_in_separate_hunks() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new: String = (1..=20)
            .filter(|&n| n != 18)
            .map(|n| {
                if n == 2 {
                    "two\n".to_owned()
                } else {
                    format!("{n}\n")
                }
            })
            .collect();
        assert_eq!(
            unified(&old, &new),
            "@@\n  1\n- 2\n+ two\n  3\n  4\n  5\n@@\n  15\n  16\n  17\n- 18\n  19\n  20\n"
        );
    }

    #[test]
    fn close_changes_share_a_hunk() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\nfour\n5\n6\nseven\n8\n9\n10\n";
        assert_eq!(
            unified(old, new),
            "@@\n  1\n  2\n  3\n- 4\n+ four\n  5\n  6\n- 7\n+ seven\n  8\n  9\n  10\n"
        );
    }
}
