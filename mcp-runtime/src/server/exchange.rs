//! The request path as the layers see it: an [`McpRequest`] on its way to its method, the
//! [`McpResponse`] that answers it, the [`Next`] service that ends in the dispatch, and the
//! [`McpLayer`] bound that a `tower::Layer` meets to wrap it. These are the server's own types,
//! the way `tower::Service` and `tower::Layer` are tower's core and the layers sit outside it:
//! the built-in layers and their docs are in [`middleware`](crate::middleware), which re-exports
//! these, and the telemetry reads a request's [`Transport`] from here.
//!
//! The innermost [`Next`] runs the dispatch through the [`Route`] each request carries (the
//! dispatch puts its own entry point there), so this file never names the dispatch.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tower::{Layer, Service};

use super::link::Link;
pub use super::link::Transport;
use super::registry::Registry;
use super::stateless::Envelope;
use super::{Core, Sink};
use crate::context::{BoxFuture, CancelFlag, Extensions, Principal};
use crate::prompt::PromptDef;
use crate::protocol::{
    ErrorObject, ProtocolVersion, Refusal, Request, RequestId, encode_error, encode_response,
    error_codes,
};
use crate::resource::ResourceDef;
use crate::tool::{CallToolResult, ToolDef};

pub use tower::BoxError;

/// The dispatch's entry point for a request that has come through the layers: what the
/// innermost [`Next`] calls. The dispatch puts it in each request's [`Origin`].
pub(crate) type Route = fn(McpRequest) -> BoxFuture<Answer>;

/// Which protocol era a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2024-11-05 to 2025-11-25: a session opened by `initialize`.
    Handshake,
    /// 2026-07-28: the request carries its own envelope in `params._meta`.
    Stateless,
}

/// Where a request came from and where its answer goes: what the server's dispatch needs.
#[derive(Clone)]
pub(crate) struct Origin {
    pub(crate) core: Arc<Core>,
    /// The connection, for handshake-era requests (and stateless ones on stdio).
    pub(crate) link: Option<Arc<dyn Link>>,
    pub(crate) sink: Sink,
    pub(crate) cancel: Arc<CancelFlag>,
    /// The snapshot of what is served that the request is dispatched against.
    pub(crate) registry: Arc<Registry>,
    /// The stateless era's envelope.
    pub(crate) envelope: Option<Envelope>,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) transport: Transport,
    /// How many of the item's stacks of layers have run (see [`ItemStacks`]).
    pub(crate) item_stage: usize,
    /// Where the innermost layer hands the request on: the dispatch.
    pub(crate) route: Route,
}

/// A request on its way to its method: what middleware sees. See the [module docs](crate::middleware).
#[derive(Clone)]
pub struct McpRequest {
    /// Boxed: a request is moved through every layer's future, and one pointer moves cheaply.
    pub(crate) inner: Box<RequestParts>,
}

/// What an [`McpRequest`] holds.
#[derive(Clone)]
pub(crate) struct RequestParts {
    pub(crate) request: Request,
    pub(crate) extensions: Extensions,
    pub(crate) origin: Origin,
    /// The params as serde_json's map, made when a layer reads them whole with
    /// [`McpRequest::params`] while they are still as read from the wire.
    pub(crate) params_read: OnceLock<Map<String, Value>>,
}

impl McpRequest {
    /// A request on its way through the middleware, with no extensions yet. Its params stay as
    /// they were read: a layer that reads only the id, method, target or `_meta` costs no map.
    pub(crate) fn new(request: Request, origin: Origin) -> Self {
        Self {
            inner: Box::new(RequestParts {
                request,
                extensions: Extensions::new(),
                origin,
                params_read: OnceLock::new(),
            }),
        }
    }

    /// The params' member `key`, however they are held.
    pub(crate) fn param(&self, key: &str) -> Option<&Value> {
        self.inner.request.params.get(key)
    }

