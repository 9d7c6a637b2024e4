use mcp_runtime::prelude::*;

#[derive(Debug)]
struct Missing;

/// A note.
#[resource("notes://{id}")]
async fn note(id: u64) -> Result<String, Missing> {
    if id == 0 { Err(Missing) } else { Ok(format!("note {id}")) }
}

fn main() {}
