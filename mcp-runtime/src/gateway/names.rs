//! The names an upstream's tools or prompts are served under.

use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

use crate::error::is_valid_tool_name;

/// The served names of one upstream's tools (or prompts), in the order given: `{namespace}_{name}`
/// (the name alone with no namespace), kept as it is when it is a valid tool name, else made
/// one ([`repaired`]). A made name that another of the names would also be served as ends with
/// `-` and 8 hex digits of the SHA-256 of its full name instead (cut to 55 characters first),
/// so each name the upstream lists stays callable, and a valid name is never the one that moves.
pub(crate) fn served_names<'a>(
    namespace: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    // (full name, what it is served as, whether it was made valid without a digest)
    let mut served: Vec<(String, String, bool)> = names
        .into_iter()
        .map(|name| {
            let full = if namespace.is_empty() {
                name.to_owned()
            } else {
                crate::server::namespaced(namespace, name)
            };
            if is_valid_tool_name(&full) {
                let name = full.clone();
                return (full, name, false);
            }
            let clean = repaired(&full);
            if clean.len() > 64 {
                let name = with_digest(clean, &full);
                (full, name, false)
            } else {
                (full, clean, true)
            }
        })
        .collect();
    let mut counts: HashMap<&str, usize> = HashMap::with_capacity(served.len());
    for (_, name, _) in &served {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let clashing: Vec<usize> = served
        .iter()
        .enumerate()
        .filter(|(_, (_, name, made))| *made && counts.get(name.as_str()) > Some(&1))
        .map(|(i, _)| i)
        .collect();
    for i in clashing {
        let (full, name, _) = &mut served[i];
        *name = with_digest(std::mem::take(name), full);
    }
    served.into_iter().map(|(_, name, _)| name).collect()
}

/// `full` with each character outside `A-Z a-z 0-9 _ - .` made `_` (`_` for the empty name).
fn repaired(full: &str) -> String {
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
    clean
}

/// `clean` cut to 55 characters, then `-` and 8 hex digits of the SHA-256 of `full`: unique,
/// and the same from run to run.
fn with_digest(mut clean: String, full: &str) -> String {
    let digest = Sha256::digest(full.as_bytes());
    // ASCII only by now: cutting at a byte cuts at a character.
    clean.truncate(55);
    clean.push('-');
    for byte in &digest[..4] {
        clean.push_str(&format!("{byte:02x}"));
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(namespace: &str, name: &str) -> String {
        served_names(namespace, [name]).remove(0)
    }

    #[test]
    fn names_are_namespaced_and_made_valid() {
        assert_eq!(one("time", "get_current_time"), "time_get_current_time");
        assert_eq!(one("", "echo"), "echo");
        assert_eq!(one("fs", "read file/now"), "fs_read_file_now");
        assert_eq!(one("", "été"), "_t_");
        assert_eq!(one("", ""), "_");
        let long = "x".repeat(80);
        let served = one("ns", &long);
        assert_eq!(served.len(), 64);
        assert!(served.starts_with(&format!("ns_{}", "x".repeat(52))));
        assert!(is_valid_tool_name(&served));
        // Unique and stable: another long name differs, the same one is the same.
        assert_ne!(served, one("ns", &"x".repeat(81)));
        assert_eq!(served, one("ns", &long));
    }

    #[test]
    fn made_names_that_clash_take_a_digest_and_valid_ones_stay() {
        let served = served_names("fs", ["read file", "read_file", "read/file", "write"]);
        assert_eq!(served[1], "fs_read_file");
        assert_eq!(served[3], "fs_write");
        for made in [&served[0], &served[2]] {
            assert!(made.starts_with("fs_read_file-"), "{made}");
            assert_eq!(made.len(), "fs_read_file-".len() + 8);
            assert!(is_valid_tool_name(made));
        }
        assert_ne!(served[0], served[2]);
        // The order they come in changes nothing.
        let reversed = served_names("fs", ["write", "read/file", "read_file", "read file"]);
        assert_eq!(
            reversed,
            [&served[3], &served[2], &served[1], &served[0]].map(String::as_str)
        );
        // Alone, a made name needs no digest.
        assert_eq!(served_names("fs", ["read file"]), ["fs_read_file"]);
    }
}
