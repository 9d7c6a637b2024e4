//! The `otel` feature: trace context through `params._meta` and the metrics on the global meter
//! provider.

use std::time::Duration;

use opentelemetry::metrics::Histogram;
use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::{KeyValue, global};
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::metrics::{BOUNDARIES, ErrorType, Operation};
use crate::protocol::ProtocolVersion;
use crate::server::middleware::Transport;

/// `params._meta`, read by a propagator.
struct MetaExtractor<'a>(&'a Map<String, Value>);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// `params._meta`, written by a propagator.
struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// Makes `span` continue the trace a request's `_meta` carries (`traceparent`, `tracestate`),
/// as the global text-map propagator reads it. Must run before the span is first entered.
pub(crate) fn continue_trace(span: &tracing::Span, meta: &Map<String, Value>) {
    if !meta.contains_key("traceparent") {
        return;
    }
    let context = global::get_text_map_propagator(|p| p.extract(&MetaExtractor(meta)));
    let _ = span.set_parent(context);
}

/// Writes `span`'s context into `meta` (`traceparent`, `tracestate`), for a request the server
/// sends its client.
pub(crate) fn carry_trace(span: &tracing::Span, meta: &mut Map<String, Value>) {
    let context = span.context();
    global::get_text_map_propagator(|p| p.inject_context(&context, &mut MetaInjector(meta)));
}

/// The two histograms on the global meter provider (as it is when the server is built).
pub(crate) struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
}

impl Instruments {
    pub(crate) fn new() -> Self {
        let meter = global::meter("mcp-runtime");
        Self {
            operation: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
            session: meter
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("The duration of the MCP session as observed on the MCP server.")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
        }
    }

    pub(crate) fn operation(&self, labels: &Operation, lasted: Duration) {
        let mut attributes = Vec::with_capacity(8);
        attributes.push(KeyValue::new("mcp.method.name", labels.method));
        if let Some((key, name)) = &labels.target {
            let key = if *key == "gen_ai_tool_name" {
                "gen_ai.tool.name"
            } else {
                "gen_ai.prompt.name"
            };
            attributes.push(KeyValue::new(key, std::sync::Arc::clone(name)));
        }
        if labels.method == "tools/call" {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        if let Some(error) = labels.error {
            attributes.push(KeyValue::new("error.type", error.label()));
            if let ErrorType::Code(code) = error {
                attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
        }
        common(&mut attributes, labels.version, labels.transport);
        self.operation.record(lasted.as_secs_f64(), &attributes);
    }

    pub(crate) fn session(
        &self,
        version: Option<ProtocolVersion>,
        transport: Transport,
        lasted: Duration,
    ) {
        let mut attributes = Vec::new();
        common(&mut attributes, version, transport);
        self.session.record(lasted.as_secs_f64(), &attributes);
    }
}

fn common(attributes: &mut Vec<KeyValue>, version: Option<ProtocolVersion>, transport: Transport) {
    if let Some(version) = version {
        attributes.push(KeyValue::new("mcp.protocol.version", version.as_str()));
    }
    attributes.push(KeyValue::new(
        "network.transport",
        transport.network_transport(),
    ));
    if transport != Transport::Stdio {
        attributes.push(KeyValue::new("network.protocol.name", "http"));
    }
}
