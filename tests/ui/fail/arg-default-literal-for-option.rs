use mcp_runtime::prelude::*;

/// Greet someone.
#[tool]
async fn greet(#[arg(default = "world")] name: Option<String>) -> String {
    format!("Hello, {}!", name.unwrap_or_default())
}

fn main() {}
