use mcp_runtime::prelude::*;

fn cities(_: &str, _: &CompletionContext) -> Vec<String> {
    Vec::new()
}

/// Weather.
#[tool]
async fn weather(#[arg(complete = cities)] city: String) -> String {
    city
}

fn main() {}
