//! Writes that never follow a link planted at the target and never leave a half-written file:
//! a new file is created exclusively; an existing one is replaced by a file written beside it
//! (created exclusively, under a random name) and renamed over it, keeping its permission bits.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::fs_error::FsError;

/// Writes `content` to `path`: created when it does not exist, replaced when it does.
pub(crate) fn write_file(path: &Path, content: &[u8]) -> Result<(), FsError> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => file
            .write_all(content)
            .and_then(|()| file.sync_all())
            .map_err(|e| FsError::io(e, "write", path)),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => replace(path, content),
        Err(error) => Err(FsError::io(error, "open", path)),
    }
}

/// Replaces the existing file `path` with `content`, atomically.
pub(crate) fn replace(path: &Path, content: &[u8]) -> Result<(), FsError> {
    let permissions = fs::metadata(path)
        .map_err(|e| FsError::io(e, "stat", path))?
        .permissions();
    let (temp, mut file) = create_beside(path)?;
    let written = file
        .write_all(content)
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temp, path));
    if let Err(error) = written {
        let _ = fs::remove_file(&temp);
        return Err(FsError::io(error, "rename", path));
    }
    // The new file has the default mode; give it the old one's. The write has happened, so a
    // failure here does not fail it.
    let _ = fs::set_permissions(path, permissions);
    Ok(())
}

/// A new file beside `path`, `<name>.<32 hex digits>.tmp`, created exclusively.
fn create_beside(path: &Path) -> Result<(PathBuf, File), FsError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let temp = path.with_file_name(format!("{name}.{}.tmp", random_hex()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempts < 16 => {}
            Err(error) => return Err(FsError::io(error, "open", &temp)),
        }
    }
}

fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    // Without the OS's randomness the name is still unique: creation is exclusive, and a taken
    // name is drawn again.
    let _ = getrandom::fill(&mut bytes);
    if bytes == [0; 16] {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Moves `from` to `to`, refusing when anything (a link included) is at `to`.
pub(crate) fn move_path(from: &Path, to: &Path) -> Result<(), FsError> {
    match fs::symlink_metadata(to) {
        Ok(_) => Err(FsError::other(format!(
            "Destination already exists: {}",
            to.display()
        ))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            fs::rename(from, to).map_err(|e| {
                FsError::Io(format!(
                    "{}, rename '{}' -> '{}'",
                    FsError::bare(e),
                    from.display(),
                    to.display()
                ))
            })
        }
        Err(error) => Err(FsError::io(error, "lstat", to)),
    }
}
