use mcp_runtime::prelude::*;

#[tool(title = "Lookup", title = "Find")]
async fn lookup() -> String {
    String::new()
}

fn main() {}
