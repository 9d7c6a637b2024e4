//! The allowed directories and the check every client-supplied path goes through before the
//! file system is touched.
//!
//! A path is checked twice, as the original server does:
//!
//! 1. **As spelled**: `~` expanded, made absolute (a relative path against the allowed
//!    directories), `.` and `..` resolved lexically, NUL refused; the result must lie in an
//!    allowed directory. Nothing has been read yet.
//! 2. **As it really is**: the path's canonical form (every symbolic link followed) must lie in
//!    an allowed directory too. A path that does not exist yet (a file to write, a directory to
//!    create) is checked through its deepest existing ancestor, and a dangling symbolic link
//!    on the way is refused, since writing through it would create its target.
//!
//! The canonical check is the one that decides; the first only keeps the second from touching
//! paths that are plainly outside. On case-insensitive file systems (macOS, Windows) the first
//! compares without case, so a path spelled in another case still reaches the canonical check,
//! which compares the canonical forms (the case the file system stores) exactly.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::fs_error::FsError;

/// The directories a client may reach, each absolute and normalized, with their canonical
/// forms beside them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    dirs: Vec<PathBuf>,
}

/// A path refused by the sandbox, with the message the client reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied(pub String);

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the server says when there is no allowed directory at all.
pub const NO_DIRECTORIES: &str = "Server cannot operate: No allowed directories available. \
Server was started without command-line directories and client either does not support MCP \
roots protocol or provided empty roots. Please either: 1) Start server with directory \
arguments, or 2) Use a client that supports MCP roots protocol and provides valid root \
directories.";

impl Sandbox {
    /// The directories of the command line: `~` expanded, made absolute against the current
    /// directory, normalized; for each, its canonical form too when it differs (a user names
    /// `/tmp`, macOS resolves it to `/private/tmp`). Those that are not directories are
    /// skipped with a warning on stderr, as the original does.
    pub fn from_command_line(args: &[String]) -> io::Result<Self> {
        let cwd = std::env::current_dir()?;
        let mut dirs = Vec::new();
        for arg in args {
            let absolute = normalize(&cwd.join(expand_home(arg)));
            let mut forms = vec![absolute.clone()];
            if let Ok(real) = std::fs::canonicalize(&absolute)
                && real != absolute
            {
                forms.push(real);
            }
            for dir in forms {
                match std::fs::metadata(&dir) {
                    Ok(meta) if meta.is_dir() => push_unique(&mut dirs, dir),
                    Ok(_) => eprintln!("Warning: {} is not a directory, skipping", dir.display()),
                    Err(_) => {
                        eprintln!(
                            "Warning: Cannot access directory {}, skipping",
                            dir.display()
                        );
                    }
                }
            }
        }
        Ok(Self { dirs })
    }

