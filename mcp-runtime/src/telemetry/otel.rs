//! The `otel` feature: trace context through `params._meta` and the request spans made on a
//! tracer (the metrics' side of the feature is in `metrics.rs`).

use std::borrow::Cow;

use opentelemetry::global::BoxedTracer;
use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::trace::{SpanKind, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue, StringValue, global};
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::protocol::{Method, ProtocolVersion, RequestId, echo};
use crate::server::Transport;
use crate::server::exchange::Status;
use crate::server::observe::Arrival;

/// The trace-context members of `params._meta` a propagator may read, each within the size its
/// W3C specification gives; anything longer (or with more members) is ignored whole, before the
/// propagator sees it, so a hostile megabyte is never parsed or copied.
///
/// - `traceparent`: 55 bytes (version `00`: `00-{32 hex}-{16 hex}-{2 hex}`; the longer forms
///   a later version may write are not read);
/// - `tracestate`: 512 bytes and 32 list members (Trace Context: a vendor "SHOULD propagate
///   at least 512 characters", and "MUST discard the whole tracestate" past 32 members);
/// - `baggage`: 8,192 bytes and 64 list members (W3C Baggage's limits a platform must at
///   least propagate).
pub(crate) const TRACE_FIELDS: [(&str, usize, usize); 3] = [
    ("traceparent", 55, 1),
    ("tracestate", 512, 32),
    ("baggage", 8_192, 64),
];

/// The bytes of trace context (`tracestate` and `baggage`, and a slot for each member) that the
/// spans of the requests in flight may keep together: past it, a request's span starts a trace
/// of its own rather than continue the client's (logged once a minute at most).
pub(crate) const KEPT_TRACE_CONTEXT: usize = 4 * 1024 * 1024;

/// What one kept member costs beyond its text: its strings' headers and its map slot.
const MEMBER_OVERHEAD: usize = 64;

/// Whether `value` is within `max` bytes and `members` list members (its length first: a long
/// value is never split).
fn within(value: &str, max: usize, members: usize) -> bool {
    value.len() <= max && value.split(',').filter(|m| !m.trim().is_empty()).count() <= members
}

/// The trace-context members of `meta` within their sizes.
struct MetaExtractor<'a> {
    fields: [Option<&'a str>; 3],
}

impl<'a> MetaExtractor<'a> {
    fn new(meta: &'a Map<String, Value>) -> Self {
        let fields = TRACE_FIELDS.map(|(key, max, members)| {
            meta.get(key)
                .and_then(Value::as_str)
                .filter(|value| within(value, max, members))
        });
        Self { fields }
    }

    /// What a span keeps of them: the state and the baggage, with a slot per member.
    fn kept(&self) -> usize {
        self.fields[1..]
            .iter()
            .flatten()
            .map(|value| value.len() + MEMBER_OVERHEAD * (value.matches(',').count() + 1))
            .sum()
    }
}

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let index = TRACE_FIELDS.iter().position(|(name, ..)| *name == key)?;
        self.fields[index]
    }

    fn keys(&self) -> Vec<&str> {
        TRACE_FIELDS
            .iter()
            .zip(&self.fields)
            .filter(|(_, value)| value.is_some())
            .map(|((name, ..), _)| *name)
            .collect()
    }
}

/// The trace context the spans of requests in flight keep, counted against
/// [`KEPT_TRACE_CONTEXT`].
#[derive(Default)]
pub(crate) struct KeptContext {
    bytes: std::sync::atomic::AtomicUsize,
    /// When a context was last refused, in seconds since `KEPT_EPOCH`, for one warning a
    /// minute.
    warned: std::sync::atomic::AtomicU64,
}

/// What one span keeps of its client's trace context, given back when the request ends.
pub(crate) struct KeptCharge {
    kept: std::sync::Arc<KeptContext>,
    bytes: usize,
}

impl Drop for KeptCharge {
    fn drop(&mut self) {
        self.kept
            .bytes
            .fetch_sub(self.bytes, std::sync::atomic::Ordering::AcqRel);
    }
}

impl KeptContext {
    fn take(self: &std::sync::Arc<Self>, bytes: usize) -> Option<KeptCharge> {
        use std::sync::atomic::Ordering;
        let taken = self
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                let after = held.checked_add(bytes)?;
                (after <= KEPT_TRACE_CONTEXT).then_some(after)
            })
            .is_ok();
        if taken {
            return Some(KeptCharge {
                kept: std::sync::Arc::clone(self),
                bytes,
            });
        }
        let now = KEPT_EPOCH.elapsed().as_secs();
        let last = self.warned.load(Ordering::Relaxed);
        if (last == 0 || now.saturating_sub(last) >= 60)
            && self
                .warned
                .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                limit = KEPT_TRACE_CONTEXT,
                "the trace context kept by requests in flight is at its limit: new requests \
                 start traces of their own"
            );
        }
        None
    }
}

