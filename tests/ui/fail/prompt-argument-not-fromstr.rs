use mcp_runtime::prelude::*;

struct Style;

/// Write something.
#[prompt]
fn write(style: Style) -> String {
    let _ = style;
    String::new()
}

fn main() {}
