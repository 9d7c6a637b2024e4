//! An MCP client: talk to another MCP server (an upstream) over stdio or Streamable HTTP, in
//! either protocol era. Enable the `client` feature.
//!
//! ```no_run
//! use mcp_runtime::client::{Client, StdioCommand};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_runtime::client::ClientError> {
//! // A server run as a child process (killed when the client is dropped)...
//! let time = Client::builder()
//!     .stdio(StdioCommand::new("uvx").arg("mcp-server-time"))
//!     .await?;
//! for tool in time.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let now = time
//!     .call_tool("get_current_time", json!({"timezone": "Europe/Paris"}))
//!     .await?;
//! println!("{}", now.text());
//!
//! // ...or one reached over HTTP, with a bearer token.
//! let remote = Client::builder()
//!     .bearer_token("s3cret")
//!     .http("https://mcp.example.com/mcp")
//!     .await?;
//! println!("speaking {}", remote.protocol_version());
//! # Ok(())
//! # }
//! ```
//!
//! # Transports
//!
//! - **stdio** ([`ClientBuilder::stdio`]): the server is a child process speaking
//!   newline-delimited JSON-RPC on its stdin and stdout. Its stderr is passed through, captured
//!   ([`Stderr::Capture`], then [`Client::stderr_tail`]) or discarded. The child is killed when
//!   the last clone of the [`Client`] is dropped; [`Client::close`] closes its stdin first and
//!   gives it two seconds to exit. When its stdout ends (it exited or crashed) every request in
//!   flight, and every later one, fails with [`ClientError::Closed`] naming its exit status.
//!   [`ClientBuilder::io`] speaks the same framing over any pair of byte streams.
//! - **Streamable HTTP** ([`ClientBuilder::http`], `https://` over rustls): each message is a
//!   POST accepting JSON or an SSE stream. In the handshake era the client keeps the
//!   `Mcp-Session-Id` the server assigns and sends `MCP-Protocol-Version` after `initialize`,
//!   opens the standalone GET stream (reopened with `Last-Event-ID` and backoff while the
//!   client lives; a 409 or 429, a stream still counted open or no room just now, is tried again
//!   after the backoff; a 405 means the server has none), resumes a response stream that broke
//!   before its answer with `Last-Event-ID` where the server numbers its events (up to 5 times),
//!   and DELETEs the session on [`Client::close`] (and, best effort, on drop). A 404 to a
//!   request carrying the session id is [`ClientError::SessionExpired`]. In 2026-07-28 there is
//!   no session: every POST carries `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
//!   `Mcp-Param-*` headers of the tool's `x-mcp-header` arguments (known from the last
//!   [`Client::list_tools`]), non-ASCII values in the `=?base64?…?=` form.
//!   [`ClientBuilder::header`] and [`ClientBuilder::bearer_token`] add headers to every request.
//!
//! # Eras
//!
//! [`Era::Auto`] (the default) chooses by the rule of the spec's backward-compatibility
//! section, as the official Python SDK's client does: it sends `server/discover` with the
//! 2026-07-28 envelope, and speaks 2026-07-28 when the answer is a discover result listing that
//! revision. Any other answer (an error of any kind, an HTTP error) or none within
//! [`ClientBuilder::probe_timeout`] (5 s) means a handshake-era server, and the client sends
//! `initialize` asking for 2025-11-25, accepting any handshake revision the server answers
//! with (2024-11-05 .. 2025-11-25), then `notifications/initialized`. (Should `initialize` be
//! refused with -32022 listing 2026-07-28, the probe's answer came late to a stdio server that
//! its first request set to 2026-07-28, and the client probes again.) [`Era::Handshake`] skips
//! the probe and asks for the given revision; [`Era::Stateless`] requires 2026-07-28.
//!
//! The caller sees one API either way:
//!
//! | | handshake era | 2026-07-28 |
//! |---|---|---|
//! | client capabilities, client info | `initialize` | every request's `_meta` envelope |
//! | sampling, elicitation, roots | JSON-RPC requests to the handler | `input_required` results: the input requests of a round answered together by the same handler ([`ClientHandler::input`], with each request's key), the request retried (new id, `inputResponses`, the echoed `requestState`) until it completes, at most 16 rounds of at most 64 requests |
//! | list_changed | sent by the server | a `subscriptions/listen` the client opens at connect for the kinds the server advertises ([`ClientBuilder::listen_for_list_changes`]) |
//! | [`Client::subscribe`] | `resources/subscribe` | a `subscriptions/listen` for that URI, ended by [`Client::unsubscribe`] |
//! | [`Client::set_level`] | `logging/setLevel` | the `logLevel` of every later request's envelope |
//! | [`Client::ping`] | `ping` | [`ClientError::NotInEra`] |
//! | cancellation | `notifications/cancelled` | stdio: `notifications/cancelled`; HTTP: the request's stream is closed |
//!
//! # Requests
//!
//! Typed helpers cover the protocol ([`Client::list_tools`], [`Client::call_tool`],
//! [`Client::read_resource`], [`Client::get_prompt`], [`Client::complete`], ...); lists follow
//! `nextCursor` to the end, at most [`ClientBuilder::max_list_pages`] pages.
//! [`Client::request`] sends anything else. The `_with` forms take [`RequestOptions`]: a
//! timeout for that request, a progress callback (the client adds a `progressToken` and routes
//! that request's `notifications/progress` to it), and `_meta` to add.
//!
//! Every request has a timeout (60 s by default, [`ClientBuilder::timeout`]; in 2026-07-28 per
//! round of an `input_required` exchange). Dropping a request's future, or its timeout, gives
//! it up: the client forgets it and tells the server (`notifications/cancelled`, or closing the
//! HTTP stream in 2026-07-28), and an answer that comes later is discarded.
//!
//! # The server's requests and notifications
//!
//! A [`ClientHandler`] (a type of yours, or [`FnHandler`] made of closures) answers the server's
//! `sampling/createMessage`, `elicitation/create` and `roots/list` (`ping` is answered by the
//! client), each in a task of its own, and receives notifications ([`Notification`]: logging,
//! list changes, resource updates, tasks, progress of no request of this client), one at a time
//! and in order. A `notifications/cancelled` from the server for one of its requests aborts the
//! handler's task. The handler's [`capabilities`](ClientHandler::capabilities) are what the
//! client declares.
//!
//! An answer does not wait for the notifications sent before it, which reach the handler from
//! the queue: [`Client::notifications_handled`] waits for those. [`Client::closed`] completes
//! when a child process's connection ends.
//!
//! A request may bring its own handler ([`RequestOptions::handler`]): it answers that request's
//! 2026-07-28 input requests, and over HTTP the server's requests and notifications that arrive
//! on that request's own response stream, so a gateway can relay them to the downstream client
//! whose call caused them. Over stdio in the handshake era nothing on the wire ties a server's
//! request to one of ours, and those go to the client's handler.
//!
//! # Limits
//!
//! Nothing an upstream sends grows the client's memory without bound: a flooding upstream loses
//! its own notifications, never the client's memory.
//!
//! | limit | default | past it |
//! |---|---|---|
//! | [`ClientBuilder::max_message_size`] | 16 MiB a line, JSON body or SSE event | skipped (logged); when its request id can be read (stdio) that request fails |
//! | JSON nesting | 128 levels | the message is dropped (logged) |
//! | [`ClientBuilder::notification_queue`] | 1,024 notifications and 16 MiB of them waiting for the handler | the newest are dropped and counted ([`Client::dropped_notifications`]); one warning per burst |
//! | progress | none queued: the callback runs as each arrives | — |
//! | [`ClientBuilder::max_in_flight`] | 256 requests of this client at once | the next request waits for one to end |
//! | [`ClientBuilder::max_server_requests`] | 64 requests of the server being answered at once | answered at once with -32000 |
//! | write queue (stdio) | 256 messages | the sender waits; a cancellation that finds it full is dropped |
//! | [`ClientBuilder::max_list_pages`] | 64 pages a list | [`ClientError::Limit`] |
//! | [`ClientBuilder::max_input_rounds`] | 16 `input_required` rounds a request | [`ClientError::Limit`] |
//! | [`ClientBuilder::max_subscriptions`] | 64 resource subscriptions (in 2026-07-28 each a listen stream) | [`ClientError::Limit`] |
//! | captured stderr ([`Stderr::Capture`]) | the last 64 KiB | older lines are dropped |
//! | quoted HTTP error body | 512 characters | cut |
//! | SSE resumption | 5 tries a response stream; the standalone stream backs off from 1 s to 30 s | the request fails with [`ClientError::Transport`] |
//!
//! So a client's own buffers hold at most the notification queue (16 MiB), one message being
//! read per stream (16 MiB each) and the answers of its requests in flight, which are the
//! caller's.
//!
//! # Where it sits
//!
//! Beside the server: it may import the items' result types, `context` and `protocol`, and never
//! the server; the gateway imports it, the server and the transports do not.

