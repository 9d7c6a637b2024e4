//! What a handler can ask of its request and client through `ctx: Context`: logging, progress,
//! cancellation, and questions to the client (elicitation, sampling, roots). The same code
//! serves both protocol eras: in 2026-07-28 the questions become input-required round trips.
//!
//! Run with: `cargo run -p mcp-examples --example context`
//!
//! It serves stdio. The questions need a client that declares `elicitation`, `sampling` or
//! `roots`; without one, each tool says so in a tool error. For example:
//!
//! ```text
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"to":3},"_meta":{"progressToken":"p1"}}}
//! {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{"to":100}}}
//! {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}
//! ```

use std::time::Duration;

use mcp_runtime::prelude::*;

/// Count to a number, slowly, with a log line and a progress notification per step. Cancelling
/// the request stops it at its next `.await`.
#[tool(read_only)]
async fn count(
    /// Where to stop.
    #[arg(default = 5)]
    to: u32,
    ctx: Context,
) -> String {
    for i in 1..=to {
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.debug(format!("counted {i}")).await;
        ctx.progress(f64::from(i), f64::from(to), format!("{i} of {to}"))
            .await;
    }
    ctx.info(format!("done counting to {to}")).await;
    format!("counted to {to}")
}

/// Count on another thread, which must check for cancellation itself.
#[tool(read_only)]
async fn count_in_background(
    /// Where to stop.
    to: u32,
    ctx: Context,
) -> Result<String, ToolError> {
    let worker = tokio::task::spawn_blocking(move || {
        for i in 1..=to {
            if ctx.is_cancelled() {
                return i;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        to
    });
    let reached = worker.await.map_err(|e| ToolError::new(e.to_string()))?;
    Ok(format!("counted to {reached}"))
}

/// A drink to order.
#[derive(Debug, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
enum Drink {
    #[elicit(title = "A cup of tea")]
    Tea,
    #[elicit(title = "A cup of coffee")]
    Coffee,
}

/// The order form the user fills in.
#[derive(Debug, Deserialize, Elicit)]
struct Order {
    /// Who the drink is for.
    #[elicit(min_length = 1, max_length = 40)]
    name: String,
    /// What to drink.
    drink: Drink,
    /// How many sugars.
    #[elicit(minimum = 0, maximum = 3, default = 0)]
    sugars: u8,
}

/// Order a drink: asks the user for the details (elicitation).
#[tool]
async fn order(ctx: Context) -> Result<String, ToolError> {
    match ctx.elicit::<Order>("What would you like?").await? {
        Elicitation::Accept(order) => Ok(format!(
            "{:?} with {} sugars for {}",
            order.drink, order.sugars, order.name
        )),
        Elicitation::Decline | Elicitation::Cancel => Ok("no order".to_owned()),
    }
}

/// Write a haiku about a topic: asks the client's model (sampling).
#[tool]
async fn haiku(
    /// What the haiku is about.
    topic: String,
    ctx: Context,
) -> Result<String, ToolError> {
    let request = SamplingRequest::new(100)
        .system_prompt("You write haiku.")
        .user(format!("A haiku about {topic}"));
    Ok(ctx.sample(request).await?.text())
}

/// The client's workspace roots, one URI per line.
#[tool(read_only)]
async fn workspace(ctx: Context) -> Result<String, ToolError> {
    let roots = ctx.roots().await?;
    Ok(roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join("\n"))
}

/// What `--help` prints.
const USAGE: &str = "\
usage: context [--help]

Logging, progress, cancellation and questions to the client (elicitation, sampling,
roots), served over stdio.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    Server::new("context", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
