//! Telemetry by the OpenTelemetry semantic conventions for MCP (Development status:
//! `docs/gen-ai/mcp.md` of open-telemetry/semantic-conventions-genai).
//!
//! [`Server::telemetry`](crate::Server::telemetry) turns it on. It is a server setting rather
//! than a middleware layer because it must see every request from the moment it is read to the
//! moment its answer is sent: the handshake's own `initialize` and `ping`, and what any layer
//! refuses, included.
//!
//! # Spans
//!
//! Each request's `mcp.request` span (see [`trace`](crate::trace)) carries the conventions'
//! fields in place of its own short ones (`mcp.method.name` for `method`, `jsonrpc.request.id`
//! for `id`, `gen_ai.tool.name` for `tool`, `gen_ai.prompt.name` for `prompt`,
//! `mcp.resource.uri` for `uri`, `mcp.session.id` for `session`: each thing named once, since
//! every field is an attribute to export), which `tracing-opentelemetry` turns into a span named
//! `{mcp.method.name} {target}` (`tools/call add`; the method alone when there is no served tool
//! or prompt to name), of kind `SERVER`:
//!
//! | attribute | value |
//! |---|---|
//! | `mcp.method.name` | the method |
//! | `jsonrpc.request.id` | the id (a string id as it is, a number in decimal) |
//! | `mcp.session.id` | the session (`Mcp-Session-Id`, or `stdio-N`), when the request is in one |
//! | `mcp.protocol.version` | the negotiated (or enveloped) revision |
//! | `gen_ai.tool.name`, `gen_ai.operation.name` | on `tools/call`: the tool, and `execute_tool` |
//! | `gen_ai.prompt.name` | on `prompts/get` |
//! | `mcp.resource.uri` | on `resources/read`, `resources/subscribe`, `resources/unsubscribe` |
//! | `network.transport` | `pipe` (stdio), `tcp` (HTTP) |
//! | `network.protocol.name` | `http` over HTTP |
//! | `client.address`, `client.port` | the client, over HTTP: the TCP peer, or behind one of `Server::trusted_proxies` the client its forwarding header names (no port) |
//! | `error.type` | the JSON-RPC error code (`-32602`), or `tool_error` for a result with `isError` |
//! | `rpc.response.status_code` | the JSON-RPC error code |
//!
//! and the status `ERROR` (described by the error's message) when `error.type` is set. With
//! the `otel` feature the span continues the trace a client sends in `params._meta`
//! (`traceparent`, `tracestate`, read by the global text-map propagator), and a request the
//! server sends its client in the handshake era (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) runs in a `CLIENT` span whose context goes out in that request's `_meta`.
//!
//! # Metrics
//!
//! `mcp.server.operation.duration` (from a request's arrival to its answer) and
//! `mcp.server.session.duration` (from `initialize` to the session's end), histograms in
//! seconds with the conventions' buckets (0.01 to 300 s) and attributes. The server keeps them
//! itself ([`McpService::metrics_text`](crate::McpService::metrics_text), and with the
//! `prometheus` feature `GET /metrics` and [`serve_metrics`]); with the `otel` feature they also
//! go to the global meter provider. Label cardinality is bounded: tool and prompt names only of
//! items the server serves, never a session id, an argument or a URI, at most 2,000 label sets
//! per histogram (the rest counted as `_OTHER`).

mod metrics;
#[cfg(feature = "otel")]
pub(crate) mod otel;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use self::metrics::{ErrorType, Metrics, Operation, SessionLabels};
use super::middleware::{Status, Transport};
use super::registry::Registry;
use crate::protocol::{Method, ProtocolVersion, Request, RequestId};

/// What [`Server::telemetry`](crate::Server::telemetry) turns on: spans by the conventions,
/// metrics, or both (the default).
///
/// ```
/// use mcp_runtime::Server;
/// use mcp_runtime::telemetry::Telemetry;
///
/// let server = Server::new("demo", "1.0.0").telemetry(Telemetry::new());
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Telemetry {
    spans: bool,
    metrics: bool,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self::new()
    }
}

impl Telemetry {
    /// Spans and metrics.
    pub fn new() -> Self {
        Self {
            spans: true,
            metrics: true,
        }
    }

    /// Whether request spans carry the conventions' fields (on by default).
    pub fn spans(mut self, on: bool) -> Self {
        self.spans = on;
        self
    }

    /// Whether the server keeps the conventions' metrics (on by default).
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }
}

/// A server's telemetry, once built.
pub(crate) struct Observer {
    spans: bool,
    pub(crate) metrics: Option<Metrics>,
    #[cfg(feature = "otel")]
    instruments: Option<otel::Instruments>,
}

/// What is known about a request when it arrives, for its span and its metric.
pub(crate) struct Arrival<'a> {
    pub(crate) request: &'a Request,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) session: Option<&'a str>,
    pub(crate) transport: Transport,
    pub(crate) peer: Option<std::net::SocketAddr>,
    pub(crate) registry: &'a Registry,
}

