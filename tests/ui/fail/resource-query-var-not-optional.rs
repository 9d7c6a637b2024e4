use mcp_runtime::prelude::*;

/// Search.
#[resource("search://items{?q}")]
async fn search(q: String) -> String {
    q
}

fn main() {}
