//! What a handler can know about the request it serves, and ask of the client.
//!
//! A handler receives context by naming it as a parameter: a [`Context`] for everything, or a
//! smaller extractor ([`RequestId`], [`ProtocolVersion`], [`Meta`], [`ClientInfo`]) when that
//! reads better. Any type implementing [`FromContext`] can be a context parameter; it is injected
//! and never appears in a tool's `inputSchema`.
//!
//! The context reaches its session only through a narrow `Peer` handle defined here, never by
//! importing the server, so the dependency runs one way: server → primitives → context.
//!
//! What a handler can do with it:
//!
//! - log to the client: [`Context::log`] and [`Context::info`] and friends send
//!   `notifications/message` at or above the level the client set with `logging/setLevel`
//!   (`info` until it sets one);
//! - report progress: [`Context::progress`] sends `notifications/progress` with the request's own
//!   `progressToken`, only when the request carried one, and only for increasing values;
//! - notice cancellation: `notifications/cancelled` for the request stops the handler's future;
//!   [`Context::is_cancelled`] tells work handed to other tasks;
//! - ask the client: [`Context::sample`], [`Context::elicit`], [`Context::elicit_url`] and
//!   [`Context::roots`], each only when the client declared the capability (otherwise, in the
//!   handshake era, a [`ClientRequestError::Unsupported`], which `?` turns into a tool error; in
//!   the stateless era the request ends with -32021 `MissingRequiredClientCapability`).
//!
//! The same calls work in both eras. In the handshake era they are requests to the client on the
//! session. In the stateless era (2026-07-28), where servers send no requests, the handler is
//! stopped at its first unanswered question and the request answers
//! `resultType: "input_required"` with the questions and a signed `requestState`; the client's
//! retry carries the answers, and the handler runs again from the start, this time receiving
//! them. Each question has a key there, numbered by the runtime unless the handler names it with
//! [`Context::input`]. Work a handler does before it asks therefore runs once per round: keep it idempotent, or
//! ask first.
//!
//! # Where it sits
//!
//! Below the items and above `protocol`: it may import `protocol`, `handle` and `error`. The items,
//! the server and everything above import it; it never imports them, and reaches its session only
//! through the `Peer` the dispatch gives it.

pub mod elicit;
mod extensions;
pub(crate) mod principal;
mod requests;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::Serialize;
use serde_json::{Map, Value, json};

pub use self::extensions::{Extension, Extensions};
pub use self::principal::Principal;
pub use self::requests::{
    ClientRequestError, Elicit, Elicitation, ModelHint, ModelPreferences, Root, SamplingContent,
    SamplingMessage, SamplingRequest, SamplingResult, UrlElicitation,
};
use crate::handle::ServerHandle;
use crate::protocol::{
    ClientCapabilities, Implementation, LoggingLevel, Outgoing, ProtocolVersion, RequestId,
    encode_notification,
};

