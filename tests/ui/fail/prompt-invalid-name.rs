use mcp_runtime::prelude::*;

/// Greet.
#[prompt(name = "say hello")]
fn greet() -> String {
    String::new()
}

fn main() {}
