use mcp_runtime::prelude::*;

/// A path.
#[resource("tree://root{/segments*}")]
async fn tree(segments: String) -> String {
    segments
}

fn main() {}
