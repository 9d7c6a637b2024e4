//! Middleware: `tower` layers around the request path.
//!
//! A request, once parsed and classified (its era, its session or envelope, its caller) and
//! before it is dispatched to a method, is an [`McpRequest`]; what answers it is an
//! [`McpResponse`]. Between the two sits a [`tower::Service`]: [`Server::layer`](crate::Server::layer) wraps every
//! request of every transport (stdio, Streamable HTTP, legacy SSE) and era in a
//! [`tower::Layer`], and [`ToolDef::layer`](crate::tool::ToolDef::layer) (`#[tool(layer =
//! ..)]`, the same on `#[resource]` and `#[prompt]`) wraps the calls of one item only. The
//! innermost service, [`Next`], is the server's own dispatch.
//!
//! ```
//! use std::time::Duration;
//! use mcp_runtime::prelude::*;
//! use tower::limit::ConcurrencyLimitLayer;
//! use tower::timeout::TimeoutLayer;
//!
//! /// Add two integers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! /// Search the web; slow, so it gets a deadline of its own.
//! #[tool(layer = TimeoutLayer::new(Duration::from_secs(10)))]
//! async fn search(query: String) -> String {
//!     query
//! }
//!
//! let server = Server::builder()
//!     .tool(add)
//!     .tool(search)
//!     // At most 64 requests run at once; the 65th waits for a place.
//!     .layer(ConcurrencyLimitLayer::new(64));
//! # let _ = server;
//! ```
//!
//! # What a layer sees and may do
//!
//! - The request: [`McpRequest::method`], [`params`](McpRequest::params) (and
//!   [`params_mut`](McpRequest::params_mut) to change them), [`id`](McpRequest::id),
//!   [`era`](McpRequest::era) and [`protocol_version`](McpRequest::protocol_version),
//!   [`session_id`](McpRequest::session_id), [`principal`](McpRequest::principal) (OAuth),
//!   [`transport`](McpRequest::transport), [`peer_addr`](McpRequest::peer_addr), the called
//!   [`tool`](McpRequest::tool).
//! - Its [`extensions`](McpRequest::extensions_mut): values of your own types a layer puts
//!   there, which later layers read and which handlers take as an [`Extension<T>`] parameter
//!   (or through [`Context::extensions`](crate::Context::extensions)).
//! - Answer on its own, without calling the next service: [`McpResponse::error`],
//!   [`McpResponse::result`], [`McpResponse::rate_limited`], a cached response.
//! - Read and change the answer: [`McpResponse::as_error`],
//!   [`is_tool_error`](McpResponse::is_tool_error), [`to_result`](McpResponse::to_result).
//!
//! [`from_fn`] turns an `async fn(McpRequest, Next) -> McpResponse` into a layer, for the
//! common case of a layer with no state of its own.
//!
//! # Order
//!
//! Each [`Server::layer`](crate::Server::layer) wraps everything added before it, as axum's `Router::layer` does: the
//! last one added sees a request first. `tower::ServiceBuilder` composes several in reading
//! order (its first is outermost). A per-item layer runs inside the server's layers, right
//! before the item's handler. Between the two run, for their items only, the layers of a
//! server mounted into this one ([`Server::mount`](crate::Server::mount), outer mounts
//! first) and of a proxied upstream (`gateway::Upstream::layer`).
//!
//! # Errors
//!
//! A layer's service may fail (`Err`), as tower's own do; the runtime answers for it, and the
//! connection goes on:
//!
//! | error | answer |
//! |---|---|
//! | `tower::timeout::error::Elapsed` (`TimeoutLayer`) | `tools/call`: a tool error (`isError: true`, "tool `x` timed out"); anything else: -32603 "the request timed out" |
//! | `tower::load_shed::error::Overloaded` (`LoadShedLayer`) | -32024 (`Unavailable`) "the server is busy" with `data: {"reason": "overloaded", "retryAfterMs": 1000}`, and over HTTP status 503 with `Retry-After: 1` |
//! | anything else | -32603 "internal error"; the error itself is logged, never sent |
//!
//! The built-in [`RateLimitLayer`] answers a request over its rate with
//! [`error_codes::RATE_LIMITED`](crate::protocol::error_codes::RATE_LIMITED) (-32023
//! `RateLimited` of the SEP-3304 draft, `data: {"retryAfterMs": ms}`), and over HTTP status 429
//! with `Retry-After` = ceil(ms / 1000).
//!
//! # What goes through the layers
//!
//! Every request but the handshake's own `initialize` and `ping`, which are answered in order
//! before anything read after them (a layer could hold them up). `subscriptions/listen` goes
//! through them too, and its answer comes when the listen ends: keep timeouts off it (on the
//! tools that need one, or behind a method check). Notifications and the client's responses do
//! not. A server with no layer, server-wide or on any item, runs the request path with none of
//! the layers' machinery: the check is one pointer. Through the layers, a request's params stay
//! as read until a layer asks for them whole ([`McpRequest::params`]).
//!
//! A layer sees a request once the transport has admitted it: its bytes, and what parsing them
//! built, are charged to its client's share of `Server::request_bytes_total`, and it holds a
//! place in its session's window. Both are held until the request is answered, whatever answers
//! it (a layer on its own, a refusal, a timeout, a panic, which becomes -32603), or until it is
//! cancelled. What a layer refuses has still been read: to keep a client from sending at all,
//! the shares and the transport's limits come first.
//!
//! # Where it sits
//!
//! The layers are built on the server's core the way tower's middleware is built on
//! `tower::Service` and `tower::Layer`: [`McpRequest`], [`McpResponse`], [`Next`] and [`McpLayer`]
//! belong to the server (this module re-exports them), and this module adds the layers the runtime
//! ships. It may import the server's core, the items, `context` and `protocol`; the server never
//! imports it, and only the gateway and the transports above it may.

