//! An MCP client for tests: drive a server in-process, with no process or port, or any server
//! over a pair of byte streams (a child process's stdout and stdin).
//!
//! The in-process client runs the real stdio transport over an in-memory pipe, so what a test
//! sees is exactly what a client on stdio would see.
//!
//! It is a harness for testing a server, not an application's client: it sends raw and
//! malformed lines, skips `initialize` or asks for any version string, picks its answers with a
//! plain closure, and shows every message the server sends that answered none of its requests,
//! in order ([`Client::next_message`]). To talk to a server as an application or a gateway does
//! (both eras chosen for you, HTTP, a child process, bounded buffers, cancellation), use
//! `mcp_runtime::client` (the `client` feature); the two share the 2026-07-28 envelope and the
//! `input_required` round.
//!
//! ```
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::testing::Client;
//! use serde_json::json;
//!
//! /// Add two integers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::connect(Server::builder().tool(add)).await?;
//! let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
//! assert_eq!(result.structured_content, Some(json!({"result": 5})));
//! # Ok(())
//! # }
//! ```
//!
//! [`assert_surface`] records what the server lists (tools, resources, templates, prompts) on
//! every protocol revision in a reviewed golden file, and fails with each change classified as
//! breaking or not when that changes: see [`surface`] for what is recorded, when it fails, and
//! the breaking-change policy.

pub mod surface;

pub use self::surface::{
    BreakingChanges, ChangeKind, IntoService, SURFACE_REVISIONS, SurfaceChange, SurfaceSnapshot,
    UPDATE_VAR, assert_surface, capture_surface, compare_surfaces, is_breaking_version_bump,
};

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::protocol::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, ErrorObject, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY,
    ProtocolVersion, RequestId, add_envelope, answer_input, input_requests,
};
use crate::server::{McpService, Server};
use crate::tool::CallToolResult;

/// What can go wrong talking to a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Rpc(ErrorObject),
    /// No answer arrived in time.
    #[error("no answer to `{0}` within the timeout")]
    Timeout(String),
    /// The connection is closed.
    #[error("the connection to the server is closed")]
    Closed,
    /// The server could not be built.
    #[error(transparent)]
    Build(#[from] crate::Error),
    /// An answer did not have the expected shape.
    #[error("unexpected answer: {0}")]
    Decode(String),
}

impl ClientError {
    /// The JSON-RPC error, when the server sent one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Self::Rpc(error) => Some(error),
            _ => None,
        }
    }
}

type Pending = Arc<Mutex<HashMap<RequestId, oneshot::Sender<Value>>>>;

/// How the test client answers the server's requests (`sampling/createMessage`,
/// `elicitation/create`, `roots/list`, `ping`): given the method and params, a result or an
/// error. Without one, the client answers `ping` and refuses everything else with -32601.
pub type RequestHandler = Arc<dyn Fn(&str, &Value) -> Result<Value, ErrorObject> + Send + Sync>;

/// How a [`Client`] connects: protocol revision, capabilities, timeout, and how it answers the
/// server's requests.
#[derive(Clone)]
pub struct ClientBuilder {
    protocol_version: String,
    capabilities: Value,
    client_info: Value,
    initialize: bool,
    timeout: Duration,
    on_request: Option<RequestHandler>,
    stateless: bool,
    log_level: Option<String>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("protocol_version", &self.protocol_version)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            protocol_version: ProtocolVersion::LATEST_HANDSHAKE.as_str().to_owned(),
            capabilities: json!({}),
            client_info: json!({"name": "mcp-runtime-test-client", "version": env!("CARGO_PKG_VERSION")}),
            initialize: true,
            timeout: Duration::from_secs(10),
            on_request: None,
            stateless: false,
            log_level: None,
        }
    }
}

impl ClientBuilder {
    /// The revision `initialize` asks for: a [`ProtocolVersion`] or any string.
    pub fn protocol_version(mut self, version: impl ToString) -> Self {
        self.protocol_version = version.to_string();
        self
    }

    /// The client capabilities `initialize` declares.
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Connects without sending `initialize` (to test what a server does before it).
    pub fn skip_initialize(mut self) -> Self {
        self.initialize = false;
        self
    }

    /// Speaks the stateless era (2026-07-28) instead of the handshake: no `initialize`; every
    /// request carries the `_meta` envelope (version, capabilities, client info); an
    /// `input_required` result is answered with the [`on_request`](Self::on_request) handler
    /// and retried with the answers and the echoed `requestState`, as a real client does.
    pub fn stateless(mut self) -> Self {
        self.stateless = true;
        self.initialize = false;
        self.protocol_version = ProtocolVersion::V2026_07_28.as_str().to_owned();
        self
    }

    /// In the stateless era, the `logLevel` every request's envelope asks for (none by default,
    /// which means no log notifications).
    pub fn log_level(mut self, level: impl Into<String>) -> Self {
        self.log_level = Some(level.into());
        self
    }