/// A boxed, sendable future: what handlers return.
pub type BoxFuture<T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The way back to the client that sent a request: what the context may ask of the session.
pub(crate) trait Peer: Send + Sync {
    /// Queues one message for the client, on the request's own stream.
    fn send(&self, message: Outgoing);
    /// The least severe level the client wants to hear; `None` when it wants no logs (a
    /// stateless request without `logLevel`).
    fn log_level(&self) -> Option<LoggingLevel>;
    /// Sends a request to the client and waits (with the server's timeout) for its answer.
    /// `key` is the one the handler chose for it (see [`Context::input`]): in the stateless era
    /// the key of its entry in `inputRequests` and of the answer in the retry's
    /// `inputResponses`; `None` numbers it. The handshake era has no use for it.
    fn request(
        &self,
        key: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>>;
    /// The handler needs a client capability the client did not declare. In the handshake era
    /// the handler hears [`ClientRequestError::Unsupported`]; in the stateless era the request
    /// ends with -32021 naming the capability, and the future never completes.
    fn missing_capability(
        &self,
        name: &'static str,
        capability: Value,
    ) -> BoxFuture<ClientRequestError>;
    /// The roots the client last listed, if they are still valid.
    fn cached_roots(&self) -> Option<Vec<Root>>;
    /// Remembers the roots until the client says they changed.
    fn cache_roots(&self, roots: Vec<Root>);
    /// The handler enters (`true`) or leaves (`false`) [`Context::before_task`]. Only a task's
    /// peer cares.
    fn before_task(&self, _entering: bool) {}
    /// Whether the request runs as a task (a gateway runs its upstream's tool as one too).
    fn is_task(&self) -> bool {
        false
    }
}

/// Sends `notifications/message` to `peer` at `level`, if the client wants that level; `data` is
/// only built when it does. [`Context::log`] and the `tracing` layer both log through here.
pub(crate) fn send_log(
    peer: &dyn Peer,
    level: LoggingLevel,
    logger: Option<&str>,
    data: impl FnOnce() -> Option<Value>,
) {
    if peer.log_level().is_none_or(|least| level < least) {
        return;
    }
    let Some(data) = data() else {
        return;
    };
    let mut params = json!({"level": level, "data": data});
    if let Some(logger) = logger {
        params["logger"] = Value::from(logger);
    }
    peer.send(Outgoing::Message(encode_notification(
        "notifications/message",
        Some(&params),
    )));
}

/// Set when the client cancels the request.
#[derive(Debug, Default)]
pub(crate) struct CancelFlag(AtomicBool);

impl CancelFlag {
    pub(crate) fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// What the client said about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientInfo {
    /// `clientInfo`: name and version.
    pub implementation: Implementation,
    /// The capabilities it declared.
    pub capabilities: ClientCapabilities,
}

/// A request's `params._meta`, as the client sent it (empty when there was none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta(pub Map<String, Value>);

impl Meta {
    /// The `progressToken`, when the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.0
            .get("progressToken")
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
    }
}

pub(crate) struct RequestInfo {
    pub(crate) id: RequestId,
    pub(crate) meta: Meta,
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) peer: Arc<dyn Peer>,
    pub(crate) server: ServerHandle,
    pub(crate) cancelled: Arc<CancelFlag>,
    /// The validated access token's caller, over HTTP with OAuth.
    pub(crate) principal: Option<Arc<Principal>>,
    /// The client's address (HTTP), as the fair shares read it: behind a trusted proxy, the
    /// client its forwarding header names.
    pub(crate) address: Option<std::net::SocketAddr>,
    /// The last progress value sent, as `f64` bits (progress must increase).
    pub(crate) last_progress: AtomicU64,
    /// What middleware put in the request's extensions.
    pub(crate) extensions: Extensions,
}

/// The peer and server of [`Context::detached`]: nothing to send to, nobody to ask.
struct Detached;

impl Peer for Detached {
    fn send(&self, _: Outgoing) {}

    fn log_level(&self) -> Option<LoggingLevel> {
        None
    }

    fn request(
        &self,
        _: Option<&str>,
        _: &'static str,
        _: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        Box::pin(async { Err(ClientRequestError::Closed) })
    }

    fn missing_capability(&self, name: &'static str, _: Value) -> BoxFuture<ClientRequestError> {
        Box::pin(async move { ClientRequestError::Unsupported(name) })
    }

    fn cached_roots(&self) -> Option<Vec<Root>> {
        None
    }

    fn cache_roots(&self, _: Vec<Root>) {}
}

impl crate::handle::Broadcast for Detached {
    fn resource_updated(&self, _: &str) {}

    fn list_changed(&self, _: crate::handle::ListKind) {}

    fn log(&self, _: LoggingLevel, _: Option<&str>, _: &Value) {}
}

