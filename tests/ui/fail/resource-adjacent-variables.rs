use mcp_runtime::prelude::*;

/// A file in a folder.
#[resource("files://{folder}{name}")]
fn file(folder: String, name: String) -> String {
    format!("{folder}{name}")
}

fn main() {}
