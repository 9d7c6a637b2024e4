//! Every accepted parameter shape: plain arguments, `Option`, `#[arg(..)]`, `///`, `Args<T>`,
//! `mut` and destructured parameters.

use mcp_runtime::prelude::*;

/// No parameters, async.
#[tool]
async fn ping() -> String {
    "pong".to_owned()
}

/// No parameters, sync.
#[tool]
fn now() -> u64 {
    0
}

/// Plain arguments, with `///` on each.
#[tool]
pub async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Optional arguments and defaults.
#[tool]
pub fn greet(
    name: Option<String>,
    #[arg(default = "Hello".to_owned())] greeting: String,
    #[arg(default = 1)] times: u8,
    #[arg(default = "!")] end: String,
    #[arg(default = "x")] mark: Box<str>,
    #[arg(default = "y")] tag: std::borrow::Cow<'static, str>,
) -> String {
    let name = name.unwrap_or_else(|| "world".to_owned());
    format!("{greeting}, {name}{end}{mark}{tag} ").repeat(usize::from(times))
}

/// Every `#[arg]` key, several of them on one parameter and `example` repeated.
#[tool]
async fn search(
    #[arg(
        rename = "q",
        description = "What to look for.",
        example = "rust",
        example = "mcp"
    )]
    query: String,
    /// At most this many hits.
    #[arg(default = 10, example = 5)]
    #[arg(example = 20)]
    limit: u32,
    tags: Vec<String>,
) -> Vec<String> {
    vec![query; limit.min(tags.len() as u32) as usize]
}

/// Arguments mirrored in `Mcp-Param-*` HTTP headers.
#[tool]
async fn forecast(
    #[arg(header = "Region")] region: String,
    #[arg(header = "X-Days_2", default = 3)] days: u32,
    #[arg(header = "metric")] metric: Option<bool>,
) -> String {
    format!("{region} {days} {metric:?}")
}

#[derive(Deserialize, JsonSchema)]
struct Point {
    /// Horizontal.
    x: f64,
    /// Vertical.
    y: f64,
}

/// The whole arguments object as one struct.
#[tool]
async fn norm(Args(point): Args<Point>) -> f64 {
    (point.x * point.x + point.y * point.y).sqrt()
}

/// `mut` parameters and a destructured one with a wire name.
#[tool]
fn sort(mut numbers: Vec<i64>, #[arg(rename = "range")] (low, high): (i64, i64)) -> Vec<i64> {
    numbers.retain(|n| (low..=high).contains(n));
    numbers.sort_unstable();
    numbers
}

/// A struct argument and a raw identifier as the function's name.
#[tool]
fn r#type(point: Point, r#mut: bool) -> String {
    format!("{} {} {}", point.x, point.y, r#mut)
}

fn main() {
    Server::builder()
        .tool(ping)
        .tool(now)
        .tool(add)
        .tool(greet)
        .tool(search)
        .tool(norm)
        .tool(sort)
        .tool(r#type)
        .build()
        .unwrap();
}