/// Everything a handler may know about the request it serves.
///
/// Cheap to clone; take it by value as a parameter:
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Which protocol revision is this session on?
/// #[tool]
/// async fn which_revision(ctx: Context) -> String {
///     ctx.protocol_version().to_string()
/// }
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<RequestInfo>,
}

impl Context {
    pub(crate) fn new(info: RequestInfo) -> Self {
        Self {
            inner: Arc::new(info),
        }
    }

    /// The context a `#[tool]` none of whose parameters reads one would see: one for the whole
    /// process, lent rather than cloned, so a call that has no use for its request's context
    /// neither builds one nor counts a reference to a shared one. Its handler cannot reach it
    /// (only a context parameter would, and it has none); were it reached, it sends nothing,
    /// asks nothing and is never cancelled.
    pub(crate) fn detached() -> &'static Self {
        static DETACHED: std::sync::LazyLock<Context> = std::sync::LazyLock::new(|| {
            Context::new(RequestInfo {
                id: RequestId::Number(0),
                meta: Meta::default(),
                version: ProtocolVersion::LATEST,
                client: Arc::new(ClientInfo {
                    implementation: Implementation::new("", ""),
                    capabilities: ClientCapabilities::default(),
                }),
                peer: Arc::new(Detached),
                server: ServerHandle::new(Arc::new(Detached)),
                cancelled: Arc::default(),
                principal: None,
                address: None,
                last_progress: AtomicU64::new(f64::NEG_INFINITY.to_bits()),
                extensions: Extensions::default(),
            })
        });
        &DETACHED
    }

    /// Sends `notifications/message` at `level`, if the client wants that level.
    pub async fn log(&self, level: LoggingLevel, data: impl Serialize) {
        self.send_log(level, None, data);
    }

    /// Sends `notifications/message` at `level` from the named `logger`.
    pub async fn log_from(&self, logger: &str, level: LoggingLevel, data: impl Serialize) {
        self.send_log(level, Some(logger), data);
    }

    fn send_log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Serialize) {
        send_log(&*self.inner.peer, level, logger, || {
            // Were `data` not to serialize, nothing is sent (rather than `null`) and it is said
            // here instead.
            serde_json::to_value(data)
                .inspect_err(|error| {
                    tracing::error!(%error, "the data of a log message could not be serialized");
                })
                .ok()
        });
    }

    /// Logs at `debug`.
    pub async fn debug(&self, data: impl Serialize) {
        self.send_log(LoggingLevel::Debug, None, data);
    }

    /// Logs at `info`.
    pub async fn info(&self, data: impl Serialize) {
        self.send_log(LoggingLevel::Info, None, data);
    }

    /// Logs at `notice`.
    pub async fn notice(&self, data: impl Serialize) {
        self.send_log(LoggingLevel::Notice, None, data);
    }

    /// Logs at `warning`.
    pub async fn warning(&self, data: impl Serialize) {
        self.send_log(LoggingLevel::Warning, None, data);
    }

    /// Logs at `error`.
    pub async fn error(&self, data: impl Serialize) {
        self.send_log(LoggingLevel::Error, None, data);
    }

    /// Reports progress: `notifications/progress` with the request's `progressToken`, sent only
    /// when the request carried one and only when `progress` is greater than the last value sent.
    ///
    /// ```
    /// # async fn f(ctx: mcp_runtime::Context) {
    /// ctx.progress(1.0, 3.0, "fetched").await;
    /// ctx.progress(2.0, None, Some("no total known")).await;
    /// # }
    /// ```
    pub async fn progress(
        &self,
        progress: f64,
        total: impl Into<Option<f64>>,
        message: impl Into<ProgressMessage>,
    ) {
        self.progress_now(progress, total.into(), message.into().0);
    }

    /// [`progress`](Self::progress), sent at once: for callbacks that cannot await (a proxied
    /// call's upstream progress).
    pub(crate) fn progress_now(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let Some(token) = self.inner.meta.progress_token() else {
            return;
        };
        let last = f64::from_bits(self.inner.last_progress.load(Ordering::Acquire));
        if !progress.is_finite() || progress <= last {
            return;
        }
        self.inner
            .last_progress
            .store(progress.to_bits(), Ordering::Release);
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = Value::from(total);
        }
        if let Some(message) = message
            && self.inner.version >= ProtocolVersion::V2025_03_26
        {
            params["message"] = Value::from(message);
        }
        self.inner.peer.send(Outgoing::Message(encode_notification(
            "notifications/progress",
            Some(&params),
        )));
    }

    /// Over Streamable HTTP, ends the response carrying this request's SSE stream without ending
    /// the stream (SEP-1699 polling): the client reconnects with `Last-Event-ID` after the
    /// stream's `retry` delay and receives every later event, the result included. Does nothing on
    /// stdio.
    pub fn close_sse_stream(&self) {
        self.inner.peer.send(Outgoing::CloseStream);
    }

    /// Whether the client cancelled this request. The handler's future is stopped at its next
    /// `.await` anyway; this is for work it handed to other tasks or threads.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.is_cancelled()
    }

    /// Runs `work` before a task-capable call becomes a task: questions asked inside it
    /// (`ctx.elicit`, `ctx.sample`, `ctx.roots`) go through input-required rounds on the
    /// `tools/call` itself (2026-07-28), and the task is created only once `work` is done.
    /// Everywhere else (no task, the handshake era) it simply runs `work`.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    ///
    /// #[derive(Deserialize, Elicit)]
    /// struct Name {
    ///     name: String,
    /// }
    ///
    /// /// Asks a name, then works on it as a task.
    /// #[tool(task = "required")]
    /// async fn long_greeting(ctx: Context) -> Result<String, ToolError> {
    ///     let answer = ctx
    ///         .before_task(ctx.input("user_name").elicit::<Name>("Your name?"))
    ///         .await?;
    ///     let name = match answer {
    ///         Elicitation::Accept(form) => form.name,
    ///         _ => "there".to_owned(),
    ///     };
    ///     tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    ///     Ok(format!("Hello, {name}!"))
    /// }
    /// ```
    pub async fn before_task<F: Future>(&self, work: F) -> F::Output {
        struct Leave<'a>(&'a dyn Peer);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.before_task(false);
            }
        }
        let peer = &*self.inner.peer;
        peer.before_task(true);
        let _leave = Leave(peer);
        work.await
    }

    /// Asks the client's model for a completion (`sampling/createMessage`); needs the client's
    /// `sampling` capability (and `sampling.tools` to offer tools).
    pub async fn sample(
        &self,
        request: SamplingRequest,
    ) -> Result<SamplingResult, ClientRequestError> {
        self.sample_keyed(None, request).await
    }

    async fn sample_keyed(
        &self,
        key: Option<&str>,
        request: SamplingRequest,
    ) -> Result<SamplingResult, ClientRequestError> {
        let caps = &self.inner.client.capabilities;
        if !caps.sampling() {
            return Err(self.missing("sampling", json!({"sampling": {}})).await);
        }
        if !request.tools.is_empty() {
            if self.inner.version < ProtocolVersion::V2025_11_25 {
                return Err(ClientRequestError::Unsupported("tools in sampling"));
            }
            if !caps.sampling_tools() {
                let needed = json!({"sampling": {"tools": {}}});
                return Err(self.missing("tools in sampling", needed).await);
            }
        }
        let params = serde_json::to_value(&request)
            .map_err(|error| ClientRequestError::Unserializable(error.to_string()))?;
        let result = self.ask(key, "sampling/createMessage", params).await?;
        serde_json::from_value(result)
            .map_err(|e| ClientRequestError::InvalidResponse(e.to_string()))
    }

    /// Asks the user to fill in a form for `T` (`elicitation/create`, form mode); needs the
    /// client's `elicitation` capability (2025-06-18). The answer is checked by deserializing it
    /// into `T`.
    pub async fn elicit<T: Elicit>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ClientRequestError> {
        self.elicit_keyed(None, message.into()).await
    }

    async fn elicit_keyed<T: Elicit>(
        &self,
        key: Option<&str>,
        message: String,
    ) -> Result<Elicitation<T>, ClientRequestError> {
        if self.inner.version < ProtocolVersion::V2025_06_18 {
            return Err(ClientRequestError::Unsupported("elicitation"));
        }
        if !self.inner.client.capabilities.elicitation_form() {
            let needed = json!({"elicitation": {"form": {}}});
            return Err(self.missing("elicitation", needed).await);
        }
        let mut schema = T::requested_schema();
        if self.inner.version < ProtocolVersion::V2025_11_25 {
            downgrade_elicitation_schema(&mut schema);
        }
        let params = json!({"message": message, "requestedSchema": schema});
        let result = self.ask(key, "elicitation/create", params).await?;
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = result.get("content").cloned().unwrap_or_else(|| json!({}));
                serde_json::from_value(content)
                    .map(Elicitation::Accept)
                    .map_err(|e| {
                        ClientRequestError::InvalidResponse(format!("the form's content: {e}"))
                    })
            }
            Some("decline") => Ok(Elicitation::Decline),
            Some("cancel") => Ok(Elicitation::Cancel),
            _ => Err(ClientRequestError::InvalidResponse(format!(
                "no valid `action` in {result}"
            ))),
        }
    }

    /// Asks the user to open `url` (`elicitation/create`, URL mode, 2025-11-25); needs the
    /// client's `elicitation.url` capability. Use it for anything secret: the data never passes
    /// through the client.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<UrlElicitation, ClientRequestError> {
        self.elicit_url_keyed(None, message.into(), url.into())
            .await
    }

    async fn elicit_url_keyed(
        &self,
        key: Option<&str>,
        message: String,
        url: String,
    ) -> Result<UrlElicitation, ClientRequestError> {
        if self.inner.version < ProtocolVersion::V2025_11_25 {
            return Err(ClientRequestError::Unsupported("URL elicitation"));
        }
        if !self.inner.client.capabilities.elicitation_url() {
            let needed = json!({"elicitation": {"url": {}}});
            return Err(self.missing("URL elicitation", needed).await);
        }
        let mut params = json!({"mode": "url", "message": message, "url": url});
        if self.inner.version.has_handshake() {
            // 2026-07-28 dropped `elicitationId`: the client's retry signals completion.
            let id = format!(
                "{}-{}",
                std::process::id(),
                ELICITATION_IDS.fetch_add(1, Ordering::Relaxed)
            );
            params["elicitationId"] = Value::from(id);
        }
        let result = self.ask(key, "elicitation/create", params).await?;
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => Ok(UrlElicitation::Accept),
            Some("decline") => Ok(UrlElicitation::Decline),
            Some("cancel") => Ok(UrlElicitation::Cancel),
            _ => Err(ClientRequestError::InvalidResponse(format!(
                "no valid `action` in {result}"
            ))),
        }
    }

    /// The client's roots (`roots/list`); needs the client's `roots` capability. The answer is
    /// kept until the client sends `notifications/roots/list_changed`.
    pub async fn roots(&self) -> Result<Vec<Root>, ClientRequestError> {
        self.roots_keyed(None).await
    }

    async fn roots_keyed(&self, key: Option<&str>) -> Result<Vec<Root>, ClientRequestError> {
        if !self.inner.client.capabilities.roots() {
            return Err(self.missing("roots", json!({"roots": {}})).await);
        }
        if let Some(roots) = self.inner.peer.cached_roots() {
            return Ok(roots);
        }
        let result = self.ask(key, "roots/list", json!({})).await?;
        let roots: Vec<Root> = match result.get("roots") {
            Some(roots) => serde_json::from_value(roots.clone())
                .map_err(|e| ClientRequestError::InvalidResponse(e.to_string()))?,
            None => return Err(ClientRequestError::InvalidResponse("no `roots`".to_owned())),
        };
        self.inner.peer.cache_roots(roots.clone());
        Ok(roots)
    }

    /// Names the next question to the client `key`, for the stateless era (2026-07-28): the
    /// returned [`Input`] asks what [`elicit`](Self::elicit), [`elicit_url`](Self::elicit_url),
    /// [`sample`](Self::sample) and [`roots`](Self::roots) ask, with `key` as the question's
    /// entry in the `input_required` result's `inputRequests`, and the retry's answer read from
    /// `inputResponses[key]`.
    ///
    /// Without a key the runtime numbers the questions in the order the handler asks them
    /// (`elicit-1`, `sample-2`, ...). Choose one when the key is part of a contract (a client
    /// or test suite that answers `user_name` by name), or to keep the keys stable while the
    /// handler's questions change. A key names one question of the request: a second question
    /// under the same key receives the first one's answer, so keep them unique, and do not
    /// choose keys of the runtime's numbered form. In the handshake era the key is unused: the
    /// question is a request on the session, as without it.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    /// use mcp_runtime::context::Elicitation;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, Elicit)]
    /// struct Name {
    ///     /// Your name
    ///     name: String,
    /// }
    ///
    /// /// Greets the user, asking their name as `user_name`.
    /// #[tool]
    /// async fn greet(ctx: Context) -> Result<String, ToolError> {
    ///     let name = match ctx.input("user_name").elicit::<Name>("What is your name?").await? {
    ///         Elicitation::Accept(form) => form.name,
    ///         Elicitation::Decline | Elicitation::Cancel => "there".to_owned(),
    ///     };
    ///     Ok(format!("Hello, {name}!"))
    /// }
    /// ```
    pub fn input(&self, key: impl Into<String>) -> Input<'_> {
        Input {
            ctx: self,
            key: key.into(),
        }
    }

    /// Sends a log message at once, as [`log`](Self::log) does, with `data` as it is (a
    /// proxied call's upstream log).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn log_now(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        send_log(&*self.inner.peer, level, logger, || Some(data));
    }

    /// Whether this call runs as a task (`#[tool(task = ..)]` with a client that took one).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn is_task(&self) -> bool {
        self.inner.peer.is_task()
    }

    /// The least severe level the client wants to hear for this request; `None` when it wants
    /// no logs (a 2026-07-28 request without `logLevel`).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.inner.peer.log_level()
    }

    /// Relays a request an upstream server sent (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`) to this request's client, with its params as they
    /// are, through the same machinery as [`sample`](Self::sample), [`elicit`](Self::elicit)
    /// and [`roots`](Self::roots): the client's capability is checked (in the handshake era a
    /// missing one is [`ClientRequestError::Unsupported`]; in 2026-07-28 the request ends with
    /// -32021), the params are shaped for the client's revision (a form's schema in the legacy
    /// enum forms before 2025-11-25; a URL elicitation's `elicitationId` added in the handshake
    /// era, dropped in 2026-07-28), and in 2026-07-28 the question is an input request under
    /// `key` (numbered when `None`). The answer is the client's result, as it sent it.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) async fn relay(
        &self,
        key: Option<&str>,
        method: &str,
        mut params: Map<String, Value>,
    ) -> Result<Value, ClientRequestError> {
        let version = self.inner.version;
        let caps = &self.inner.client.capabilities;
        let method: &'static str = match method {
            "sampling/createMessage" => {
                if !caps.sampling() {
                    return Err(self.missing("sampling", json!({"sampling": {}})).await);
                }
                let tools = params
                    .get("tools")
                    .and_then(Value::as_array)
                    .is_some_and(|tools| !tools.is_empty());
                if tools {
                    if version < ProtocolVersion::V2025_11_25 {
                        return Err(ClientRequestError::Unsupported("tools in sampling"));
                    }
                    if !caps.sampling_tools() {
                        let needed = json!({"sampling": {"tools": {}}});
                        return Err(self.missing("tools in sampling", needed).await);
                    }
                }
                "sampling/createMessage"
            }
            "elicitation/create" => {
                let url = params.get("mode").and_then(Value::as_str) == Some("url");
                if url {
                    if version < ProtocolVersion::V2025_11_25 {
                        return Err(ClientRequestError::Unsupported("URL elicitation"));
                    }
                    if !caps.elicitation_url() {
                        let needed = json!({"elicitation": {"url": {}}});
                        return Err(self.missing("URL elicitation", needed).await);
                    }
                    if version.has_handshake() {
                        if !params.contains_key("elicitationId") {
                            let id = format!(
                                "{}-{}",
                                std::process::id(),
                                ELICITATION_IDS.fetch_add(1, Ordering::Relaxed)
                            );
                            params.insert("elicitationId".into(), Value::from(id));
                        }
                    } else {
                        params.remove("elicitationId");
                    }
                } else {
                    if version < ProtocolVersion::V2025_06_18 {
                        return Err(ClientRequestError::Unsupported("elicitation"));
                    }
                    if !caps.elicitation_form() {
                        let needed = json!({"elicitation": {"form": {}}});
                        return Err(self.missing("elicitation", needed).await);
                    }
                    if version < ProtocolVersion::V2025_11_25
                        && let Some(Value::Object(schema)) = params.get_mut("requestedSchema")
                    {
                        downgrade_elicitation_schema(schema);
                    }
                }
                "elicitation/create"
            }
            "roots/list" => {
                if !caps.roots() {
                    return Err(self.missing("roots", json!({"roots": {}})).await);
                }
                "roots/list"
            }
            other => {
                return Err(ClientRequestError::Rejected(
                    crate::protocol::ErrorObject::method_not_found(other),
                ));
            }
        };
        self.ask(key, method, Value::Object(params)).await
    }

    fn ask(
        &self,
        key: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        self.inner.peer.request(key, method, params)
    }

    async fn missing(&self, name: &'static str, capability: Value) -> ClientRequestError {
        self.inner.peer.missing_capability(name, capability).await
    }

    /// Pings the client (`ping`), for keep-alive; `Ok` when it answered. In the stateless era,
    /// where servers send no requests, this is [`ClientRequestError::Unsupported`].
    pub async fn ping(&self) -> Result<(), ClientRequestError> {
        self.inner
            .peer
            .request(None, "ping", json!({}))
            .await
            .map(|_| ())
    }

    /// The id of the request being served.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> &Meta {
        &self.inner.meta
    }

    /// The protocol revision this request is served under.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// Who the client is and what it can do.
    pub fn client(&self) -> &ClientInfo {
        &self.inner.client
    }

    /// The caller the request's access token vouched for: over HTTP on a server with
    /// [`Server::oauth`](crate::Server), else `None`.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_deref()
    }

    /// The client's address, over HTTP (see `McpRequest::peer_addr`).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn address(&self) -> Option<std::net::SocketAddr> {
        self.inner.address
    }

    /// The server, to announce changes: a resource updated, a list changed.
    pub fn server(&self) -> &ServerHandle {
        &self.inner.server
    }

    /// What middleware layers put in the request's extensions (see
    /// [`middleware`](crate::middleware)); [`Extension`] takes one value as a parameter.
    pub fn extensions(&self) -> &Extensions {
        &self.inner.extensions
    }
}

