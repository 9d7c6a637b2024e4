use mcp_runtime::prelude::*;

/// Weather.
#[tool]
async fn weather(
    #[arg(header = "Bad Header")] city: String,
    #[arg(header = "")] country: String,
    #[arg(header = "Day")] day: u32,
    #[arg(header = "day")] night: u32,
) -> String {
    format!("{city}{country}{day}{night}")
}

/// A greeting.
#[prompt]
fn greet(#[arg(header = "Name")] name: String) -> String {
    name
}

fn main() {}
