use mcp_runtime::prelude::*;

#[derive(Deserialize, Elicit)]
struct Contact {
    #[elicit(minlength = 3)]
    name: String,
}

fn main() {}
