//! Agent skill directories (SEP-2640, `io.modelcontextprotocol/skills`) as `mcp-runtime` serves
//! them: the checked walk of a skills directory, `SKILL.md` frontmatter, the naming rules and the
//! limits. The macros run it when a crate compiles (`skills!`), the runtime when a server starts
//! (`Server::skills_dir`), so both refuse the same directories with the same messages.
//!
//! A skills directory holds skills, each a directory with a `SKILL.md`; a skill's path below the
//! root is its `<skill-path>` (`skill://<skill-path>/SKILL.md`), and its last segment is its
//! name. Directories without a `SKILL.md` may group skills (`tools/pdf-processing`) but hold no
//! files of their own. A skill's files are every file below it, nested skills' included.

pub mod frontmatter;

use std::fmt;
use std::path::{Path, PathBuf};

pub use frontmatter::Yaml;

/// The most files one skill may have (SKILL.md included).
pub const MAX_ENTRIES: usize = 512;
/// The most bytes one skill's files may add up to (16 MiB).
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Why a skills directory is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillError {
    /// The file or directory at fault, relative to the root (empty for the root itself).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for SkillError {}

fn error(path: &str, message: impl Into<String>) -> SkillError {
    SkillError {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// One file of a skill found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    /// Its path relative to the skill's directory, `/`-separated (`SKILL.md`, `references/a.md`).
    pub relative: String,
    /// Where it is on disk.
    pub path: PathBuf,
    /// Its size when it was read.
    pub size: u64,
}

/// One skill found on disk, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundSkill {
    /// Its `<skill-path>`, `/`-separated (`pdf-processing`, `tools/pdf-processing`).
    pub skill_path: String,
    /// The parsed frontmatter (a mapping with string `name` and `description`).
    pub frontmatter: Yaml,
    /// Every file of the skill, nested skills' included, sorted by path; `SKILL.md` among them.
    pub files: Vec<FoundFile>,
}

impl FoundSkill {
    /// The frontmatter's `name`.
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Yaml::as_str)
            .unwrap_or_default()
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Yaml::as_str)
            .unwrap_or_default()
    }
}

/// Whether `name` follows the Agent Skills naming rules: 1-64 characters of `a-z`, `0-9` and
/// `-`, no leading, trailing or doubled hyphen.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the skill name `{name}` breaks the naming rules: 1-64 characters of a-z, 0-9 and `-`, no leading, trailing or doubled `-`"
        ))
    }
}

/// Whether a file or directory name can be a segment of a `skill://` URI as it is: RFC 3986
/// unreserved characters and `+`, `@`, not `.` or `..`.
fn check_segment(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'@')
        })
}

/// Parses and checks a `SKILL.md` whose skill directory is called `dir_name`.
pub fn check_manifest(text: &str, dir_name: &str) -> Result<Yaml, String> {
    let frontmatter = frontmatter::parse(text)?;
    if !matches!(frontmatter, Yaml::Map(_)) {
        return Err("the frontmatter of SKILL.md must be a mapping".into());
    }
    let name = match frontmatter.get("name") {
        Some(Yaml::Str(name)) if !name.is_empty() => name,
        Some(_) => return Err("the frontmatter `name` must be a non-empty string".into()),
        None => return Err("the frontmatter of SKILL.md has no `name`".into()),
    };
    match frontmatter.get("description") {
        Some(Yaml::Str(d)) if !d.is_empty() => {}
        Some(_) => return Err("the frontmatter `description` must be a non-empty string".into()),
        None => return Err("the frontmatter of SKILL.md has no `description`".into()),
    }
    check_name(name)?;
    if name != dir_name {
        return Err(format!(
            "the skill name `{name}` differs from its directory `{dir_name}`: the last segment of a skill's path is its name"
        ));
    }
    if let Some(Yaml::Map(metadata)) = frontmatter.get("metadata")
        && let Some((key, _)) = metadata
            .iter()
            .find(|(k, _)| k.starts_with("io.modelcontextprotocol/"))
    {
        return Err(format!(
            "the metadata key `{key}` uses the prefix `io.modelcontextprotocol/`, reserved for MCP extensions"
        ));
    }
    Ok(frontmatter)
}