mod connection;
mod error;
mod handler;
mod http;
mod stdio;
mod types;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::AbortHandle;

use self::connection::{Call, Core, Limits, ProgressFn, Transport, lock};
use self::http::{HttpTarget, HttpTransport};
use self::stdio::LineTransport;
use crate::prompt::GetPromptResult;
use crate::protocol::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, ClientCapabilities, Implementation, LOG_LEVEL_KEY,
    LoggingLevel, PROTOCOL_VERSION_KEY, ProtocolVersion, SERVER_INFO_KEY, ServerCapabilities,
    add_envelope, answer_input, input_requests,
};
use crate::resource::ResourceInfo;
use crate::tool::CallToolResult;

pub use self::error::ClientError;
pub use self::handler::{ClientHandler, FnHandler};
pub use self::stdio::{Stderr, StdioCommand};
pub use self::types::{
    Completion, CompletionRef, Era, Listen, Notification, Progress, Prompt, ReadResourceResult,
    ResourceTemplate, ServerInfo, Tool,
};

/// How a [`Client`] connects: era, identity, handler, timeouts, bounds and HTTP headers.
#[derive(Clone)]
pub struct ClientBuilder {
    era: Era,
    client_info: Implementation,
    capabilities: Option<ClientCapabilities>,
    handler: Arc<dyn ClientHandler>,
    timeout: Duration,
    probe_timeout: Duration,
    limits: Limits,
    max_list_pages: usize,
    max_input_rounds: usize,
    max_subscriptions: usize,
    listen_for_list_changes: bool,
    headers: Vec<(String, String)>,
    bearer: Option<String>,
    connect_timeout: Duration,
    unix_socket: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("era", &self.era)
            .field("client_info", &self.client_info)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            era: Era::Auto,
            client_info: Implementation::new("mcp-runtime-client", env!("CARGO_PKG_VERSION")),
            capabilities: None,
            handler: Arc::new(handler::NoHandler),
            timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(5),
            limits: Limits::default(),
            max_list_pages: 64,
            max_input_rounds: 16,
            max_subscriptions: 64,
            listen_for_list_changes: true,
            headers: Vec::new(),
            bearer: None,
            connect_timeout: Duration::from_secs(10),
            unix_socket: None,
        }
    }
}

