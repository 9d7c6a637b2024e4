//! Request spans made directly on an OpenTelemetry tracer (`Telemetry::tracer`), as a tracing
//! backend would receive them: the conventions' span, with the spans a handler makes through
//! `tracing-opentelemetry` as its children, the `mcp.request` `tracing` span left out of that
//! layer (`telemetry::exported_directly`) and the handler's own events on the request's span
//! (`telemetry::request_events`), as the guide sets it up. Its own test binary: it
//! installs the global subscriber and propagator.

use mcp_runtime::prelude::*;
use mcp_runtime::telemetry::{Telemetry, exported_directly, request_events};
use mcp_tests::http::{self, body_json, post, send};
use mcp_tests::spans::{self, PARENT, TRACE, attribute, text};
use opentelemetry::Value as OtelValue;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::prelude::*;

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    tracing::info!(a, b, "adding");
    a + b
}

/// Always fails.
#[tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::new("it broke"))
}

/// Looks something up in a span of its own, across an await.
#[tool]
async fn lookup() -> String {
    let span = tracing::info_span!("lookup.store");
    async {
        tokio::task::yield_now().await;
        tracing::info!("found");
    }
    .instrument(span)
    .await;
    "found".into()
}

/// The same in a sync tool, which runs on tokio's blocking pool.
#[tool]
fn lookup_sync() -> String {
    let _span = tracing::info_span!("lookup.sync").entered();
    "found".into()
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

use tracing::Instrument as _;

/// The one exported span named `name`.
fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one `{name}` span: {spans:#?}");
    found[0]
}

#[tokio::test]
async fn request_spans_made_on_the_tracer_follow_the_conventions_and_parent_the_handlers_spans() {
    let spans = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    spans::propagate_trace_context_and_baggage();
    tracing_subscriber::registry()
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("layer"))
                .with_filter(filter_fn(|metadata| !exported_directly(metadata))),
        )
        .with(request_events())
        .init();
    let server = || {
        Server::builder()
            .tool(add)
            .tool(broken)
            .tool(lookup)
            .tool(lookup_sync)
            .tool(ask)
            .telemetry(Telemetry::new().tracer(provider.tracer("mcp")))
    };

    // stdio: a client trace continued through the server.
    let service = server().build().unwrap();
    // The server's own request carries the trace on, from inside the request's span.
    let client = spans::eliciting_client(&service).await;
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let call = |name: &str| {
        let arguments = match name {
            "add" => json!({"a": 1, "b": 2}),
            _ => json!({}),
        };
        json!({"name": name, "arguments": arguments,
            "_meta": {"traceparent": traceparent, "baggage": "user=ada"}})
    };
    let added = client.request_raw("tools/call", call("add")).await.unwrap();
    assert_eq!(added["result"]["structuredContent"]["result"], 3);
    client
        .request_raw("tools/call", call("broken"))
        .await
        .unwrap();
    let unknown = client
        .request_raw("tools/call", call("missing"))
        .await
        .unwrap();
    assert_eq!(unknown["error"]["code"], -32602);
    for name in ["lookup", "lookup_sync", "ask"] {
        let reply = client.request_raw("tools/call", call(name)).await.unwrap();
        assert!(reply["result"]["content"].is_array(), "{reply}");
        assert_ne!(reply["result"]["isError"], true, "{reply}");
    }

    // HTTP, in a session.
    let addr = http::start(server()).await;
    let session = http::initialize(&addr).await;
    let body = json!({"jsonrpc": "2.0", "id": "h-1", "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 3, "b": 4}}});
    let response = send(&addr, post(&addr, Some(&session), body)).await;
    assert_eq!(
        body_json(response).await["result"]["structuredContent"]["result"],
        7
    );

    let _ = provider.force_flush();
    let exported = spans.get_finished_spans().unwrap();
    // The `tracing` span is left out of the layer: each request is exported once.
    assert!(
        exported.iter().all(|s| s.name != "mcp.request"),
        "{exported:#?}"
    );

    let span = exported
        .iter()
        .find(|s| {
            s.name == "tools/call add" && text(s, "network.transport").as_deref() == Some("pipe")
        })
        .unwrap_or_else(|| panic!("the stdio call's span: {exported:#?}"))
        .clone();
    assert_eq!(span.span_kind, SpanKind::Server);
    assert_eq!(span.instrumentation_scope.name(), "mcp");
    assert_eq!(span.span_context.trace_id().to_string(), TRACE);
    assert_eq!(span.parent_span_id.to_string(), PARENT);
    assert!(span.parent_span_is_remote);
    assert_eq!(span.status, Status::Unset);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "add"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2025-11-25"),
        ("jsonrpc.request.id", &added["id"].to_string()),
    ] {
        assert_eq!(
            text(&span, key).as_deref(),
            Some(value),
            "{key} in {span:#?}"
        );
    }
    assert!(text(&span, "mcp.session.id").unwrap().starts_with("stdio-"));
    assert_eq!(attribute(&span, "error.type"), None);
    // The handler's event, emitted in no span of its own, on the request's span.
    let adding = span
        .events
        .iter()
        .find(|e| e.name == "adding")
        .unwrap_or_else(|| panic!("the handler's event: {span:#?}"));
    assert!(
        adding
            .attributes
            .iter()
            .any(|kv| kv.key.as_str() == "a" && kv.value == OtelValue::I64(1)),
        "{adding:#?}"
    );
    assert!(
        adding
            .attributes
            .iter()
            .any(|kv| kv.key.as_str() == "level" && kv.value.as_str() == "INFO"),
        "{adding:#?}"
    );
    assert_eq!(attribute(&span, "network.protocol.name"), None);

    // A tool error, and a JSON-RPC error with its code and message.
    let span = one(&exported, "tools/call broken");
    assert_eq!(text(span, "error.type").as_deref(), Some("tool_error"));
    assert!(matches!(span.status, Status::Error { .. }));
    assert_eq!(attribute(span, "rpc.response.status_code"), None);
    let span = exported
        .iter()
        .find(|s| text(s, "jsonrpc.request.id") == Some(unknown["id"].to_string()))
        .unwrap_or_else(|| panic!("the unknown tool's span: {exported:#?}"));
    assert_eq!(
        span.name, "tools/call",
        "no unserved name in the span's name"
    );
    assert_eq!(text(span, "error.type").as_deref(), Some("-32602"));
    assert_eq!(
        text(span, "rpc.response.status_code").as_deref(),
        Some("-32602")
    );
    let Status::Error { description } = &span.status else {
        panic!("{span:#?}")
    };
    assert!(description.contains("missing"), "{description}");

    // The spans a handler makes are its request's children, in an async tool across an await
    // (its event on its span) and in a sync one on the blocking pool.
    for (request, child) in [
        ("tools/call lookup", "lookup.store"),
        ("tools/call lookup_sync", "lookup.sync"),
    ] {
        let parent = one(&exported, request);
        let child = one(&exported, child);
        assert_eq!(
            child.parent_span_id,
            parent.span_context.span_id(),
            "{child:#?} under {parent:#?}"
        );
        assert_eq!(child.span_context.trace_id().to_string(), TRACE);
    }
    // An event inside the handler's own span is that span's, not also the request's.
    let store = one(&exported, "lookup.store");
    assert!(store.events.iter().any(|e| e.name == "found"), "{store:#?}");
    let looked = one(&exported, "tools/call lookup");
    assert!(looked.events.is_empty(), "{looked:#?}");

    // The server's request to its client: a CLIENT span under the request's.
    let asked = one(&exported, "tools/call ask");
    let elicit = exported
        .iter()
        .find(|s| s.span_kind == SpanKind::Client)
        .unwrap_or_else(|| panic!("a CLIENT span: {exported:#?}"));
    assert_eq!(elicit.parent_span_id, asked.span_context.span_id());

    // HTTP: the peer and the session.
    let span = exported
        .iter()
        .find(|s| text(s, "jsonrpc.request.id").as_deref() == Some("h-1"))
        .unwrap_or_else(|| panic!("the HTTP call's span: {exported:#?}"));
    assert_eq!(span.name, "tools/call add");
    assert_eq!(text(span, "network.transport").as_deref(), Some("tcp"));
    assert_eq!(text(span, "network.protocol.name").as_deref(), Some("http"));
    assert_eq!(
        text(span, "mcp.session.id").as_deref(),
        Some(session.as_str())
    );
    assert_eq!(text(span, "client.address").as_deref(), Some("127.0.0.1"));
    assert!(attribute(span, "client.port").is_some());
    drop(client);
}
