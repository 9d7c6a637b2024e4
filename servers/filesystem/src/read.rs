//! Reading files within bounds: whole text, the first or last lines, and base64 for media.
//!
//! No read holds more than [`MAX_READ_BYTES`] of a file: a file read whole that is larger is
//! refused before a byte is read, `head` and `tail` scan at most that much from their end, and
//! the media encoder holds one chunk of the file at a time next to the base64 text it builds.
//! All calls together hold at most [`READ_BUDGET_BYTES`]: a read waits for room first
//! ([`ReadBudget`]).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::fs_error::FsError;

/// The most of one file a call reads (8 MiB): a text file read whole, the part of a file
/// `head` or `tail` scans, a media file.
pub const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// The most file content all calls in flight hold together (64 MiB).
pub const READ_BUDGET_BYTES: u64 = 64 * 1024 * 1024;

/// The budget's unit: permits are KiB, so the budget fits a `u32` count.
const UNIT: u64 = 1024;

/// The bytes of file content the calls in flight may hold together; a read takes its share
/// before it starts and gives it back when its call is done.
#[derive(Clone)]
pub struct ReadBudget {
    permits: Arc<Semaphore>,
}

impl Default for ReadBudget {
    fn default() -> Self {
        Self {
            permits: Arc::new(Semaphore::new(units(READ_BUDGET_BYTES) as usize)),
        }
    }
}

impl ReadBudget {
    /// Room for `bytes` (at most [`MAX_READ_BYTES`]), waiting until other calls free it.
    pub async fn reserve(&self, bytes: u64) -> Result<OwnedSemaphorePermit, FsError> {
        Arc::clone(&self.permits)
            .acquire_many_owned(units(bytes.min(MAX_READ_BYTES)).max(1))
            .await
            .map_err(|_| FsError::other("the server is shutting down"))
    }
}

fn units(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX)
}

/// The size `path` has now, for the budget (0 when it cannot be read; the read says why).
pub fn size_of(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn open(path: &Path) -> Result<File, FsError> {
    File::open(path).map_err(|e| FsError::io(e, "open", path))
}

fn too_large(path: &Path, size: u64, hint: &str) -> FsError {
    FsError::other(format!(
        "File too large to read: {} is {} bytes, over the limit of {} bytes{hint}",
        path.display(),
        size,
        MAX_READ_BYTES
    ))
}

/// At most [`MAX_READ_BYTES`] of `file`, refusing a longer one (a file that grew after its size
/// was checked included).
fn read_bounded(mut file: File, path: &Path, hint: &str) -> Result<Vec<u8>, FsError> {
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FsError::on_open_file(e, "read"))?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(too_large(
            path,
            file_len(&file).max(bytes.len() as u64),
            hint,
        ));
    }
    Ok(bytes)
}

fn file_len(file: &File) -> u64 {
    file.metadata().map_or(0, |m| m.len())
}

/// The whole file as UTF-8 (invalid sequences replaced by U+FFFD, as Node decodes), refused
/// when it is larger than [`MAX_READ_BYTES`].
pub fn read_text(path: &Path) -> Result<String, FsError> {
    let file = open(path)?;
    let size = file_len(&file);
    let hint = "; read part of it with `head` or `tail`";
    if size > MAX_READ_BYTES {
        return Err(too_large(path, size, hint));
    }
    let bytes = read_bounded(file, path, hint)?;
    Ok(into_text(bytes))
}

fn into_text(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

/// The first `lines` lines (split at `\n`, a final empty line not counted), joined with `\n`.
/// Reads only as far as it needs; refused when those lines run past [`MAX_READ_BYTES`].
pub fn head(path: &Path, lines: usize) -> Result<String, FsError> {
    let mut file = open(path)?;
    let mut bytes = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    let mut found = 0;
    while found < lines {
        let read = file
            .read(&mut chunk)
            .map_err(|e| FsError::on_open_file(e, "read"))?;
        let Some(data) = chunk.get(..read).filter(|d| !d.is_empty()) else {
            break;
        };
        found += data.iter().filter(|b| **b == b'\n').count();
        bytes.extend_from_slice(data);
        if bytes.len() as u64 > MAX_READ_BYTES {
            // Only what the lines asked for counts: cut after the last one, if it came.
            let end = bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(lines - 1)
                .map_or(bytes.len(), |(at, _)| at + 1);
            if end as u64 > MAX_READ_BYTES {
                return Err(too_large(path, file_len(&file), "; ask for fewer lines"));
            }
            bytes.truncate(end);
        }
    }
    let text = into_text(bytes);
    let mut parts: Vec<&str> = text.split('\n').collect();
    if parts.last() == Some(&"") {
        parts.pop();
    }
    parts.truncate(lines);
    Ok(parts.join("\n"))
}

/// The last `lines` lines, as the original counts them: the text after the last `\n` is a
/// line even when empty, and `\r\n` reads as `\n`. Reads backwards only as far as it needs;
/// refused when those lines run past [`MAX_READ_BYTES`].
pub fn tail(path: &Path, lines: usize) -> Result<String, FsError> {
    const CHUNK: u64 = 64 * 1024;
    let mut file = open(path)?;
    let size = file_len(&file);
    if size == 0 || lines == 0 {
        return Ok(String::new());
    }
    let mut position = size;
    let mut bytes: Vec<u8> = Vec::new();
    let mut found = 0;
    while position > 0 && found < lines {
        if size - position >= MAX_READ_BYTES {
            return Err(too_large(path, size, "; ask for fewer lines"));
        }
        let take = CHUNK.min(position);
        position -= take;
        let mut chunk = vec![0; take as usize];
        file.seek(SeekFrom::Start(position))
            .and_then(|_| file.read_exact(&mut chunk))
            .map_err(|e| FsError::on_open_file(e, "read"))?;
        found += chunk.iter().filter(|b| **b == b'\n').count();
        chunk.extend_from_slice(&bytes);
        bytes = chunk;
    }
    let text = into_text(bytes).replace("\r\n", "\n");
    let parts: Vec<&str> = text.split('\n').collect();
    let from = parts.len().saturating_sub(lines);
    Ok(parts.get(from..).unwrap_or_default().join("\n"))
}

/// The file as base64, encoded as it is read, refused when larger than [`MAX_READ_BYTES`].
pub fn read_base64(path: &Path) -> Result<String, FsError> {
    let mut file = open(path)?;
    let size = file_len(&file);
    let hint = "";
    if size > MAX_READ_BYTES {
        return Err(too_large(path, size, hint));
    }
    let mut encoder = base64::write::EncoderStringWriter::from_consumer(
        String::with_capacity(size.div_ceil(3) as usize * 4),
        &STANDARD,
    );
    let mut chunk = vec![0; 48 * 1024];
    let mut total = 0u64;
    loop {
        let read = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FsError::on_open_file(e, "read")),
        };
        total += read as u64;
        if total > MAX_READ_BYTES {
            return Err(too_large(path, file_len(&file), hint));
        }
        encoder
            .write_all(chunk.get(..read).unwrap_or_default())
            .map_err(FsError::bare)?;
    }
    Ok(encoder.into_inner())
}

/// Base64 of a whole small buffer.
pub fn base64_of(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}
