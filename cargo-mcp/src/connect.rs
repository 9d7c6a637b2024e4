//! The one MCP client interface the jobs use: connect (a child process over stdio, or a URL),
//! read what the server said about itself, send a request, close.
//!
//! Behind it is the runtime's own client, `mcp_runtime::client` (feature `client`), not a second
//! one written here: stdio to the built binary, Streamable HTTP to `--http URL` (through the socket of
//! `--unix PATH` when given), in whichever
//! era the server speaks (it probes with `server/discover` and falls back to `initialize`).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use mcp_runtime::client::{Client, ClientError, StdioCommand};
use mcp_runtime::protocol::Implementation;
use serde_json::{Map, Value, json};

/// A connected MCP session.
pub(crate) struct Connection {
    client: Client,
}

/// An answer, or the server's JSON-RPC error kept apart from failures to talk at all.
pub(crate) enum Answer {
    Result(Value),
    Error(Value),
}

/// `cargo-mcp` as the client names itself.
fn client_info() -> Implementation {
    Implementation::new("cargo-mcp", env!("CARGO_PKG_VERSION"))
}

impl Connection {
    /// Starts `program` with `args` and connects over its stdin and stdout; its stderr (the
    /// server's logs) goes to ours. A server that serves HTTP through `serve_http` serves
    /// stdio here (`MCP_RUNTIME_TRANSPORT=stdio`).
    pub(crate) async fn stdio(
        program: &Path,
        args: &[String],
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let client = Client::builder()
            .client_info(client_info())
            .timeout(timeout)
            .stdio(
                StdioCommand::new(program)
                    .args(args)
                    .env("MCP_RUNTIME_TRANSPORT", "stdio"),
            )
            .await
            .with_context(|| format!("connecting to {}", program.display()))?;
        Ok(Self { client })
    }

    /// Connects to a running server over Streamable HTTP (through the Unix domain socket
    /// `unix` when given), sending `headers` with every request.
    pub(crate) async fn http(
        url: &str,
        unix: Option<&Path>,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let mut builder = Client::builder()
            .client_info(client_info())
            .timeout(timeout);
        if let Some(path) = unix {
            #[cfg(unix)]
            {
                builder = builder.unix_socket(path);
            }
            #[cfg(not(unix))]
            anyhow::bail!("{}: Unix domain sockets need a Unix system", path.display());
        }
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        let client = builder.http(url).await.with_context(|| match unix {
            Some(path) => format!("connecting to {url} on the Unix socket {}", path.display()),
            None => format!("connecting to {url}"),
        })?;
        Ok(Self { client })
    }

    /// What the server said about itself, in `initialize`'s shape whatever the era:
    /// `protocolVersion`, `serverInfo`, `capabilities`, `instructions`, and (2026-07-28)
    /// `supportedVersions`.
    pub(crate) fn initialize_result(&self) -> Value {
        let info = self.client.server_info();
        let mut result = Map::new();
        result.insert(
            "protocolVersion".into(),
            json!(info.protocol_version.as_str()),
        );
        if let Some(implementation) = &info.implementation {
            result.insert("serverInfo".into(), json!(implementation));
        }
        result.insert("capabilities".into(), json!(info.capabilities));
        if let Some(instructions) = &info.instructions {
            result.insert("instructions".into(), json!(instructions));
        }
        if let Some(versions) = info.raw.get("supportedVersions") {
            result.insert("supportedVersions".into(), versions.clone());
        }
        Value::Object(result)
    }

    /// Sends one request.
    pub(crate) async fn request(&self, method: &str, params: Value) -> anyhow::Result<Answer> {
        match self.client.request(method, params).await {
            Ok(result) => Ok(Answer::Result(result)),
            Err(ClientError::Rpc(error)) => Ok(Answer::Error(
                serde_json::to_value(error).unwrap_or_else(|_| json!({})),
            )),
            Err(error) => Err(error).with_context(|| format!("`{method}`")),
        }
    }

    /// Every page of a list method (`tools/list`, ...): the items under `key`.
    pub(crate) async fn list_all(&self, method: &str, key: &str) -> anyhow::Result<Vec<Value>> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        // A server that keeps answering with a cursor is cut off rather than followed forever.
        for _ in 0..10_000 {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = match self.request(method, params).await? {
                Answer::Result(page) => page,
                Answer::Error(error) => anyhow::bail!("`{method}` failed: {error}"),
            };
            if let Some(Value::Array(page_items)) = page.get(key) {
                items.extend(page_items.iter().cloned());
            }
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok(items),
            }
        }
        anyhow::bail!("`{method}` kept paging past 10,000 pages")
    }

    /// Closes the session: an HTTP session is deleted; a child's stdin is closed and it gets
    /// two seconds to exit.
    pub(crate) async fn close(self) {
        let _ = self.client.close().await;
    }
}
