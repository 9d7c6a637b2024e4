use mcp_runtime::prelude::*;

#[tool]
async fn greet(name: impl Into<String>) -> String {
    name.into()
}

fn main() {}
