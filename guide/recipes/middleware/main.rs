//! A server behind tower middleware: a deadline, a concurrency limit and a rate limit (the guide's
//! Middleware chapter).
// ANCHOR: all
use std::time::Duration;

use mcp_runtime::middleware::{RateKey, RateLimitLayer};
use mcp_runtime::prelude::*;
use tower::limit::ConcurrencyLimitLayer;
use tower::timeout::TimeoutLayer;
use tracing_subscriber::EnvFilter;

/// Search the web: slow, so it gets a deadline of its own.
#[tool(layer = TimeoutLayer::new(Duration::from_secs(2)))]
async fn search(
    /// What to look for.
    query: String,
    /// How long the search takes, in seconds (to see the deadline at work).
    #[arg(default = 0)]
    seconds: u64,
) -> String {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    format!("results for {query}")
}

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    Server::new("search", env!("CARGO_PKG_VERSION"))
        // At most 64 requests run at once; the next waits for a place.
        .layer(ConcurrencyLimitLayer::new(64))
        // 10 `tools/call` a second per caller (its session on stdio), in bursts of up to 20.
        .layer(
            RateLimitLayer::per_second(10)
                .burst(20)
                .key(RateKey::session())
                .methods(["tools/call"]),
        )
        .serve_stdio()
        .await
}
// ANCHOR_END: all