/// A question to the client under a key the handler chose: see [`Context::input`].
pub struct Input<'a> {
    ctx: &'a Context,
    key: String,
}

impl Input<'_> {
    /// [`Context::elicit`] under this key.
    pub async fn elicit<T: Elicit>(
        self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ClientRequestError> {
        self.ctx.elicit_keyed(Some(&self.key), message.into()).await
    }

    /// [`Context::elicit_url`] under this key.
    pub async fn elicit_url(
        self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<UrlElicitation, ClientRequestError> {
        self.ctx
            .elicit_url_keyed(Some(&self.key), message.into(), url.into())
            .await
    }

    /// [`Context::sample`] under this key.
    pub async fn sample(
        self,
        request: SamplingRequest,
    ) -> Result<SamplingResult, ClientRequestError> {
        self.ctx.sample_keyed(Some(&self.key), request).await
    }

    /// [`Context::roots`] under this key.
    pub async fn roots(self) -> Result<Vec<Root>, ClientRequestError> {
        self.ctx.roots_keyed(Some(&self.key)).await
    }
}

impl std::fmt::Debug for Input<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input").field("key", &self.key).finish()
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.id)
            .field("protocol_version", &self.inner.version)
            .finish_non_exhaustive()
    }
}

static ELICITATION_IDS: AtomicU64 = AtomicU64::new(1);

