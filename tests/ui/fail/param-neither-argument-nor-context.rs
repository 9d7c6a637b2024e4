use mcp_runtime::prelude::*;

struct Connection;

#[tool]
async fn query(connection: Connection, sql: String) -> String {
    let _ = connection;
    sql
}

fn main() {}