/// The MIME type a skill file is served with, from its extension.
pub fn mime_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("js" | "mjs") => "text/javascript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("xml") => "application/xml",
        Some("py") => "text/x-python",
        Some("sh") => "application/x-sh",
        Some("rs") => "text/x-rust",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Whether a file served with `mime_type` is sent as `text` (else as a base64 `blob`).
pub fn is_text(mime_type: &str) -> bool {
    mime_type.starts_with("text/")
        || matches!(
            mime_type,
            "application/json"
                | "application/yaml"
                | "application/toml"
                | "application/xml"
                | "application/x-sh"
                | "image/svg+xml"
        )
}

/// Resolves `relative` (a path written in code) against `base`, refusing absolute paths and any
/// `..` that climbs out of `base`.
pub fn resolve_root(base: &Path, relative: &str) -> Result<PathBuf, SkillError> {
    let given = Path::new(relative);
    if given.is_absolute() {
        return Err(error(
            "",
            format!("`{relative}` is absolute: give a path relative to the file that names it"),
        ));
    }
    let mut depth = 0usize;
    for part in given.components() {
        match part {
            std::path::Component::ParentDir => {
                if depth == 0 {
                    return Err(error(
                        "",
                        format!(
                            "`{relative}` climbs out of the directory it is resolved from (`..`)"
                        ),
                    ));
                }
                depth -= 1;
            }
            std::path::Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    Ok(base.join(given))
}

/// Walks the skills directory `root` and checks everything: every directory holding files has a
/// valid `SKILL.md` whose `name` is the directory's name, every name can be a URI segment, no
/// symbolic link leaves the root (links to directories are never followed), no skill is over
/// [`MAX_ENTRIES`] files or [`MAX_BYTES`] bytes. Returns the skills sorted by path.
pub fn scan(root: &Path) -> Result<Vec<FoundSkill>, SkillError> {
    let meta = std::fs::symlink_metadata(root)
        .map_err(|e| error("", format!("cannot read the skills directory: {e}")))?;
    if !meta.is_dir() {
        return Err(error("", "the skills directory is not a directory"));
    }
    let canonical_root = root
        .canonicalize()
        .map_err(|e| error("", format!("cannot resolve the skills directory: {e}")))?;
    let mut dirs = Vec::new();
    walk(root, &canonical_root, "", &mut dirs)?;
    // dirs: (relative dir path, files directly in it)
    let is_skill = |dir: &str| {
        dirs.iter().any(|(d, files): &(String, Vec<FoundFile>)| {
            d == dir && files.iter().any(|f| f.relative == "SKILL.md")
        })
    };
    let mut skills = Vec::new();
    for (dir, files) in &dirs {
        if dir.is_empty() {
            if let Some(file) = files.first() {
                return Err(error(
                    &file.relative,
                    "a file directly in the skills directory: each skill is a directory of its own",
                ));
            }
            continue;
        }
        if is_skill(dir) {
            continue;
        }
        // Files outside any skill below this directory's nearest skill ancestor are part of that
        // ancestor; a directory with files and no skill above it lacks a SKILL.md.
        if !files.is_empty() && !ancestors(dir).any(&is_skill) {
            return Err(error(
                dir,
                "has no SKILL.md: every skill directory needs one (with `name` and `description` frontmatter)",
            ));
        }
    }
    for (dir, files) in &dirs {
        let Some(manifest) = files.iter().find(|f| f.relative == "SKILL.md") else {
            continue;
        };
        let path = format!("{dir}/SKILL.md");
        let text =
            std::fs::read(&manifest.path).map_err(|e| error(&path, format!("cannot read: {e}")))?;
        let text = String::from_utf8(text).map_err(|_| error(&path, "is not UTF-8"))?;
        let dir_name = dir.rsplit('/').next().unwrap_or(dir);
        let frontmatter = check_manifest(&text, dir_name).map_err(|m| error(&path, m))?;
        let prefix = format!("{dir}/");
        let mut own: Vec<FoundFile> = Vec::new();
        for (other, files) in &dirs {
            if other == dir || other.starts_with(&prefix) {
                let base = other.strip_prefix(&prefix).unwrap_or("");
                for file in files {
                    own.push(FoundFile {
                        relative: if base.is_empty() {
                            file.relative.clone()
                        } else {
                            format!("{base}/{}", file.relative)
                        },
                        path: file.path.clone(),
                        size: file.size,
                    });
                }
            }
        }
        own.sort_by(|a, b| a.relative.cmp(&b.relative));
        if own.len() > MAX_ENTRIES {
            return Err(error(
                dir,
                format!(
                    "the skill has {} files, over the limit of {MAX_ENTRIES}",
                    own.len()
                ),
            ));
        }
        let total: u64 = own.iter().map(|f| f.size).sum();
        if total > MAX_BYTES {
            return Err(error(
                dir,
                format!(
                    "the skill's files add up to {total} bytes, over the limit of 16 MiB ({MAX_BYTES})"
                ),
            ));
        }
        skills.push(FoundSkill {
            skill_path: dir.clone(),
            frontmatter,
            files: own,
        });
    }
    if skills.is_empty() {
        return Err(error(
            "",
            "the skills directory holds no skill (a directory with a SKILL.md)",
        ));
    }
    skills.sort_by(|a, b| a.skill_path.cmp(&b.skill_path));
    Ok(skills)
}

fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut rest = dir;
    std::iter::from_fn(move || {
        let (parent, _) = rest.rsplit_once('/')?;
        rest = parent;
        Some(parent)
    })
}

fn walk(
    dir: &Path,
    root: &Path,
    relative: &str,
    out: &mut Vec<(String, Vec<FoundFile>)>,
) -> Result<(), SkillError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| error(relative, format!("cannot list: {e}")))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| error(relative, format!("cannot list: {e}")))?;
        names.push(entry.file_name());
    }
    names.sort();
    let mut files = Vec::new();
    let mut subdirs = Vec::new();
    for name in names {
        let shown = name.to_string_lossy().into_owned();
        let child_relative = if relative.is_empty() {
            shown.clone()
        } else {
            format!("{relative}/{shown}")
        };
        let Some(name) = name.to_str() else {
            return Err(error(&child_relative, "the name is not UTF-8"));
        };
        if !check_segment(name) {
            return Err(error(
                &child_relative,
                "the name cannot be a skill:// URI segment: use letters, digits and `-._~+@`",
            ));
        }
        let path = dir.join(name);
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| error(&child_relative, format!("cannot read: {e}")))?;
        if meta.file_type().is_symlink() {
            let target = path.canonicalize().map_err(|e| {
                error(
                    &child_relative,
                    format!("a symbolic link that does not resolve: {e}"),
                )
            })?;
            if !target.starts_with(root) {
                return Err(error(
                    &child_relative,
                    "a symbolic link leaving the skills directory",
                ));
            }
            if target.is_dir() {
                return Err(error(
                    &child_relative,
                    "a symbolic link to a directory: links to directories are not followed",
                ));
            }
            let size = std::fs::metadata(&target)
                .map_err(|e| error(&child_relative, format!("cannot read: {e}")))?
                .len();
            files.push(FoundFile {
                relative: name.to_owned(),
                path,
                size,
            });
        } else if meta.is_dir() {
            subdirs.push((path, child_relative));
        } else if meta.is_file() {
            files.push(FoundFile {
                relative: name.to_owned(),
                path,
                size: meta.len(),
            });
        } else {
            return Err(error(&child_relative, "neither a file nor a directory"));
        }
    }
    out.push((relative.to_owned(), files));
    for (path, child_relative) in subdirs {
        walk(&path, root, &child_relative, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "pdf-processing", "x1-2", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn manifests() {
        let ok = "---\nname: pdf\ndescription: Does PDFs\n---\nbody\n";
        assert!(check_manifest(ok, "pdf").is_ok());
        assert!(check_manifest(ok, "other").unwrap_err().contains("differs"));
        assert!(
            check_manifest("---\nname: pdf\n---\n", "pdf")
                .unwrap_err()
                .contains("no `description`")
        );
        assert!(
            check_manifest("---\ndescription: x\n---\n", "pdf")
                .unwrap_err()
                .contains("no `name`")
        );
    }

    #[test]
    fn roots_stay_inside_the_crate() {
        let base = Path::new("/crate");
        assert!(resolve_root(base, "skills").is_ok());
        assert!(resolve_root(base, "a/../skills").is_ok());
        assert!(resolve_root(base, "../x").is_err());
        assert!(resolve_root(base, "a/../../x").is_err());
        assert!(resolve_root(base, "/etc").is_err());
    }
}
