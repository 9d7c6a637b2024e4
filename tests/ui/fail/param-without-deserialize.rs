use mcp_runtime::prelude::*;

#[derive(JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

/// Plot a point.
#[tool]
async fn plot(at: Point) -> String {
    format!("{}, {}", at.x, at.y)
}

fn main() {}
