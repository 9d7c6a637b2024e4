use mcp_runtime::prelude::*;

#[tool]
async fn greet(#[arg(renam = "who")] name: String) -> String {
    name
}

fn main() {}
