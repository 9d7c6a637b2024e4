//! Every `#[tool]` key, alone and together.

use mcp_runtime::prelude::*;

/// Described by its doc comment.
#[tool(name = "search.v2-beta_1")]
async fn search() -> String {
    String::new()
}

#[tool(title = "Look up", description = "Look a word up.")]
fn lookup(word: String) -> String {
    word
}

#[tool(read_only, destructive = false, idempotent, open_world)]
fn hints() {}

#[tool(
    read_only = true,
    destructive = true,
    idempotent = false,
    open_world = false
)]
fn explicit_hints() {}

#[tool(icons = ["https://example.com/i.png"])]
fn icon() {}

#[tool(icons = [Icon::new("https://example.com/i.svg").mime_type("image/svg+xml")])]
fn typed_icon() {}

#[tool(meta = serde_json::json!({ "com.example/owner": "search-team" }))]
fn with_meta() {}

#[tool(crate = "::mcp_runtime")]
fn with_crate_path() {}

/// A trivial sync tool, run on the request's task.
#[tool(inline)]
fn inline_echo(word: String) -> String {
    word
}

#[tool(inline = false)]
fn pooled(word: String) -> String {
    word
}

/// Doc comment, overridden by `description`.
#[tool(
    name = "everything",
    title = "Everything",
    description = "Every key at once.",
    read_only,
    destructive = false,
    idempotent,
    open_world = false,
    icons = ["https://example.com/i.png"],
    meta = serde_json::json!({ "k": 1 }),
    crate = "::mcp_runtime",
)]
pub async fn all_keys() -> bool {
    true
}

fn main() {
    Server::builder()
        .tool(search)
        .tool(lookup)
        .tool(hints)
        .tool(explicit_hints)
        .tool(icon)
        .tool(typed_icon)
        .tool(with_meta)
        .tool(with_crate_path)
        .tool(inline_echo)
        .tool(pooled)
        .tool(all_keys)
        .build()
        .unwrap();
}
