use mcp_runtime::prelude::*;

/// A note in a folder.
#[resource("notes://{folder}/{id}")]
async fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
