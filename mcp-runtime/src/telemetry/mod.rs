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
//! Each request gets a span named `{mcp.method.name} {target}` (`tools/call add`; the method
//! alone when there is no served tool or prompt to name), of kind `SERVER`, made one of two
//! ways:
//!
//! - on the tracer [`Telemetry::tracer`] gives (feature `otel`), with the OpenTelemetry API,
//!   its context current while the handler runs; the request's `mcp.request` `tracing` span
//!   (see [`trace`](crate::trace)) keeps its short fields for logs, and is left out of a
//!   `tracing-opentelemetry` layer with [`exported_directly`]; [`request_events`] puts the
//!   events a handler emits outside spans of its own on the request's span;
//! - or by `tracing-opentelemetry` from the `mcp.request` span, which then carries the
//!   conventions' fields in place of its own short ones (`mcp.method.name` for `method`,
//!   `jsonrpc.request.id` for `id`, `gen_ai.tool.name` for `tool`, `gen_ai.prompt.name` for
//!   `prompt`, `mcp.resource.uri` for `uri`, `mcp.session.id` for `session`: each thing named
//!   once, since every field is an attribute to export).
//!
//! Either way the span has these attributes:
//!
//! | attribute | value |
//! |---|---|
//! | `mcp.method.name` | the method |
//! | `jsonrpc.request.id` | the id (a string id as it is, a number in decimal) |
//! | `mcp.session.id` | the session (`Mcp-Session-Id`, or `stdio-N`), when the request is in one (never on 2026-07-28 requests, which have none; nor does their traffic end a session, so no `mcp.server.session.duration`) |
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
//! and the status `ERROR` (described by the error's message) when `error.type` is set. Text the
//! client wrote (the method, a string id, a tool or prompt name, a URI) is cut as error messages
//! cut it before it becomes an attribute: past 128 bytes, its head and its length. With
//! the `otel` feature the span continues the trace a client sends in `params._meta`
//! (`traceparent`, `tracestate`, `baggage`, read by the global text-map propagator), and a
//! request the server sends its client in the handshake era (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) runs in a `CLIENT` span whose context goes out in that
//! request's `_meta`. Each field is read only within its W3C size (`traceparent` 55 bytes,
//! `tracestate` 512 bytes and 32 members, `baggage` 8,192 bytes and 64 members): a longer one is
//! ignored whole before the propagator parses or copies it (a `traceparent` past its size
//! starts a trace of the server's own). What spans keep of the state and baggage counts against
//! 4 MiB for all the requests in flight; past it, a request starts a trace of its own. Only
//! `params._meta` is read: HTTP headers carry no trace context here.
//!
//! # Sampling
//!
//! [`Telemetry::sample_ratio`] samples at the head: a request gets a span or not when it
//! arrives, before any span work, by the ratio, or (feature `otel`) by the sampled flag of its
//! `traceparent` when it has one, as a parent-based sampler does. A request sampled out has no
//! span (none exported, none in logs); the metrics count every request.
//!
//! # Metrics
//!
//! `mcp.server.operation.duration` (from a request's arrival to its answer) and
//! `mcp.server.session.duration` (from `initialize` to the session's end), histograms in
//! seconds with the conventions' buckets (0.01 to 300 s) and attributes. The server keeps them
//! itself ([`McpService::metrics_text`](crate::McpService::metrics_text), and with the
//! `prometheus` feature `GET /metrics` and [`serve_metrics`]); with the `otel` feature they also
//! go to the global meter provider, bound to each label set once (OpenTelemetry's bound
//! instruments), so a record finds its label set's cell and adds to it. Label cardinality is
//! bounded: tool and prompt names only of
//! items the server serves, never a session id, an argument or a URI, at most 2,000 label sets
//! per histogram (the rest counted as `_OTHER`). The `/metrics` text is rendered at most once a
//! second (and only when a number changed), one render at a time, and shared by every scrape
//! meanwhile; on the MCP port each answer counts, while it is sent, in its client's share of
//! unread bytes (`Server::stream_buffer_total`), and a client past it gets 503.
//!
//! # Where it sits
//!
//! An observer the server calls through a narrow trait of its own, installed by
//! [`Server::telemetry`](crate::Server::telemetry): the dispatch and the sessions never name this
//! module. It may import the server's core, `trace`, `context`, `protocol` and `error`; only the
//! transports (for `GET /metrics`) import it.

