use mcp_runtime::prelude::*;

#[tool]
async fn copy(source: String, #[arg(rename = "source")] target: String) -> String {
    format!("{source} -> {target}")
}

fn main() {}
