//! Time zone names: which ones exist, what a bad one is told, and which one is local.
//!
//! Zones come from the IANA database compiled into the binary (jiff's `tzdb-bundle-always`), so
//! a name resolves the same way on every host. Only exact names are accepted: jiff looks names
//! up case-insensitively, but `europe/paris` is not an IANA key, and the original refuses it on
//! every platform, so the name is checked against the database's own list first.

use std::collections::HashSet;
use std::sync::{LazyLock, OnceLock};

use jiff::tz::TimeZone;

/// Every name the compiled-in database holds, read once.
static KNOWN: LazyLock<HashSet<String>> = LazyLock::new(|| {
    jiff::tz::db()
        .available()
        .map(|name| name.to_string())
        .collect()
});

/// The local zone named in the tools' argument descriptions, set once at start-up.
static LOCAL: OnceLock<String> = OnceLock::new();

/// Why a name is not a zone: the message the original gives for the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownZone(String);

impl std::fmt::Display for UnknownZone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The zone called exactly `name`.
///
/// The original resolves names as paths under the zoneinfo directory; its refusals of
/// path-shaped names (absolute, with `..`, not normalized) are reproduced here word for word,
/// since they show nothing of the host. Any other unknown name gets its "No time zone found"
/// message (where it would report a directory or a filesystem error, with a host path in it).
pub(crate) fn lookup(name: &str) -> Result<TimeZone, UnknownZone> {
    if let Some(refusal) = path_refusal(name) {
        return Err(UnknownZone(refusal));
    }
    let not_found = || UnknownZone(format!("'No time zone found with key {name}'"));
    if !KNOWN.contains(name) {
        return Err(not_found());
    }
    jiff::tz::db().get(name).map_err(|_| not_found())
}

/// How the original refuses a name that is not a plain relative path, if `name` is one.
fn path_refusal(name: &str) -> Option<String> {
    if name.starts_with('/') {
        return Some(format!(
            "ZoneInfo keys may not be absolute paths, got: {name}"
        ));
    }
    // The original compares the key with its normal form (`a/./b`, `a//b`, `a/b/` and
    // `a/../b` all shorten), then refuses one that climbs out of the database (`../x`).
    let normal = normalize(name);
    if normal.len() != name.len() {
        return Some(format!(
            "ZoneInfo keys must be normalized relative paths, got: {name}"
        ));
    }
    (normal == ".." || normal.starts_with("../"))
        .then(|| format!("ZoneInfo keys must refer to subdirectories of TZPATH, got: {name}"))
}

/// A relative path's normal form, as `os.path.normpath` writes it: no empty or `.` parts, and
/// each `..` cancelling the part before it where there is one.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// Whether `name` is a zone of the database, exactly as spelled.
pub(crate) fn is_known(name: &str) -> bool {
    path_refusal(name).is_none() && KNOWN.contains(name)
}

/// Fixes the local zone the tool descriptions name: `--local-timezone` when given (already
/// checked), otherwise the host's.
pub(crate) fn set_local(name: String) {
    // Set once, before the server is built; a second call (tests) keeps the first.
    let _ = LOCAL.set(name);
}

/// The local zone the descriptions name (`UTC` until one is set).
pub(crate) fn local() -> &'static str {
    LOCAL.get().map_or("UTC", String::as_str)
}

/// The host's time zone by name, found where the original looks: `TZ`, then `/etc/timezone`,
/// then the zone `/etc/localtime` links to; `UTC` when none names a known zone.
pub(crate) fn detect_local() -> String {
    let from_env = std::env::var("TZ")
        .ok()
        .and_then(|tz| name_from_tz_variable(&tz));
    let from_file = || {
        std::fs::read_to_string("/etc/timezone")
            .ok()
            .and_then(|text| text.lines().next().map(|line| line.trim().to_owned()))
            .filter(|name| !name.is_empty())
    };
    let from_system = || {
        TimeZone::try_system()
            .ok()
            .and_then(|tz| tz.iana_name().map(str::to_owned))
    };
    from_env
        .or_else(from_file)
        .or_else(from_system)
        .filter(|name| is_known(name))
        .unwrap_or_else(|| "UTC".to_owned())
}

/// The zone name in a `TZ` value: `Europe/Paris`, `:Europe/Paris`, or a path into a zoneinfo
/// directory (`/usr/share/zoneinfo/Europe/Paris`).
fn name_from_tz_variable(value: &str) -> Option<String> {
    let value = value.strip_prefix(':').unwrap_or(value).trim();
    if value.is_empty() {
        return None;
    }
    if value.starts_with('/') {
        return value
            .split_once("/zoneinfo/")
            .map(|(_, name)| name.to_owned());
    }
    Some(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_only() {
        assert!(lookup("Europe/Paris").is_ok());
        assert!(lookup("UTC").is_ok());
        assert_eq!(
            lookup("europe/paris")
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("'No time zone found with key europe/paris'")
        );
        assert_eq!(
            lookup("Mars/Olympus")
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("'No time zone found with key Mars/Olympus'")
        );
    }

    #[test]
    fn path_shaped_names_get_the_originals_refusals() {
        let message = |name: &str| lookup(name).err().map(|e| e.to_string());
        assert_eq!(
            message("/etc/passwd").as_deref(),
            Some("ZoneInfo keys may not be absolute paths, got: /etc/passwd")
        );
        assert_eq!(
            message("../../etc/passwd").as_deref(),
            Some("ZoneInfo keys must refer to subdirectories of TZPATH, got: ../../etc/passwd")
        );
        assert_eq!(
            message("Europe/../Asia/Tokyo").as_deref(),
            Some("ZoneInfo keys must be normalized relative paths, got: Europe/../Asia/Tokyo")
        );
        assert_eq!(
            message("Europe//Paris").as_deref(),
            Some("ZoneInfo keys must be normalized relative paths, got: Europe//Paris")
        );
        // Shortened by normalizing before it climbs out: the first refusal wins, as there.
        assert_eq!(
            message("a/../../b").as_deref(),
            Some("ZoneInfo keys must be normalized relative paths, got: a/../../b")
        );
        // A directory of the database is no zone.
        assert_eq!(
            message("Europe").as_deref(),
            Some("'No time zone found with key Europe'")
        );
    }

    #[test]
    fn tz_variable_forms() {
        assert_eq!(
            name_from_tz_variable("Asia/Tokyo").as_deref(),
            Some("Asia/Tokyo")
        );
        assert_eq!(
            name_from_tz_variable(":Asia/Tokyo").as_deref(),
            Some("Asia/Tokyo")
        );
        assert_eq!(
            name_from_tz_variable("/usr/share/zoneinfo/Asia/Tokyo").as_deref(),
            Some("Asia/Tokyo")
        );
        assert_eq!(name_from_tz_variable(""), None);
    }
}