/// A progress message: a `&str`, a `String`, or an `Option` of either (`None::<&str>` for none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgressMessage(Option<String>);

impl From<&str> for ProgressMessage {
    fn from(text: &str) -> Self {
        Self(Some(text.to_owned()))
    }
}

impl From<String> for ProgressMessage {
    fn from(text: String) -> Self {
        Self(Some(text))
    }
}

impl From<Option<String>> for ProgressMessage {
    fn from(text: Option<String>) -> Self {
        Self(text)
    }
}

impl From<Option<&str>> for ProgressMessage {
    fn from(text: Option<&str>) -> Self {
        Self(text.map(str::to_owned))
    }
}

/// Before 2025-11-25 clients know only the legacy enum forms: titled single-select enums become
/// `enum` + `enumNames`, and defaults other than booleans' are left out.
fn downgrade_elicitation_schema(schema: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for property in properties.values_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        if property.get("type").and_then(Value::as_str) != Some("boolean") {
            property.remove("default");
        }
        if let Some(Value::Array(options)) = property.remove("oneOf") {
            let values = options
                .iter()
                .filter_map(|o| o.get("const").cloned())
                .collect();
            let names = options
                .iter()
                .map(|o| o.get("title").cloned().unwrap_or(Value::Null))
                .collect();
            property.insert("enum".into(), Value::Array(values));
            property.insert("enumNames".into(), Value::Array(names));
        }
    }
}

