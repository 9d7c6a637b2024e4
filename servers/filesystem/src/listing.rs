//! Directory listings, trees and searches, bounded in how many entries they visit.
//!
//! Entries come in byte order of their names, as Node's `readdir` (libuv sorts with `strcmp`)
//! gives them to the original. A walk never follows a symbolic link into a directory: a link
//! is an entry of its own, listed as a file, as the original's `Dirent` shows it.

use std::cmp::Ordering;
use std::fs;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Serialize;

use crate::fs_error::FsError;
use crate::sandbox::Sandbox;

/// The most entries one listing, tree or search visits (100,000); past it the call fails
/// naming the bound, rather than grow without end on a huge tree.
pub const MAX_ENTRIES: usize = 100_000;

/// The most levels `directory_tree` descends (1,000).
pub const MAX_DEPTH: usize = 1_000;

/// One entry of a directory.
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Whether it is a directory (a symbolic link to one is not).
    pub is_dir: bool,
    /// Whether it is a symbolic link.
    pub is_symlink: bool,
}

/// The entries of `dir`, sorted by name, at most `budget` of them (counted down).
pub fn entries(dir: &Path, budget: &mut usize) -> Result<Vec<Entry>, FsError> {
    let read = fs::read_dir(dir).map_err(|e| FsError::io(e, "scandir", dir))?;
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| FsError::io(e, "scandir", dir))?;
        if *budget == 0 {
            return Err(FsError::other(format!(
                "Too many entries: more than {MAX_ENTRIES} below {}; ask for a smaller directory",
                dir.display()
            )));
        }
        *budget -= 1;
        let kind = entry
            .file_type()
            .map_err(|e| FsError::io(e, "lstat", &entry.path()))?;
        out.push(Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            is_dir: kind.is_dir(),
            is_symlink: kind.is_symlink(),
        });
    }
    out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Ok(out)
}

/// `list_directory`: `[DIR] name` or `[FILE] name`, one a line.
pub fn list(dir: &Path) -> Result<String, FsError> {
    let mut budget = MAX_ENTRIES;
    Ok(entries(dir, &mut budget)?
        .iter()
        .map(|e| format!("{} {}", if e.is_dir { "[DIR]" } else { "[FILE]" }, e.name))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// `list_directory_with_sizes`: each entry with its size (a link's target's), sorted by name
/// or by size (largest first), and the totals.
pub fn list_with_sizes(dir: &Path, by_size: bool) -> Result<String, FsError> {
    let mut budget = MAX_ENTRIES;
    let mut sized: Vec<(Entry, u64)> = entries(dir, &mut budget)?
        .into_iter()
        .map(|e| {
            let size = fs::metadata(dir.join(&e.name)).map_or(0, |m| m.len());
            (e, size)
        })
        .collect();
    if by_size {
        sized.sort_by_key(|(_, size)| std::cmp::Reverse(*size));
    } else {
        sized.sort_by(|a, b| locale_order(&a.0.name, &b.0.name));
    }
    let mut lines: Vec<String> = sized
        .iter()
        .map(|(e, size)| {
            let name = pad_end(&e.name, 30);
            if e.is_dir {
                format!("[DIR] {name} ")
            } else {
                format!("[FILE] {name} {:>10}", format_size(*size))
            }
        })
        .collect();
    let files = sized.iter().filter(|(e, _)| !e.is_dir).count();
    let dirs = sized.len() - files;
    let total: u64 = sized
        .iter()
        .filter(|(e, _)| !e.is_dir)
        .map(|(_, s)| s)
        .sum();
    lines.push(String::new());
    lines.push(format!("Total: {files} files, {dirs} directories"));
    lines.push(format!("Combined size: {}", format_size(total)));
    Ok(lines.join("\n"))
}

/// `name` padded with spaces to `width` UTF-16 units, as JavaScript's `padEnd` counts.
fn pad_end(name: &str, width: usize) -> String {
    let len: usize = name.chars().map(char::len_utf16).sum();
    format!("{name}{}", " ".repeat(width.saturating_sub(len)))
}

/// Names in about the order JavaScript's `localeCompare` puts them (the Unicode collation's
/// root order): spaces, punctuation and symbols in the collation's order, then digits, then
/// letters without regard to case; on a tie, lower case first. Letters outside ASCII sort by
/// their lower-case code point (the collation would sort `ä` with `a`).
fn locale_order(a: &str, b: &str) -> Ordering {
    /// ASCII spaces, punctuation and symbols as the root collation orders them.
    const PUNCTUATION: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    fn primary(c: char) -> (u8, u32) {
        if let Some(rank) = PUNCTUATION.find(c) {
            (0, rank as u32)
        } else if c.is_ascii_digit() {
            (1, u32::from(c))
        } else if c.is_alphanumeric() {
            (2, u32::from(c.to_lowercase().next().unwrap_or(c)))
        } else {
            (0, 0x100 + u32::from(c))
        }
    }
    let key = |s: &str| s.chars().map(primary).collect::<Vec<_>>();
    let case = |s: &str| s.chars().map(char::is_uppercase).collect::<Vec<_>>();
    key(a)
        .cmp(&key(b))
        .then_with(|| case(a).cmp(&case(b)))
        .then_with(|| a.cmp(b))
}

/// Bytes in `B`, `KB`, `MB`, `GB`, `TB` (powers of 1024) with two decimals, rounded half up as
/// JavaScript's `toFixed` rounds these exact quotients.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    if bytes == 0 {
        return "0 B".to_owned();
    }
    let power = (bytes.ilog2() / 10).min(4) as usize;
    if power == 0 {
        return format!("{bytes} B");
    }
    let divisor = 1u128 << (10 * power);
    let hundredths = (200 * u128::from(bytes) + divisor) / (2 * divisor);
    format!(
        "{}.{:02} {}",
        hundredths / 100,
        hundredths % 100,
        UNITS[power]
    )
}