    /// The JSON-RPC id the answer must echo.
    pub fn id(&self) -> &RequestId {
        &self.inner.request.id
    }

    /// The method, for example `tools/call`.
    pub fn method(&self) -> &str {
        &self.inner.request.method
    }

    /// The params object (empty when the request had none).
    ///
    /// The params are read from the wire into a form of the runtime's own; the first call
    /// makes a copy of them as serde_json's map, which later calls return. The copy is held
    /// until the request reaches its method and is not charged to `Server::request_bytes_total`
    /// (the params are held twice until then). [`meta`](Self::meta) and
    /// [`target`](Self::target) read a member without it, and
    /// [`params_mut`](Self::params_mut) turns the params into the map in place.
    pub fn params(&self) -> &Map<String, Value> {
        let parts = &*self.inner;
        match parts.request.params.as_map() {
            Some(map) => map,
            None => parts
                .params_read
                .get_or_init(|| parts.request.params.clone().into_map()),
        }
    }

    /// The params object, to change what the method receives. (A stateless request's envelope
    /// in `_meta` was read before the layers ran: changing it there changes nothing.)
    pub fn params_mut(&mut self) -> &mut Map<String, Value> {
        // The params become the map itself, which `params` returns from now on: a copy it made
        // before is dropped.
        self.inner.params_read.take();
        self.inner.request.params.make_map()
    }

    /// `params._meta`, when the request has one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.param("_meta").and_then(Value::as_object)
    }

    /// What the request is about: the tool's name on `tools/call`, the prompt's on
    /// `prompts/get`, the URI on `resources/read` and `resources/(un)subscribe`.
    pub fn target(&self) -> Option<&str> {
        let key = match self.inner.request.method.as_ref() {
            "tools/call" | "prompts/get" => "name",
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
            _ => return None,
        };
        self.param(key).and_then(Value::as_str)
    }

    /// The tool a `tools/call` names, when this server serves it (enabled).
    pub fn tool(&self) -> Option<&ToolDef> {
        if self.inner.request.method != "tools/call" {
            return None;
        }
        let name = self.target()?;
        self.inner
            .origin
            .registry
            .tools
            .get(name)
            .map(|(tool, _)| tool)
    }

    /// The prompt a `prompts/get` names, when this server serves it.
    pub fn prompt(&self) -> Option<&PromptDef> {
        if self.inner.request.method != "prompts/get" {
            return None;
        }
        let name = self.target()?;
        self.inner
            .origin
            .registry
            .prompts
            .get(name)
            .map(|(prompt, _)| prompt)
    }

    /// The resource or template a `resources/read` reads, when this server serves one.
    pub fn resource(&self) -> Option<&ResourceDef> {
        if self.inner.request.method != "resources/read" {
            return None;
        }
        let uri = self.target()?;
        self.inner
            .origin
            .registry
            .resources
            .resolve(uri)
            .map(|(def, _)| def)
    }

    /// The handshake era (a session) or the stateless one (an envelope).
    pub fn era(&self) -> Era {
        if self.inner.origin.envelope.is_some() {
            Era::Stateless
        } else {
            Era::Handshake
        }
    }

    /// The revision the request is served under: the session's, or the envelope's. `None` for a
    /// request on a session that `initialize` has not settled yet (dispatch refuses it).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.inner.origin.version
    }

    /// The session the request belongs to: a Streamable HTTP session's `Mcp-Session-Id`, a
    /// legacy SSE session's `sessionId`, or `stdio-N` for the Nth stdio connection of the
    /// process (every request on it, in either era). `None` for a stateless (2026-07-28) HTTP
    /// request and on a `stateless_http` server.
    pub fn session_id(&self) -> Option<&str> {
        self.inner
            .origin
            .link
            .as_ref()
            .and_then(|link| link.trace_name())
    }

    /// The caller the request's access token vouched for: over HTTP on a server with OAuth.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.origin.sink.principal().map(|p| &**p)
    }

    /// The transport the request came on.
    pub fn transport(&self) -> Transport {
        self.inner.origin.transport
    }

    /// The client's address, over HTTP as `serve_http` accepted the connection (with
    /// `into_router`, when the requests carry axum's `ConnectInfo`). Behind a proxy it is the
    /// proxy's, unless the proxy is one of [`Server::trusted_proxies`](crate::Server): then it
    /// is the client that proxy's `Forwarded` / `X-Forwarded-For` names, with port 0 (as the
    /// fair shares read it).
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.inner.origin.sink.peer()
    }

    /// The client as the fair shares count it: the principal with OAuth, else the address
    /// (an IPv6 address by its /64); `None` on stdio and where the address is not known.
    pub(crate) fn client_key(&self) -> Option<super::ClientKey> {
        match self.principal() {
            Some(principal) => Some(super::ClientKey::Principal(principal.binding_key().into())),
            None => self
                .peer_addr()
                .map(|peer| super::ClientKey::address(peer.ip())),
        }
    }

    /// Whether the client cancelled the request (or went away).
    pub fn is_cancelled(&self) -> bool {
        self.inner.origin.cancel.is_cancelled()
    }

    /// The request's extensions.
    pub fn extensions(&self) -> &Extensions {
        &self.inner.extensions
    }

    /// The request's extensions, to add to: what is put here reaches the layers after this
    /// one and the handler ([`Extension<T>`](crate::middleware::Extension)).
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.inner.extensions
    }

    /// The item's stack of layers at `stage` (outermost first), when it has one.
    fn item_stack(&self, stage: usize) -> Option<Next> {
        let layer = match self.inner.request.method.as_ref() {
            "tools/call" => self.tool()?.layer.as_ref(),
            "prompts/get" => self.prompt()?.layer.as_ref(),
            "resources/read" => self.resource()?.layer.as_ref(),
            _ => None,
        }?;
        layer.downcast_ref::<ItemStacks>()?.get(stage)
    }
}