/// Why a context parameter could not be provided. It becomes a tool error naming the parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ContextError(pub String);

/// A type a handler can receive as a context parameter: injected from the request, never part of
/// the input schema.
///
/// Implement it for your own types to inject them (a database pool from a global, the caller's
/// identity from `_meta`):
///
/// ```
/// use mcp_runtime::context::{Context, ContextError, FromContext};
///
/// struct TraceId(Option<String>);
///
/// impl FromContext for TraceId {
///     fn from_context(ctx: &Context) -> Result<Self, ContextError> {
///         let id = ctx.meta().0.get("traceparent").and_then(|v| v.as_str()).map(str::to_owned);
///         Ok(TraceId(id))
///     }
/// }
/// ```
pub trait FromContext: Sized {
    /// Extracts the value from the request's context.
    fn from_context(ctx: &Context) -> Result<Self, ContextError>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.clone())
    }
}

/// A handler parameter of type `Principal`: the request's caller. A request without one (stdio,
/// HTTP without OAuth) fails with an error naming it.
impl FromContext for Principal {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        ctx.principal().cloned().ok_or_else(|| {
            ContextError("this request carries no principal: the server has no OAuth".to_owned())
        })
    }
}

impl FromContext for RequestId {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.id.clone())
    }
}

impl FromContext for ProtocolVersion {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.version)
    }
}

impl FromContext for Meta {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.meta.clone())
    }
}

impl FromContext for ServerHandle {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.server.clone())
    }
}

impl FromContext for ClientInfo {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok((*ctx.inner.client).clone())
    }
}
