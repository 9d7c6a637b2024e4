use mcp_runtime::prelude::*;

#[derive(Deserialize, Elicit)]
enum Choice {
    Plain,
    Custom(String),
}

// The derive's fallback impls keep this from being a second error.
#[derive(Deserialize, Elicit)]
struct Form {
    choice: Choice,
}

fn main() {}
