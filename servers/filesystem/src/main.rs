//! `mcp-server-filesystem [allowed-directory] [additional-directories...]`: the filesystem
//! server over stdio.

use mcp_runtime::prelude::*;
use mcp_server_filesystem::Filesystem;
use mcp_server_filesystem::sandbox::Sandbox;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        eprintln!("Usage: mcp-server-filesystem [allowed-directory] [additional-directories...]");
        eprintln!("Note: Allowed directories can be provided via:");
        eprintln!("  1. Command-line arguments (shown above)");
        eprintln!("  2. MCP roots protocol (if client supports it)");
        eprintln!(
            "At least one directory must be provided by EITHER method for the server to operate."
        );
    }
    let dirs = Sandbox::from_command_line(&args)?;
    if dirs.is_empty() && !args.is_empty() {
        eprintln!("Error: None of the specified directories are accessible");
        std::process::exit(1);
    }
    eprintln!("Secure MCP Filesystem Server running on stdio");
    if dirs.is_empty() {
        eprintln!(
            "Started without allowed directories - waiting for client to provide roots via MCP protocol"
        );
    }
    Filesystem::new(dirs).into_server().serve_stdio().await?;
    Ok(())
}