#[cfg(feature = "otel")]
mod events;
mod metrics;
#[cfg(feature = "otel")]
pub(crate) mod otel;

#[cfg(feature = "otel")]
pub use self::events::{NotRequestSpan, RequestEvents, request_events};

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use self::metrics::{ErrorType, Item, Metrics, Operation, SessionLabels};
use crate::protocol::{Method, ProtocolVersion, RequestId, echo};
use crate::server::exchange::Status;
use crate::server::observe::{Arrival, Observation, Observer as Observe};
use crate::server::registry::Registry;
use crate::server::{Core, McpService, Server, Transport};

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
#[derive(Debug, Clone)]
pub struct Telemetry {
    spans: bool,
    metrics: bool,
    /// The share of requests that get a span (1: all).
    ratio: f64,
    /// The tracer request spans are made on directly (feature `otel`), if one is given.
    #[cfg(feature = "otel")]
    tracer: Option<Arc<opentelemetry::global::BoxedTracer>>,
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
            ratio: 1.0,
            #[cfg(feature = "otel")]
            tracer: None,
        }
    }

    /// Makes each request's span directly on `tracer` (an OpenTelemetry SDK tracer, such as
    /// `provider.tracer("my-server")`), rather than as a `tracing` span that
    /// `tracing-opentelemetry` turns into one: the same span, its name, kind, attributes,
    /// status and parent, for about a third of the CPU (feature `otel`). The request's `tracing`
    /// span stays, with its short fields, for logs and your own layers; it is made inside the
    /// OpenTelemetry span's context, which is current while the handler runs, so the spans a
    /// handler makes (through `tracing-opentelemetry` too) are children of the request's. Leave
    /// the `mcp.request` span out of your `tracing-opentelemetry` layer
    /// ([`exported_directly`]); taken by it, it is exported as well, as a child of the request's
    /// span that holds the handler's events.
    ///
    /// ```
    /// use mcp_runtime::telemetry::Telemetry;
    /// use opentelemetry::trace::TracerProvider as _;
    ///
    /// // Your SDK's provider: `opentelemetry_sdk::trace::SdkTracerProvider::builder()...build()`.
    /// let provider = opentelemetry::trace::noop::NoopTracerProvider::new();
    /// let telemetry = Telemetry::new().tracer(provider.tracer("adder"));
    /// # let _ = telemetry;
    /// ```
    #[cfg(feature = "otel")]
    pub fn tracer<T>(mut self, tracer: T) -> Self
    where
        T: opentelemetry::trace::Tracer + Send + Sync + 'static,
        T::Span: Send + Sync + 'static,
    {
        self.tracer = Some(Arc::new(opentelemetry::global::BoxedTracer::new(Box::new(
            tracer,
        ))));
        self
    }

    /// Head sampling: the share of requests (0 to 1; 1, every request, by default) that get a
    /// span, decided when a request arrives and before any span work. A request whose
    /// `params._meta.traceparent` (feature `otel`) says whether its client sampled it follows
    /// that flag instead, as OpenTelemetry's parent-based sampler does. A request sampled out has
    /// no span at all (none exported, none in logs) and costs what the metrics cost; metrics
    /// count every request.
    ///
    /// ```
    /// use mcp_runtime::telemetry::Telemetry;
    ///
    /// // One request in ten traced, unless its client decided.
    /// let telemetry = Telemetry::new().sample_ratio(0.1);
    /// # let _ = telemetry;
    /// ```
    pub fn sample_ratio(mut self, ratio: f64) -> Self {
        self.ratio = if ratio.is_nan() {
            0.0
        } else {
            ratio.clamp(0.0, 1.0)
        };
        self
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
    /// Requests sampled in per 2^64 (as a threshold), when not all are.
    sample_below: Option<u64>,
    pub(crate) metrics: Option<Metrics>,
    /// The trace context the spans of requests in flight keep.
    #[cfg(feature = "otel")]
    kept: Arc<otel::KeptContext>,
    /// The tracer request spans are made on directly, when one was given.
    #[cfg(feature = "otel")]
    tracer: Option<Arc<opentelemetry::global::BoxedTracer>>,
}

