//! `tracing` integration: a span per request, and a layer that sends a handler's `tracing`
//! events to the client that made the request.
//!
//! # Request spans
//!
//! Every request but `initialize` and `ping` runs inside an `INFO` span named `mcp.request` (target
//! `mcp_runtime::request`) with these fields:
//!
//! | field | value |
//! |---|---|
//! | `method` | the JSON-RPC method, for example `tools/call` |
//! | `id` | the request id |
//! | `tool` | the tool's name, on `tools/call` |
//! | `prompt` | the prompt's name, on `prompts/get` |
//! | `uri` | the URI, on `resources/read` |
//! | `session` | the `Mcp-Session-Id` over Streamable HTTP; `stdio-N` for the Nth connection served over stdio or a byte stream |
//!
//! What the client wrote (the method, a string id, a name, a URI) is cut as error messages cut
//! it: past 128 bytes, its head and its length (`"aaa…" (1048576 bytes)`), with telemetry on or
//! off, so a megabyte of id costs a log line a few dozen bytes, not a megabyte each.
//!
//! With [`Server::telemetry`](crate::Server::telemetry), the span carries the OpenTelemetry
//! conventions' fields instead (`mcp.method.name` for `method`, `jsonrpc.request.id` for `id`,
//! `gen_ai.tool.name`, `gen_ai.prompt.name`, `mcp.resource.uri`, `mcp.session.id`, and more: see
//! [`telemetry`](crate::telemetry)), which `tracing-opentelemetry` exports as a `SERVER` span
//! named `tools/call add`; `initialize` and `ping` get a span then too. A log line then reads
//! `INFO mcp.request{otel.name="tools/call add" otel.kind="server" mcp.method.name="tools/call"
//! ... gen_ai.tool.name="add" ...}: my_server: adding`.
//!
//! The span wraps the handler, so a `tracing::info!` inside a `#[tool]` carries them. With
//! `tracing_subscriber::fmt`, a log line reads
//! `INFO mcp.request{method=tools/call id=2 tool=add session=stdio-1}: my_server: adding`.
//! A filter must let the span through for its fields to show (`RUST_LOG=info`, or
//! `mcp_runtime::request=info` next to your own targets).
//!
//! # Logging to the client
//!
//! [`ClientLogLayer`] (cargo feature `client-log-layer`, on by default) forwards the `tracing`
//! events a handler emits to the client that made the request, as `notifications/message`, so
//! existing `tracing` calls reach the client with no [`Context`](crate::Context) in sight:
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::trace::ClientLogLayer;
//! use tracing_subscriber::prelude::*;
//!
//! /// Forecast for a city.
//! #[tool]
//! async fn forecast(city: String) -> String {
//!     tracing::info!(%city, "looking up the forecast");
//!     format!("sunny in {city}")
//! }
//!
//! #[tokio::main]
//! async fn main() -> mcp_runtime::Result<()> {
//!     tracing_subscriber::registry()
//!         // Logs for the operator, on stderr (stdout carries the protocol)...
//!         .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
//!         // ...and for the client.
//!         .with(ClientLogLayer::new())
//!         .init();
//!     Server::new("weather", "1.0.0").serve_stdio().await
//! }
//! ```
//!
//! What the client receives:
//!
//! - `level`: `ERROR` → `error`, `WARN` → `warning`, `INFO` → `info`, `DEBUG` and `TRACE` →
//!   `debug`; sent only at or above the level the client set with `logging/setLevel` (`info`
//!   until it sets one), or, on a stateless 2026-07-28 request, the `logLevel` its envelope
//!   carries (nothing without one): exactly like [`Context::log`](crate::Context::log);
//! - `logger`: the event's target (the module path unless the event names one);
//! - `data`: the message as a string when the event has no other fields, otherwise an object
//!   with `message` and every field (numbers and booleans as JSON, anything else as text).
//!
//! Events outside a request handler are not sent anywhere by this layer, and neither are the
//! runtime's own events (targets under `mcp_runtime`), which may describe internals. An event is
//! inside a handler when it is emitted on the task serving the request: work the handler hands
//! to `tokio::spawn` logs to the client only through an explicit [`Context`](crate::Context).
//! A global filter in front of the layer (such as an `EnvFilter` added with `.with(..)`) drops
//! events before the client can see them; to filter only your own output, give that layer its
//! own filter (`fmt::layer().with_filter(EnvFilter::from_default_env())`).
//!
//! # Where it sits
//!
//! It may import `context` and `protocol`; the server, `telemetry` and the transports import it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::context::Peer;
use crate::protocol::{Method, Request, echo};

tokio::task_local! {
    /// The way back to the client of the request this task serves.
    static CLIENT_LOG: Arc<dyn Peer>;
}

/// Whether a [`ClientLogLayer`] was ever made: without one, requests skip the task-local.
static CLIENT_LOG_WANTED: AtomicBool = AtomicBool::new(false);

