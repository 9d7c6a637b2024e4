use mcp_runtime::prelude::*;

#[derive(Deserialize, Elicit)]
struct Pair(String, String);

fn main() {}