impl std::fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("id", &self.inner.request.id)
            .field("method", &self.inner.request.method)
            .field("era", &self.era())
            .field("transport", &self.inner.origin.transport)
            .field("session_id", &self.session_id())
            .finish_non_exhaustive()
    }
}

/// How a request ended, as telemetry and the HTTP transport need to know it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Status {
    /// A result.
    Ok,
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// A JSON-RPC error.
    Error(Box<ErrorObject>),
}

/// A request's answer, encoded, with what is known about it.
pub(crate) struct Answer {
    pub(crate) bytes: Vec<u8>,
    pub(crate) status: Status,
    /// A final result: not an input-required round or a task handle (which no cache keeps).
    pub(crate) complete: bool,
    /// How HTTP should send it when it is a POST's whole answer.
    pub(crate) refusal: Option<Refusal>,
}

impl Answer {
    pub(crate) fn ok(bytes: Vec<u8>) -> Self {
        Self {
            bytes,
            status: Status::Ok,
            complete: true,
            refusal: None,
        }
    }

    /// An input-required round or a task handle.
    pub(crate) fn incomplete(bytes: Vec<u8>) -> Self {
        Self {
            complete: false,
            ..Self::ok(bytes)
        }
    }

    pub(crate) fn tool(bytes: Vec<u8>, is_error: bool) -> Self {
        Self {
            status: if is_error {
                Status::ToolError
            } else {
                Status::Ok
            },
            ..Self::ok(bytes)
        }
    }

    pub(crate) fn error(id: Option<&RequestId>, error: ErrorObject) -> Self {
        Self {
            bytes: encode_error(id, &error),
            status: Status::Error(Box::new(error)),
            complete: true,
            refusal: None,
        }
    }
}

