use mcp_runtime::prelude::*;

#[tool]
async fn distance((x, y): (f64, f64)) -> f64 {
    (x * x + y * y).sqrt()
}

fn main() {}
