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

pub(crate) const RESOURCE_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "mime_type",
    "size",
    "audience",
    "priority",
    "last_modified",
    "icons",
    "meta",
    "list",
    "allow_traversal",
    "crate",
];

pub(crate) const PROMPT_KEYS: &[&str] = &["name", "title", "description", "icons", "meta", "crate"];

pub(crate) const SERVER_KEYS: &[&str] = &[
    "name",
    "version",
    "title",
    "description",
    "instructions",
    "website_url",
    "icons",
    "crate",
];

pub(crate) const ARG_KEYS: &[&str] = &[
    "rename",
    "description",
    "default",
    "example",
    "complete",
    "header",
];

/// "`a`, `b` or `c`"
pub(crate) fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