impl ClientBuilder {
    /// Which era to speak ([`Era::Auto`] by default).
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// Who the client says it is (`clientInfo`).
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.client_info = info;
        self
    }

    /// The capabilities to declare, instead of the handler's.
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Answers the server's requests and receives its notifications with `handler`.
    pub fn handler(mut self, handler: impl ClientHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// How long a request waits for its answer unless its [`RequestOptions`] say otherwise
    /// (60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long [`Era::Auto`] waits for the answer to its `server/discover` probe before it
    /// takes the server for a handshake-era one (5 s).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// The largest message read from the server: a line, a JSON body or an SSE event (16 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.limits.max_message_size = bytes;
        self
    }

    /// How many requests of this client may be in flight at once (256); more wait.
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.limits.max_in_flight = requests;
        self
    }

    /// How many requests of the server may be answered at once (64); more are refused.
    pub fn max_server_requests(mut self, requests: usize) -> Self {
        self.limits.max_server_requests = requests;
        self
    }

    /// How many notifications, and how many bytes of them, may wait for the handler (1,024 and
    /// 16 MiB); the newest are dropped past either.
    pub fn notification_queue(mut self, notifications: usize, bytes: usize) -> Self {
        self.limits.notification_queue = notifications;
        self.limits.notification_queue_bytes = bytes;
        self
    }

    /// How many pages a list follows (64).
    pub fn max_list_pages(mut self, pages: usize) -> Self {
        self.max_list_pages = pages;
        self
    }

    /// How many `input_required` rounds a 2026-07-28 request may take (16).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// How many resources may be subscribed at once (64).
    pub fn max_subscriptions(mut self, subscriptions: usize) -> Self {
        self.max_subscriptions = subscriptions;
        self
    }

    /// Whether a 2026-07-28 connection opens a `subscriptions/listen` for the `list_changed`
    /// notifications the server advertises when it connects, so they arrive as in the handshake
    /// era (on by default).
    pub fn listen_for_list_changes(mut self, listen: bool) -> Self {
        self.listen_for_list_changes = listen;
        self
    }

    /// Adds a header to every HTTP request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends `Authorization: Bearer {token}` with every HTTP request.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// How long an HTTP connection may take to open (10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sends every HTTP request through the Unix domain socket at `path` instead of TCP: the
    /// URL given to [`http`](Self::http) names only the endpoint's path (and the `Host` sent),
    /// as in `http://localhost/mcp`. For a server started with
    /// [`McpService::serve_unix`](crate::McpService::serve_unix).
    #[cfg(unix)]
    pub fn unix_socket(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.unix_socket = Some(path.into());
        self
    }

    /// Starts `command` and connects to it over its stdio.
    pub async fn stdio(self, command: StdioCommand) -> Result<Client, ClientError> {
        let core = Core::new(Arc::clone(&self.handler), self.limits.clone());
        let transport: Arc<dyn Transport> = LineTransport::spawn(&core, &command)?;
        self.open(core, transport).await
    }

    /// Connects to a Streamable HTTP endpoint (`http://` or `https://`).
    pub async fn http(self, url: impl Into<String>) -> Result<Client, ClientError> {
        let core = Core::new(Arc::clone(&self.handler), self.limits.clone());
        let target = HttpTarget {
            url: url.into(),
            headers: self.headers.clone(),
            bearer: self.bearer.clone(),
            connect_timeout: self.connect_timeout,
            unix_socket: self.unix_socket.clone(),
        };
        let transport: Arc<dyn Transport> = HttpTransport::new(&core, &target)?;
        self.open(core, transport).await
    }

    /// Connects over a pair of byte streams with stdio framing (a socket, an in-memory pipe).
    pub async fn io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let core = Core::new(Arc::clone(&self.handler), self.limits.clone());
        let transport: Arc<dyn Transport> = LineTransport::io(&core, reader, writer);
        self.open(core, transport).await
    }

    async fn open(
        self,
        core: Arc<Core>,
        transport: Arc<dyn Transport>,
    ) -> Result<Client, ClientError> {
        core.set_transport(Arc::clone(&transport));
        let capabilities = self
            .capabilities
            .clone()
            .unwrap_or_else(|| self.handler.capabilities());
        let mut inner = Inner {
            core,
            info: ServerInfo {
                protocol_version: ProtocolVersion::LATEST,
                implementation: None,
                capabilities: ServerCapabilities::default(),
                instructions: None,
                raw: Value::Null,
            },
            capabilities,
            client_info: self.client_info.clone(),
            log_level: Mutex::new(None),
            tool_headers: Mutex::default(),
            subscriptions: Mutex::default(),
            list_listen: Mutex::new(None),
            settings: Settings {
                timeout: self.timeout,
                max_list_pages: self.max_list_pages,
                max_input_rounds: self.max_input_rounds,
                max_subscriptions: self.max_subscriptions,
            },
        };
        let info = match self.era {
            Era::Auto => match inner.discover(self.probe_timeout).await? {
                Some(info) => info,
                None => match inner.initialize(ProtocolVersion::LATEST_HANDSHAKE).await {
                    // The probe's answer came after its timeout, and the server (a stdio
                    // one, whose first request fixes its era) now speaks 2026-07-28 only.
                    Err(ClientError::Rpc(error)) if offers_stateless(&error) => {
                        inner.discover(self.timeout).await?.ok_or_else(|| {
                            ClientError::UnsupportedVersion(error.message.to_string())
                        })?
                    }
                    outcome => outcome?,
                },
            },
            Era::Handshake(version) => inner.initialize(version).await?,
            Era::Stateless => inner.discover(self.timeout).await?.ok_or_else(|| {
                ClientError::UnsupportedVersion("the server does not list 2026-07-28".into())
            })?,
        };
        let stateless = !info.protocol_version.has_handshake();
        inner.info = info;
        let client = Client {
            inner: Arc::new(inner),
        };
        if stateless && self.listen_for_list_changes {
            let caps = &client.inner.info.capabilities;
            let listen = Listen {
                tools_list_changed: caps.tools.is_some_and(|c| c.list_changed),
                prompts_list_changed: caps.prompts.is_some_and(|c| c.list_changed),
                resources_list_changed: caps.resources.is_some_and(|c| c.list_changed),
                resource_subscriptions: Vec::new(),
            };
            if listen != Listen::default() {
                let subscription = client.listen(listen).await?;
                *lock(&client.inner.list_listen) = Some(subscription);
            }
        }
        Ok(client)
    }
}

