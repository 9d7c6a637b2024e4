//! Tools the behaviour tests serve. Each test selects the ones it needs with
//! `Server::builder().tool(..)`, since every `#[tool]` in this binary is registered.

use std::time::Duration;

use mcp_runtime::prelude::*;

/// Add two integers.
#[tool(read_only, idempotent)]
pub(crate) async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// A colour the painter knows.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Colour {
    /// Warm.
    Red,
    /// Calm.
    Blue,
}

/// Where to paint.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Wall {
    /// Width in metres.
    pub(crate) width: f64,
    /// Height in metres.
    pub(crate) height: Option<f64>,
}

/// What a paint job costs.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Quote {
    /// The colour.
    pub(crate) colour: Colour,
    /// Square metres.
    pub(crate) area: f64,
    /// Litres of paint needed.
    pub(crate) litres: f64,
    /// A note, when there is one.
    pub(crate) note: Option<String>,
}

/// Quote a paint job.
///
/// The price depends on the wall and the number of coats.
#[tool(title = "Paint quote", icons = ["https://example.com/paint.png"], meta = serde_json::json!({"example.com/tier": "free"}))]
pub(crate) async fn paint(
    /// The colour to paint with.
    colour: Colour,
    /// The wall.
    wall: Wall,
    /// How many coats.
    #[arg(default = 2)]
    coats: u32,
    /// Who is asking.
    #[arg(rename = "customerName", example = "Ada")]
    customer: Option<String>,
) -> Quote {
    let area = wall.width * wall.height.unwrap_or(2.5);
    Quote {
        colour,
        area,
        litres: area * f64::from(coats) / 10.0,
        note: customer.map(|c| format!("for {c}")),
    }
}

/// Greet someone.
#[tool]
pub(crate) fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Fail on purpose.
#[tool(destructive)]
pub(crate) async fn fail(reason: String) -> Result<String, ToolError> {
    Err(ToolError::new(format!("failed because {reason}")))
}

/// Panic on purpose.
#[tool]
pub(crate) async fn explode() -> String {
    panic!("secret internal detail at /home/build/src/lib.rs")
}

/// Sleep, then answer.
#[tool]
pub(crate) async fn slow(
    /// How long to sleep, in milliseconds.
    millis: u64,
) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "done".to_owned()
}

/// A filter for a search.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Search {
    /// What to look for.
    pub(crate) query: String,
    /// At most this many hits.
    pub(crate) limit: Option<u32>,
}

/// Search, taking the whole input as one struct.
#[tool]
pub(crate) async fn search(Args(search): Args<Search>) -> Vec<String> {
    vec![search.query; search.limit.unwrap_or(1) as usize]
}

/// Report what the context knows.
#[tool]
pub(crate) async fn whoami(ctx: Context, version: ProtocolVersion) -> String {
    format!(
        "{} {} {}",
        ctx.client().implementation.name,
        version,
        ctx.request_id()
    )
}

/// Mixed content blocks.
#[tool]
pub(crate) async fn gallery() -> Vec<Content> {
    vec![
        Content::text("a picture"),
        Image::png([137, 80, 78, 71]).into(),
        ResourceLink::new("file:///pic.png", "pic.png").into(),
    ]
}

/// Do nothing.
#[tool]
pub(crate) async fn noop() {}

/// Two tools may not share a name: these two collide on purpose.
pub(crate) mod clash {
    use mcp_runtime::prelude::*;

    /// One.
    #[tool(name = "same")]
    pub(crate) async fn first() -> String {
        String::new()
    }

    /// Two.
    #[tool(name = "same")]
    pub(crate) async fn second() -> String {
        String::new()
    }
}

/// Not a tool.
pub(crate) async fn plain() {}
