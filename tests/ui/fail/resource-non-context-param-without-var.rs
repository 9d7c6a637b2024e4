use mcp_runtime::prelude::*;

struct Database;

/// A note.
#[resource("notes://{id}")]
async fn note(id: u64, db: Database) -> String {
    let _ = db;
    id.to_string()
}

fn main() {}
