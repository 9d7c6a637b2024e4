//! The keys each attribute accepts, in the order error messages list them.

pub(crate) const TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "icons",
    "meta",
    "crate",
];

pub(crate) const ARG_KEYS: &[&str] = &["rename", "description", "default", "example"];

/// "`a`, `b` or `c`"
pub(crate) fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
