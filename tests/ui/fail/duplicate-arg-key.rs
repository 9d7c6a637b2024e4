use mcp_runtime::prelude::*;

#[tool]
async fn greet(#[arg(default = "you".into(), default = "me".into())] name: String) -> String {
    name
}

fn main() {}
