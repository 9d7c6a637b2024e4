use mcp_runtime::prelude::*;

#[derive(Deserialize, Elicit)]
struct Pair(String, String);

fn main() {
    // The derive's fallback impl keeps this from being a second error.
    let _ = <Pair as Elicit>::requested_schema();
}
