//! `get_file_info`'s text and `read_media_file`'s content types.

use std::fs::Metadata;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::fs_error::FsError;

/// `key: value` lines about `path` (links followed): size, the three times, kind, and the
/// permission bits in octal.
pub fn file_info(path: &Path) -> Result<String, FsError> {
    let meta = std::fs::metadata(path).map_err(|e| FsError::io(e, "stat", path))?;
    let time = |t: std::io::Result<SystemTime>| date_string(t.unwrap_or(UNIX_EPOCH));
    Ok([
        format!("size: {}", meta.len()),
        format!("created: {}", time(meta.created())),
        format!("modified: {}", time(meta.modified())),
        format!("accessed: {}", time(meta.accessed())),
        format!("isDirectory: {}", meta.is_dir()),
        format!("isFile: {}", meta.is_file()),
        format!("permissions: {}", permissions(&meta)),
    ]
    .join("\n"))
}

#[cfg(unix)]
fn permissions(meta: &Metadata) -> String {
    use std::os::unix::fs::PermissionsExt;
    format!("{:03o}", meta.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn permissions(meta: &Metadata) -> String {
    if meta.permissions().readonly() {
        "444"
    } else {
        "666"
    }
    .to_owned()
}

/// A time as JavaScript's `Date.prototype.toString` writes it, in UTC:
/// `Wed Dec 02 2026 02:56:59 GMT+0000 (Coordinated Universal Time)`.
pub fn date_string(time: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let seconds = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    };
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{} {} {day:02} {year:04} {:02}:{:02}:{:02} GMT+0000 (Coordinated Universal Time)",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The MIME type `read_media_file` gives a file, by its extension (the original's table).
pub fn media_type(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "flac" => "audio/flac",
        _ => "application/octet-stream",
    }
}

/// The `file://` URL of an absolute path, percent-encoded as Node's `pathToFileURL` encodes it.
pub fn file_url(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut url = String::from("file://");
    if !text.starts_with('/') {
        url.push('/');
    }
    for byte in text.bytes() {
        let plain = byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@[]^|".contains(&byte);
        if plain {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_read_as_javascript_writes_them() {
        assert_eq!(
            date_string(UNIX_EPOCH),
            "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)"
        );
        let later = UNIX_EPOCH + Duration::from_secs(1_796_180_219);
        assert_eq!(
            date_string(later),
            "Wed Dec 02 2026 02:56:59 GMT+0000 (Coordinated Universal Time)"
        );
    }

    #[test]
    fn file_urls_encode_what_a_path_segment_cannot_hold() {
        assert_eq!(
            file_url(Path::new("/tmp/a b#?%é.png")),
            "file:///tmp/a%20b%23%3F%25%C3%A9.png"
        );
    }
}
