use mcp_runtime::prelude::*;

#[derive(Debug)]
struct Id(u64);

/// A note.
#[resource("notes://{id}")]
async fn note(id: Id) -> String {
    format!("{id:?}")
}

fn main() {}
