use mcp_runtime::prelude::*;

/// A note.
#[resource("notes://{id}")]
async fn note(id: u64, folder: String) -> String {
    format!("{folder}/{id}")
}

fn main() {}