/// A request being observed, until its answer.
pub(crate) struct Watch {
    observer: Arc<Observer>,
    started: Instant,
    span: tracing::Span,
    labels: Operation,
    /// Where the request found the tool or prompt its labels name.
    item: Option<Item>,
    /// What the span keeps of the client's trace context, counted until the request ends.
    #[cfg(feature = "otel")]
    _context: Option<otel::KeptCharge>,
    /// The request's OpenTelemetry span, made directly on the tracer, in its context.
    #[cfg(feature = "otel")]
    direct: Option<opentelemetry::Context>,
}

impl Observer {
    pub(crate) fn new(telemetry: Telemetry) -> Self {
        Self {
            #[cfg(feature = "otel")]
            tracer: telemetry.tracer.filter(|_| telemetry.spans),
            spans: telemetry.spans,
            // 2^64 times the ratio, below which a random draw is sampled in.
            sample_below: (telemetry.ratio < 1.0).then(|| (telemetry.ratio * 2f64.powi(64)) as u64),
            metrics: telemetry.metrics.then(Metrics::new),
            #[cfg(feature = "otel")]
            kept: Arc::default(),
        }
    }

    /// Starts observing a request: the conventions' fields go on `span` (before it is first
    /// entered, as `tracing-opentelemetry` needs for the name, kind and parent).
    fn start_watch(
        self: Arc<Self>,
        arrival: &Arrival<'_>,
        watch: &mut Option<Watch>,
    ) -> tracing::Span {
        let request = arrival.request;
        // The method of the table, or `None` (`_OTHER`): a label cannot be anything a client
        // makes up.
        let method = Method::parse(&request.method);
        // Whether a span is made: on the tracer given, or for a subscriber that takes it; with
        // neither, there is no span work at all.
        #[cfg(feature = "otel")]
        let on_tracer = self.tracer.is_some();
        #[cfg(not(feature = "otel"))]
        let on_tracer = false;
        let live = self.spans
            && (on_tracer
                || tracing::enabled!(target: "mcp_runtime::request", tracing::Level::INFO));
        // The name a `tools/call` or `prompts/get` gives, for span and label, and `_meta`, only
        // for a span that may continue its client's trace.
        let named = matches!(method, Some(Method::ToolsCall | Method::PromptsGet));
        let params = &request.params;
        let name = named
            .then(|| params.get("name").and_then(Value::as_str))
            .flatten();
        // Looked up only for a span: the metrics alone never read it.
        let meta = (live && (named || cfg!(feature = "otel")))
            .then(|| params.get("_meta").and_then(Value::as_object))
            .flatten();
        let (target, item) = target_of(method, name, arrival.registry).unzip();
        let sampled = live && self.sampled(meta);
        #[cfg(feature = "otel")]
        let (span, charge, direct) = match &self.tracer {
            Some(tracer) if sampled => {
                let parent = meta.and_then(|meta| otel::client_context(meta, &self.kept));
                let (parent, charge) = match parent {
                    Some((parent, charge)) => (parent, Some(charge)),
                    None => (opentelemetry::Context::current(), None),
                };
                let direct = otel::request_span(tracer, arrival, name, target.as_ref(), parent);
                // The `tracing` span, made inside the request's context: a
                // `tracing-opentelemetry` layer that takes it makes it the request span's child.
                let span = {
                    let _attached = direct.clone().attach();
                    crate::trace::request_span(request, arrival.session)
                };
                (span, charge, Some(direct))
            }
            _ => {
                let span = self.traced_span(arrival, sampled, name, target.as_ref());
                let charge = match meta {
                    Some(meta) if !span.is_disabled() => {
                        otel::continue_trace(&span, meta, &self.kept)
                    }
                    _ => None,
                };
                (span, charge, None)
            }
        };
        #[cfg(not(feature = "otel"))]
        let span = self.traced_span(arrival, sampled, name, target.as_ref());
        // Made where it is kept, not moved there.
        *watch = Some(Watch {
            observer: self,
            started: Instant::now(),
            span: span.clone(),
            labels: Operation {
                method,
                target,
                error: None,
                version: arrival.version,
                transport: arrival.transport,
            },
            item,
            #[cfg(feature = "otel")]
            _context: charge,
            #[cfg(feature = "otel")]
            direct,
        });
        span
    }

