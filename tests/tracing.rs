//! `tracing` in handlers, in a test process of its own: events reach the requesting client as
//! `notifications/message` through `ClientLogLayer`, at the level it set; events elsewhere do
//! not; and handlers run inside a request span that names the method, the tool and the session.
//!
//! One subscriber is the process's global default, installed before any event or span is made
//! and shared by every test, which run one at a time: per-thread subscribers in a process whose
//! other threads create the same spans race on tracing's cached callsite interest, and a span
//! could come out disabled.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use mcp_runtime::trace::ClientLogLayer;
use mcp_tests::http::{events, initialize, post, send, start};
use serde_json::{Value, json};
use tracing_subscriber::prelude::*;

/// What the global subscriber's `fmt` layer wrote, and the lock that runs the tests one by one.
fn setup() -> &'static Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURED.get_or_init(|| {
        let captured = Captured::default();
        tracing_subscriber::registry()
            .with(captured.fmt_layer())
            .with(ClientLogLayer::new())
            .init();
        captured
    })
}

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs a test alone, with an empty capture.
async fn alone() -> (tokio::sync::MutexGuard<'static, ()>, &'static Captured) {
    let captured = setup();
    let guard = SERIAL.lock().await;
    captured.0.lock().unwrap().clear();
    (guard, captured)
}

/// Look up the weather, logging with `tracing` only.
#[tool]
async fn traced_forecast(city: String) -> String {
    tracing::info!(target: "weather", %city, days = 3, "looking up");
    tracing::debug!(target: "weather", "cache miss");
    tracing::warn!(target: "weather", "the forecast may be stale");
    format!("sunny in {city}")
}

/// A sync tool, run on the blocking pool: its events still belong to the request.
#[tool]
fn traced_sync_forecast(city: String) -> String {
    tracing::warn!(target: "weather", %city, "computed off the request's task");
    format!("cloudy in {city}")
}

/// Panics, so the runtime logs an error of its own.
#[tool]
async fn traced_panic() -> String {
    panic!("internal detail")
}

fn log_message(level: &str, data: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": level, "logger": "weather", "data": data}
    })
}

fn stale_warning() -> Value {
    log_message("warning", json!("the forecast may be stale"))
}

#[tokio::test]
async fn tracing_events_in_a_tool_reach_its_client_at_its_level() {
    let _alone = alone().await;
    let client = Client::connect(Server::builder().tool(traced_forecast))
        .await
        .unwrap();
    // Outside any handler: there is no request, and nothing is sent.
    tracing::warn!(target: "weather", "outside a handler");

    let result = client
        .call_tool("traced_forecast", json!({"city": "Paris"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "sunny in Paris");
    assert_eq!(
        client.next_message().await.unwrap(),
        log_message(
            "info",
            json!({"message": "looking up", "city": "Paris", "days": 3})
        )
    );
    // `debug` is below the default level (`info`): the warning comes next.
    assert_eq!(client.next_message().await.unwrap(), stale_warning());

    client
        .request("logging/setLevel", json!({"level": "warning"}))
        .await
        .unwrap();
    client
        .call_tool("traced_forecast", json!({"city": "Oslo"}))
        .await
        .unwrap();
    // The info event is suppressed now.
    assert_eq!(client.next_message().await.unwrap(), stale_warning());

    client
        .request("logging/setLevel", json!({"level": "debug"}))
        .await
        .unwrap();
    client
        .call_tool("traced_forecast", json!({"city": "Rome"}))
        .await
        .unwrap();
    let levels: Vec<Value> = [
        client.next_message().await.unwrap(),
        client.next_message().await.unwrap(),
        client.next_message().await.unwrap(),
    ]
    .iter()
    .map(|m| m["params"]["level"].clone())
    .collect();
    assert_eq!(levels, ["info", "debug", "warning"]);
}

#[tokio::test]
async fn stateless_requests_log_at_the_level_their_envelope_asks_for() {
    let _alone = alone().await;
    let service = Server::builder().tool(traced_forecast).build().unwrap();
    let client = Client::builder()
        .stateless()
        .log_level("warning")
        .connect_service(&service)
        .await
        .unwrap();
    client
        .call_tool("traced_forecast", json!({"city": "Quito"}))
        .await
        .unwrap();
    assert_eq!(client.next_message().await.unwrap(), stale_warning());

    // Without `logLevel` a stateless client wants no logs; with `debug` it gets them all.
    let quiet = Client::builder()
        .stateless()
        .connect_service(&service)
        .await
        .unwrap();
    quiet
        .call_tool("traced_forecast", json!({"city": "Lima"}))
        .await
        .unwrap();
    let chatty = Client::builder()
        .stateless()
        .log_level("debug")
        .connect_service(&service)
        .await
        .unwrap();
    chatty
        .call_tool("traced_forecast", json!({"city": "Lima"}))
        .await
        .unwrap();
    assert_eq!(
        chatty.next_message().await.unwrap()["params"]["level"],
        "info"
    );
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(100), quiet.next_message())
            .await
            .is_err(),
        "a stateless request without `logLevel` got a log message"
    );
}

