//! `mcp-server-time`: an MCP server that tells the time in any IANA time zone and converts a
//! time between zones, over stdio. The same tools, arguments and results as the reference
//! `mcp-server-time` (PyPI); `README.md` says what differs and why.
//!
//! ```text
//! mcp-server-time                                # the local zone detected from the host
//! mcp-server-time --local-timezone Europe/Paris  # or named
//! ```

mod tools;
mod zones;

use clap::Parser;
use mcp_runtime::prelude::*;

/// give a model the ability to handle time queries and timezone conversions
#[derive(Debug, Parser)]
#[command(name = "mcp-server-time", version)]
struct Cli {
    /// Override local timezone
    #[arg(long, value_name = "LOCAL_TIMEZONE")]
    local_timezone: Option<String>,
}

/// The server: both tools, under the original's name.
fn server() -> Server {
    Server::builder()
        .name("mcp-time")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(tools::get_current_time)
        .tool(tools::convert_time)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr: over stdio, stdout carries the protocol and nothing else.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let local = match cli.local_timezone {
        // Refused before the transport opens, in one line naming the value.
        Some(name) if !zones::is_known(&name) => {
            eprintln!("Error: invalid --local-timezone '{name}': not a known IANA timezone name");
            return std::process::ExitCode::FAILURE;
        }
        Some(name) => name,
        None => zones::detect_local(),
    };
    zones::set_local(local);
    match server().serve_stdio().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-server-time: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests;
