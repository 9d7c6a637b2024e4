//! An existing HTTP API served as MCP tools: `openapi!` reads `openapi/openapi.yaml` (a small
//! bookshelf API) when this file compiles and generates one typed function and one tool per
//! operation; the server sends each call to the API at `--base-url`.
//!
//! ```text
//! cargo run -p mcp-examples --example openapi -- --base-url http://127.0.0.1:4010
//! ```
//!
//! With `BOOKSHELF_TOKEN` set, every request carries `Authorization: Bearer <token>`. The
//! `remove_book` operation is `replace`d: its tool is the hand-written `remove_book_politely`
//! below, which calls the generated function with a reason the model cannot leave out.

use mcp_runtime::openapi::Upstream;
use mcp_runtime::prelude::*;

/// The bookshelf API: `API`, and `list_books`, `add_book`, `get_book`, `remove_book`.
mod bookshelf {
    mcp_runtime::openapi!("openapi/openapi.yaml", replace = ["removeBook"]);
}

/// Take a book off the shelf, saying why.
#[tool(destructive, idempotent, open_world)]
async fn remove_book_politely(
    /// The book's id.
    book_id: i64,
    /// Why the book goes; the shelf logs it.
    reason: String,
    ctx: Context,
) -> Result<String, ToolError> {
    if reason.trim().is_empty() {
        return Err(ToolError::new("give a reason"));
    }
    let response = bookshelf::remove_book(&ctx, book_id, Some(reason)).await?;
    Ok(format!("book {book_id} removed ({})", response.status()))
}

/// What `--help` prints.
const USAGE: &str = "\
usage: openapi --base-url URL [--help]

The bookshelf API at URL served as MCP tools over stdio; with BOOKSHELF_TOKEN set, every
request to the API carries it as a bearer token.
";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_examples::help(USAGE);
    // stdout carries the protocol; logs go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let mut args = std::env::args().skip(1);
    let mut base_url = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--base-url" => base_url = args.next(),
            other => {
                return Err(
                    format!("unknown argument `{other}`; usage: openapi --base-url URL").into(),
                );
            }
        }
    }
    let base_url = base_url.ok_or("usage: openapi --base-url URL")?;
    let mut upstream = Upstream::new(base_url)?;
    if std::env::var_os("BOOKSHELF_TOKEN").is_some() {
        upstream = upstream.bearer_from_env("BOOKSHELF_TOKEN")?;
    }
    bookshelf::API.configure(upstream)?;
    Server::new("bookshelf", env!("CARGO_PKG_VERSION"))
        .instructions("A bookshelf: list, add, read and remove books.")
        .serve_stdio()
        .await?;
    Ok(())
}
