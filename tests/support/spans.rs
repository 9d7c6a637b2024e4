//! What the telemetry test binaries share: the client trace they continue, the propagators
//! they install, a client that answers the server's elicitation and checks that it carries the
//! trace on, and reading an exported span's attributes.

use mcp_runtime::McpService;
use mcp_runtime::testing::Client;
use opentelemetry::Value;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SpanData;
use serde_json::json;

/// The trace id of the client trace the tests continue.
pub const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
/// The client's span in it, the request spans' remote parent.
pub const PARENT: &str = "00f067aa0ba902b7";

/// W3C Trace Context and Baggage as the global propagator, as a deployment that forwards
/// baggage installs them.
pub fn propagate_trace_context_and_baggage() {
    opentelemetry::global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ]));
}

/// A client of `service` that accepts the server's `elicitation/create` with the name "Ada",
/// checking that the request carries on the trace and the baggage (`user=ada`) of the call it
/// came from.
pub async fn eliciting_client(service: &McpService) -> Client {
    Client::builder()
        .capabilities(json!({"elicitation": {}}))
        .on_request(|method, params| {
            assert_eq!(method, "elicitation/create");
            let traceparent = params["_meta"]["traceparent"].as_str().unwrap_or_default();
            assert!(traceparent.starts_with(&format!("00-{TRACE}-")), "{params}");
            assert_eq!(params["_meta"]["baggage"], "user=ada", "{params}");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
        .connect_service(service)
        .await
        .unwrap()
}

/// The span's attribute `key`.
pub fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// The span's attribute `key` as text.
pub fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}