/// The span a request runs in; see the [module docs](self).
pub(crate) fn request_span(request: &Request, session: Option<&str>) -> tracing::Span {
    // Every field the client wrote is cut as messages cut it (`echo`): a megabyte of method,
    // id, name or URI costs a log line a few dozen bytes.
    let span = tracing::info_span!(
        target: "mcp_runtime::request",
        "mcp.request",
        method = %echo(&request.method),
        id = %request.id,
        tool = tracing::field::Empty,
        prompt = tracing::field::Empty,
        uri = tracing::field::Empty,
        session = tracing::field::Empty,
    );
    if span.is_disabled() {
        return span;
    }
    let field = Method::parse(&request.method).and_then(|method| {
        let label = match method {
            Method::ToolsCall => "tool",
            Method::PromptsGet => "prompt",
            _ => "uri",
        };
        Some((label, method.target()?))
    });
    if let Some((field, param)) = field
        && let Some(value) = request.params.get(param).and_then(Value::as_str)
    {
        span.record(field, tracing::field::display(echo(value)));
    }
    if let Some(session) = session {
        span.record("session", tracing::field::display(session));
    }
    span
}

/// Runs a request's `future` with `peer` as the destination of [`ClientLogLayer`] events (made
/// only when a layer exists to use it).
pub(crate) fn with_client_log<F>(
    peer: impl FnOnce() -> Arc<dyn Peer>,
    future: F,
) -> WithClientLog<F>
where
    F: Future,
{
    in_client_log(client_log_peer(peer), future)
}

/// The destination of [`ClientLogLayer`] events for a request, made only when a layer exists to
/// use it: taken before the request's future is made, when that future is to own what `peer`
/// borrows.
pub(crate) fn client_log_peer(peer: impl FnOnce() -> Arc<dyn Peer>) -> Option<Arc<dyn Peer>> {
    CLIENT_LOG_WANTED.load(Ordering::Relaxed).then(peer)
}

/// Runs a request's `future` with `peer` (from [`client_log_peer`]) as the destination of
/// [`ClientLogLayer`] events.
pub(crate) fn in_client_log<F: Future>(peer: Option<Arc<dyn Peer>>, future: F) -> WithClientLog<F> {
    match peer {
        Some(peer) => WithClientLog::Scoped {
            future: CLIENT_LOG.scope(peer, future),
        },
        None => WithClientLog::Plain { future },
    }
}

pin_project_lite::pin_project! {
    /// A request's future, run in the [`ClientLogLayer`] scope or as it is: no bigger than the
    /// larger of the two (an `async` block around both would hold both, and be copied with it).
    #[project = WithClientLogProjection]
    pub(crate) enum WithClientLog<F: Future> {
        /// A layer exists: its events reach this request's client.
        Scoped { #[pin] future: tokio::task::futures::TaskLocalFuture<Arc<dyn Peer>, F> },
        /// No layer: nothing to scope.
        Plain { #[pin] future: F },
    }
}

impl<F: Future> Future for WithClientLog<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        match self.project() {
            WithClientLogProjection::Scoped { future } => future.poll(cx),
            WithClientLogProjection::Plain { future } => future.poll(cx),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request's future run inside its span, like `tracing`'s `Instrumented`, but dropped
    /// inside the span as it completes (while entered for that poll) instead of entering the
    /// span once more to drop it afterwards: with `tracing-opentelemetry`, each enter activates
    /// the span's OpenTelemetry context. A request dropped before it completes (cancelled,
    /// its connection gone) is still dropped inside its span.
    pub(crate) struct InSpan<F> {
        #[pin]
        future: Option<F>,
        span: tracing::Span,
        context: OtelContext,
    }

    impl<F> PinnedDrop for InSpan<F> {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            if this.future.is_some() {
                let _attached = attach(this.context);
                let _entered = this.span.enter();
                this.future.set(None);
            }
        }
    }
}

/// The OpenTelemetry context a request's span was made in directly (feature `otel`), current
/// while its future is polled.
#[cfg(feature = "otel")]
pub(crate) type OtelContext = Option<opentelemetry::Context>;
/// Nothing without the `otel` feature.
#[cfg(not(feature = "otel"))]
pub(crate) type OtelContext = NoContext;

/// No OpenTelemetry context (the `otel` feature is off), and no guard of one.
#[cfg(not(feature = "otel"))]
#[derive(Clone, Copy)]
pub(crate) struct NoContext;

#[cfg(feature = "otel")]
fn attach(context: &OtelContext) -> Option<opentelemetry::ContextGuard> {
    context.as_ref().map(|context| context.clone().attach())
}

#[cfg(not(feature = "otel"))]
fn attach(_: &OtelContext) -> NoContext {
    NoContext
}

/// Runs `future` in `span`, and in `context` (see [`InSpan`]).
pub(crate) fn in_span<F: Future>(
    future: F,
    span: tracing::Span,
    context: OtelContext,
) -> InSpan<F> {
    InSpan {
        future: Some(future),
        span,
        context,
    }
}

impl<F: Future> Future for InSpan<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        let mut this = self.project();
        let _attached = attach(this.context);
        let _entered = this.span.enter();
        // Not polled again once it has answered (it is awaited once).
        let Some(future) = this.future.as_mut().as_pin_mut() else {
            return std::task::Poll::Pending;
        };
        let output = std::task::ready!(future.poll(cx));
        this.future.set(None);
        std::task::Poll::Ready(output)
    }
}

