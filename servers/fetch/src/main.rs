//! `mcp-server-fetch`: an MCP server that fetches a web page for a model and returns it as
//! Markdown, over stdio. The same `fetch` tool and `fetch` prompt as the reference
//! `mcp-server-fetch` (PyPI); `README.md` says what differs and why.
//!
//! ```text
//! mcp-server-fetch                                # robots.txt obeyed, public addresses only
//! mcp-server-fetch --ignore-robots-txt --proxy-url http://proxy:3128
//! mcp-server-fetch --allow-private-ips            # an intranet, a development server
//! ```

mod client;
mod guard;
mod markdown;
mod robots;
mod server;

use clap::Parser;
use mcp_runtime::prelude::*;

use crate::client::{Http, Network};
use crate::server::Fetch;

/// The default of `--max-body-bytes`: 10 MiB.
const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// give a model the ability to make web requests
#[derive(Debug, Parser)]
#[command(name = "mcp-server-fetch", version)]
struct Cli {
    /// Custom User-Agent string
    #[arg(long)]
    user_agent: Option<String>,
    /// Ignore robots.txt restrictions
    #[arg(long)]
    ignore_robots_txt: bool,
    /// Proxy URL to use for requests
    #[arg(long)]
    proxy_url: Option<String>,
    /// Allow fetching private, loopback and link-local addresses (refused by default)
    #[arg(long)]
    allow_private_ips: bool,
    /// The largest response body read, in bytes; a longer page is refused with an error
    #[arg(long, default_value_t = DEFAULT_MAX_BODY_BYTES, value_parser = clap::value_parser!(usize))]
    max_body_bytes: usize,
}

/// The server for these options.
fn server(cli: Cli) -> Server {
    let network = Network {
        proxy_url: cli.proxy_url,
        allow_private: cli.allow_private_ips,
        max_body_bytes: cli.max_body_bytes,
    };
    Fetch::new(Http::new(&network), cli.user_agent, cli.ignore_robots_txt).into_server()
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
    match server(cli).serve_stdio().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-server-fetch: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests;
