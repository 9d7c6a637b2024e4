use mcp_runtime::prelude::*;

#[derive(Deserialize)]
struct Address {
    street: String,
}

#[derive(Deserialize, Elicit)]
struct Contact {
    name: String,
    address: Address,
}

fn main() {}
