use mcp_runtime::prelude::*;

#[derive(Deserialize, Elicit)]
struct Contact {
    #[elicit(format = "phone")]
    phone: String,
}

fn main() {}
