use mcp_runtime::prelude::*;

#[tool]
async fn lookup(&self, word: String) -> String {
    word
}

fn main() {}