/// How an encoded response ended, read back from it (the handshake's own answers, which carry
/// no status).
pub(crate) fn status_of(bytes: &[u8]) -> Status {
    #[derive(serde::Deserialize)]
    struct Reply {
        error: Option<ErrorObject>,
    }
    match serde_json::from_slice::<Reply>(bytes) {
        Ok(Reply { error: Some(error) }) => Status::Error(Box::new(error)),
        _ => Status::Ok,
    }
}

/// What an [`McpResponse`] holds: the encoded response the dispatch wrote, or a value a layer
/// made.
#[derive(Debug, Clone)]
enum Body {
    /// A whole JSON-RPC response, as the server's dispatch encoded it.
    Encoded(Vec<u8>),
    /// A result a layer made; a stateless request's result gets the era's fields when sent.
    Result(Value),
    /// The error in the status.
    Error,
}

/// The answer to an [`McpRequest`]: a result (a tool's, possibly `isError`) or a JSON-RPC
/// error. See the [module docs](crate::middleware).
#[derive(Debug, Clone)]
pub struct McpResponse {
    id: RequestId,
    body: Body,
    status: Status,
    complete: bool,
    refusal: Option<Refusal>,
    extensions: Extensions,
}

impl McpResponse {
    /// A result: `result` is sent as the response's `result` member (for a stateless request,
    /// with the era's `resultType` and `_meta` added).
    pub fn result(id: RequestId, result: Value) -> Self {
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        Self {
            id,
            body: Body::Result(result),
            status: if is_error {
                Status::ToolError
            } else {
                Status::Ok
            },
            complete: true,
            refusal: None,
            extensions: Extensions::new(),
        }
    }

    /// A `tools/call` result.
    pub fn tool_result(id: RequestId, result: &CallToolResult) -> Self {
        match serde_json::to_value(result) {
            Ok(value) => Self::result(id, value),
            Err(_) => Self::error(
                id,
                ErrorObject::internal("the result could not be serialized"),
            ),
        }
    }

    /// A JSON-RPC error.
    pub fn error(id: RequestId, error: ErrorObject) -> Self {
        Self {
            id,
            body: Body::Error,
            status: Status::Error(Box::new(error)),
            complete: true,
            refusal: None,
            extensions: Extensions::new(),
        }
    }

    /// The refusal of a request over its rate: -32023
    /// ([`RATE_LIMITED`](crate::protocol::error_codes::RATE_LIMITED), SEP-3304) with `data:
    /// {"retryAfterMs": ms}` (whole milliseconds, rounded up, at least 1), and over HTTP
    /// status 429 with `Retry-After` = ceil(ms / 1000) seconds.
    pub fn rate_limited(id: RequestId, retry_after: Duration) -> Self {
        let millis = crate::protocol::retry_millis(retry_after);
        let error = ErrorObject::new(
            error_codes::RATE_LIMITED,
            format!("rate limit exceeded: retry after {millis} ms"),
        )
        .with_data(json!({ "retryAfterMs": millis }));
        Self::error(id, error).with_http_status(429, Some(Duration::from_millis(millis)))
    }

    /// The refusal of a request the server has no room for now: -32024
    /// ([`UNAVAILABLE`](crate::protocol::error_codes::UNAVAILABLE)) "the server is busy" with
    /// `data: {"reason": "overloaded", "retryAfterMs": 1000}`, and over HTTP status 503 with
    /// `Retry-After: 1`.
    pub fn overloaded(id: RequestId) -> Self {
        let wait = Duration::from_secs(1);
        let error = ErrorObject::unavailable("the server is busy: try again shortly", wait);
        Self::error(id, error).with_http_status(503, Some(wait))
    }

    /// The id the response answers.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Makes the response answer `id` instead (a response kept from another request). The
    /// runtime does this itself for a layer's response to the request it answers.
    pub fn set_id(&mut self, id: RequestId) {
        if id == self.id {
            return;
        }
        if let Body::Encoded(bytes) = &mut self.body {
            *bytes = with_id(bytes, &self.id, &id);
        }
        self.id = id;
    }

