use mcp_runtime::prelude::*;

#[tool]
struct Lookup {
    word: String,
}

fn main() {}