/// A request being observed, until its answer.
pub(crate) struct Observation {
    observer: Arc<Observer>,
    started: Instant,
    span: tracing::Span,
    labels: Operation,
}

impl Observer {
    pub(crate) fn new(telemetry: Telemetry) -> Self {
        Self {
            spans: telemetry.spans,
            metrics: telemetry.metrics.then(Metrics::new),
            #[cfg(feature = "otel")]
            instruments: telemetry.metrics.then(otel::Instruments::new),
        }
    }

    /// Starts observing a request: the conventions' fields go on `span` (before it is first
    /// entered, as `tracing-opentelemetry` needs for the name, kind and parent).
    pub(crate) fn start(self: &Arc<Self>, arrival: &Arrival<'_>) -> (tracing::Span, Observation) {
        let request = arrival.request;
        let method = method_label(&request.method);
        // The name a `tools/call` or `prompts/get` gives, looked up once for span and label.
        let name = request.params.get("name").and_then(Value::as_str);
        let target = target_of(request, name, arrival.registry);
        let span = if self.spans {
            request_span(arrival, name, target.as_ref())
        } else {
            crate::trace::request_span(request, arrival.session)
        };
        let observation = Observation {
            observer: Arc::clone(self),
            started: Instant::now(),
            span: span.clone(),
            labels: Operation {
                method,
                target,
                error: None,
                version: arrival.version,
                transport: arrival.transport,
            },
        };
        (span, observation)
    }

    /// A session ended after `lasted`.
    pub(crate) fn session_ended(
        &self,
        version: Option<ProtocolVersion>,
        transport: Transport,
        lasted: Duration,
    ) {
        if let Some(metrics) = &self.metrics {
            metrics.session(&SessionLabels { version, transport }, lasted);
        }
        #[cfg(feature = "otel")]
        if let Some(instruments) = &self.instruments {
            instruments.session(version, transport, lasted);
        }
    }
}

impl Observation {
    /// `initialize` settled the revision.
    pub(crate) fn settled(&mut self, version: ProtocolVersion) {
        self.labels.version = Some(version);
        if self.observer.spans && !self.span.is_disabled() {
            self.span.record("mcp.protocol.version", version.as_str());
        }
    }

    /// The request was answered.
    pub(crate) fn finish(mut self, status: &Status) {
        let lasted = self.started.elapsed();
        self.labels.error = match status {
            Status::Ok => None,
            Status::ToolError => Some(ErrorType::ToolError),
            Status::Error(error) => Some(ErrorType::Code(error.code)),
        };
        if self.observer.spans && !self.span.is_disabled() {
            record_answer(&self.span, status);
        }
        if let Some(metrics) = &self.observer.metrics {
            metrics.operation(&self.labels, lasted);
        }
        #[cfg(feature = "otel")]
        if let Some(instruments) = &self.observer.instruments {
            instruments.operation(&self.labels, lasted);
        }
    }
}

/// The method's name as a label: one the server knows (the method table's), so that a label
/// cannot be anything a client makes up.
fn method_label(method: &str) -> &'static str {
    Method::parse(method).map_or("_OTHER", Method::name)
}

/// The served tool or prompt a request names, with its attribute's label name.
fn target_of(
    request: &Request,
    name: Option<&str>,
    registry: &Registry,
) -> Option<(&'static str, Arc<str>)> {
    let name = name?;
    match request.method.as_str() {
        "tools/call" => registry
            .tools
            .get(name)
            .map(|(_, name)| ("gen_ai_tool_name", Arc::clone(name))),
        "prompts/get" => registry
            .prompts
            .get(name)
            .map(|(_, name)| ("gen_ai_prompt_name", Arc::clone(name))),
        _ => None,
    }
}