/// An argument a tool's schema marks with `x-mcp-header`: the header's name, and the
/// argument's path through `properties`.
type HeaderParam = (String, Vec<String>);

/// What a bounded listing read ([`Client::list_pages`]).
pub(crate) struct BoundedList<T> {
    pub(crate) items: Vec<T>,
    /// Why items were left out (the first few).
    pub(crate) malformed: Vec<String>,
    /// How many items did not decode.
    pub(crate) left_out: usize,
    /// The server had more than were read.
    pub(crate) more: bool,
}

#[derive(Debug, Clone, Copy)]
struct Settings {
    timeout: Duration,
    max_list_pages: usize,
    max_input_rounds: usize,
    max_subscriptions: usize,
}

struct Inner {
    core: Arc<Core>,
    info: ServerInfo,
    capabilities: ClientCapabilities,
    client_info: Implementation,
    log_level: Mutex<Option<LoggingLevel>>,
    /// The `x-mcp-header` arguments of each tool: header name and the argument's path.
    tool_headers: Mutex<HashMap<String, Vec<HeaderParam>>>,
    subscriptions: Mutex<HashMap<String, Subscription>>,
    list_listen: Mutex<Option<Subscription>>,
    settings: Settings,
}

impl Inner {
    fn stateless(&self) -> bool {
        !self.info.protocol_version.has_handshake()
    }

    /// The 2026-07-28 probe: `Some` when the server speaks it.
    async fn discover(&self, timeout: Duration) -> Result<Option<ServerInfo>, ClientError> {
        let transport = self.core.transport()?;
        transport.set_protocol_version(Some(ProtocolVersion::V2026_07_28));
        self.core.set_stateless(true);
        let params = self.envelope(Map::new(), true);
        let headers = stateless_headers("server/discover", &params, None);
        let result = self
            .core
            .call(
                "server/discover",
                params,
                Call {
                    headers,
                    ..Call::new(timeout)
                },
            )
            .await;
        let supported = result.as_ref().ok().and_then(|result| {
            let versions = result.get("supportedVersions")?.as_array()?;
            versions
                .iter()
                .any(|v| v.as_str() == Some(ProtocolVersion::V2026_07_28.as_str()))
                .then_some(())
        });
        match (result, supported) {
            (Ok(result), Some(())) => Ok(Some(ServerInfo {
                protocol_version: ProtocolVersion::V2026_07_28,
                implementation: result
                    .get("_meta")
                    .and_then(|meta| meta.get(SERVER_INFO_KEY))
                    .and_then(|info| serde_json::from_value(info.clone()).ok()),
                capabilities: field(&result, "capabilities")?.unwrap_or_default(),
                instructions: field(&result, "instructions")?,
                raw: result,
            })),
            (outcome, _) => {
                transport.set_protocol_version(None);
                self.core.set_stateless(false);
                if let Err(error) = &outcome {
                    tracing::debug!(%error, "no 2026-07-28 `server/discover`: the handshake era");
                }
                match outcome {
                    Err(error) if error.is_disconnect() => Err(error),
                    _ => Ok(None),
                }
            }
        }
    }

    async fn initialize(&self, version: ProtocolVersion) -> Result<ServerInfo, ClientError> {
        if !version.has_handshake() {
            return Err(ClientError::UnsupportedVersion(format!(
                "{version} has no `initialize`: use Era::Stateless"
            )));
        }
        let params = json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.capabilities,
            "clientInfo": self.client_info.for_version(version),
        });
        let Value::Object(params) = params else {
            unreachable!("a json! object is an object")
        };
        let result = self
            .core
            .call("initialize", params, Call::new(self.settings.timeout))
            .await?;
        let agreed = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(agreed) = ProtocolVersion::parse(agreed).filter(|v| v.has_handshake()) else {
            return Err(ClientError::UnsupportedVersion(format!(
                "the server answered `initialize` with `{agreed}`"
            )));
        };
        let transport = self.core.transport()?;
        transport.set_protocol_version(Some(agreed));
        self.core.notify("notifications/initialized", None).await?;
        transport.opened();
        Ok(ServerInfo {
            protocol_version: agreed,
            implementation: field(&result, "serverInfo")?,
            capabilities: field(&result, "capabilities")?.unwrap_or_default(),
            instructions: field(&result, "instructions")?,
            raw: result,
        })
    }

    /// Adds the 2026-07-28 envelope to a request's `_meta`, keeping what is there.
    fn envelope(&self, mut params: Map<String, Value>, stateless: bool) -> Map<String, Value> {
        if !stateless {
            return params;
        }
        let mut envelope = Map::new();
        envelope.insert(
            PROTOCOL_VERSION_KEY.into(),
            ProtocolVersion::V2026_07_28.as_str().into(),
        );
        envelope.insert(CLIENT_CAPABILITIES_KEY.into(), json!(self.capabilities));
        envelope.insert(
            CLIENT_INFO_KEY.into(),
            self.client_info.for_version(ProtocolVersion::V2026_07_28),
        );
        if let Some(level) = *lock(&self.log_level) {
            envelope.insert(LOG_LEVEL_KEY.into(), level.as_str().into());
        }
        add_envelope(&mut params, &envelope);
        params
    }

    /// One request, with the era's envelope and headers; in 2026-07-28 its `input_required`
    /// rounds are answered by the handler and retried.
    async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let stateless = self.stateless();
        let timeout = options.timeout.unwrap_or(self.settings.timeout);
        let mut params = params;
        if let Some(extra) = &options.meta
            && let Value::Object(meta) = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()))
        {
            meta.extend(extra.clone());
        }
        for _ in 0..=self.settings.max_input_rounds {
            let enveloped = self.envelope(params.clone(), stateless);
            let headers = if stateless {
                let tools = lock(&self.tool_headers);
                let params_headers = if method == "tools/call" {
                    enveloped
                        .get("name")
                        .and_then(Value::as_str)
                        .and_then(|name| tools.get(name))
                } else {
                    None
                };
                stateless_headers(method, &enveloped, params_headers)
            } else {
                Vec::new()
            };
            let result = self
                .core
                .call(
                    method,
                    enveloped,
                    Call {
                        id: None,
                        headers,
                        progress: options.progress.clone(),
                        handler: options.handler.clone(),
                        timeout,
                    },
                )
                .await?;
            let requests = match input_requests(&result) {
                Some(requests) if stateless => requests,
                _ => return Ok(result),
            };
            if requests.len() > MAX_INPUT_REQUESTS {
                return Err(ClientError::Limit(format!(
                    "`{method}` asks {} questions at once (at most {MAX_INPUT_REQUESTS})",
                    requests.len()
                )));
            }
            // All at once: a gateway relays them to its own client in one round.
            let handler = options.handler.as_ref().unwrap_or(self.core.handler());
            let answering: Vec<_> = requests
                .into_iter()
                .map(|(key, method, params)| {
                    let answer = handler.input(key.clone(), method, params);
                    (key, answer)
                })
                .collect();
            let mut responses = Map::new();
            for (key, answer) in join_all(answering).await {
                responses.insert(key, answer.map_err(ClientError::Rpc)?);
            }
            answer_input(&mut params, responses, &result);
        }
        Err(ClientError::Limit(format!(
            "`{method}` still needs input after {} rounds",
            self.settings.max_input_rounds
        )))
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Nothing waits on a dropped client: the transport goes with the core (a child is
        // killed, an HTTP session deleted), and the listen streams with their subscriptions.
        lock(&self.subscriptions).clear();
        lock(&self.list_listen).take();
    }
}

