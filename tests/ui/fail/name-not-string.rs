use mcp_runtime::prelude::*;

#[tool(name = lookup_word)]
async fn lookup(word: String) -> String {
    word
}

fn main() {}