    /// The directories of the client's roots (`file://` URIs or plain paths), each canonical;
    /// a root that does not exist or is not a directory is skipped with a note on stderr.
    pub fn from_roots<'a>(uris: impl IntoIterator<Item = &'a str>) -> Self {
        let mut dirs = Vec::new();
        for uri in uris {
            let Some(path) = root_path(uri) else {
                eprintln!("Skipping invalid path or inaccessible: {uri}");
                continue;
            };
            match std::fs::canonicalize(&path) {
                Ok(real) if real.is_dir() => push_unique(&mut dirs, real),
                Ok(real) => eprintln!("Skipping non-directory root: {}", real.display()),
                Err(_) => eprintln!("Skipping invalid path or inaccessible: {uri}"),
            }
        }
        Self { dirs }
    }

    /// The allowed directories, in order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    fn listed(&self) -> String {
        self.dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether `path` (absolute, normalized) is one of the allowed directories or below one.
    /// `exact` compares components as they are; otherwise without case where the platform's
    /// file systems usually ignore it.
    fn contains(&self, path: &Path, exact: bool) -> bool {
        let ignore_case = !exact && CASE_INSENSITIVE;
        self.dirs.iter().any(|dir| within(path, dir, ignore_case))
    }

    /// Checks `requested` as the module docs say and returns the canonical path to use: the
    /// path itself with every link resolved, or for a path that does not exist yet, its
    /// deepest existing ancestor's canonical form with the rest appended.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, FsError> {
        if self.is_empty() {
            return Err(Denied(NO_DIRECTORIES.to_owned()).into());
        }
        let expanded = expand_home(requested);
        if cfg!(not(windows)) && is_windows_drive_path(&expanded) {
            return Err(Denied(format!(
                "Access denied - Windows-style path received on a POSIX host: {requested}"
            ))
            .into());
        }
        let absolute = if expanded.is_absolute() {
            normalize(&expanded)
        } else {
            self.resolve_relative(&expanded)
        };
        if requested.contains('\0') || !self.contains(&absolute, false) {
            return Err(Denied(format!(
                "Access denied - path outside allowed directories: {} not in {}",
                absolute.display(),
                self.listed()
            ))
            .into());
        }
        match std::fs::canonicalize(&absolute) {
            Ok(real) => {
                self.check_real(&real)?;
                Ok(real)
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                self.resolve_missing(&absolute)
            }
            Err(error) => Err(FsError::io(error, "realpath", &absolute)),
        }
    }

    fn check_real(&self, real: &Path) -> Result<(), Denied> {
        if self.contains(real, true) {
            Ok(())
        } else {
            Err(Denied(format!(
                "Access denied - symlink target outside allowed directories: {} not in {}",
                real.display(),
                self.listed()
            )))
        }
    }

    /// A path that does not exist (yet): its deepest existing ancestor, canonical and inside,
    /// with the missing components appended. That ancestor may not be a dangling symbolic
    /// link: a write would follow it and create its target wherever it points.
    fn resolve_missing(&self, absolute: &Path) -> Result<PathBuf, FsError> {
        let mut missing = Vec::new();
        let mut ancestor = absolute;
        loop {
            if let Ok(meta) = std::fs::symlink_metadata(ancestor) {
                if meta.file_type().is_symlink() && std::fs::canonicalize(ancestor).is_err() {
                    let target = std::fs::read_link(ancestor)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    return Err(Denied(format!(
                        "Access denied - {} is a symbolic link to {target}, which does not exist",
                        ancestor.display()
                    ))
                    .into());
                }
                break;
            }
            let (Some(parent), Some(name)) = (ancestor.parent(), ancestor.file_name()) else {
                break;
            };
            missing.push(name.to_owned());
            ancestor = parent;
        }
        let real = std::fs::canonicalize(ancestor).map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => FsError::Denied(Denied(format!(
                "Parent directory does not exist: {}",
                absolute.parent().unwrap_or(absolute).display()
            ))),
            _ => FsError::io(error, "realpath", ancestor),
        })?;
        self.check_real(&real)?;
        let mut resolved = real;
        resolved.extend(missing.iter().rev());
        Ok(resolved)
    }

    /// A relative path against the first allowed directory it stays inside of, else the
    /// first (and the check that follows refuses it).
    fn resolve_relative(&self, relative: &Path) -> PathBuf {
        self.dirs
            .iter()
            .map(|dir| normalize(&dir.join(relative)))
            .find(|candidate| self.contains(candidate, false))
            .unwrap_or_else(|| normalize(&self.dirs[0].join(relative)))
    }
}

fn push_unique(dirs: &mut Vec<PathBuf>, dir: PathBuf) {
    if !dirs.contains(&dir) {
        dirs.push(dir);
    }
}