/// A connected MCP client. Cheap to clone (clones share the connection); the connection ends
/// when the last clone is dropped, or at [`close`](Client::close).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("protocol_version", &self.inner.info.protocol_version)
            .field("server", &self.inner.info.implementation)
            .finish_non_exhaustive()
    }
}

/// Options of one request: its timeout, a progress callback, `_meta` to add.
#[derive(Clone, Default)]
pub struct RequestOptions {
    timeout: Option<Duration>,
    progress: Option<ProgressFn>,
    meta: Option<Map<String, Value>>,
    handler: Option<Arc<dyn ClientHandler>>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("meta", &self.meta)
            .field("handler", &self.handler.is_some())
            .finish()
    }
}

impl RequestOptions {
    /// No options: the client's timeout, no progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long this request waits for its answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks for progress (a `progressToken` in `_meta`) and calls `f` with each
    /// `notifications/progress` for this request, as it arrives. `f` runs on the task reading
    /// the connection: it must not block (hand the progress to a channel of yours for slow
    /// work).
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Answers what the server asks for this request with `handler` instead of the client's:
    /// the input requests of its 2026-07-28 `input_required` rounds, and, over HTTP, the
    /// server's requests and notifications that arrive on this request's own response stream.
    /// (Over stdio in the handshake era nothing ties a server's request to one of ours: those
    /// go to the client's handler.) A gateway relays them to the downstream client of the call
    /// this way; [`capabilities`](ClientHandler::capabilities) stays the client's.
    pub fn handler(mut self, handler: impl ClientHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// Adds these keys to the request's `_meta` (a trace context, say).
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// A `subscriptions/listen` stream (2026-07-28): notifications arrive at the handler while it
/// lives; dropping it ends the stream.
#[derive(Debug)]
pub struct Subscription {
    task: AbortHandle,
    acknowledged: Map<String, Value>,
}

impl Subscription {
    /// What the server agreed to send (`notifications` of its acknowledgement).
    pub fn acknowledged(&self) -> &Map<String, Value> {
        &self.acknowledged
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Client {
    /// A builder: era, handler, timeouts, bounds, headers.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// What was agreed when the connection opened: revision, server, capabilities.
    pub fn server_info(&self) -> &ServerInfo {
        &self.inner.info
    }

    /// The revision spoken.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.info.protocol_version
    }

    /// Whether this connection speaks 2026-07-28.
    pub fn is_stateless(&self) -> bool {
        self.inner.stateless()
    }

    /// Why the connection is closed, or `None` while it is open.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.core.closed_reason()
    }

    /// Completes when the connection ends: the child process exited or its stdout closed,
    /// or the client was [`close`](Self::close)d. (An HTTP connection has no end of its own:
    /// its failures are errors of the requests that meet them.)
    pub async fn closed(&self) {
        let mut ended = self.inner.core.ended();
        let _ = ended.wait_for(|ended| *ended).await;
    }

    /// Completes once every notification received so far has been handed to its handler.
    /// An answer does not wait for the notifications the server sent before it (they go to the
    /// handler one at a time, from a queue), so a caller that must see them first (a gateway
    /// relays a call's log messages before its result) awaits this once the answer is in.
    pub async fn notifications_handled(&self) {
        self.inner.core.drained().await;
    }

    /// How many notifications were dropped because the handler did not keep up.
    pub fn dropped_notifications(&self) -> u64 {
        self.inner.core.dropped_notifications()
    }

    /// The last lines of a child's stderr, when it is captured ([`Stderr::Capture`]).
    pub fn stderr_tail(&self) -> Option<String> {
        self.inner.core.transport().ok()?.stderr_tail()
    }

    /// Sends a request and returns its result (for methods with no typed helper).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_with(method, params, &RequestOptions::default())
            .await
    }

    /// Sends a request with options.
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let params = match params {
            Value::Object(params) => params,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::Decode(format!(
                    "request params must be an object, not {other}"
                )));
            }
        };
        self.inner.request(method, params, options).await
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        let params = (!params.is_null()).then_some(params);
        self.inner.core.notify(method, params.as_ref()).await
    }

    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<T, ClientError> {
        let result = self.request_with(method, params, options).await?;
        serde_json::from_value(result).map_err(|e| ClientError::Decode(format!("{method}: {e}")))
    }

    /// Every item of a list, following `nextCursor`.
    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Vec<T>, ClientError> {
        let listed = self.list_pages(method, key, usize::MAX, false).await?;
        if listed.more {
            return Err(ClientError::Limit(format!(
                "`{method}` has more than {} pages",
                self.inner.settings.max_list_pages
            )));
        }
        Ok(listed.items)
    }

    /// The items of a list, following `nextCursor` until `max` are read or the pages run out
    /// ([`ClientBuilder::max_list_pages`]); `more` says whether the server had more. A strict
    /// listing fails on an item that does not decode; a lenient one leaves it out and says why
    /// in `malformed` (the first few reasons).
    pub(crate) async fn list_pages<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        max: usize,
        lenient: bool,
    ) -> Result<BoundedList<T>, ClientError> {
        let mut listed = BoundedList {
            items: Vec::new(),
            malformed: Vec::new(),
            left_out: 0,
            more: false,
        };
        let mut cursor: Option<String> = None;
        for _ in 0..self.inner.settings.max_list_pages {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let mut page = self.request(method, params).await?;
            let Some(Value::Array(page_items)) = page.get_mut(key).map(Value::take) else {
                return Err(ClientError::Decode(format!(
                    "`{method}` has no `{key}` array"
                )));
            };
            for item in page_items {
                if listed.items.len() >= max {
                    listed.more = true;
                    return Ok(listed);
                }
                match serde_json::from_value(item) {
                    Ok(item) => listed.items.push(item),
                    Err(error) if lenient => {
                        listed.left_out += 1;
                        if listed.malformed.len() < 8 {
                            listed.malformed.push(error.to_string());
                        }
                    }
                    Err(error) => {
                        return Err(ClientError::Decode(format!(
                            "an item of `{method}`: {error}"
                        )));
                    }
                }
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
                _ => return Ok(listed),
            }
        }
        listed.more = true;
        Ok(listed)
    }

    /// `tools/list` as the gateway lists an upstream: at most `max` tools, leniently
    /// ([`Client::list_pages`]); the tools' header parameters are kept as
    /// [`Client::list_tools`] keeps them.
    pub(crate) async fn list_tools_up_to(
        &self,
        max: usize,
    ) -> Result<BoundedList<Tool>, ClientError> {
        let listed: BoundedList<Tool> = self.list_pages("tools/list", "tools", max, true).await?;
        self.keep_tool_headers(&listed.items);
        Ok(listed)
    }

    fn keep_tool_headers(&self, tools: &[Tool]) {
        let headers = tools
            .iter()
            .filter_map(|tool| {
                let params = header_params(&tool.input_schema);
                (!params.is_empty()).then(|| (tool.name.clone(), params))
            })
            .collect();
        *lock(&self.inner.tool_headers) = headers;
    }

    /// `tools/list`: every tool.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let tools: Vec<Tool> = self.list_all("tools/list", "tools").await?;
        self.keep_tool_headers(&tools);
        Ok(tools)
    }

    /// `resources/list`: every resource.
    pub async fn list_resources(&self) -> Result<Vec<ResourceInfo>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// `resources/templates/list`: every resource template.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// `prompts/list`: every prompt.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// `tools/call`. A tool's own failure is a result with `is_error`; an error is the
    /// server's refusal (an unknown tool, say).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, &RequestOptions::default())
            .await
    }

    /// `tools/call` with options (progress, timeout).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let params = json!({"name": name, "arguments": arguments});
        self.typed("tools/call", params, options).await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.read_resource_with(uri, &RequestOptions::default())
            .await
    }

    /// `resources/read` with options.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: &RequestOptions,
    ) -> Result<ReadResourceResult, ClientError> {
        self.typed("resources/read", json!({"uri": uri}), options)
            .await
    }

    /// `prompts/get`, with the arguments as a JSON object of strings.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<GetPromptResult, ClientError> {
        self.get_prompt_with(name, arguments, &RequestOptions::default())
            .await
    }

    /// `prompts/get` with options.
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = json!({"name": name});
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        self.typed("prompts/get", params, options).await
    }

    /// `completion/complete`: values for `argument` of a prompt or template, given what was
    /// typed so far and the other arguments already chosen.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: Option<Map<String, Value>>,
    ) -> Result<Completion, ClientError> {
        let mut params = json!({
            "ref": reference.to_json(),
            "argument": {"name": argument, "value": value},
        });
        if let Some(arguments) = context {
            params["context"] = json!({"arguments": arguments});
        }
        let mut result = self.request("completion/complete", params).await?;
        let completion = result.get_mut("completion").map(Value::take);
        serde_json::from_value(completion.unwrap_or_default())
            .map_err(|e| ClientError::Decode(format!("completion/complete: {e}")))
    }

    /// Asks for `notifications/resources/updated` of `uri`: `resources/subscribe`, or in
    /// 2026-07-28 a listen stream for it.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        if !self.is_stateless() {
            self.request("resources/subscribe", json!({"uri": uri}))
                .await?;
            return Ok(());
        }
        if lock(&self.inner.subscriptions).contains_key(uri) {
            return Ok(());
        }
        if lock(&self.inner.subscriptions).len() >= self.inner.settings.max_subscriptions {
            return Err(ClientError::Limit(format!(
                "{} resource subscriptions",
                self.inner.settings.max_subscriptions
            )));
        }
        let subscription = self.listen(Listen::resource(uri)).await?;
        lock(&self.inner.subscriptions).insert(uri.to_owned(), subscription);
        Ok(())
    }

    /// Ends a subscription: `resources/unsubscribe`, or in 2026-07-28 its listen stream.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        if !self.is_stateless() {
            self.request("resources/unsubscribe", json!({"uri": uri}))
                .await?;
            return Ok(());
        }
        lock(&self.inner.subscriptions).remove(uri);
        Ok(())
    }

    /// The least severe log messages the server should send: `logging/setLevel`, or in
    /// 2026-07-28 the `logLevel` of every later request.
    pub async fn set_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.is_stateless() {
            *lock(&self.inner.log_level) = Some(level);
            return Ok(());
        }
        self.request("logging/setLevel", json!({"level": level.as_str()}))
            .await?;
        Ok(())
    }

    /// `ping` (handshake era only).
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.is_stateless() {
            return Err(ClientError::NotInEra("ping".into()));
        }
        self.request("ping", json!({})).await?;
        Ok(())
    }

    /// Opens a `subscriptions/listen` stream (2026-07-28) and waits for the server to
    /// acknowledge it; its notifications go to the handler while the [`Subscription`] lives.
    pub async fn listen(&self, listen: Listen) -> Result<Subscription, ClientError> {
        if !self.is_stateless() {
            return Err(ClientError::NotInEra("subscriptions/listen".into()));
        }
        let core = Arc::clone(&self.inner.core);
        let id = core.next_id();
        let acknowledged = core.await_ack(&id);
        let Value::Object(params) = listen.to_params() else {
            unreachable!("listen params are an object")
        };
        let params = self.inner.envelope(params, true);
        let headers = stateless_headers("subscriptions/listen", &params, None);
        let task = tokio::spawn(async move {
            let outcome = core
                .call(
                    "subscriptions/listen",
                    params,
                    Call {
                        id: Some(id),
                        headers,
                        ..Call::new(Duration::MAX)
                    },
                )
                .await;
            if let Err(error) = outcome {
                tracing::debug!(%error, "a listen stream ended");
            }
        });
        let task = task.abort_handle();
        match tokio::time::timeout(self.inner.settings.timeout, acknowledged).await {
            Ok(Ok(params)) => Ok(Subscription {
                task,
                acknowledged: match params.get("notifications") {
                    Some(Value::Object(notifications)) => notifications.clone(),
                    _ => Map::new(),
                },
            }),
            _ => {
                task.abort();
                Err(ClientError::Decode(
                    "the server did not acknowledge `subscriptions/listen`".into(),
                ))
            }
        }
    }

    /// Ends the connection in order: HTTP DELETEs its session; a child's stdin is closed and
    /// it is given two seconds to exit before it is killed. Requests in flight fail.
    pub async fn close(&self) -> Result<(), ClientError> {
        lock(&self.inner.subscriptions).clear();
        lock(&self.inner.list_listen).take();
        let outcome = match self.inner.core.transport() {
            Ok(transport) => transport.close().await,
            Err(_) => Ok(()),
        };
        self.inner
            .core
            .close("the client closed the connection".into());
        outcome
    }
}