    /// The JSON-RPC error, when the response is one.
    pub fn as_error(&self) -> Option<&ErrorObject> {
        match &self.status {
            Status::Error(error) => Some(error),
            _ => None,
        }
    }

    /// Whether the response is a JSON-RPC error.
    pub fn is_error(&self) -> bool {
        matches!(self.status, Status::Error(_))
    }

    /// Whether the response is a `tools/call` result with `isError: true`.
    pub fn is_tool_error(&self) -> bool {
        self.status == Status::ToolError
    }

    /// The `result` member, as JSON (parsed from the encoded response: this costs what parsing
    /// it costs); `None` for an error.
    pub fn to_result(&self) -> Option<Value> {
        match &self.body {
            Body::Result(value) => Some(value.clone()),
            Body::Error => None,
            Body::Encoded(bytes) => {
                let mut message: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
                message.remove("result")
            }
        }
    }

    /// Replaces the error of an error response (its code, message and data).
    pub fn set_error(&mut self, error: ErrorObject) {
        self.body = Body::Error;
        self.status = Status::Error(Box::new(error));
    }

    /// Whether the response is a final result: not an input-required round (2026-07-28) or a
    /// task handle, which must never be replayed for another request.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The HTTP status a POST answered with only this response gets (200 unless set), and the
    /// `Retry-After` it carries. On an SSE stream and on stdio only the JSON-RPC message goes.
    pub fn with_http_status(mut self, status: u16, retry_after: Option<Duration>) -> Self {
        self.refusal = Some(Refusal {
            status,
            retry_after: retry_after.map(retry_seconds),
        });
        self
    }

    /// The HTTP status set with [`with_http_status`](Self::with_http_status).
    pub fn http_status(&self) -> Option<u16> {
        self.refusal.map(|r| r.status)
    }

    /// The `Retry-After` set with [`with_http_status`](Self::with_http_status), in seconds.
    pub fn retry_after(&self) -> Option<Duration> {
        self.refusal
            .and_then(|r| r.retry_after)
            .map(|s| Duration::from_secs(u64::from(s)))
    }

    /// The response's extensions: what layers closer to the handler tell the ones outside.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The response's extensions, to add to.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }

    /// About how many bytes the response holds.
    pub(crate) fn encoded_len(&self) -> usize {
        match &self.body {
            Body::Encoded(bytes) => bytes.len(),
            Body::Result(value) => serde_json::to_vec(value).map_or(0, |v| v.len()),
            Body::Error => self.as_error().map_or(0, |e| e.message.len() + 64),
        }
    }

    /// The dispatch's answer, as a response.
    pub(crate) fn from_answer(id: RequestId, answer: Answer) -> Self {
        let body = match answer.status {
            Status::Error(_) if answer.bytes.is_empty() => Body::Error,
            _ => Body::Encoded(answer.bytes),
        };
        Self {
            id,
            body,
            status: answer.status,
            complete: answer.complete,
            refusal: answer.refusal,
            extensions: Extensions::new(),
        }
    }

    /// The response as the connection sends it, with `stamp` giving a stateless result its
    /// era's fields.
    pub(crate) fn into_answer(self, stamp: Option<&dyn Fn(Value) -> Value>) -> Answer {
        let bytes = match (self.body, &self.status) {
            (Body::Encoded(bytes), _) => bytes,
            (_, Status::Error(error)) => encode_error(Some(&self.id), error),
            (Body::Result(value), _) => match stamp {
                Some(stamp) => encode_response(&self.id, &stamp(value)),
                None => encode_response(&self.id, &value),
            },
            (Body::Error, _) => {
                encode_error(Some(&self.id), &ErrorObject::internal("internal error"))
            }
        };
        Answer {
            bytes,
            status: self.status,
            complete: self.complete,
            refusal: self.refusal,
        }
    }
}