    /// Answers the server's requests with `handler` (a scripted client).
    pub fn on_request<F>(mut self, handler: F) -> Self
    where
        F: Fn(&str, &Value) -> Result<Value, ErrorObject> + Send + Sync + 'static,
    {
        self.on_request = Some(Arc::new(handler));
        self
    }

    /// How long to wait for any one answer (10 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Builds `server` and connects to it in-process.
    pub async fn connect(self, server: Server) -> Result<Client, ClientError> {
        let service = server.build()?;
        self.connect_service(&service).await
    }

    /// Connects in-process to a built service; each connection is a new session.
    pub async fn connect_service(self, service: &McpService) -> Result<Client, ClientError> {
        let (client_side, server_side) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_side);
        let service = service.clone();
        tokio::spawn(async move {
            if let Err(error) = service.serve_connection(server_read, server_write).await {
                tracing::debug!(%error, "in-process session ended with an error");
            }
        });
        let (client_read, client_write) = tokio::io::split(client_side);
        self.connect_io(client_read, client_write).await
    }

    /// Connects over a pair of byte streams with stdio framing, for example a child process's
    /// stdout and stdin.
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let pending: Pending = Arc::default();
        let (inbox_tx, inbox) = mpsc::unbounded_channel();
        let (outgoing, outbox) = mpsc::unbounded_channel::<Vec<u8>>();
        let handler = self
            .on_request
            .clone()
            .unwrap_or_else(|| Arc::new(default_answer));
        tokio::spawn(read_messages(
            reader,
            Arc::clone(&pending),
            inbox_tx,
            outgoing.downgrade(),
            Arc::clone(&handler),
        ));
        tokio::spawn(write_messages(writer, outbox));
        let envelope = self.stateless.then(|| {
            let mut meta = serde_json::Map::new();
            meta.insert(
                PROTOCOL_VERSION_KEY.into(),
                self.protocol_version.clone().into(),
            );
            meta.insert(CLIENT_CAPABILITIES_KEY.into(), self.capabilities.clone());
            meta.insert(CLIENT_INFO_KEY.into(), self.client_info.clone());
            if let Some(level) = &self.log_level {
                meta.insert(LOG_LEVEL_KEY.into(), Value::from(level.as_str()));
            }
            meta
        });
        let mut client = Client {
            outgoing,
            pending,
            inbox: tokio::sync::Mutex::new(inbox),
            next_id: AtomicI64::new(1),
            timeout: self.timeout,
            initialize_result: None,
            envelope,
            on_request: handler,
        };
        if self.initialize {
            let params = json!({
                "protocolVersion": self.protocol_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            });
            let result = client
                .request_with_id(RequestId::Number(0), "initialize", params)
                .await?;
            client.notify("notifications/initialized", json!({}))?;
            client.initialize_result = Some(result);
        }
        Ok(client)
    }
}

/// A connected MCP client for tests. Every wait is bounded by the builder's timeout.
pub struct Client {
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    pending: Pending,
    inbox: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    next_id: AtomicI64,
    timeout: Duration,
    initialize_result: Option<Value>,
    /// The stateless era's `_meta` envelope, added to every request.
    envelope: Option<serde_json::Map<String, Value>>,
    on_request: RequestHandler,
}

/// How many input-required rounds a stateless request may take before the client gives up.
const MAX_INPUT_ROUNDS: usize = 16;

impl Client {
    /// Builds `server` and connects in-process, initialized at the latest handshake revision.
    pub async fn connect(server: Server) -> Result<Self, ClientError> {
        ClientBuilder::default().connect(server).await
    }

    /// A builder to choose the revision, capabilities or timeout.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// What the server answered to `initialize`.
    pub fn initialize_result(&self) -> Option<&Value> {
        self.initialize_result.as_ref()
    }

    /// Sends a request and returns its whole response object (`{"jsonrpc", "id", "result"}` or
    /// `{..., "error"}`).
    pub async fn request_raw(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        self.exchange(id, method, params).await
    }

