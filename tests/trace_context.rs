//! The trace context a client sends in `params._meta`, with the `otel` feature: each field
//! within its W3C size is read and continues the client's trace; a longer one (or one with more
//! list members) is ignored whole, before the propagator parses or copies it, so a request with
//! a 15 MiB `traceparent` costs the server no more than its own text. Its own test binary: it
//! installs the global subscriber and propagator, and reads the process's peak RSS.

use mcp_runtime::prelude::*;
use mcp_runtime::telemetry::Telemetry;
use mcp_runtime::testing::Client;
use mcp_tests::spans::{PARENT, TRACE};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing_subscriber::prelude::*;

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The process's peak RSS in KiB since it was last reset, and the reset.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("VmHWM in /proc/self/status")
}

fn reset_peak_rss() {
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak RSS can be reset");
}

/// The exported `tools/call add` span of the call whose id is `id`.
fn span_of(spans: &[SpanData], id: &str) -> SpanData {
    spans
        .iter()
        .find(|s| {
            s.name == "tools/call add"
                && s.attributes
                    .iter()
                    .any(|kv| kv.key.as_str() == "jsonrpc.request.id" && kv.value.as_str() == id)
        })
        .unwrap_or_else(|| panic!("a span for id {id} in {spans:#?}"))
        .clone()
}

#[tokio::test]
async fn trace_context_fields_past_their_w3c_sizes_are_ignored_and_cost_nothing() {
    let exporter = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("test")))
        .init();
    let service = Server::builder()
        .tool(add)
        .telemetry(Telemetry::new())
        .build()
        .unwrap();
    let client = Client::builder().connect_service(&service).await.unwrap();
    let call = |id: &str, meta: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta}})
        .to_string()
    };
    let answer = |line: String| {
        let client = &client;
        async move {
            let answer = client.send_line_and_receive(line).await.unwrap();
            assert_eq!(
                answer["result"]["structuredContent"]["result"], 3,
                "{answer}"
            );
        }
    };
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    // Within the sizes: continued, with its state.
    answer(call(
        "fits",
        json!({"traceparent": traceparent, "tracestate": "rojo=00f067aa0ba902b7"}),
    ))
    .await;
    // A tracestate of 33 members: the whole state is discarded, the parent kept.
    let members: Vec<String> = (0..33).map(|n| format!("v{n}=x")).collect();
    answer(call(
        "many",
        json!({"traceparent": traceparent, "tracestate": members.join(",")}),
    ))
    .await;
    // A later version's traceparent, which its parser would accept, past 55 bytes: ignored.
    let later = format!("01-{TRACE}-{PARENT}-01-{}", "a".repeat(64));
    answer(call("later", json!({"traceparent": later}))).await;
    // 15 MiB of traceparent, all dashes (each a part to a parser that splits it): ignored, and
    // the peak RSS grows by what the request's own text and its parse hold, not by a parse of
    // it (16 bytes a dash: 240 MiB).
    let huge = format!("01-{TRACE}-{PARENT}-01-{}", "-".repeat(15 << 20));
    let line = call("huge", json!({"traceparent": huge}));
    drop(huge);
    reset_peak_rss();
    let before = peak_rss_kib();
    answer(line).await;
    // The kernel sums RSS from per-CPU counters, so the mark can read a little lower than it
    // did before, which is no growth.
    let grown_mib = peak_rss_kib().saturating_sub(before) / 1024;
    assert!(
        grown_mib < 96,
        "a 15 MiB request grew the peak RSS by {grown_mib} MiB"
    );

    let _ = tracer.force_flush();
    let spans = exporter.get_finished_spans().unwrap();
    let fits = span_of(&spans, "fits");
    assert_eq!(fits.span_context.trace_id().to_string(), TRACE);
    assert_eq!(fits.parent_span_id.to_string(), PARENT);
    assert_eq!(
        fits.span_context.trace_state().get("rojo"),
        Some("00f067aa0ba902b7")
    );
    let many = span_of(&spans, "many");
    assert_eq!(many.parent_span_id.to_string(), PARENT);
    assert_eq!(many.span_context.trace_state().header(), "");
    for ignored in ["later", "huge"] {
        let span = span_of(&spans, ignored);
        assert_ne!(
            span.span_context.trace_id().to_string(),
            TRACE,
            "`{ignored}`: a trace of its own"
        );
        assert!(!span.parent_span_is_remote, "`{ignored}`: no remote parent");
    }
}