/// Whole seconds to wait, at least one.
fn retry_seconds(wait: Duration) -> u32 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    u32::try_from(seconds.max(1)).unwrap_or(u32::MAX)
}

/// `bytes`, a response the server encoded for `old`, answering `new` instead.
fn with_id(bytes: &[u8], old: &RequestId, new: &RequestId) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    let mut prefix = HEAD.to_vec();
    let _ = serde_json::to_writer(&mut prefix, old);
    if let Some(rest) = bytes.strip_prefix(prefix.as_slice()) {
        let mut out = HEAD.to_vec();
        let _ = serde_json::to_writer(&mut out, new);
        out.extend_from_slice(rest);
        return out;
    }
    // Not written by this server's encoder: through JSON.
    match serde_json::from_slice::<Map<String, Value>>(bytes) {
        Ok(mut message) => {
            message.insert("id".into(), new.to_json());
            serde_json::to_vec(&message).unwrap_or_default()
        }
        Err(_) => bytes.to_vec(),
    }
}

/// A type-erased service of the request path, cloned for each request.
trait Erased: Send + Sync {
    fn clone_box(&self) -> Box<dyn Erased>;
    /// Whether the service can never fail (its error is `Infallible`, as `from_fn`'s).
    fn infallible(&self) -> bool;
    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>>;
    fn call(&mut self, request: McpRequest) -> BoxFuture<Result<McpResponse, BoxError>>;
}

impl<S> Erased for S
where
    S: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError> + 'static,
    S::Future: Send + 'static,
{
    fn clone_box(&self) -> Box<dyn Erased> {
        Box::new(self.clone())
    }

    fn infallible(&self) -> bool {
        std::any::TypeId::of::<S::Error>() == std::any::TypeId::of::<Infallible>()
    }

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Service::poll_ready(self, cx).map_err(Into::into)
    }

    fn call(&mut self, request: McpRequest) -> BoxFuture<Result<McpResponse, BoxError>> {
        let future = Service::call(self, request);
        Box::pin(async move { future.await.map_err(Into::into) })
    }
}

/// The rest of the request path, as a layer wraps it: the layers inside this one, then the
/// server's dispatch (for a per-item layer: the item's handler).
///
/// A `tower::Service<McpRequest, Response = McpResponse, Error = BoxError>`, cheap to clone.
/// [`Next::run`] calls it and turns an error into the answer the runtime would send (see the
/// [module docs](crate::middleware)).
pub struct Next {
    inner: Option<Box<dyn Erased>>,
}

impl Clone for Next {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.as_ref().map(|inner| inner.clone_box()),
        }
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.inner {
            Some(_) => "Next(layers, then dispatch)",
            None => "Next(dispatch)",
        })
    }
}

impl Next {
    /// The server's dispatch itself.
    pub(crate) fn dispatch() -> Self {
        Self { inner: None }
    }

    fn new<S>(service: S) -> Self
    where
        S: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError> + 'static,
        S::Future: Send + 'static,
    {
        Self {
            inner: Some(Box::new(service)),
        }
    }

    /// Runs `request` through the rest of the path: waits until the next service is ready,
    /// calls it, and answers an error as the runtime does (see the [module docs](crate::middleware)).
    pub async fn run(self, request: McpRequest) -> McpResponse {
        // The dispatch itself is always ready and never fails: no error to answer. (Its future
        // is small: the route's is boxed, and so is an item's stack of layers.)
        let Some(mut inner) = self.inner else {
            return dispatch(request).await;
        };
        let failure = Failure::of(&request, !inner.infallible());
        let ready = std::future::poll_fn(|cx| inner.poll_ready(cx)).await;
        let outcome = match ready {
            Ok(()) => inner.call(request).await,
            Err(error) => Err(error),
        };
        outcome.unwrap_or_else(|error| failure.answer(error))
    }
}

