//! `mcp-server-memory`: the knowledge-graph server over stdio. The graph lives in
//! `MEMORY_FILE_PATH`, or `memory.jsonl` in the server's data directory.

use mcp_runtime::prelude::*;
use mcp_server_memory::{Memory, store};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let path = store::file_path();
    store::migrate_legacy(&path);
    eprintln!(
        "Knowledge Graph MCP Server running on stdio ({})",
        path.display()
    );
    Memory::new(path).into_server().serve_stdio().await?;
    Ok(())
}