    /// The request's `tracing` span when its OpenTelemetry span is not made on a tracer.
    fn traced_span(
        &self,
        arrival: &Arrival<'_>,
        sampled: bool,
        name: Option<&str>,
        target: Option<&(&'static str, Arc<str>)>,
    ) -> tracing::Span {
        match self.spans {
            true if sampled => request_span(arrival, name, target),
            // Sampled out: no span, and no span work.
            true => tracing::Span::none(),
            false => crate::trace::request_span(arrival.request, arrival.session),
        }
    }

    /// Whether a request gets a span: as its client's `traceparent` says when it has one
    /// (feature `otel`), otherwise by the sampling ratio.
    fn sampled(&self, meta: Option<&serde_json::Map<String, Value>>) -> bool {
        #[cfg(feature = "otel")]
        if let Some(sampled) = meta.and_then(otel::parent_sampled) {
            return sampled;
        }
        #[cfg(not(feature = "otel"))]
        let _ = meta;
        match self.sample_below {
            None => true,
            Some(below) => random() < below,
        }
    }

    /// A session ended after `lasted`.
    fn end_session(
        &self,
        version: Option<ProtocolVersion>,
        transport: Transport,
        lasted: Duration,
    ) {
        if let Some(metrics) = &self.metrics {
            metrics.session(&SessionLabels { version, transport }, lasted);
        }
    }
}

impl Watch {
    fn settled(&mut self, version: ProtocolVersion) {
        self.labels.version = Some(version);
        #[cfg(feature = "otel")]
        if let Some(context) = &self.direct {
            otel::settled(context, version);
            return;
        }
        if self.observer.spans && !self.span.is_disabled() {
            self.span.record("mcp.protocol.version", version.as_str());
        }
    }

    #[cfg(feature = "otel")]
    fn context(&self) -> Option<opentelemetry::Context> {
        self.direct.clone()
    }

    fn finish(&mut self, status: &Status) {
        let lasted = self.started.elapsed();
        self.labels.error = match status {
            Status::Ok => None,
            Status::ToolError => Some(ErrorType::ToolError),
            Status::Error(error) => Some(ErrorType::Code(error.code)),
        };
        #[cfg(feature = "otel")]
        let direct = self
            .direct
            .take()
            .map(|context| otel::end(&context, status));
        #[cfg(not(feature = "otel"))]
        let direct: Option<()> = None;
        // A span made on the tracer has the answer; the `tracing` span keeps its short fields.
        if direct.is_none() && self.observer.spans && !self.span.is_disabled() {
            record_answer(&self.span, status);
        }
        if let Some(metrics) = &self.observer.metrics {
            metrics.operation(&self.labels, self.item, lasted);
        }
    }
}

/// A request's [`Watch`] in the box the server holds it in until the answer. The box outlives
/// its request: once the answer is recorded it waits, empty, for the next request its thread
/// starts: an allocation and a free per request would be a good share of what the metrics cost.
struct Watched(Option<Watch>);

thread_local! {
    /// The box of a request this thread finished, for the next one it starts.
    static SPARE: std::cell::Cell<Option<Box<Watched>>> = const { std::cell::Cell::new(None) };
}

impl Observation for Watched {
    fn settled(&mut self, version: ProtocolVersion) {
        if let Some(watch) = &mut self.0 {
            watch.settled(version);
        }
    }

    #[cfg(feature = "otel")]
    fn context(&self) -> Option<opentelemetry::Context> {
        self.0.as_ref().and_then(Watch::context)
    }

    fn finish(mut self: Box<Self>, status: &Status) {
        // Finished where it lies, then dropped there: moving it out would copy it.
        if let Some(watch) = &mut self.0 {
            watch.finish(status);
        }
        self.0 = None;
        SPARE.set(Some(self));
    }
}

impl Observe for Observer {
    fn start(self: Arc<Self>, arrival: &Arrival<'_>) -> (tracing::Span, Box<dyn Observation>) {
        let mut watched = SPARE.take().unwrap_or_else(|| Box::new(Watched(None)));
        let span = self.start_watch(arrival, &mut watched.0);
        (span, watched)
    }

    fn session_ended(
        &self,
        version: Option<ProtocolVersion>,
        transport: Transport,
        lasted: Duration,
    ) {
        self.end_session(version, transport, lasted);
    }