/// `work`, made to run on another thread (tokio's blocking pool) as if on the task serving the
/// request: in the request's span, with its events sent to the client like the task's own.
pub(crate) fn carry_to_blocking<R>(
    work: impl FnOnce() -> R + Send + 'static,
) -> impl FnOnce() -> R + Send + 'static {
    let span = tracing::Span::current();
    let peer = CLIENT_LOG.try_with(Arc::clone).ok();
    #[cfg(feature = "otel")]
    let context: OtelContext = Some(opentelemetry::Context::current());
    #[cfg(not(feature = "otel"))]
    let context: OtelContext = NoContext;
    move || {
        let _attached = attach(&context);
        let _entered = span.enter();
        match peer {
            Some(peer) => CLIENT_LOG.sync_scope(peer, work),
            None => work(),
        }
    }
}

#[cfg(feature = "client-log-layer")]
pub use self::layer::ClientLogLayer;

#[cfg(feature = "client-log-layer")]
mod layer {
    use std::fmt;

    use serde_json::{Map, Value};
    use tracing::field::{Field, Visit};
    use tracing::{Event, Level, Subscriber};
    use tracing_subscriber::layer::{Context, Layer};

    use super::{CLIENT_LOG, CLIENT_LOG_WANTED};
    use crate::context::send_log;
    use crate::protocol::LoggingLevel;

    /// A [`tracing_subscriber::Layer`] that sends the `tracing` events a request handler emits
    /// to that request's client as `notifications/message`, at the level the client asked for;
    /// see the [module docs](super) for the mapping.
    ///
    /// ```
    /// use mcp_runtime::trace::ClientLogLayer;
    /// use tracing_subscriber::prelude::*;
    ///
    /// let subscriber = tracing_subscriber::registry().with(ClientLogLayer::new());
    /// # drop(subscriber);
    /// ```
    #[derive(Debug, Clone)]
    pub struct ClientLogLayer {
        _private: (),
    }

    impl ClientLogLayer {
        /// A layer for the subscriber of a server's process.
        pub fn new() -> Self {
            CLIENT_LOG_WANTED.store(true, std::sync::atomic::Ordering::Relaxed);
            Self { _private: () }
        }
    }

    impl Default for ClientLogLayer {
        fn default() -> Self {
            Self::new()
        }
    }

    impl<S: Subscriber> Layer<S> for ClientLogLayer {
        fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
            let metadata = event.metadata();
            let target = metadata.target();
            if target == "mcp_runtime" || target.starts_with("mcp_runtime::") {
                return;
            }
            let level = match *metadata.level() {
                Level::ERROR => LoggingLevel::Error,
                Level::WARN => LoggingLevel::Warning,
                Level::INFO => LoggingLevel::Info,
                Level::DEBUG | Level::TRACE => LoggingLevel::Debug,
            };
            // Outside a request handler there is no client to tell.
            let _ = CLIENT_LOG.try_with(|peer| {
                send_log(&**peer, level, Some(target), || {
                    let mut fields = Fields::default();
                    event.record(&mut fields);
                    Some(fields.into_data())
                });
            });
        }
    }

    /// An event's message and fields, as JSON.
    #[derive(Default)]
    struct Fields {
        message: Option<String>,
        fields: Map<String, Value>,
    }

    impl Fields {
        fn insert(&mut self, field: &Field, value: Value) {
            let name = field.name();
            // `tracing-log` bookkeeping from the `log` crate, not the caller's data.
            if name.starts_with("log.") {
                return;
            }
            if name == "message" {
                self.message = Some(match value {
                    Value::String(text) => text,
                    other => other.to_string(),
                });
            } else {
                self.fields.insert(name.to_owned(), value);
            }
        }

        fn into_data(self) -> Value {
            if self.fields.is_empty() {
                return Value::String(self.message.unwrap_or_default());
            }
            let mut data = Map::new();
            if let Some(message) = self.message {
                data.insert("message".into(), Value::String(message));
            }
            data.extend(self.fields);
            Value::Object(data)
        }
    }

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            self.insert(field, Value::String(format!("{value:?}")));
        }

        fn record_str(&mut self, field: &Field, value: &str) {
            self.insert(field, Value::from(value));
        }

        fn record_i64(&mut self, field: &Field, value: i64) {
            self.insert(field, Value::from(value));
        }

        fn record_u64(&mut self, field: &Field, value: u64) {
            self.insert(field, Value::from(value));
        }

        fn record_f64(&mut self, field: &Field, value: f64) {
            self.insert(field, Value::from(value));
        }

        fn record_bool(&mut self, field: &Field, value: bool) {
            self.insert(field, Value::from(value));
        }

        fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
            self.insert(field, Value::String(value.to_string()));
        }
    }
}
