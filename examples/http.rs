//! Streamable HTTP: the MCP endpoint mounted in an axum app next to a route of its own, with
//! graceful shutdown. Handshake-era clients get sessions and SSE streams; 2026-07-28 clients
//! are served statelessly on the same endpoint, with no extra code.
//!
//! Run with: `cargo run -p mcp-examples --example http` (serves `http://127.0.0.1:8000/mcp`;
//! `-- --port N` picks another port, `0` a free one).
//!
//! For a server with nothing else to serve, `Server::serve_http("127.0.0.1:8000")` does all of
//! this in one call. Try it with curl:
//!
//! ```text
//! curl -s http://127.0.0.1:8000/health
//! curl -s http://127.0.0.1:8000/mcp -H 'content-type: application/json' \
//!   -H 'accept: application/json, text/event-stream' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
//! ```

use std::time::Duration;

use axum::serve::ListenerExt;
use mcp_runtime::prelude::*;
use mcp_runtime::{CacheHint, Cacheable, ServerCard};

/// Add two integers.
#[tool(read_only, idempotent)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Count to a number, reporting progress (which arrives on the request's SSE stream).
#[tool(read_only)]
async fn count(to: u32, ctx: Context) -> String {
    for i in 1..=to {
        tokio::time::sleep(Duration::from_millis(20)).await;
        ctx.progress(f64::from(i), f64::from(to), "counting").await;
    }
    format!("counted to {to}")
}

/// What `--help` prints.
const USAGE: &str = "\
usage: http [--port PORT] [--help]

Streamable HTTP on http://127.0.0.1:PORT/mcp (8000 by default; 0 picks a free port),
beside a /health route of its own.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    let port = match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [flag, port] if flag == "--port" => port
            .parse()
            .map_err(|_| std::io::Error::other("--port takes a port number"))?,
        _ => 8000,
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let service = Server::new("http-example", env!("CARGO_PKG_VERSION"))
        .description("Adds and counts, mounted next to an axum route of its own.")
        // 2026-07-28 clients may cache `tools/list` for a minute.
        .cache_hint(Cacheable::Tools, CacheHint::public(Duration::from_secs(60)))
        // The Server Card at /mcp/server-card, listed by /.well-known/ai-catalog.json.
        .server_card(ServerCard::new("com.example/http-example").remote(&url))
        .build()?;
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(service.into_router());
    eprintln!("serving MCP on {url}");
    // Small SSE writes should not wait for the client's delayed ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            // Open `subscriptions/listen` streams end with their final result.
            service.close_subscriptions();
        })
        .await?;
    Ok(())
}
