use mcp_runtime::prelude::*;

#[tool]
async fn greet(name: String) -> impl std::fmt::Display {
    name
}

fn main() {}