impl Service<McpRequest> for Next {
    type Response = McpResponse;
    type Error = BoxError;
    type Future = BoxFuture<Result<McpResponse, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        match &mut self.inner {
            Some(inner) => inner.poll_ready(cx),
            None => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        match &mut self.inner {
            Some(inner) => inner.call(request),
            None => Box::pin(async move { Ok(dispatch(request).await) }),
        }
    }
}

/// The innermost step: the item's next stack of layers if it has one, else the method.
async fn dispatch(mut request: McpRequest) -> McpResponse {
    // Only a snapshot that has item layers is searched for the item's.
    if request.inner.origin.registry.layered {
        let stage = request.inner.origin.item_stage;
        request.inner.origin.item_stage += 1;
        if let Some(stack) = request.item_stack(stage) {
            return run_boxed(stack, request).await;
        }
    }
    let id = request.inner.request.id.clone();
    let route = request.inner.origin.route;
    McpResponse::from_answer(id, route(request).await)
}

/// `next.run(request)`, boxed: an item's stack of layers run from [`dispatch`], whose future
/// the stack's would otherwise hold again.
fn run_boxed(next: Next, request: McpRequest) -> BoxFuture<McpResponse> {
    Box::pin(next.run(request))
}

/// Runs `request` through the server's layers (the item's inside them) to its answer, with
/// the id it must carry.
pub(crate) async fn serve(request: McpRequest) -> Answer {
    let core = Arc::clone(&request.inner.origin.core);
    let id = request.inner.request.id.clone();
    let stateless = request.inner.origin.envelope.is_some();
    let method = stateless.then(|| request.inner.request.method.clone());
    let next = core.middleware.clone().unwrap_or_else(Next::dispatch);
    let mut response = next.run(request).await;
    response.set_id(id);
    match &method {
        Some(method) => {
            let stamps = core.stamps();
            let stamp = |value: Value| stamps.for_method(method).apply(value);
            response.into_answer(Some(&stamp))
        }
        None => response.into_answer(None),
    }
}

/// What answering a failed service needs of its request, taken before the request moves in.
struct Failure {
    id: RequestId,
    /// The tool's name, on `tools/call`.
    tool: Option<String>,
}

impl Failure {
    /// `named`: whether the tool's name is kept, for a service that can fail at all.
    fn of(request: &McpRequest, named: bool) -> Self {
        let tool = (named && request.method() == "tools/call")
            .then(|| request.target().map(str::to_owned))
            .flatten();
        Self {
            id: request.id().clone(),
            tool,
        }
    }

    /// The answer to a service's error (see the module docs' table).
    fn answer(self, error: BoxError) -> McpResponse {
        if error.is::<tower::timeout::error::Elapsed>() {
            tracing::warn!(request_id = %self.id, "a request timed out in a middleware layer");
            return match self.tool {
                Some(tool) => McpResponse::tool_result(
                    self.id,
                    &CallToolResult::error(format!("tool `{tool}` timed out")),
                ),
                None => McpResponse::error(self.id, ErrorObject::internal("the request timed out")),
            };
        }
        if error.is::<tower::load_shed::error::Overloaded>() {
            tracing::warn!(request_id = %self.id, "a request was shed: the server is busy");
            return McpResponse::overloaded(self.id);
        }
        tracing::error!(request_id = %self.id, %error, "a middleware layer failed");
        McpResponse::error(self.id, ErrorObject::internal("internal error"))
    }
}

/// A `tower::Layer` that can wrap the request path: one whose service answers [`McpRequest`]
/// with [`McpResponse`]. Implemented for every such layer; [`Server::layer`](crate::Server::layer) and the per-item
/// `layer` take one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot wrap MCP requests",
    label = "not a `tower::Layer<Next>` whose service answers `McpRequest` with `McpResponse`",
    note = "a layer here implements `tower::Layer<mcp_runtime::middleware::Next>`, and its service is `Service<McpRequest, Response = McpResponse>`, `Clone + Send + Sync + 'static`, with an error that converts into `tower::BoxError`"
)]
pub trait McpLayer {
    /// Wraps `next` in this layer.
    #[doc(hidden)]
    fn wrap(self, next: Next) -> Next;
}

