use mcp_runtime::prelude::*;

#[derive(Deserialize, Elicit)]
enum Choice {
    Plain,
    Custom(String),
}

fn main() {}
