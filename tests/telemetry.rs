//! Telemetry by OpenTelemetry's semantic conventions for MCP, as a tracing backend would receive
//! it: spans exported through `tracing-opentelemetry` into `opentelemetry_sdk`'s in-memory
//! exporter, metrics through the SDK's in-memory metric exporter and the server's own Prometheus
//! text; over stdio and HTTP, in both eras. Its own test binary: it installs the global
//! subscriber, propagator and meter provider.

use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::telemetry::Telemetry;
use mcp_runtime::testing::Client;
use mcp_tests::http::{self, body_json, post, send, stateless_post};
use mcp_tests::spans::{self, PARENT, TRACE, attribute, text};
use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing_subscriber::prelude::*;

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Always fails.
#[tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::new("it broke"))
}

#[derive(Deserialize, Elicit)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks the user's name.
#[tool]
async fn ask(ctx: Context) -> Result<String, ToolError> {
    match ctx.elicit::<Name>("Your name?").await? {
        Elicitation::Accept(form) => Ok(form.name),
        _ => Ok("nobody".into()),
    }
}

/// Greets.
#[prompt]
fn greet(name: String) -> String {
    format!("Hello, {name}")
}

fn server() -> Server {
    Server::builder()
        .tool(add)
        .tool(broken)
        .tool(ask)
        .prompt(greet)
        .telemetry(Telemetry::new())
}

/// The one exported span named `name` whose `jsonrpc.request.id` is `id`, at `version`, of the
/// servers that trace every request.
fn span_of(spans: &[SpanData], name: &str, id: &str, version: &str) -> SpanData {
    let found: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == name && text(s, "jsonrpc.request.id").as_deref() == Some(id))
        .filter(|s| text(s, "mcp.protocol.version").as_deref() == Some(version))
        // The sampling server's one span, whose client's ids start again.
        .filter(|s| s.span_context.trace_id().to_string() != SAMPLED_IN)
        .collect();
    assert_eq!(found.len(), 1, "one `{name}` span for id {id}: {spans:#?}");
    found[0].clone()
}

/// The traces of the sampling server's calls: one its client sampled, one it did not.
const SAMPLED_IN: &str = "5bf92f3577b34da6a3ce929d0e0e4736";
const SAMPLED_OUT: &str = "6bf92f3577b34da6a3ce929d0e0e4736";

