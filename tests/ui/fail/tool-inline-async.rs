use mcp_runtime::prelude::*;

#[tool(inline)]
async fn lookup(word: String) -> String {
    word
}

fn main() {}