mod cache;
mod mask;
#[cfg(feature = "rate-limit")]
mod rate_limit;
use std::convert::Infallible;
use std::task::{Context as TaskContext, Poll};

use tower::{Layer, Service};

pub use self::cache::{CacheLayer, CacheService, CacheVary};
pub use self::mask::{ErrorMasking, ErrorMaskingLayer};
#[cfg(feature = "rate-limit")]
pub use self::rate_limit::{RateKey, RateLimit, RateLimitLayer};
pub use crate::context::{Extension, Extensions};
pub use crate::server::exchange::{
    BoxError, Era, McpLayer, McpRequest, McpResponse, Next, Transport,
};

/// A layer made from an async function of the request and the rest of the path: see
/// [`from_fn`].
#[derive(Clone)]
pub struct FromFnLayer<F> {
    f: F,
}

/// The service of a [`FromFnLayer`].
#[derive(Clone)]
pub struct FromFn<F> {
    f: F,
    next: Next,
}

/// A layer from an `async` function that takes the request and the rest of the path, and
/// returns the answer: call `next.run(request)` to go on, or answer without it.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::middleware::{self, McpRequest, McpResponse, Next};
/// use mcp_runtime::protocol::ErrorObject;
///
/// #[derive(Clone)]
/// struct Tenant(String);
///
/// /// Who is calling?
/// #[tool]
/// async fn whoami(middleware::Extension(tenant): middleware::Extension<Tenant>) -> String {
///     tenant.0
/// }
///
/// async fn tenant(mut request: McpRequest, next: Next) -> McpResponse {
///     let Some(tenant) = request.meta().and_then(|m| m.get("tenant")?.as_str()).map(str::to_owned)
///     else {
///         let error = ErrorObject::invalid_params("`_meta.tenant` is required");
///         return McpResponse::error(request.id().clone(), error);
///     };
///     request.extensions_mut().insert(Tenant(tenant));
///     next.run(request).await
/// }
///
/// let server = Server::builder().tool(whoami).layer(middleware::from_fn(tenant));
/// # let _ = server;
/// ```
pub fn from_fn<F, Fut>(f: F) -> FromFnLayer<F>
where
    F: Fn(McpRequest, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = McpResponse> + Send + 'static,
{
    FromFnLayer { f }
}

impl<F: Clone> Layer<Next> for FromFnLayer<F> {
    type Service = FromFn<F>;

    fn layer(&self, next: Next) -> FromFn<F> {
        FromFn {
            f: self.f.clone(),
            next,
        }
    }
}

impl<F, Fut> Service<McpRequest> for FromFn<F>
where
    F: Fn(McpRequest, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = McpResponse> + Send + 'static,
{
    type Response = McpResponse;
    type Error = Infallible;
    type Future = FromFnFuture<Fut>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        FromFnFuture {
            inner: (self.f)(request, self.next.clone()),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`FromFn`] service: the function's, never failing.
    pub struct FromFnFuture<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future<Output = McpResponse>> Future for FromFnFuture<F> {
    type Output = Result<McpResponse, Infallible>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.project().inner.poll(cx).map(Ok)
    }
}