#[tokio::test]
async fn spans_and_metrics_follow_the_conventions_on_both_transports_and_eras() {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metric_exporter = InMemoryMetricExporter::default();
    let meters = SdkMeterProvider::builder()
        .with_periodic_exporter(metric_exporter.clone())
        .build();
    opentelemetry::global::set_meter_provider(meters.clone());
    spans::propagate_trace_context_and_baggage();
    tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("test")))
        .init();

    // stdio, the handshake era: a client trace continued through the server.
    let service = server().build().unwrap();
    // The server's own request carries its `CLIENT` span's context on, and the baggage.
    let client = spans::eliciting_client(&service).await;
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let call = |name: &str, args: Value| json!({"name": name, "arguments": args, "_meta": {"traceparent": traceparent, "tracestate": "rojo=1", "baggage": "user=ada"}});
    let added = client
        .request_raw("tools/call", call("add", json!({"a": 1, "b": 2})))
        .await
        .unwrap();
    let add_id = added["id"].to_string();
    let failed = client
        .request_raw("tools/call", call("broken", json!({})))
        .await
        .unwrap();
    let unknown = client
        .request_raw("tools/call", call("missing", json!({})))
        .await
        .unwrap();
    assert_eq!(unknown["error"]["code"], -32602);
    let asked = client
        .request_raw("tools/call", call("ask", json!({})))
        .await
        .unwrap();
    assert_eq!(asked["result"]["content"][0]["text"], "Ada");
    let prompt = client
        .request_raw(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await
        .unwrap();

    // stdio, the stateless era.
    let stateless = Client::builder()
        .stateless()
        .connect_service(&service)
        .await
        .unwrap();
    let stateless_add = stateless
        .request_raw(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 2}}),
        )
        .await
        .unwrap();

    // HTTP, both eras.
    let addr = http::start(server()).await;
    let session = http::initialize(&addr).await;
    let body = json!({"jsonrpc": "2.0", "id": "h-1", "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 3, "b": 4}}});
    let response = send(&addr, post(&addr, Some(&session), body)).await;
    assert_eq!(
        body_json(response).await["result"]["structuredContent"]["result"],
        7
    );
    let params = json!({"name": "add", "arguments": {"a": 5, "b": 6}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}, "traceparent": traceparent}});
    let response = send(&addr, stateless_post(&addr, 77, "tools/call", params)).await;
    assert_eq!(
        body_json(response).await["result"]["structuredContent"]["result"],
        11
    );

    // Head sampling at 0: no span for a request its client left undecided, and the client's
    // flag followed where its `traceparent` has one; the metrics count every request.
    let sampled = Server::builder()
        .tool(add)
        .prompt(greet)
        .telemetry(Telemetry::new().sample_ratio(0.0))
        .build()
        .unwrap();
    let sampling = Client::builder().connect_service(&sampled).await.unwrap();
    for (trace, flags) in [(SAMPLED_IN, "01"), (SAMPLED_OUT, "00")] {
        let params = json!({"name": "add", "arguments": {"a": 1, "b": 1},
            "_meta": {"traceparent": format!("00-{trace}-{PARENT}-{flags}")}});
        let reply = sampling.request_raw("tools/call", params).await.unwrap();
        assert_eq!(reply["result"]["structuredContent"]["result"], 2, "{reply}");
    }
    for _ in 0..2 {
        sampling
            .request_raw(
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": "Ada"}}),
            )
            .await
            .unwrap();
    }

    let _ = tracer.force_flush();
    let exported = spans.get_finished_spans().unwrap();

    let in_trace = |trace: &str| {
        exported
            .iter()
            .filter(|s| s.span_context.trace_id().to_string() == trace)
            .collect::<Vec<_>>()
    };
    let kept = in_trace(SAMPLED_IN);
    assert_eq!(kept.len(), 1, "{kept:#?}");
    assert_eq!(kept[0].name, "tools/call add");
    assert_eq!(kept[0].parent_span_id.to_string(), PARENT);
    assert!(in_trace(SAMPLED_OUT).is_empty(), "{exported:#?}");
    let greets = exported
        .iter()
        .filter(|s| s.name == "prompts/get greet")
        .count();
    assert_eq!(
        greets, 1,
        "only the first server's prompts/get: {exported:#?}"
    );
    let counted = sampled.metrics_text().unwrap();
    for (method, count) in [("tools/call", 2), ("prompts/get", 2)] {
        assert!(
            counted.lines().any(
                |l| l.starts_with("mcp_server_operation_duration_seconds_count{")
                    && l.contains(&format!("mcp_method_name=\"{method}\""))
                    && l.ends_with(&format!(" {count}"))
            ),
            "{counted}"
        );
    }

    // `tools/call add`: a SERVER span, child of the client's span, with the conventions' attributes.
    let span = span_of(&exported, "tools/call add", &add_id, "2025-11-25");
    assert_eq!(span.span_kind, SpanKind::Server);
    assert_eq!(span.span_context.trace_id().to_string(), TRACE);
    assert_eq!(span.parent_span_id.to_string(), PARENT);
    assert!(span.parent_span_is_remote);
    assert_eq!(span.status, Status::Unset);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "add"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "pipe"),
    ] {
        assert_eq!(
            text(&span, key).as_deref(),
            Some(value),
            "{key} in {span:#?}"
        );
    }
    assert!(text(&span, "mcp.session.id").unwrap().starts_with("stdio-"));
    assert_eq!(attribute(&span, "error.type"), None);
    assert_eq!(attribute(&span, "network.protocol.name"), None);
    // Each thing once, by the conventions' name: not also `method`, `id`, `tool`, `session`.
    for key in ["method", "id", "tool", "session"] {
        assert_eq!(attribute(&span, key), None, "{key} in {span:#?}");
    }

    // A tool error: `error.type` is `tool_error`, the status ERROR.
    let span = span_of(
        &exported,
        "tools/call broken",
        &failed["id"].to_string(),
        "2025-11-25",
    );
    assert_eq!(text(&span, "error.type").as_deref(), Some("tool_error"));
    assert!(matches!(span.status, Status::Error { .. }));
    assert_eq!(attribute(&span, "rpc.response.status_code"), None);

    // A JSON-RPC error: its code, and the status described by its message; no unserved name in
    // the span's name.
    let span = span_of(
        &exported,
        "tools/call",
        &unknown["id"].to_string(),
        "2025-11-25",
    );
    assert_eq!(text(&span, "error.type").as_deref(), Some("-32602"));
    assert_eq!(
        text(&span, "rpc.response.status_code").as_deref(),
        Some("-32602")
    );
    assert_eq!(text(&span, "gen_ai.tool.name").as_deref(), Some("missing"));
    assert_eq!(
        span.status,
        Status::error(unknown["error"]["message"].as_str().unwrap().to_owned())
    );

    // The server's own request to the client: a CLIENT span inside the tool's span.
    let ask_span = span_of(
        &exported,
        "tools/call ask",
        &asked["id"].to_string(),
        "2025-11-25",
    );
    let elicit = exported
        .iter()
        .find(|s| s.name == "elicitation/create")
        .expect("a span for the server's request");
    assert_eq!(elicit.span_kind, SpanKind::Client);
    assert_eq!(elicit.parent_span_id, ask_span.span_context.span_id());
    assert_eq!(elicit.span_context.trace_id().to_string(), TRACE);
    assert_eq!(
        text(elicit, "mcp.method.name").as_deref(),
        Some("elicitation/create")
    );

    let span = span_of(
        &exported,
        "prompts/get greet",
        &prompt["id"].to_string(),
        "2025-11-25",
    );
    assert_eq!(text(&span, "gen_ai.prompt.name").as_deref(), Some("greet"));
    assert_eq!(attribute(&span, "gen_ai.operation.name"), None);
    let init = exported
        .iter()
        .find(|s| s.name == "initialize")
        .expect("an initialize span");
    assert_eq!(init.span_kind, SpanKind::Server);
    assert_eq!(
        text(init, "mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );

    // The stateless era on stdio.
    let span = span_of(
        &exported,
        "tools/call add",
        &stateless_add["id"].to_string(),
        "2026-07-28",
    );
    assert_eq!(
        text(&span, "mcp.protocol.version").as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(text(&span, "network.transport").as_deref(), Some("pipe"));
    // No session in this era, though the stdio connection has a name.
    assert_eq!(attribute(&span, "mcp.session.id"), None, "{span:#?}");

    // HTTP: a session's request, and a stateless one that continues the client's trace.
    let span = span_of(&exported, "tools/call add", "h-1", "2025-11-25");
    assert_eq!(text(&span, "network.transport").as_deref(), Some("tcp"));
    assert_eq!(
        text(&span, "network.protocol.name").as_deref(),
        Some("http")
    );
    assert_eq!(
        text(&span, "mcp.session.id").as_deref(),
        Some(session.as_str())
    );
    assert_eq!(text(&span, "client.address").as_deref(), Some("127.0.0.1"));
    assert!(attribute(&span, "client.port").is_some());
    let span = span_of(&exported, "tools/call add", "77", "2026-07-28");
    assert_eq!(
        text(&span, "mcp.protocol.version").as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(attribute(&span, "mcp.session.id"), None);
    assert_eq!(span.parent_span_id.to_string(), PARENT);
    assert_eq!(span.span_context.trace_id().to_string(), TRACE);

    // The server's own histogram, as Prometheus reads it.
    let text = service.metrics_text().unwrap();
    let count = text
        .lines()
        .find(|l| {
            l.starts_with("mcp_server_operation_duration_seconds_count{")
                && l.contains("mcp_method_name=\"tools/call\"")
                && l.contains("gen_ai_tool_name=\"add\"")
                && l.contains("network_transport=\"pipe\"")
                && !l.contains("error_type")
                && l.contains("2025-11-25")
        })
        .unwrap_or_else(|| panic!("no count for tools/call add in\n{text}"));
    assert!(count.ends_with(" 1"), "{count}");
    assert!(text.contains("error_type=\"tool_error\""), "{text}");
    assert!(
        text.contains("error_type=\"-32602\",rpc_response_status_code=\"-32602\""),
        "{text}"
    );
    assert!(
        !text.contains("missing"),
        "an unserved tool's name is no label: {text}"
    );

    // The session's duration, once it ends (the stdio connection closes).
    drop(client);
    let ended = async {
        loop {
            let text = service.metrics_text().unwrap();
            if text.contains("mcp_server_session_duration_seconds_count{mcp_protocol_version=\"2025-11-25\",network_transport=\"pipe\"} 1\n") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), ended)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "no session duration in\n{}",
                service.metrics_text().unwrap()
            )
        });

    // The same through the global meter provider.
    meters.force_flush().unwrap();
    let exported = metric_exporter.get_finished_metrics().unwrap();
    let histogram = exported
        .iter()
        .flat_map(|r| r.scope_metrics())
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == "mcp.server.operation.duration")
        .expect("the operation histogram");
    assert_eq!(histogram.unit(), "s");
    let AggregatedMetrics::F64(MetricData::Histogram(data)) = histogram.data() else {
        panic!("a histogram of f64: {histogram:?}");
    };
    let point = data
        .data_points()
        .find(|p| {
            p.attributes()
                .any(|kv| *kv == KeyValue::new("gen_ai.tool.name", "add"))
                && p.attributes()
                    .any(|kv| *kv == KeyValue::new("network.transport", "tcp"))
                && p.attributes().any(|kv| {
                    kv.key.as_str() == "mcp.protocol.version" && kv.value.as_str() == "2025-11-25"
                })
        })
        .expect("a data point for add over HTTP");
    assert_eq!(point.count(), 1);
    assert_eq!(
        point.bounds().collect::<Vec<_>>(),
        [
            0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0
        ]
    );
}