static KEPT_EPOCH: std::sync::LazyLock<std::time::Instant> =
    std::sync::LazyLock::new(std::time::Instant::now);

/// `params._meta`, written by a propagator.
struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The sampled flag of `meta`'s `traceparent`, when it is a well-formed version-00 one (what
/// the propagator would continue): `00-{32 hex}-{16 hex}-{2 hex}`, neither id all zeros.
pub(crate) fn parent_sampled(meta: &Map<String, Value>) -> Option<bool> {
    let value = meta.get("traceparent")?.as_str()?.as_bytes();
    if value.len() != 55 || !value.starts_with(b"00-") || value[35] != b'-' || value[52] != b'-' {
        return None;
    }
    let (trace, parent, flags) = (&value[3..35], &value[36..52], &value[53..55]);
    let hex = |part: &[u8]| part.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let zero = |part: &[u8]| part.iter().all(|&b| b == b'0');
    if !hex(trace) || !hex(parent) || !hex(flags) || zero(trace) || zero(parent) {
        return None;
    }
    let low = match flags[1] {
        b @ b'0'..=b'9' => b - b'0',
        b => b - b'a' + 10,
    };
    Some(low & 1 == 1)
}

/// Makes `span` continue the trace a request's `_meta` carries (`traceparent`, `tracestate`,
/// `baggage` within their sizes: [`TRACE_FIELDS`]), as the global text-map propagator reads it,
/// when what the span keeps of it fits in `kept`. Must run before the span is first entered.
pub(crate) fn continue_trace(
    span: &tracing::Span,
    meta: &Map<String, Value>,
    kept: &std::sync::Arc<KeptContext>,
) -> Option<KeptCharge> {
    let (context, charge) = client_context(meta, kept)?;
    let _ = span.set_parent(context);
    Some(charge)
}

/// The trace context a request's `_meta` carries (within the sizes of [`TRACE_FIELDS`]), as
/// the global text-map propagator reads it, when what a span keeps of it fits in `kept`.
pub(crate) fn client_context(
    meta: &Map<String, Value>,
    kept: &std::sync::Arc<KeptContext>,
) -> Option<(Context, KeptCharge)> {
    let extractor = MetaExtractor::new(meta);
    extractor.fields[0]?;
    let charge = kept.take(extractor.kept())?;
    let context = global::get_text_map_propagator(|p| p.extract(&extractor));
    Some((context, charge))
}