/// The request's `mcp.request` span with the conventions' fields in place of its own (see
/// [`trace`](crate::trace)), all given at once: one call into the subscriber, not one per field.
///
/// Every field costs: `tracing-opentelemetry` visits each one and copies each text into an
/// attribute of its own. So the span names each thing once, by the conventions' name (not
/// `method` beside `mcp.method.name`), and gives text as `&str` (a `Display` value is formatted
/// once more by the visitor).
fn request_span(
    arrival: &Arrival<'_>,
    name: Option<&str>,
    target: Option<&(&'static str, Arc<str>)>,
) -> tracing::Span {
    use tracing::field::Empty;
    if !tracing::enabled!(target: "mcp_runtime::request", tracing::Level::INFO) {
        return tracing::Span::none();
    }
    let request = arrival.request;
    let method = request.method.as_str();
    let (tool, prompt, uri) = match method {
        "tools/call" => (name, None, None),
        "prompts/get" => (None, name, None),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => (
            None,
            None,
            request.params.get("uri").and_then(Value::as_str),
        ),
        _ => (None, None, None),
    };
    let named;
    let span_name = match target {
        Some((_, target)) => {
            named = [method, " ", target].concat();
            named.as_str()
        }
        None => method,
    };
    let number;
    let id = match &request.id {
        RequestId::Number(n) => {
            number = n.to_string();
            number.as_str()
        }
        RequestId::String(s) => s,
    };
    let http = arrival.transport != Transport::Stdio;
    let span = tracing::info_span!(
        target: "mcp_runtime::request",
        "mcp.request",
        otel.name = span_name,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        mcp.session.id = arrival.session,
        mcp.protocol.version = arrival.version.map(ProtocolVersion::as_str),
        jsonrpc.request.id = id,
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        mcp.resource.uri = uri,
        network.transport = arrival.transport.network_transport(),
        network.protocol.name = http.then_some("http"),
        client.address = arrival.peer.map(|p| display(p.ip())),
        // A client named by a trusted proxy's header has no port (0).
        client.port = arrival.peer.map(|p| p.port()).filter(|&port| port != 0),
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    #[cfg(feature = "otel")]
    if let Some(Value::Object(meta)) = request.params.get("_meta") {
        otel::continue_trace(&span, meta);
    }
    span
}

/// A request id as the conventions write it: a string as it is, a number in decimal.
struct IdText<'a>(&'a RequestId);

impl std::fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

/// The `CLIENT` span of a request the server sends its client (`elicitation/create`, ...).
pub(crate) fn client_span(
    method: &'static str,
    id: &RequestId,
    session: Option<&String>,
) -> tracing::Span {
    use tracing::field::Empty;
    tracing::info_span!(
        target: "mcp_runtime::request",
        "mcp.client_request",
        method,
        otel.name = method,
        otel.kind = "client",
        mcp.method.name = method,
        jsonrpc.request.id = display(IdText(id)),
        mcp.session.id = session.map(String::as_str),
        error.type = Empty,
        rpc.response.status_code = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// The client refused (or never answered) a request the server sent it.
pub(crate) fn client_failed(span: &tracing::Span, error: &crate::context::ClientRequestError) {
    use crate::context::ClientRequestError;
    if span.is_disabled() {
        return;
    }
    let kind = match error {
        ClientRequestError::Rejected(error) => {
            let code = error.code.to_string();
            span.record("rpc.response.status_code", code.as_str());
            code
        }
        ClientRequestError::Timeout(_) => "timeout".to_owned(),
        _ => "_OTHER".to_owned(),
    };
    span.record("error.type", kind.as_str());
    span.record("otel.status_code", "error");
    span.record("otel.status_description", error.to_string().as_str());
}

fn record_answer(span: &tracing::Span, status: &Status) {
    match status {
        Status::Ok => {}
        Status::ToolError => {
            span.record("error.type", "tool_error");
            span.record("otel.status_code", "error");
        }
        Status::Error(error) => {
            let code = error.code.to_string();
            span.record("error.type", code.as_str());
            span.record("rpc.response.status_code", code.as_str());
            span.record("otel.status_code", "error");
            span.record("otel.status_description", &*error.message);
        }
    }
}

#[cfg(feature = "prometheus")]
/// Serves the server's metrics in the Prometheus text format at `GET /metrics` on `addr`, until
/// the returned future is dropped or fails: for a stdio server, whose metrics have no HTTP
/// router to be served on (an HTTP server serves `/metrics` on its own router too). Needs
/// [`Server::telemetry`](crate::Server::telemetry) with metrics on; bind a loopback or private
/// address: the endpoint has no authentication.
///
/// ```no_run
/// use mcp_runtime::Server;
/// use mcp_runtime::telemetry::{Telemetry, serve_metrics};
///
/// # async fn run() -> mcp_runtime::Result<()> {
/// let service = Server::new("demo", "1.0.0").telemetry(Telemetry::new()).build()?;
/// tokio::spawn(serve_metrics(service.clone(), "127.0.0.1:9464"));
/// service.serve_stdio().await
/// # }
/// ```
pub async fn serve_metrics(
    service: crate::McpService,
    addr: impl tokio::net::ToSocketAddrs,
) -> crate::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_metrics_on(service, listener).await
}

#[cfg(feature = "prometheus")]
/// [`serve_metrics`] on a bound listener.
pub async fn serve_metrics_on(
    service: crate::McpService,
    listener: tokio::net::TcpListener,
) -> crate::Result<()> {
    let router = metrics_router(Arc::clone(&service.core));
    axum::serve(listener, router).await?;
    Ok(())
}

#[cfg(feature = "prometheus")]
/// `GET /metrics`, when the server keeps metrics.
pub(crate) fn metrics_router(core: Arc<super::Core>) -> axum::Router {
    use axum::http::{HeaderValue, StatusCode, header};
    use axum::response::IntoResponse;
    axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let core = Arc::clone(&core);
            async move {
                match core.telemetry.as_ref().and_then(|t| t.metrics.as_ref()) {
                    Some(metrics) => (
                        [(
                            header::CONTENT_TYPE,
                            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                        )],
                        metrics.render(),
                    )
                        .into_response(),
                    None => (
                        StatusCode::NOT_FOUND,
                        "metrics are off: `Server::telemetry(Telemetry::new())` turns them on\n",
                    )
                        .into_response(),
                }
            }
        }),
    )
}
