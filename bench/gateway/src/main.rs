//! The gateway rows of the benchmark (issue 29): the `add` of `bench-ours`, called through a
//! gateway.
//!
//! - `bench-gateway mount` serves `add` mounted in-process as `m` (`m_add`), over stdio;
//! - `bench-gateway proxy UPSTREAM` serves the tools of `UPSTREAM stdio` (the `bench-ours`
//!   binary, a child process) proxied as `p` (`p_add`), over stdio.
//!
//! Against `bench-ours stdio`'s own `add` in the same run, the difference is what the mount
//! and the proxy cost.

use mcp_runtime::client::{Stderr, StdioCommand};
use mcp_runtime::gateway::Upstream;
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
    let mut args = std::env::args().skip(1);
    let server = Server::builder().name("bench").version("0.0.0");
    match args.next().as_deref() {
        Some("proxy") => {
            let upstream = args.next().expect("bench-gateway proxy UPSTREAM_BINARY");
            let command = StdioCommand::new(upstream)
                .arg("stdio")
                .stderr(Stderr::Null);
            server
                .proxy("p", Upstream::command(command))
                .serve_stdio()
                .await
        }
        _ => {
            server
                .mount("m", Server::builder().tool(add))
                .serve_stdio()
                .await
        }
    }
}
