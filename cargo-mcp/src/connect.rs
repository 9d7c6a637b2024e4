//! The one MCP client interface the jobs use: connect (a child process over stdio, or a URL),
//! read what `initialize` said, send a request, close.
//!
//! Behind it is the runtime's own client, not a second one written here: today
//! `mcp_runtime::testing::Client` over the child's pipes (the same stdio framing and
//! `initialize` the runtime's tests use). Streamable HTTP (`--http URL`) needs the runtime's
//! general client module, which is not in this version of `mcp-runtime`; until it is, `--http`
//! says so and exits instead of speaking HTTP through a copy of a client.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use mcp_runtime::testing::{Client, ClientError};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// How long a server gets to exit once its input is closed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// A connected, initialized MCP session.
pub(crate) struct Connection {
    client: Client,
    /// The server process, when this connection started it.
    child: Option<Child>,
}

/// An answer, or the server's JSON-RPC error kept apart from failures to talk at all.
pub(crate) enum Answer {
    Result(Value),
    Error(Value),
}

impl Connection {
    /// Starts `program` with `args` and initializes over its stdin and stdout; its stderr (the
    /// server's logs) goes to ours.
    pub(crate) async fn stdio(
        program: &Path,
        args: &[String],
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", program.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("the server's stdin and stdout could not be opened");
        };
        let client = Client::builder()
            .timeout(timeout)
            .connect_io(stdout, stdin)
            .await
            .with_context(|| format!("initializing {}", program.display()))?;
        Ok(Self {
            client,
            child: Some(child),
        })
    }

    /// Connects to a running server over Streamable HTTP.
    pub(crate) async fn http(
        url: &str,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let _ = (headers, timeout);
        bail!(
            "`--http {url}`: this build of cargo mcp has no Streamable HTTP client yet (it comes \
             with mcp-runtime's client module); inspect the crate's own binary over stdio instead"
        )
    }

    /// The `initialize` result: `serverInfo`, `capabilities`, `instructions`.
    pub(crate) fn initialize_result(&self) -> Value {
        self.client
            .initialize_result()
            .cloned()
            .unwrap_or_else(|| json!({}))
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
                Answer::Error(error) => bail!("`{method}` failed: {error}"),
            };
            if let Some(Value::Array(page_items)) = page.get(key) {
                items.extend(page_items.iter().cloned());
            }
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok(items),
            }
        }
        bail!("`{method}` kept paging past 10,000 pages")
    }

    /// Closes the session: the server's input ends, and it gets a few seconds to exit.
    pub(crate) async fn close(self) {
        let Self { client, child } = self;
        client.close();
        if let Some(mut child) = child
            && tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
    }
}
