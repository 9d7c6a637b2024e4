use mcp_runtime::prelude::*;

#[tool(read_only = 1)]
async fn lookup(word: String) -> String {
    word
}

fn main() {}
