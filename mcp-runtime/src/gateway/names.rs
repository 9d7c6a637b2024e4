//! The name an upstream's tool or prompt is served under.

use sha2::{Digest as _, Sha256};

use crate::error::is_valid_tool_name;

/// `{namespace}_{name}` (the name alone with no namespace), made a valid tool name: each
/// character outside `A-Z a-z 0-9 _ - .` becomes `_`, and a name still over 64 characters
/// keeps its first 55 and ends with `-` and 8 hex digits of the SHA-256 of the full name.
pub(crate) fn proxied_name(namespace: &str, name: &str) -> String {
    let full = if namespace.is_empty() {
        name.to_owned()
    } else {
        crate::server::namespaced(namespace, name)
    };
    if is_valid_tool_name(&full) {
        return full;
    }
    let mut clean: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        clean.push('_');
    }
    if clean.len() > 64 {
        let digest = Sha256::digest(full.as_bytes());
        // ASCII only by now: cutting at a byte cuts at a character.
        clean.truncate(55);
        clean.push('-');
        for byte in &digest[..4] {
            clean.push_str(&format!("{byte:02x}"));
        }
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_namespaced_and_made_valid() {
        assert_eq!(
            proxied_name("time", "get_current_time"),
            "time_get_current_time"
        );
        assert_eq!(proxied_name("", "echo"), "echo");
        assert_eq!(proxied_name("fs", "read file/now"), "fs_read_file_now");
        assert_eq!(proxied_name("", "été"), "_t_");
        let long = "x".repeat(80);
        let served = proxied_name("ns", &long);
        assert_eq!(served.len(), 64);
        assert!(served.starts_with(&format!("ns_{}", "x".repeat(52))));
        assert!(is_valid_tool_name(&served));
        // Unique and stable: another long name differs, the same one is the same.
        assert_ne!(served, proxied_name("ns", &"x".repeat(81)));
        assert_eq!(served, proxied_name("ns", &long));
    }
}
