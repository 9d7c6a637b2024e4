use mcp_runtime::prelude::*;

#[resource("notes://{id}")]
enum Note {
    Draft,
}

fn main() {}
