use mcp_runtime::prelude::*;

#[tool(layer = 5)]
async fn lookup(word: String) -> String {
    word
}

fn main() {}
