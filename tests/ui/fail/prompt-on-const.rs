use mcp_runtime::prelude::*;

/// A greeting.
#[prompt]
const GREETING: &str = "hello";

fn main() {}