#[tokio::test]
async fn the_runtime_s_own_events_are_not_sent() {
    let _alone = alone().await;
    let client = Client::connect(Server::builder().tool(traced_panic).tool(traced_forecast))
        .await
        .unwrap();
    let result = client.call_tool("traced_panic", json!({})).await.unwrap();
    assert!(result.is_error);
    client
        .request("logging/setLevel", json!({"level": "warning"}))
        .await
        .unwrap();
    client
        .call_tool("traced_forecast", json!({"city": "Lima"}))
        .await
        .unwrap();
    // The runtime logged "a tool panicked" at error level inside the request; the client's
    // first log message is still the tool's own warning.
    assert_eq!(client.next_message().await.unwrap(), stale_warning());
}

/// Everything written to it, shared.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// A `fmt` layer (no colours, no time) writing here.
    fn fmt_layer<S>(&self) -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let writer = self.clone();
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .without_time()
            .with_writer(move || writer.clone())
    }

    /// The first line written that contains `text`.
    fn line_with(&self, text: &str) -> String {
        let output = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        output
            .lines()
            .find(|line| line.contains(text))
            .unwrap_or_else(|| panic!("no `{text}` line in:\n{output}"))
            .to_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn handler_events_are_inside_the_request_span() {
    let (_alone, captured) = alone().await;
    let client = Client::connect(Server::builder().tool(traced_forecast))
        .await
        .unwrap();
    client
        .call_tool("traced_forecast", json!({"city": "Paris"}))
        .await
        .unwrap();
    let line = captured.line_with("looking up");
    assert!(
        line.contains("mcp.request{method=tools/call id=1 tool=traced_forecast session=stdio-"),
        "{line}"
    );
}

/// Logs when it is dropped.
struct Held;

impl Drop for Held {
    fn drop(&mut self) {
        tracing::info!(target: "weather", "released");
    }
}

/// Holds a `Held` until cancelled.
#[tool]
async fn held() -> String {
    let _held = Held;
    tracing::info!(target: "weather", "holding");
    std::future::pending::<String>().await
}

impl Captured {
    /// Waits (at most 5 s) for a line with `text`.
    async fn await_line(&self, text: &str) -> String {
        for _ in 0..500 {
            let output = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
            if output.contains(text) {
                return self.line_with(text);
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        self.line_with(text)
    }
}

#[tokio::test]
async fn a_cancelled_handler_is_dropped_inside_its_request_span() {
    let (_alone, captured) = alone().await;
    let client = Client::connect(Server::builder().tool(held)).await.unwrap();
    client
        .send_line(
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                   "params": {"name": "held", "arguments": {}}})
            .to_string(),
        )
        .unwrap();
    captured.await_line("holding").await;
    client
        .notify("notifications/cancelled", json!({"requestId": 5}))
        .unwrap();
    let line = captured.await_line("released").await;
    assert!(
        line.contains("mcp.request{method=tools/call id=5 tool=held session=stdio-"),
        "{line}"
    );
}

#[tokio::test]
async fn with_telemetry_the_request_span_names_each_thing_by_the_conventions() {
    let (_alone, captured) = alone().await;
    let server = Server::builder()
        .tool(traced_forecast)
        .telemetry(mcp_runtime::telemetry::Telemetry::new());
    let client = Client::connect(server).await.unwrap();
    client
        .call_tool("traced_forecast", json!({"city": "Paris"}))
        .await
        .unwrap();
    let line = captured.line_with("looking up");
    for field in [
        "otel.name=\"tools/call traced_forecast\"",
        "mcp.method.name=\"tools/call\"",
        "jsonrpc.request.id=\"1\"",
        "gen_ai.tool.name=\"traced_forecast\"",
        "mcp.session.id=\"stdio-",
    ] {
        assert!(line.contains(field), "{field} in {line}");
    }
    // Each thing once: not the short names beside the conventions' ones.
    assert!(
        !line.contains(" method=") && !line.contains(" tool="),
        "{line}"
    );
}

#[tokio::test]
async fn with_telemetry_a_megabyte_of_request_id_is_cut_in_the_log_as_without() {
    let (_alone, captured) = alone().await;
    let long_id = "i".repeat(1 << 20);
    for telemetry in [true, false] {
        captured.0.lock().unwrap().clear();
        let server = Server::builder().tool(traced_forecast);
        let server = match telemetry {
            true => server.telemetry(mcp_runtime::telemetry::Telemetry::new()),
            false => server,
        };
        let client = Client::connect(server).await.unwrap();
        let call = json!({"jsonrpc": "2.0", "id": long_id, "method": "tools/call",
            "params": {"name": "traced_forecast", "arguments": {"city": "Paris"}}});
        client.send_line(call.to_string()).unwrap();
        // The tool's own log messages come first, then the answer, under the whole id.
        let answer = loop {
            let message = client.next_message().await.unwrap();
            if message.get("id").is_some() {
                break message;
            }
        };
        assert_eq!(answer["id"].as_str().map(str::len), Some(1 << 20));
        let line = captured.line_with("looking up");
        assert!(
            line.len() < 2_048,
            "telemetry {telemetry}: the line is {} bytes",
            line.len()
        );
        assert!(
            line.contains(&format!("{}… (1048576 bytes)", "i".repeat(128))),
            "telemetry {telemetry}: the id's head and its length in {line}"
        );
    }
}

#[tokio::test]
async fn a_sync_tool_s_events_reach_its_client_and_stay_in_the_request_span() {
    let (_alone, captured) = alone().await;
    let client = Client::connect(Server::builder().tool(traced_sync_forecast))
        .await
        .unwrap();
    let result = client
        .call_tool("traced_sync_forecast", json!({"city": "Lima"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "cloudy in Lima");
    assert_eq!(
        client.next_message().await.unwrap(),
        log_message(
            "warning",
            json!({"message": "computed off the request's task", "city": "Lima"})
        )
    );
    let line = captured.line_with("computed off the request's task");
    assert!(
        line.contains(
            "mcp.request{method=tools/call id=1 tool=traced_sync_forecast session=stdio-"
        ),
        "{line}"
    );
}

#[tokio::test]
async fn a_handler_s_tracing_events_reach_the_posting_client_and_its_span_names_the_session() {
    let (_alone, captured) = alone().await;
    let addr = start(Server::builder().tool(traced_forecast)).await;
    let session = initialize(&addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "traced_forecast", "arguments": {"city": "Paris"}}});
    let response = send(&addr, post(&addr, Some(&session), call)).await;
    // After the priming event (no data): the two log messages, then the result.
    let events: Vec<Value> = events(response, |v| v.get("id") == Some(&json!(7)))
        .await
        .into_iter()
        .map(|(_, data)| data)
        .filter(|data| !data.is_null())
        .collect();
    let methods: Vec<&Value> = events.iter().map(|v| &v["method"]).collect();
    assert_eq!(
        methods,
        [
            &json!("notifications/message"),
            &json!("notifications/message"),
            &Value::Null
        ],
        "{events:?}"
    );
    assert_eq!(events[0]["params"]["data"]["city"], "Paris");
    assert_eq!(events[1]["params"]["level"], "warning");
    assert_eq!(events[2]["result"]["content"][0]["text"], "sunny in Paris");
    let line = captured.line_with("looking up");
    assert!(
        line.contains(&format!(
            "mcp.request{{method=tools/call id=7 tool=traced_forecast session={session}}}"
        )),
        "{line}"
    );
}