    fn client_span(
        &self,
        method: &'static str,
        id: &RequestId,
        session: Option<&String>,
    ) -> tracing::Span {
        client_span(method, id, session)
    }

    #[cfg(feature = "otel")]
    fn carry_trace(&self, span: &tracing::Span, meta: &mut serde_json::Map<String, Value>) {
        otel::carry_trace(span, meta);
    }

    fn client_failed(&self, span: &tracing::Span, error: &crate::context::ClientRequestError) {
        client_failed(span, error);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Whether `metadata` is the request's `mcp.request` span, which a server whose telemetry has a
/// [`tracer`](Telemetry::tracer) exports itself: leave it out of a `tracing-opentelemetry`
/// layer, which would export it a second time, as a child of the request's span.
///
/// ```
/// use mcp_runtime::telemetry::exported_directly;
/// use tracing_subscriber::filter::filter_fn;
/// use tracing_subscriber::Layer as _;
///
/// # fn layer<S>(layer: impl tracing_subscriber::Layer<S>) -> impl tracing_subscriber::Layer<S>
/// # where S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span> {
/// // `layer` is your `tracing_opentelemetry::layer().with_tracer(..)`.
/// layer.with_filter(filter_fn(|metadata| !exported_directly(metadata)))
/// # }
/// ```
#[cfg(feature = "otel")]
pub fn exported_directly(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.is_span()
        && metadata.name() == "mcp.request"
        && metadata.target() == "mcp_runtime::request"
}

/// A random number for head sampling: xorshift64* per thread, seeded from the operating
/// system's randomness (std's `RandomState` keys).
fn random() -> u64 {
    use std::cell::Cell;
    use std::hash::BuildHasher;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            std::collections::hash_map::RandomState::new().hash_one(std::thread::current().id()) | 1,
        );
    }
    STATE.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

/// The metrics `core`'s telemetry keeps, if it keeps any.
pub(crate) fn metrics_of(core: &Core) -> Option<&Metrics> {
    let observer = core
        .telemetry
        .as_ref()?
        .as_any()
        .downcast_ref::<Observer>()?;
    observer.metrics.as_ref()
}

impl Server {
    /// Turns on telemetry by OpenTelemetry's semantic conventions for MCP: request spans named
    /// and attributed as they say, the trace context of `params._meta` continued (feature
    /// `otel`), and the `mcp.server.operation.duration` and `mcp.server.session.duration`
    /// histograms, kept by the server ([`McpService::metrics_text`], `GET /metrics` with the
    /// `prometheus` feature) and sent to the global meter provider (feature `otel`). Off by
    /// default. See [`telemetry`](crate::telemetry).
    pub fn telemetry(mut self, telemetry: Telemetry) -> Self {
        self.observer = Some(Arc::new(Observer::new(telemetry)));
        self
    }
}

impl McpService {
    /// The server's metrics in the Prometheus text exposition format (0.0.4), as `GET /metrics`
    /// serves them: `None` unless [`Server::telemetry`] keeps metrics. See
    /// [`telemetry`](crate::telemetry).
    pub fn metrics_text(&self) -> Option<String> {
        metrics_of(&self.core).map(Metrics::render)
    }
}

/// The served tool or prompt a request names, with its attribute's label name, and where the
/// registry holds it.
fn target_of(
    method: Option<Method>,
    name: Option<&str>,
    registry: &Registry,
) -> Option<((&'static str, Arc<str>), Item)> {
    let name = name?;
    let (label, (index, name)) = match method? {
        Method::ToolsCall => ("gen_ai_tool_name", registry.tools.position(name)?),
        Method::PromptsGet => ("gen_ai_prompt_name", registry.prompts.position(name)?),
        _ => return None,
    };
    let item = Item {
        generation: registry.generation(),
        index,
    };
    Some(((label, Arc::clone(name)), item))
}

/// The request's `mcp.request` span with the conventions' fields in place of its own (see
/// [`trace`](crate::trace)), all given at once: one call into the subscriber, not one per field.
/// Made only when a subscriber takes it, for a request sampled in.
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
    let request = arrival.request;
    // Every value the client wrote is cut as messages cut it, before it reaches a field: a
    // field is an exported attribute and a log line, and a megabyte of id or name would be
    // copied into each.
    let method = echo(&request.method);
    let method = method.as_ref();
    let name = name.map(echo);
    let name = name.as_deref();
    let (tool, prompt, uri) = match method {
        "tools/call" => (name, None, None),
        "prompts/get" => (None, name, None),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => (
            None,
            None,
            request.params.get("uri").and_then(Value::as_str).map(echo),
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
    let id = match &request.id {
        RequestId::Number(n) => std::borrow::Cow::Owned(n.to_string()),
        RequestId::String(s) => echo(s),
    };
    let id = id.as_ref();
    let http = arrival.transport != Transport::Stdio;
    let span = tracing::info_span!(
        target: "mcp_runtime::request",
        "mcp.request",
        otel.name = span_name,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        // A 2026-07-28 request has no session, even on a stdio connection that has a name.
        mcp.session.id = arrival.session.filter(|_| arrival.version.is_none_or(|v| v.has_handshake())),
        mcp.protocol.version = arrival.version.map(ProtocolVersion::as_str),
        jsonrpc.request.id = id,
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        mcp.resource.uri = uri.as_deref(),
        network.transport = arrival.transport.network_transport(),
        network.protocol.name = http.then_some("http"),
        client.address = arrival.peer.map(|p| display(p.ip())),
        // A client named by a trusted proxy's header has no port (0).
        client.port = arrival.peer.map(|p| p.port()).filter(|&port| port != 0),
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
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
fn client_span(method: &'static str, id: &RequestId, session: Option<&String>) -> tracing::Span {
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
fn client_failed(span: &tracing::Span, error: &crate::context::ClientRequestError) {
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
    service: McpService,
    addr: impl tokio::net::ToSocketAddrs,
) -> crate::error::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_metrics_on(service, listener).await
}

#[cfg(feature = "prometheus")]
/// [`serve_metrics`] on a bound listener.
pub async fn serve_metrics_on(
    service: McpService,
    listener: tokio::net::TcpListener,
) -> crate::error::Result<()> {
    let router = metrics_router(Arc::clone(&service.core));
    axum::serve(listener, router).await?;
    Ok(())
}

#[cfg(feature = "prometheus")]
/// How long one render of the metrics text is served to every scrape, however the numbers
/// changed meanwhile (a render whose numbers did not change is served until they do).
pub(crate) const METRICS_RENDER_INTERVAL: Duration = Duration::from_secs(1);

#[cfg(feature = "prometheus")]
/// The metrics text as `GET /metrics` serves it: rendered at most once per
/// [`METRICS_RENDER_INTERVAL`] (and only when an observation changed it), one render at a time,
/// and the same bytes shared by every response that carries it, so that scrapes, however many
/// and however slowly read, cost one render's CPU and memory, not one each.
#[derive(Default)]
pub(crate) struct SharedRender {
    last: tokio::sync::Mutex<Option<(Instant, u64, bytes::Bytes)>>,
}

#[cfg(feature = "prometheus")]
impl SharedRender {
    /// The current text: the last render, or a new one.
    pub(crate) async fn text(&self, metrics: &Metrics) -> bytes::Bytes {
        // Held while rendering: scrapes that come meanwhile wait for this render and share it.
        let mut last = self.last.lock().await;
        let observed = metrics.observed();
        if let Some((at, seen, text)) = &*last
            && (*seen == observed || at.elapsed() < METRICS_RENDER_INTERVAL)
        {
            return text.clone();
        }
        let text = bytes::Bytes::from(metrics.render());
        *last = Some((Instant::now(), observed, text.clone()));
        text
    }
}

#[cfg(feature = "prometheus")]
/// `GET /metrics` on a listener of its own (the HTTP transport serves it on its router, each
/// answer charged to its client's share of unread bytes).
fn metrics_router(core: Arc<Core>) -> axum::Router {
    use axum::http::{HeaderValue, StatusCode, header};
    use axum::response::IntoResponse;
    let shared = Arc::new(SharedRender::default());
    axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let core = Arc::clone(&core);
            let shared = Arc::clone(&shared);
            async move {
                match metrics_of(&core) {
                    Some(metrics) => (
                        [(
                            header::CONTENT_TYPE,
                            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                        )],
                        shared.text(metrics).await,
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
