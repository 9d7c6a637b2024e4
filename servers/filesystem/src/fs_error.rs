//! The errors a tool reports, worded as the original server's are.
//!
//! The original runs on Node, whose file-system errors read
//! `ENOENT: no such file or directory, open '/path'`: the POSIX code, libuv's description, the
//! system call and the path. Clients and the models behind them see those texts, so an I/O
//! error here is worded the same way from its [`io::ErrorKind`].

use std::fmt;
use std::io;
use std::path::Path;

use mcp_runtime::prelude::ToolError;

use crate::sandbox::Denied;

/// Why a file-system tool failed.
#[derive(Debug)]
pub enum FsError {
    /// The sandbox refused the path.
    Denied(Denied),
    /// The operating system refused the operation.
    Io(String),
    /// Anything else, with its message.
    Other(String),
}

impl FsError {
    /// An I/O error of `syscall` on `path`, worded as Node words it.
    pub fn io(error: io::Error, syscall: &str, path: &Path) -> Self {
        Self::Io(format!(
            "{}, {syscall} '{}'",
            describe(&error),
            path.display()
        ))
    }

    /// An I/O error of `syscall` on an open file, which Node words without the path.
    pub fn on_open_file(error: io::Error, syscall: &str) -> Self {
        Self::Io(format!("{}, {syscall}", describe(&error)))
    }

    /// An I/O error with no path to name.
    pub fn bare(error: io::Error) -> Self {
        Self::Io(describe(&error))
    }

    /// Any other failure.
    pub fn other(message: impl Into<String>) -> Self {
        Self::Other(message.into())
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Denied(denied) => denied.fmt(f),
            Self::Io(message) | Self::Other(message) => f.write_str(message),
        }
    }
}

impl From<Denied> for FsError {
    fn from(denied: Denied) -> Self {
        Self::Denied(denied)
    }
}

impl From<FsError> for ToolError {
    fn from(error: FsError) -> Self {
        ToolError::new(error.to_string())
    }
}

/// `CODE: description` for the error kinds a file tool meets, libuv's words; the operating
/// system's own text for the rest.
fn describe(error: &io::Error) -> String {
    use io::ErrorKind as K;
    let (code, text) = match error.kind() {
        K::NotFound => ("ENOENT", "no such file or directory"),
        K::PermissionDenied => ("EACCES", "permission denied"),
        K::AlreadyExists => ("EEXIST", "file already exists"),
        K::IsADirectory => ("EISDIR", "illegal operation on a directory"),
        K::NotADirectory => ("ENOTDIR", "not a directory"),
        K::DirectoryNotEmpty => ("ENOTEMPTY", "directory not empty"),
        K::CrossesDevices => ("EXDEV", "cross-device link not permitted"),
        K::ReadOnlyFilesystem => ("EROFS", "read-only file system"),
        K::StorageFull => ("ENOSPC", "no space left on device"),
        K::InvalidFilename => ("ENAMETOOLONG", "name too long"),
        K::InvalidInput => ("EINVAL", "invalid argument"),
        _ => return error.to_string(),
    };
    format!("{code}: {text}")
}