    /// Sends a request and returns its result, or the server's error as [`ClientError::Rpc`].
    ///
    /// In the stateless era an `input_required` result is answered (with the builder's
    /// [`on_request`](ClientBuilder::on_request) handler) and the request retried with a new id,
    /// until the server completes it.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let mut result = self.request_with_id(id, method, params.clone()).await?;
        if self.envelope.is_none() {
            return Ok(result);
        }
        for _ in 0..MAX_INPUT_ROUNDS {
            let Some(requests) = input_requests(&result) else {
                return Ok(result);
            };
            let mut responses = serde_json::Map::new();
            for (key, method, params) in requests {
                let answer =
                    (self.on_request)(&method, &Value::Object(params)).map_err(ClientError::Rpc)?;
                responses.insert(key, answer);
            }
            let mut retry = params.clone();
            if let Value::Object(retry) = &mut retry {
                answer_input(retry, responses, &result);
            }
            let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
            result = self.request_with_id(id, method, retry).await?;
        }
        Err(ClientError::Decode(format!(
            "`{method}` still needs input after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    /// Whether this client speaks the stateless era.
    pub fn is_stateless(&self) -> bool {
        self.envelope.is_some()
    }

    async fn request_with_id(
        &self,
        id: RequestId,
        method: &str,
        params: Value,
    ) -> Result<Value, ClientError> {
        let mut response = self.exchange(id, method, params).await?;
        if let Some(error) = response.get_mut("error") {
            let error: ErrorObject = serde_json::from_value(error.take())
                .map_err(|e| ClientError::Decode(e.to_string()))?;
            return Err(ClientError::Rpc(error));
        }
        response
            .get_mut("result")
            .map(Value::take)
            .ok_or_else(|| ClientError::Decode(response.to_string()))
    }

    async fn exchange(
        &self,
        id: RequestId,
        method: &str,
        params: Value,
    ) -> Result<Value, ClientError> {
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), tx);
        let params = self.enveloped(params);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(message.to_string())?;
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(_)) => Err(ClientError::Closed),
            Err(_) => {
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                Err(ClientError::Timeout(method.to_owned()))
            }
        }
    }

    /// Adds the stateless envelope to a request's `_meta`, keeping what the caller put there.
    fn enveloped(&self, mut params: Value) -> Value {
        let Some(envelope) = &self.envelope else {
            return params;
        };
        if let Value::Object(params) = &mut params {
            add_envelope(params, envelope);
        }
        params
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        self.send_line(json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string())
    }

    /// Sends one raw line, exactly as given (a newline is added).
    pub fn send_line(&self, line: impl Into<Vec<u8>>) -> Result<(), ClientError> {
        self.outgoing
            .send(line.into())
            .map_err(|_| ClientError::Closed)
    }

    /// The next message that answered no request of this client's: notifications, requests from
    /// the server, errors without an id, batch responses.
    pub async fn next_message(&self) -> Result<Value, ClientError> {
        let mut inbox = self.inbox.lock().await;
        match tokio::time::timeout(self.timeout, inbox.recv()).await {
            Ok(Some(message)) => Ok(message),
            Ok(None) => Err(ClientError::Closed),
            Err(_) => Err(ClientError::Timeout("the next message".to_owned())),
        }
    }

    /// Sends a raw line that expects one answer, and returns the next message not routed to a
    /// request: for malformed input, whose errors carry no usable id.
    pub async fn send_line_and_receive(
        &self,
        line: impl Into<Vec<u8>>,
    ) -> Result<Value, ClientError> {
        self.send_line(line)?;
        self.next_message().await
    }

    /// `tools/list`: the tools.
    pub async fn list_tools(&self) -> Result<Vec<Value>, ClientError> {
        let mut result = self.request("tools/list", json!({})).await?;
        match result.get_mut("tools").map(Value::take) {
            Some(Value::Array(tools)) => Ok(tools),
            _ => Err(ClientError::Decode(result.to_string())),
        }
    }

    /// `tools/call`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        let result = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        serde_json::from_value(result).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// Closes the connection: the server sees the end of its input.
    pub fn close(self) {}
}

fn default_answer(method: &str, _: &Value) -> Result<Value, ErrorObject> {
    match method {
        "ping" => Ok(json!({})),
        other => Err(ErrorObject::method_not_found(other)),
    }
}

async fn read_messages<R: AsyncRead + Unpin>(
    reader: R,
    pending: Pending,
    inbox: mpsc::UnboundedSender<Value>,
    outgoing: mpsc::WeakUnboundedSender<Vec<u8>>,
    handler: RequestHandler,
) {
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(_) => Value::String(line),
        };
        // A request from the server: answer it, and let the test see it too.
        let method = message.get("method").and_then(Value::as_str);
        if let (Some(method), Some(id)) = (method, message.get("id")) {
            let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
            let reply = match handler(method, &params) {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            // Weak, so that dropping the client still closes the connection.
            if let Some(outgoing) = outgoing.upgrade() {
                let _ = outgoing.send(reply.to_string().into_bytes());
            }
            let _ = inbox.send(message);
            continue;
        }
        let is_response = message.get("result").is_some() || message.get("error").is_some();
        let waiter = message
            .get("id")
            .filter(|_| is_response)
            .and_then(RequestId::from_json)
            .and_then(|id| {
                pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id)
            });
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(message);
            }
            None => {
                let _ = inbox.send(message);
            }
        }
    }
    // Dropping the waiters tells every pending request that the connection closed.
    pending.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

async fn write_messages<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut outbox: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(mut line) = outbox.recv().await {
        line.push(b'\n');
        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}