/// Glob patterns as the original's `minimatch(path, pattern, { dot: true })` reads them: `*`
/// stays within one path component, `**` spans any number, dot files match.
fn glob(pattern: &str) -> Result<GlobMatcher, FsError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| FsError::other(format!("Invalid pattern {pattern}: {e}")))
}

/// One node of `directory_tree`.
#[derive(Serialize)]
pub struct TreeEntry {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    children: Option<Vec<TreeEntry>>,
}

/// What `directory_tree` and `search_files` leave out: a pattern with `*` as it matches the
/// path relative to the starting directory; a plain name also wherever it occurs, and
/// everything below it.
struct Exclusions(Vec<(GlobMatcher, Vec<GlobMatcher>)>);

impl Exclusions {
    fn new(patterns: &[String], plain_names_anywhere: bool) -> Result<Self, FsError> {
        let mut all = Vec::new();
        for pattern in patterns {
            let mut extra = Vec::new();
            if plain_names_anywhere && !pattern.contains('*') {
                extra.push(glob(&format!("**/{pattern}"))?);
                extra.push(glob(&format!("**/{pattern}/**"))?);
            }
            all.push((glob(pattern)?, extra));
        }
        Ok(Self(all))
    }

    fn excludes(&self, relative: &str) -> bool {
        self.0.iter().any(|(main, extra)| {
            main.is_match(relative) || extra.iter().any(|g| g.is_match(relative))
        })
    }
}

/// `directory_tree`: every entry below `root` as nested JSON, two spaces of indentation.
pub fn tree(root: &Path, exclude: &[String]) -> Result<String, FsError> {
    let exclusions = Exclusions::new(exclude, true)?;
    let mut budget = MAX_ENTRIES;
    let tree = build_tree(root, Path::new(""), &exclusions, &mut budget, 0)?;
    serde_json::to_string_pretty(&tree).map_err(|e| FsError::other(e.to_string()))
}

