use mcp_runtime::prelude::*;

struct Page;

/// A page.
#[resource("test://page")]
async fn page() -> Page {
    Page
}

fn main() {}
