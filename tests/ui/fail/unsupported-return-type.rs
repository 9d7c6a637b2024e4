use mcp_runtime::prelude::*;

struct Report;

#[tool]
async fn report() -> Report {
    Report
}

fn main() {}