fn build_tree(
    dir: &Path,
    relative: &Path,
    exclusions: &Exclusions,
    budget: &mut usize,
    depth: usize,
) -> Result<Vec<TreeEntry>, FsError> {
    if depth > MAX_DEPTH {
        return Err(FsError::other(format!(
            "Too deep: {} is more than {MAX_DEPTH} directories below the start",
            dir.display()
        )));
    }
    let mut out = Vec::new();
    for entry in entries(dir, budget)? {
        let rel = relative.join(&entry.name);
        if exclusions.excludes(&rel.to_string_lossy()) {
            continue;
        }
        let children = if entry.is_dir {
            Some(build_tree(
                &dir.join(&entry.name),
                &rel,
                exclusions,
                budget,
                depth + 1,
            )?)
        } else {
            None
        };
        out.push(TreeEntry {
            name: entry.name,
            kind: if entry.is_dir { "directory" } else { "file" },
            children,
        });
    }
    Ok(out)
}

/// `search_files`: the full path of every entry below `root` whose path relative to `root`
/// matches `pattern`, not excluded, in the order a depth-first walk meets them. A symbolic
/// link is listed only when it resolves inside the sandbox; an unreadable directory is
/// skipped, as the original skips it.
pub fn search(
    root: &Path,
    pattern: &str,
    exclude: &[String],
    sandbox: &Sandbox,
) -> Result<Vec<PathBuf>, FsError> {
    let matcher = glob(pattern)?;
    let exclusions = Exclusions::new(exclude, false)?;
    let mut budget = MAX_ENTRIES;
    let mut found = Vec::new();
    // Entries still to visit, the next on top: a directory's entries go on top of the stack
    // as it is met, so the walk is the original's recursion without its depth.
    let mut pending: Vec<Pending> = Vec::new();
    push_entries(root, Path::new(""), &mut budget, &mut pending)?;
    while let Some(Pending { full, rel, entry }) = pending.pop() {
        if entry.is_symlink && sandbox.resolve(&full.to_string_lossy()).is_err() {
            continue;
        }
        let rel_text = rel.to_string_lossy();
        if exclusions.excludes(&rel_text) {
            continue;
        }
        if matcher.is_match(&*rel_text) {
            found.push(full.clone());
        }
        if entry.is_dir {
            push_entries(&full, &rel, &mut budget, &mut pending)?;
        }
    }
    Ok(found)
}

/// An entry a search has still to visit.
struct Pending {
    full: PathBuf,
    rel: PathBuf,
    entry: Entry,
}

fn push_entries(
    dir: &Path,
    relative: &Path,
    budget: &mut usize,
    pending: &mut Vec<Pending>,
) -> Result<(), FsError> {
    let listed = match entries(dir, budget) {
        Ok(listed) => listed,
        Err(FsError::Io(_)) => return Ok(()),
        Err(other) => return Err(other),
    };
    pending.extend(listed.into_iter().rev().map(|entry| Pending {
        full: dir.join(&entry.name),
        rel: relative.join(&entry.name),
        entry,
    }));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_the_original_writes_them() {
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(1023), "1023 B");
        assert_eq!(format_size(1024), "1.00 KB");
        // 1.125 KB: JavaScript's toFixed rounds the tie up.
        assert_eq!(format_size(1152), "1.13 KB");
        assert_eq!(format_size(1536), "1.50 KB");
        assert_eq!(format_size(5 * 1024 * 1024), "5.00 MB");
        assert_eq!(format_size(1 << 50), "1024.00 TB");
    }

    #[test]
    fn names_sort_as_locale_compare_sorts_them() {
        let mut names = vec!["b.txt", "A.txt", "_x", "10", "a.txt", "B", "e.txt", "e_dir"];
        names.sort_by(|a, b| locale_order(a, b));
        assert_eq!(
            names,
            ["_x", "10", "a.txt", "A.txt", "B", "b.txt", "e_dir", "e.txt"]
        );
    }

    #[test]
    fn globs_keep_star_within_a_component() {
        let star = glob("*.txt").unwrap();
        assert!(star.is_match("a.txt") && star.is_match(".hidden.txt"));
        assert!(!star.is_match("dir/a.txt"));
        let deep = glob("**/*.txt").unwrap();
        assert!(deep.is_match("a.txt") && deep.is_match("dir/sub/a.txt"));
    }
}