/// The most input requests one `input_required` round may hold.
const MAX_INPUT_REQUESTS: usize = 64;

/// Awaits every future, polling them together on this task (so what one asks of a gateway's
/// own client is asked in the same round as the others); the outputs in order.
async fn join_all<K, T>(futures: Vec<(K, crate::context::BoxFuture<T>)>) -> Vec<(K, T)> {
    let mut pending: Vec<(K, Option<crate::context::BoxFuture<T>>, Option<T>)> = futures
        .into_iter()
        .map(|(key, future)| (key, Some(future), None))
        .collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (_, future, output) in &mut pending {
            if let Some(running) = future {
                match running.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => {
                        *output = Some(value);
                        *future = None;
                    }
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    pending
        .into_iter()
        .filter_map(|(key, _, output)| Some((key, output?)))
        .collect()
}

/// Whether an error is 2026-07-28's "unsupported protocol version" listing that revision.
fn offers_stateless(error: &crate::protocol::ErrorObject) -> bool {
    error.code == crate::protocol::error_codes::UNSUPPORTED_PROTOCOL_VERSION
        && error
            .data
            .as_ref()
            .and_then(|data| data.get("supported"))
            .and_then(Value::as_array)
            .is_some_and(|versions| {
                versions
                    .iter()
                    .any(|v| v.as_str() == Some(ProtocolVersion::V2026_07_28.as_str()))
            })
}

/// Reads an optional field of a result.
fn field<T: DeserializeOwned>(result: &Value, key: &str) -> Result<Option<T>, ClientError> {
    match result.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|e| ClientError::Decode(format!("`{key}`: {e}"))),
    }
}

