use mcp_runtime::prelude::*;

#[tool]
async unsafe fn lookup(word: String) -> String {
    word
}

fn main() {}