/// `path` with `.` and `..` resolved and repeated separators gone, without touching the file
/// system (`..` at the root stays at the root). `path` must be absolute.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                out.push(component.as_os_str());
            }
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` refuses to remove the root, as `path.resolve` stops there.
                out.pop();
            }
        }
    }
    out
}

/// Whether `path` is `dir` or below it, component by component (so `/a/bc` is not below
/// `/a/b`), with or without regard to case.
fn within(path: &Path, dir: &Path, ignore_case: bool) -> bool {
    let mut path = path.components();
    for expected in dir.components() {
        let Some(got) = path.next() else {
            return false;
        };
        let same = if ignore_case {
            got.as_os_str().to_string_lossy().to_lowercase()
                == expected.as_os_str().to_string_lossy().to_lowercase()
        } else {
            got == expected
        };
        if !same {
            return false;
        }
    }
    true
}

/// Whether the platform's file systems usually ignore case (APFS and HFS+ as macOS formats
/// them, NTFS).
const CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", windows));

/// `~` and `~/...` with the home directory; anything else as it is.
pub fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    if path == "~" {
        if let Some(home) = home() {
            return PathBuf::from(home);
        }
    } else if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = home()
    {
        return PathBuf::from(home).join(rest);
    }
    PathBuf::from(path)
}

/// `C:\...`, `C:/...` or `C:`: a drive path, which on a POSIX host would otherwise be taken as
/// a relative file name.
fn is_windows_drive_path(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let bytes = text.as_bytes();
    bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && bytes.get(2).is_none_or(|c| *c == b'/' || *c == b'\\')
}

/// The path of a root: a `file://` URI (percent-decoded; a host other than `localhost` is
/// refused) or a plain path, `~` expanded.
fn root_path(uri: &str) -> Option<PathBuf> {
    let Some(rest) = uri.strip_prefix("file://") else {
        return Some(normalize_root(expand_home(uri)));
    };
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(at) if rest.get(..at) == Some("localhost") => rest.get(at..)?,
        _ => return None,
    };
    let decoded = percent_decode(path)?;
    if decoded.contains('\0') {
        return None;
    }
    Some(normalize_root(PathBuf::from(decoded)))
}

fn normalize_root(path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        normalize(&path)
    } else {
        std::env::current_dir()
            .map(|cwd| normalize(&cwd.join(&path)))
            .unwrap_or(path)
    }
}

/// `%XX` escapes decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots_without_leaving_the_root() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../etc")), PathBuf::from("/etc"));
        assert_eq!(normalize(Path::new("/a//b/")), PathBuf::from("/a/b"));
    }

    #[test]
    fn within_compares_whole_components() {
        assert!(within(Path::new("/a/b/c"), Path::new("/a/b"), false));
        assert!(within(Path::new("/a/b"), Path::new("/a/b"), false));
        assert!(!within(Path::new("/a/bc"), Path::new("/a/b"), false));
        assert!(!within(Path::new("/a"), Path::new("/a/b"), false));
    }

    #[test]
    fn the_spelled_check_may_ignore_case_and_the_real_one_never_does() {
        let dir = Path::new("/Users/Me/Projects");
        let spelled = Path::new("/users/me/PROJECTS/notes.txt");
        assert!(within(spelled, dir, true));
        assert!(!within(spelled, dir, false));
        assert!(!within(Path::new("/users/me/projects2/x"), dir, true));
        // Only where file systems usually ignore case does the spelled check ignore it.
        let sandbox = Sandbox {
            dirs: vec![dir.to_path_buf()],
        };
        assert_eq!(
            sandbox.contains(spelled, false),
            cfg!(any(target_os = "macos", windows))
        );
        assert!(!sandbox.contains(spelled, true));
    }

    #[test]
    fn root_uris_are_decoded_and_foreign_hosts_refused() {
        assert_eq!(
            root_path("file:///tmp/a%20b"),
            Some(PathBuf::from("/tmp/a b"))
        );
        assert_eq!(
            root_path("file://localhost/tmp"),
            Some(PathBuf::from("/tmp"))
        );
        assert_eq!(root_path("file://server/share"), None);
        assert_eq!(root_path("file:///tmp/%zz"), None);
        assert_eq!(root_path("file:///tmp/%00"), None);
    }

    #[test]
    fn drive_paths_are_recognised() {
        assert!(is_windows_drive_path(Path::new("C:\\Users")));
        assert!(is_windows_drive_path(Path::new("c:/x")));
        assert!(is_windows_drive_path(Path::new("C:")));
        assert!(!is_windows_drive_path(Path::new("C:x")));
        assert!(!is_windows_drive_path(Path::new("/c/x")));
    }
}
