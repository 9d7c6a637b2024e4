//! The README's first example, verbatim: a one-tool (`add`) stdio server. The benchmark
//! times its clean release build, dependencies included (`bench/run.sh --build-rows-only`).
//! Built with mcp-runtime's stdio-only feature set (`default-features = false, features = ["macros"]`).

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

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    Server::new("demo", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
