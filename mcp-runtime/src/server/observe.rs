//! What the server tells an observer of the requests it serves: each request's arrival and
//! answer, each session's end, and the requests it sends its client. The telemetry (the
//! top-level `telemetry` module) implements [`Observer`] and `Server::telemetry` installs it;
//! the dispatch and the sessions call through it and never name the telemetry.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use super::exchange::Status;
use super::link::Transport;
use super::registry::Registry;
use crate::context::ClientRequestError;
use crate::protocol::{ProtocolVersion, Request, RequestId};

/// What is known about a request when it arrives, for its span and its metric.
pub(crate) struct Arrival<'a> {
    pub(crate) request: &'a Request,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) session: Option<&'a str>,
    pub(crate) transport: Transport,
    pub(crate) peer: Option<std::net::SocketAddr>,
    pub(crate) registry: &'a Registry,
}

/// Watches the requests a server serves and sends.
pub(crate) trait Observer: Send + Sync + 'static {
    /// Starts observing a request: its span, and the observation its answer finishes.
    fn start(self: Arc<Self>, arrival: &Arrival<'_>) -> (tracing::Span, Box<dyn Observation>);
    /// A session ended after `lasted`.
    fn session_ended(
        &self,
        version: Option<ProtocolVersion>,
        transport: Transport,
        lasted: Duration,
    );
    /// The span of a request the server sends its client (`elicitation/create`, ...).
    fn client_span(
        &self,
        method: &'static str,
        id: &RequestId,
        session: Option<&String>,
    ) -> tracing::Span;
    /// Puts `span`'s trace context in the `_meta` of a request to the client.
    #[cfg(feature = "otel")]
    fn carry_trace(
        &self,
        span: &tracing::Span,
        meta: &mut serde_json::Map<String, serde_json::Value>,
    );
    /// The client refused (or never answered) a request the server sent it.
    fn client_failed(&self, span: &tracing::Span, error: &ClientRequestError);
    /// The observer itself, for the transports that serve what it keeps (`GET /metrics`).
    fn as_any(&self) -> &dyn Any;
}

/// A request being observed, until its answer.
pub(crate) trait Observation: Send {
    /// `initialize` settled the revision.
    fn settled(&mut self, version: ProtocolVersion);
    /// The request was answered.
    fn finish(self: Box<Self>, status: &Status);
    /// The OpenTelemetry context the request's handler runs in, when its span is made directly
    /// on a tracer (feature `otel`): current while the request's future is polled.
    #[cfg(feature = "otel")]
    fn context(&self) -> Option<opentelemetry::Context> {
        None
    }
}
