use mcp_runtime::prelude::*;

#[derive(Deserialize)]
struct Point {
    x: f64,
}

/// Plot a point, or the origin.
#[tool]
async fn plot(at: Option<Point>) -> String {
    at.map_or_else(String::new, |p| p.x.to_string())
}

fn main() {}
