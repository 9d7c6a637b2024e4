//! Agent skill directories (SEP-2640, `io.modelcontextprotocol/skills`) as `mcp-runtime` serves
//! them: the checked walk of a skills directory, `SKILL.md` frontmatter, the naming rules and the
//! limits. The macros run it when a crate compiles (`skills!`), the runtime when a server starts
//! (`Server::skills_dir`), so both refuse the same directories with the same messages.
//!
//! A skills directory holds skills, each a directory with a `SKILL.md`; a skill's path below the
//! root is its `<skill-path>` (`skill://<skill-path>/SKILL.md`), and its last segment is its
//! name. Directories without a `SKILL.md` may group skills (`tools/pdf-processing`) but hold no
//! files of their own. A skill's files are every file below it, nested skills' included.
//!
//! A refusal names the file (and, in a `SKILL.md`, the line) at fault. A top-level frontmatter
//! key that is not one of the specification's ([`FRONTMATTER_KEYS`]) but is close to one is
//! refused as its misspelling ([`misspelt_key`]); other keys, a host's own, are kept.

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
    /// The line of the file at fault (a `SKILL.md`), when the fault is on one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SkillError {
    /// `` `path:line`: message ``, the way compilers name a place in a file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.path.as_str(), self.line) {
            ("", _) => f.write_str(&self.message),
            (path, Some(line)) => write!(f, "`{path}:{line}`: {}", self.message),
            (path, None) => write!(f, "`{path}`: {}", self.message),
        }
    }
}

impl std::error::Error for SkillError {}

fn error(path: &str, message: impl Into<String>) -> SkillError {
    SkillError {
        path: path.to_owned(),
        line: None,
        message: message.into(),
    }
}

/// Why a `SKILL.md` is refused, at a line of the file (1 is the opening `---`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The line at fault: the key's, or the frontmatter's first when a key is missing.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ManifestError {}

/// The top-level frontmatter keys of the Agent Skills specification.
pub const FRONTMATTER_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// The key of [`FRONTMATTER_KEYS`] that `key` is likely a misspelling of: the same but for case,
/// `_` for `-`, or at most one edit away (two for keys longer than five letters; a swap of two
/// neighbours is one edit). Other keys (a host's own, such as `disable-model-invocation`) are
/// nobody's misspelling.
pub fn misspelt_key(key: &str) -> Option<&'static str> {
    if FRONTMATTER_KEYS.contains(&key) {
        return None;
    }
    let normal = key.to_ascii_lowercase().replace('_', "-");
    FRONTMATTER_KEYS
        .iter()
        .map(|known| (*known, edit_distance(&normal, known)))
        .filter(|(known, distance)| *distance <= if known.len() > 5 { 2 } else { 1 })
        .min_by_key(|(_, distance)| *distance)
        .map(|(known, _)| known)
}

/// The optimal-string-alignment distance between `a` and `b`: insertions, deletions,
/// substitutions and swaps of neighbours, each one edit. Frontmatter keys are short.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
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