/// The request's `SERVER` span made directly on `tracer`, child of `parent`, with the
/// conventions' name and attributes (as [`request_span`](super::request_span) gives the
/// `tracing` span): the context it is current in.
pub(crate) fn request_span(
    tracer: &BoxedTracer,
    arrival: &Arrival<'_>,
    name: Option<&str>,
    target: Option<&(&'static str, std::sync::Arc<str>)>,
    parent: Context,
) -> Context {
    let request = arrival.request;
    // Text the client wrote is cut as messages cut it; a known method is the table's own text.
    let method: Cow<'static, str> = match Method::parse(&request.method) {
        Some(known) => Cow::Borrowed(known.name()),
        None => Cow::Owned(echo(&request.method).into_owned()),
    };
    let mut attributes = Vec::with_capacity(12);
    attributes.push(KeyValue::new("mcp.method.name", method.clone()));
    // A served tool or prompt is named by the registry's own text, shared, not copied.
    let named = || -> Option<StringValue> {
        match target {
            Some((_, served)) => Some(std::sync::Arc::clone(served).into()),
            None => name.map(|name| echo(name).into_owned().into()),
        }
    };
    match method.as_ref() {
        "tools/call" => {
            if let Some(tool) = named() {
                attributes.push(KeyValue::new("gen_ai.tool.name", tool));
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
        }
        "prompts/get" => {
            if let Some(prompt) = named() {
                attributes.push(KeyValue::new("gen_ai.prompt.name", prompt));
            }
        }
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            if let Some(uri) = request.params.get("uri").and_then(Value::as_str) {
                attributes.push(KeyValue::new("mcp.resource.uri", echo(uri).into_owned()));
            }
        }
        _ => {}
    }
    // A 2026-07-28 request has no session, even on a stdio connection that has a name.
    if let Some(session) = arrival
        .session
        .filter(|_| arrival.version.is_none_or(|v| v.has_handshake()))
    {
        attributes.push(KeyValue::new("mcp.session.id", session.to_owned()));
    }
    if let Some(version) = arrival.version {
        attributes.push(KeyValue::new("mcp.protocol.version", version.as_str()));
    }
    let id = match &request.id {
        RequestId::Number(n) => n.to_string(),
        RequestId::String(s) => echo(s).into_owned(),
    };
    attributes.push(KeyValue::new("jsonrpc.request.id", id));
    attributes.push(KeyValue::new(
        "network.transport",
        arrival.transport.network_transport(),
    ));
    if arrival.transport != Transport::Stdio {
        attributes.push(KeyValue::new("network.protocol.name", "http"));
    }
    if let Some(peer) = arrival.peer {
        attributes.push(KeyValue::new("client.address", peer.ip().to_string()));
        // A client named by a trusted proxy's header has no port (0).
        if peer.port() != 0 {
            attributes.push(KeyValue::new("client.port", i64::from(peer.port())));
        }
    }
    // `{mcp.method.name} {target}` for a served tool or prompt, else the method alone.
    let span_name = match target {
        Some((_, served)) => Cow::Owned([method.as_ref(), " ", served].concat()),
        None => method,
    };
    let span = tracer
        .span_builder(span_name)
        .with_kind(SpanKind::Server)
        .with_attributes(attributes)
        .start_with_context(tracer, &parent);
    parent.with_span(span)
}

/// Writes `span`'s context into `meta` (`traceparent`, `tracestate`), for a request the server
/// sends its client.
pub(crate) fn carry_trace(span: &tracing::Span, meta: &mut Map<String, Value>) {
    let context = span.context();
    // A span no `tracing-opentelemetry` layer took has no OpenTelemetry context of its own: the
    // request's, made directly on a tracer and current while its handler runs, goes out instead.
    let context = match context.span().span_context().is_valid() {
        true => context,
        false => Context::current(),
    };
    global::get_text_map_propagator(|p| p.inject_context(&context, &mut MetaInjector(meta)));
}

/// `initialize` settled the revision of a request whose span was made directly.
pub(crate) fn settled(context: &Context, version: ProtocolVersion) {
    context
        .span()
        .set_attribute(KeyValue::new("mcp.protocol.version", version.as_str()));
}

/// Ends a span made directly, with the answer's outcome: `error.type` and the status `ERROR`
/// for an error or a tool error, and `rpc.response.status_code` and the error's message for a
/// JSON-RPC error.
pub(crate) fn end(context: &Context, status: &Status) {
    let span = context.span();
    match status {
        Status::Ok => {}
        Status::ToolError => {
            span.set_attribute(KeyValue::new("error.type", "tool_error"));
            span.set_status(opentelemetry::trace::Status::error(""));
        }
        Status::Error(error) => {
            let code = error.code.to_string();
            span.set_attribute(KeyValue::new("error.type", code.clone()));
            span.set_attribute(KeyValue::new("rpc.response.status_code", code));
            span.set_status(opentelemetry::trace::Status::error(
                error.message.to_string(),
            ));
        }
    }
    span.end();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(traceparent: &str) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert("traceparent".into(), Value::from(traceparent));
        meta
    }

    #[test]
    fn the_parent_flag_is_read_only_from_a_well_formed_traceparent() {
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        let parent = "00f067aa0ba902b7";
        for (flags, sampled) in [("01", true), ("00", false), ("03", true), ("0a", false)] {
            let value = format!("00-{trace}-{parent}-{flags}");
            assert_eq!(parent_sampled(&meta(&value)), Some(sampled), "{value}");
        }
        for value in [
            format!("01-{trace}-{parent}-01"),
            format!("00-{}-{parent}-01", "0".repeat(32)),
            format!("00-{trace}-{}-01", "0".repeat(16)),
            format!("00-{trace}-{parent}-0G"),
            format!("00-{}-{parent}-01", trace.to_uppercase()),
            format!("00-{trace}-{parent}-01-"),
            format!("00-{trace}-{parent}"),
            "é".repeat(28),
        ] {
            assert_eq!(parent_sampled(&meta(&value)), None, "{value}");
        }
        assert_eq!(parent_sampled(&Map::new()), None);
    }
}
