use mcp_runtime::prelude::*;

#[tool(name = "has space")]
async fn lookup() -> String {
    String::new()
}

fn main() {}