/// Parses and checks a `SKILL.md` whose skill directory is called `dir_name`: the frontmatter
/// parses, no top-level key is a misspelling of a specification key ([`misspelt_key`]), `name`
/// and `description` are non-empty strings, the name follows the naming rules and is the
/// directory's, and no `metadata` key uses the prefix reserved for MCP. The error names the line
/// at fault.
pub fn check_manifest(text: &str, dir_name: &str) -> Result<Yaml, ManifestError> {
    let at = |line: usize, message: String| ManifestError { line, message };
    let read = frontmatter::read(text)?;
    let (value, line_of) = (&read.value, |key: &str| read.line_of(key));
    if !matches!(value, Yaml::Map(_)) {
        return Err(at(
            2,
            "the frontmatter of SKILL.md must be a mapping".into(),
        ));
    }
    if let Some((key, line, meant)) = read
        .key_lines
        .iter()
        .find_map(|(key, line)| misspelt_key(key).map(|meant| (key, *line, meant)))
    {
        return Err(at(
            line,
            format!("unknown frontmatter key `{key}`; did you mean `{meant}`?"),
        ));
    }
    let required = |key: &str| match value.get(key) {
        Some(Yaml::Str(text)) if !text.is_empty() => Ok(text.as_str()),
        Some(_) => Err(at(
            line_of(key).unwrap_or(1),
            format!("the frontmatter `{key}` must be a non-empty string"),
        )),
        None => Err(at(1, format!("the frontmatter of SKILL.md has no `{key}`"))),
    };
    let name = required("name")?;
    required("description")?;
    let name_line = line_of("name").unwrap_or(1);
    check_name(name).map_err(|message| at(name_line, message))?;
    if name != dir_name {
        return Err(at(
            name_line,
            format!(
                "the skill name `{name}` differs from its directory `{dir_name}`: the last segment of a skill's path is its name"
            ),
        ));
    }
    if let Some(Yaml::Map(metadata)) = value.get("metadata")
        && let Some((key, _)) = metadata
            .iter()
            .find(|(k, _)| k.starts_with("io.modelcontextprotocol/"))
    {
        return Err(at(
            line_of("metadata").unwrap_or(1),
            format!(
                "the metadata key `{key}` uses the prefix `io.modelcontextprotocol/`, reserved for MCP extensions"
            ),
        ));
    }
    Ok(read.value)
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
        let frontmatter = check_manifest(&text, dir_name).map_err(|e| SkillError {
            path: path.clone(),
            line: Some(e.line),
            message: e.message,
        })?;
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
        let error = |text: &str| {
            let error = check_manifest(text, "pdf").unwrap_err();
            (error.line, error.message)
        };
        let (line, message) = error(&ok.replace("pdf\n", "other\n"));
        assert_eq!(line, 2);
        assert!(message.contains("differs"), "{message}");
        assert_eq!(
            error("---\nname: pdf\n---\n"),
            (
                1,
                "the frontmatter of SKILL.md has no `description`".to_owned()
            )
        );
        assert_eq!(
            error("---\ndescription: x\n---\n").1,
            "the frontmatter of SKILL.md has no `name`"
        );
        assert_eq!(error("---\nname: pdf\ndescription: 3\n---\n").0, 3);
        assert_eq!(error("---\n# who\n\nname: Pdf\ndescription: x\n---\n").0, 4);
        assert_eq!(error("---\nname: pdf\ndescription: [x]\n---\n").0, 3);
        let reserved =
            "---\nname: pdf\ndescription: x\nmetadata:\n  io.modelcontextprotocol/x: 1\n---\n";
        assert_eq!(error(reserved).0, 4);
    }

    #[test]
    fn a_misspelt_key_is_named_with_what_it_likely_means() {
        assert_eq!(
            check_manifest("---\nname: pdf\ndescripton: Does PDFs\n---\n", "pdf"),
            Err(ManifestError {
                line: 3,
                message: "unknown frontmatter key `descripton`; did you mean `description`?"
                    .to_owned()
            })
        );
        for (key, meant) in [
            ("Description", "description"),
            ("nmae", "name"),
            ("licence", "license"),
            ("allowed_tools", "allowed-tools"),
            ("meta-data", "metadata"),
            ("compatability", "compatibility"),
            ("descriptoin", "description"),
        ] {
            assert_eq!(misspelt_key(key), Some(meant), "{key}");
        }
        // Keys of the specification, and a host's own keys, are nobody's misspelling.
        for key in FRONTMATTER_KEYS.iter().copied().chain([
            "disable-model-invocation",
            "user-invocable",
            "argument-hint",
            "model",
            "agent",
            "context",
            "hooks",
            "paths",
            "version",
            "author",
            "tags",
            "title",
        ]) {
            assert_eq!(misspelt_key(key), None, "{key}");
        }
        let hosted = "---\nname: pdf\ndescription: x\ndisable-model-invocation: true\n---\n";
        assert!(check_manifest(hosted, "pdf").is_ok());
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let error = SkillError {
            path: "pdf/SKILL.md".into(),
            line: Some(3),
            message: "no".into(),
        };
        assert_eq!(error.to_string(), "`pdf/SKILL.md:3`: no");
        assert_eq!(super::error("pdf", "no").to_string(), "`pdf`: no");
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
