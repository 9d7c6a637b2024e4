use mcp_runtime::prelude::*;

/// Show the weather.
#[tool(ui = "https://example.com/weather")]
async fn weather(city: String) -> String {
    city
}

fn main() {}