/// The standard headers of a 2026-07-28 POST (SEP-2243), besides `MCP-Protocol-Version`,
/// which the transport adds: `Mcp-Method`, `Mcp-Name`, and the tool's `Mcp-Param-*`.
fn stateless_headers(
    method: &str,
    params: &Map<String, Value>,
    tool_headers: Option<&Vec<HeaderParam>>,
) -> Vec<(String, String)> {
    let mut headers = vec![("mcp-method".to_owned(), header_value(method))];
    let target = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
        _ => None,
    };
    if let Some(Value::String(name)) = target {
        headers.push(("mcp-name".to_owned(), header_value(name)));
    }
    let arguments = params.get("arguments");
    for (header, path) in tool_headers.into_iter().flatten() {
        let value = path
            .iter()
            .fold(arguments, |value, key| value.and_then(|v| v.get(key)));
        let text = match value {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Bool(flag)) => flag.to_string(),
            Some(Value::Number(number)) => number.to_string(),
            _ => continue,
        };
        headers.push((format!("mcp-param-{header}"), header_value(&text)));
    }
    headers
}

/// A header value as SEP-2243 sends it: plain visible ASCII as it is, anything else (other
/// characters, white space at either end, text that looks like the sentinel) base64-encoded in
/// `=?base64?…?=`.
fn header_value(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && text.trim() == text
        && !text.starts_with("=?base64?");
    if plain {
        text.to_owned()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text);
        format!("=?base64?{encoded}?=")
    }
}

