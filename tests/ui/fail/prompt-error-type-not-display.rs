use mcp_runtime::prelude::*;

#[derive(Debug)]
struct TooLong;

/// Summarize a text.
#[prompt]
fn summarize(text: String) -> Result<String, TooLong> {
    if text.len() > 10_000 { Err(TooLong) } else { Ok(format!("Summarize:\n{text}")) }
}

fn main() {}
