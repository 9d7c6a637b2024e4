//! A server whose tools change while it runs: calling `unlock` adds the `#[tool]` function
//! `multiply`, and two seconds after start a `clock` tool made from a closure appears. Each
//! change reaches the client as `notifications/tools/list_changed`.
//!
//! Run with: `cargo run -p mcp-examples --example dynamic`
//!
//! ```text
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"unlock","arguments":{}}}
//! {"jsonrpc":"2.0","id":3,"method":"tools/list"}
//! {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"multiply","arguments":{"a":6,"b":7}}}
//! ```

use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use mcp_runtime::tool::{ToolBuilder, ToolDef};

/// Multiply two integers.
#[tool(read_only, idempotent, open_world = false)]
async fn multiply(
    /// The first factor.
    a: i64,
    /// The second factor.
    b: i64,
) -> i64 {
    a.saturating_mul(b)
}

/// Unlock the `multiply` tool.
#[tool]
async fn unlock(ctx: Context) -> Result<&'static str, ToolError> {
    let multiply = ToolDef::of(multiply).map_err(ToolError::from_error)?;
    // Refused (and reported to the model) when `multiply` is already there.
    ctx.server()
        .add_tool(multiply)
        .map_err(ToolError::from_error)?;
    Ok("`multiply` is now available")
}

/// A tool made at run time from a closure: how long the server has been up.
fn clock(started: Instant) -> ToolDef {
    let mut builder = ToolBuilder::new("clock", move |_call| {
        let up = started.elapsed().as_secs();
        Box::pin(async move { CallToolResult::success([format!("up for {up} s")]) })
    });
    builder.description("How long the server has been running.");
    builder.build()
}

/// What `--help` prints.
const USAGE: &str = "\
usage: dynamic [--help]

A server whose tools change while it runs, served over stdio.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    // stdout carries the protocol; logs go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let started = Instant::now();
    // Only `unlock` at first; the server has tools, so it advertises `tools.listChanged` and
    // may add more. (A server starting with none would say `.dynamic_tools()`.)
    let service = Server::builder()
        .name("dynamic")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(unlock)
        .build()?;
    let handle = service.handle();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        if let Err(error) = handle.add_tool(clock(started)) {
            tracing::error!(%error, "could not add the clock tool");
        }
    });
    service.serve_stdio().await
}
