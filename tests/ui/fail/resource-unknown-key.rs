use mcp_runtime::prelude::*;

/// Text.
#[resource("test://text", mimetype = "text/plain")]
async fn text() -> String {
    String::new()
}

fn main() {}
