use mcp_runtime::prelude::*;

#[tool]
async fn echo<T: Serialize>(value: T) -> T {
    value
}

fn main() {}
