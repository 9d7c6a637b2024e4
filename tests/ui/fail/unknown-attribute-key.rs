use mcp_runtime::prelude::*;

#[tool(descripton = "Look a word up.")]
async fn lookup() -> String {
    String::new()
}

fn main() {}
