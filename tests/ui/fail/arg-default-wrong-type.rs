use mcp_runtime::prelude::*;

/// Repeat a word.
#[tool]
async fn repeat(word: String, #[arg(default = "three")] n: u32) -> String {
    word.repeat(n as usize)
}

fn main() {}
