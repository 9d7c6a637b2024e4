use mcp_runtime::prelude::*;

/// A resource without a URI.
#[resource(mime_type = "text/plain")]
async fn nowhere() -> String {
    String::new()
}

fn main() {}
