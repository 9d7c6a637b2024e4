use mcp_runtime::prelude::*;

fn all() -> Vec<String> {
    Vec::new()
}

/// Text.
#[resource("test://text", list = all)]
async fn text() -> String {
    String::new()
}

fn main() {}