impl<L> McpLayer for L
where
    L: Layer<Next>,
    L::Service: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
    <L::Service as Service<McpRequest>>::Error: Into<BoxError> + 'static,
    <L::Service as Service<McpRequest>>::Future: Send + 'static,
{
    fn wrap(self, next: Next) -> Next {
        Next::new(self.layer(next))
    }
}

/// The stack of a server or an item with one more layer outside it.
pub(crate) fn wrap(stack: Option<Next>, layer: impl McpLayer) -> Next {
    layer.wrap(stack.unwrap_or_else(Next::dispatch))
}

/// What an item's `layer` holds: the stacks of layers its requests go through inside the
/// server's, outermost first: those of the servers it was mounted from
/// ([`Server::mount`](crate::Server::mount)) or of its upstream (`Upstream::layer`), then its
/// own. Each ends in the dispatch, which runs the next.
#[derive(Clone, Default)]
pub(crate) struct ItemStacks {
    outer: Vec<Next>,
    own: Option<Next>,
}

impl ItemStacks {
    fn of(stored: Option<&crate::metadata::ItemLayer>) -> Self {
        stored
            .and_then(|stored| stored.downcast_ref::<Self>().cloned())
            .unwrap_or_default()
    }

    fn get(&self, stage: usize) -> Option<Next> {
        self.outer.iter().chain(&self.own).nth(stage).cloned()
    }
}

/// The per-item stacks stored in a definition, with `layer` outside its own.
fn wrap_item(
    stored: Option<crate::metadata::ItemLayer>,
    layer: impl McpLayer,
) -> crate::metadata::ItemLayer {
    let mut stacks = ItemStacks::of(stored.as_ref());
    stacks.own = Some(wrap(stacks.own.take(), layer));
    Arc::new(stacks)
}

/// The per-item stacks stored in a definition, with `stack` (a mounted server's layers, an
/// upstream's) outside all of them.
pub(crate) fn enclose_item(
    stored: Option<crate::metadata::ItemLayer>,
    stack: &Next,
) -> crate::metadata::ItemLayer {
    let mut stacks = ItemStacks::of(stored.as_ref());
    stacks.outer.insert(0, stack.clone());
    Arc::new(stacks)
}

impl ToolDef {
    /// Wraps this tool's calls in `layer` (a `tower::Layer`, see [`middleware`](crate::middleware)),
    /// inside the server's layers; other tools are not touched. Each call wraps what the
    /// previous ones added. `#[tool(layer = ..)]` does the same.
    pub fn layer(mut self, layer: impl McpLayer) -> Self {
        self.layer = Some(wrap_item(self.layer.take(), layer));
        self
    }
}

impl PromptDef {
    /// Wraps this prompt's `prompts/get` in `layer` (see [`ToolDef::layer`]).
    pub fn layer(mut self, layer: impl McpLayer) -> Self {
        self.layer = Some(wrap_item(self.layer.take(), layer));
        self
    }
}

impl ResourceDef {
    /// Wraps this resource's (or template's) `resources/read` in `layer` (see
    /// [`ToolDef::layer`]).
    pub fn layer(mut self, layer: impl McpLayer) -> Self {
        self.layer = Some(wrap_item(self.layer.take(), layer));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_is_moved_to_another_id() {
        let bytes = encode_response(&RequestId::Number(7), &json!({"x": 1}));
        let moved = with_id(&bytes, &RequestId::Number(7), &RequestId::from("a\"b"));
        let value: Value = serde_json::from_slice(&moved).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": "a\"b", "result": {"x": 1}})
        );
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        assert_eq!(retry_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(retry_seconds(Duration::ZERO), 1);
    }
}
