//! A gateway in one command: other MCP servers behind one endpoint, beside tools of its own.
//!
//! ```text
//! cargo run -p mcp-examples --example gateway -- --port 8000 \
//!     --upstream 'time=stdio:uvx mcp-server-time' \
//!     --upstream 'everything=stdio:npx -y @modelcontextprotocol/server-everything' \
//!     --upstream docs=http:https://docs.example.com/mcp --bearer docs=s3cret
//! ```
//!
//! - `--upstream NAME=stdio:COMMAND ARGS..` proxies a server run as a child process (the
//!   command line split on spaces), `--upstream NAME=http:URL` one reached over Streamable
//!   HTTP; each is one argument, and may be given again. Its tools and prompts are served as
//!   `NAME_tool`; an empty `NAME` (`=stdio:..`) serves them under their own names.
//! - `--header NAME=HEADER:VALUE` and `--bearer NAME=TOKEN` add a header (a bearer token) to
//!   every request to the HTTP upstream `NAME`.
//! - `--port P` serves Streamable HTTP on 127.0.0.1:P (`/mcp`); without it, stdio.
//! - `--no-local` serves the upstreams alone, without this example's own tools.
//!
//! Its own items: `echo` and `upstreams` (how each upstream is doing), and a small server
//! mounted in-process as `math` (`math_add`, `math_multiply`).

use std::sync::OnceLock;

use mcp_runtime::McpService;
use mcp_runtime::gateway::{Upstream, UpstreamState};
use mcp_runtime::prelude::*;

/// The running server, for the `upstreams` tool.
static SERVICE: OnceLock<McpService> = OnceLock::new();

/// Says the message back.
#[tool(read_only, idempotent)]
async fn echo(
    /// What to say back.
    message: String,
) -> String {
    message
}

/// How each proxied upstream is doing: connected (with its protocol revision), connecting,
/// or down (with why, and when it is tried again).
#[tool(read_only)]
async fn upstreams() -> String {
    let Some(service) = SERVICE.get() else {
        return "not serving yet".to_owned();
    };
    let lines: Vec<String> = service
        .upstreams()
        .into_iter()
        .map(|status| {
            let state = match status.state {
                UpstreamState::Connected {
                    protocol_version,
                    server,
                } => format!(
                    "connected ({protocol_version}, {})",
                    server.map(|s| s.name).unwrap_or_default()
                ),
                UpstreamState::Connecting => "connecting".to_owned(),
                UpstreamState::Down { reason, retry_in } => {
                    format!("down ({reason}); retrying in {retry_in:?}")
                }
                other => format!("{other:?}"),
            };
            let [tools, prompts, resources, templates] = status.items;
            format!(
                "{}: {} — {state}; {tools} tools, {prompts} prompts, {resources} resources, \
                 {templates} templates ({} left out); {} reconnects",
                if status.namespace.is_empty() {
                    "(no namespace)"
                } else {
                    &status.namespace
                },
                status.upstream,
                status.left_out,
                status.reconnects
            )
        })
        .collect();
    lines.join("\n")
}

/// Add two integers.
#[tool(read_only, idempotent)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Multiply two integers.
#[tool(read_only, idempotent)]
async fn multiply(a: i64, b: i64) -> i64 {
    a.saturating_mul(b)
}

/// Reads `--upstream NAME=stdio:COMMAND ARGS..` or `NAME=http:URL`.
fn upstream(spec: &str) -> Result<(String, Upstream), String> {
    let (name, target) = spec
        .split_once('=')
        .ok_or_else(|| format!("`{spec}`: expected NAME=stdio:COMMAND or NAME=http:URL"))?;
    let upstream = if let Some(command) = target.strip_prefix("stdio:") {
        let mut words = command.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| format!("`{spec}`: no command after `stdio:`"))?;
        Upstream::stdio(program, words.collect::<Vec<_>>())
    } else if let Some(url) = target.strip_prefix("http:") {
        Upstream::http(url)
    } else {
        return Err(format!(
            "`{spec}`: the upstream is `stdio:COMMAND ARGS..` or `http:URL`"
        ));
    };
    Ok((name.to_owned(), upstream))
}

/// What `--help` prints.
const USAGE: &str = "\
usage: gateway [--port PORT] [--upstream NAME=stdio:COMMAND ARGS..] [--upstream NAME=http:URL]
               [--header NAME=HEADER:VALUE] [--bearer NAME=TOKEN] [--no-local] [--help]

Other MCP servers behind one endpoint, each upstream's tools and prompts as NAME_tool, beside
tools of its own (left out with --no-local). Serves stdio, or Streamable HTTP on
http://127.0.0.1:PORT/mcp with --port. --header and --bearer add to the requests sent to
the HTTP upstream NAME; each flag may be given again.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = |message: String| mcp_runtime::Error::Io(std::io::Error::other(message));
    let mut port = None;
    let mut local = true;
    let mut proxied: Vec<(String, Upstream)> = Vec::new();
    let mut extras: Vec<(&str, String)> = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let mut value = |flag: &str| {
            words
                .next()
                .cloned()
                .ok_or_else(|| usage(format!("{flag} takes a value")))
        };
        match word.as_str() {
            "--port" => {
                let text = value("--port")?;
                port = Some(
                    text.parse::<u16>()
                        .map_err(|_| usage(format!("--port takes a port number, not `{text}`")))?,
                );
            }
            "--upstream" => proxied.push(upstream(&value("--upstream")?).map_err(usage)?),
            "--header" => extras.push(("header", value("--header")?)),
            "--bearer" => extras.push(("bearer", value("--bearer")?)),
            "--no-local" => local = false,
            other => return Err(usage(format!("unknown argument `{other}`"))),
        }
    }
    for (what, spec) in extras {
        let (name, rest) = spec
            .split_once('=')
            .ok_or_else(|| usage(format!("--{what} takes NAME=..., not `{spec}`")))?;
        let Some((_, target)) = proxied.iter_mut().find(|(n, _)| n == name) else {
            return Err(usage(format!("--{what} names no --upstream `{name}`")));
        };
        *target = match what {
            "bearer" => target.clone().bearer_token(rest),
            _ => {
                let (header, text) = rest.split_once(':').ok_or_else(|| {
                    usage(format!("--header takes NAME=HEADER:VALUE, not `{spec}`"))
                })?;
                target.clone().header(header.trim(), text.trim())
            }
        };
    }
    let mut server = Server::builder()
        .name("mcp-gateway")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("A gateway: the tools of several MCP servers, each under its name.");
    if local {
        let math = Server::builder().tool(add).tool(multiply);
        server = server.tool(echo).tool(upstreams).mount("math", math);
    }
    for (name, upstream) in proxied {
        server = server.proxy(name, upstream);
    }
    let service = server.build()?;
    let _ = SERVICE.set(service.clone());
    match port {
        // `serve_http` logs where it listens once its upstreams' first connections settled
        // (and, meanwhile, what it waits for).
        Some(port) => service.serve_http(("127.0.0.1", port)).await,
        None => service.serve_stdio().await,
    }
}
