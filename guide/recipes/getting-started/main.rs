//! A first MCP server: one tool, over stdio (the guide's Getting started).
// ANCHOR: all
// ANCHOR: tool
use mcp_runtime::prelude::*;

/// Add two integers.
#[tool(read_only, idempotent)]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}
// ANCHOR_END: tool

// ANCHOR: main
#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    // ANCHOR: logs
    // Logs go to stderr: over stdio, stdout carries the protocol and nothing else.
    // `info` and above unless `RUST_LOG` says otherwise (`RUST_LOG=debug`, `RUST_LOG=warn`).
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    // ANCHOR_END: logs
    Server::new("demo", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
// ANCHOR_END: main

// ANCHOR: test
#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;

    #[tokio::test]
    async fn adds() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Server::builder().tool(add)).await?;
        let result = client
            .call_tool("add", serde_json::json!({"a": 2, "b": 3}))
            .await?;
        assert_eq!(
            result.structured_content,
            Some(serde_json::json!({"result": 5}))
        );
        Ok(())
    }
}
// ANCHOR_END: test
// ANCHOR_END: all