/// The arguments a tool's input schema marks with `x-mcp-header`: the header's name and the
/// argument's path through `properties`.
fn header_params(schema: &Map<String, Value>) -> Vec<HeaderParam> {
    fn walk(schema: &Map<String, Value>, path: &mut Vec<String>, found: &mut Vec<HeaderParam>) {
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return;
        };
        for (name, property) in properties {
            let Value::Object(property) = property else {
                continue;
            };
            path.push(name.clone());
            if let Some(Value::String(header)) = property.get("x-mcp-header") {
                found.push((header.clone(), path.clone()));
            }
            // Nested objects, a few levels deep at most.
            if path.len() < 8 {
                walk(property, path, found);
            }
            path.pop();
        }
    }
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), &mut found);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_plain_ascii_or_base64() {
        assert_eq!(header_value("tools/call"), "tools/call");
        assert_eq!(header_value("été"), "=?base64?w6l0w6k=?=");
        assert_eq!(header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(header_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }

    #[test]
    fn stateless_headers_name_the_target_and_the_marked_arguments() {
        let schema = json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
            "plain": {"type": "string"},
        }});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        let params = header_params(&schema);
        let Value::Object(call) =
            json!({"name": "t", "arguments": {"region": "eu", "nested": {"n": 3}}})
        else {
            unreachable!()
        };
        let headers = stateless_headers("tools/call", &call, Some(&params));
        assert_eq!(
            headers[0],
            ("mcp-method".to_owned(), "tools/call".to_owned())
        );
        assert_eq!(headers[1], ("mcp-name".to_owned(), "t".to_owned()));
        assert_eq!(headers.len(), 4);
        assert!(headers.contains(&("mcp-param-Region".to_owned(), "eu".to_owned())));
        assert!(headers.contains(&("mcp-param-N".to_owned(), "3".to_owned())));
    }

    /// A server that answers with garbage, oversized lines, answers to no request, more
    /// requests than the client answers at once, and a flood of notifications: the client
    /// fails only the request the oversized answer was for, refuses the excess requests,
    /// drops the excess notifications, and serves on.
    #[tokio::test]
    async fn a_hostile_upstream_is_bounded_and_the_client_serves_on() {
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (client_read, client_write) = tokio::io::split(client_io);
        let (server_read, mut server_write) = tokio::io::split(server_io);
        let mut lines = BufReader::new(server_read).lines();
        let handler = FnHandler::new()
            .on_request(|_, _| std::future::pending())
            .on_notification(|_| std::future::pending());
        let connecting = tokio::spawn(
            Client::builder()
                .era(Era::Handshake(ProtocolVersion::V2025_11_25))
                .handler(handler)
                .max_message_size(1024)
                .max_server_requests(2)
                .notification_queue(4, 1 << 20)
                .timeout(Duration::from_secs(10))
                .io(client_read, client_write),
        );
        let read =
            |line: Option<String>| -> Value { serde_json::from_str(&line.unwrap()).unwrap() };
        let initialize = read(lines.next_line().await.unwrap());
        assert_eq!(initialize["method"], "initialize");
        let answer = json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "hostile", "version": "1"}}});
        server_write
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .unwrap();
        let client = connecting.await.unwrap().unwrap();
        assert_eq!(client.protocol_version(), ProtocolVersion::V2025_06_18);
        assert_eq!(
            read(lines.next_line().await.unwrap())["method"],
            "notifications/initialized"
        );

        let listing = tokio::spawn({
            let client = client.clone();
            async move { client.request("tools/list", json!({})).await }
        });
        let request = read(lines.next_line().await.unwrap());
        let id = request["id"].clone();
        let mut flood = String::new();
        flood.push_str("not json\n[1,2\n{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}\n\n");
        flood.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[],\"pad\":\"{}\"}}}}\n",
            "x".repeat(2000)
        ));
        for n in 0..5 {
            flood.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":\"s{n}\",\"method\":\"sampling/createMessage\",\"params\":{{}}}}\n"
            ));
        }
        for n in 0..100 {
            flood.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":{n}}}}}\n"
            ));
        }
        server_write.write_all(flood.as_bytes()).await.unwrap();

        // The oversized answer fails its request, and says why.
        let error = listing.await.unwrap().unwrap_err();
        assert!(
            error
                .rpc()
                .is_some_and(|e| e.message.contains("size limit")),
            "{error}"
        );
        // Two sampling requests wait on the handler; the other three are refused at once.
        let mut refused = Vec::new();
        for _ in 0..3 {
            let answer = read(lines.next_line().await.unwrap());
            assert_eq!(answer["error"]["code"], -32000, "{answer}");
            refused.push(answer["id"].as_str().unwrap().to_owned());
        }
        assert_eq!(refused, ["s2", "s3", "s4"]);
        // Four notifications wait (and one may be in the stuck handler): the rest were dropped.
        tokio::time::timeout(Duration::from_secs(5), async {
            while client.dropped_notifications() < 95 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the flood was dropped");
        assert!((95..=96).contains(&client.dropped_notifications()));

        // The connection serves on.
        let pinging = tokio::spawn({
            let client = client.clone();
            async move { client.ping().await }
        });
        let ping = read(lines.next_line().await.unwrap());
        assert_eq!(ping["method"], "ping");
        let pong = json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}});
        server_write
            .write_all(format!("{pong}\n").as_bytes())
            .await
            .unwrap();
        pinging.await.unwrap().unwrap();

        // The server going away fails what is in flight, and what comes after.
        let pending = tokio::spawn({
            let client = client.clone();
            async move { client.request("tools/list", json!({})).await }
        });
        let _ = lines.next_line().await.unwrap();
        drop(server_write);
        drop(lines);
        assert!(matches!(
            pending.await.unwrap(),
            Err(ClientError::Closed(_))
        ));
        assert!(client.closed_reason().is_some());
    }
}
