//! `mcp_runtime::client` against servers nobody here wrote, installed by
//! `scripts/client-upstreams.sh`: `@modelcontextprotocol/server-everything` (npm) over stdio and
//! Streamable HTTP, `mcp-server-time` (PyPI) over stdio, and a server built with the official
//! Python SDK's `MCPServer` (tests/python/upstream_server.py) over stdio and HTTP; and the
//! 2026-07-28 era against our own `everything` example over HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::client::{
    Client, ClientError, ClientHandler, CompletionRef, Era, FnHandler, Notification, Progress,
    RequestOptions, Stderr, StdioCommand,
};
use mcp_runtime::context::BoxFuture;
use mcp_runtime::protocol::{
    ClientCapabilities, ErrorObject, LoggingLevel, ProtocolVersion, ResourceContents,
};
use mcp_tests::example_binary;
use serde_json::{Map, Value, json};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::upstreams::{free_port, listening, node, python, root, server_everything_js};

/// How long any one wait in these tests may take.
const WAIT: Duration = Duration::from_secs(20);

fn everything_stdio() -> StdioCommand {
    StdioCommand::new(node())
        .arg(server_everything_js())
        .arg("stdio")
        .stderr(Stderr::Capture)
}

fn python_upstream() -> StdioCommand {
    StdioCommand::new(python())
        .arg(root().join("tests/python/upstream_server.py"))
        .arg("stdio")
        .stderr(Stderr::Capture)
}

/// server-everything in its Streamable HTTP mode, bound to loopback by tests/node/loopback.cjs.
async fn everything_http() -> (Child, String) {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .arg("--require")
        .arg(root().join("tests/node/loopback.cjs"))
        .arg(server_everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    (
        listening(command, port).await,
        format!("http://127.0.0.1:{port}/mcp"),
    )
}

/// A handler that answers sampling, elicitation and roots with fixed answers, records what it
/// was asked, and forwards every notification to a channel.
struct Recorder {
    asked: Mutex<Vec<(String, Map<String, Value>)>>,
    notifications: mpsc::UnboundedSender<Notification>,
}

impl Recorder {
    fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<Notification>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let recorder = Arc::new(Self {
            asked: Mutex::default(),
            notifications: tx,
        });
        (recorder, rx)
    }

    fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|(m, _)| m.clone())
            .collect()
    }

    fn record(&self, method: &str, params: &Map<String, Value>) {
        self.asked
            .lock()
            .unwrap()
            .push((method.to_owned(), params.clone()));
    }
}

impl ClientHandler for Recorder {
    fn capabilities(&self) -> ClientCapabilities {
        let Value::Object(caps) = json!({"sampling": {}, "elicitation": {}, "roots": {}}) else {
            unreachable!()
        };
        ClientCapabilities(caps)
    }

    fn create_message(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.record("sampling/createMessage", &params);
        Box::pin(async {
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "Paris, said the stub model"},
                "model": "stub-model",
                "stopReason": "endTurn",
            }))
        })
    }

    fn elicit(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.record("elicitation/create", &params);
        let schema = params
            .get("requestedSchema")
            .and_then(|s| s.get("properties"))
            .cloned()
            .unwrap_or_default();
        Box::pin(async move {
            // Fill in what the form asks for with values of the right type.
            let mut content = Map::new();
            if let Value::Object(properties) = schema {
                for (name, property) in properties {
                    let value = match property.get("type").and_then(Value::as_str) {
                        Some("boolean") => json!(true),
                        Some("integer") => json!(7),
                        Some("number") => json!(3.5),
                        _ => match property.get("enum").and_then(|e| e.get(0)) {
                            Some(first) => first.clone(),
                            None => match property.get("format").and_then(Value::as_str) {
                                Some("email") => json!("ada@example.com"),
                                Some("uri") => json!("https://example.com"),
                                Some("date") => json!("1815-12-10"),
                                Some("date-time") => json!("1815-12-10T00:00:00Z"),
                                _ => json!("Ada"),
                            },
                        },
                    };
                    if property.get("type").and_then(Value::as_str) == Some("array") {
                        continue;
                    }
                    content.insert(name, value);
                }
            }
            Ok(json!({"action": "accept", "content": content}))
        })
    }

    fn list_roots(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.record("roots/list", &params);
        Box::pin(async {
            Ok(json!({"roots": [{"uri": "file:///work/project", "name": "project"}]}))
        })
    }

    fn on_notification(&self, notification: Notification) -> BoxFuture<()> {
        let _ = self.notifications.send(notification);
        Box::pin(async {})
    }
}

/// The next notification `wanted` accepts, within [`WAIT`].
async fn next_matching(
    notifications: &mut mpsc::UnboundedReceiver<Notification>,
    wanted: impl Fn(&Notification) -> bool,
) -> Notification {
    tokio::time::timeout(WAIT, async {
        loop {
            let notification = notifications.recv().await.expect("the client is open");
            if wanted(&notification) {
                return notification;
            }
        }
    })
    .await
    .expect("the notification arrived in time")
}

fn progress_sink() -> (RequestOptions, Arc<Mutex<Vec<Progress>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options =
        RequestOptions::new().on_progress(move |progress| sink.lock().unwrap().push(progress));
    (options, seen)
}

/// What both of server-everything's transports must give: every kind of item listed, a tool
/// called, a resource read, a prompt got with completions, progress, sampling and elicitation
/// answered by the handler, logging, and the tools' `list_changed`.
async fn exercise_server_everything(
    client: &Client,
    recorder: &Arc<Recorder>,
    notifications: &mut mpsc::UnboundedReceiver<Notification>,
) {
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert!(
        !client.is_stateless(),
        "server-everything has no 2026-07-28"
    );
    let info = client.server_info();
    assert_eq!(
        info.implementation.as_ref().map(|i| i.name.as_str()),
        Some("mcp-servers/everything")
    );

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "toggle-simulated-logging",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let resources = client.list_resources().await.unwrap();
    assert!(!resources.is_empty());
    let templates = client.list_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template.starts_with("demo://resource/dynamic/text/")),
        "{templates:?}"
    );
    let prompts = client.list_prompts().await.unwrap();
    assert!(
        prompts.iter().any(|p| p.name == "args-prompt"),
        "{prompts:?}"
    );

    let echoed = client
        .call_tool("echo", json!({"message": "über the wire"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: über the wire");

    let read = client
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    assert!(
        matches!(&read.contents[0], ResourceContents::Text(text) if text.uri == "demo://resource/dynamic/text/1"),
        "{read:?}"
    );

    let prompt = client
        .get_prompt("args-prompt", json!({"city": "Lyon", "state": "Rhône"}))
        .await
        .unwrap();
    let text = serde_json::to_string(&prompt.messages).unwrap();
    assert!(text.contains("Lyon"), "{text}");
    let completion = client
        .complete(
            &CompletionRef::Prompt("completable-prompt".into()),
            "department",
            "E",
            None,
        )
        .await
        .unwrap();
    assert!(
        completion.values.iter().any(|v| v == "Engineering"),
        "{completion:?}"
    );

    // Progress of the long-running operation reaches this call's callback.
    let (options, seen) = progress_sink();
    let done = client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 0.6, "steps": 3}),
            &options,
        )
        .await
        .unwrap();
    assert!(
        done.text().contains("Long running operation completed"),
        "{done:?}"
    );
    let seen: Vec<f64> = seen.lock().unwrap().iter().map(|p| p.progress).collect();
    assert_eq!(seen, [1.0, 2.0, 3.0]);

    // Sampling and elicitation reach the handler, and its answers get back.
    let sampled = client
        .call_tool(
            "trigger-sampling-request",
            json!({"prompt": "capital of France?", "maxTokens": 20}),
        )
        .await
        .unwrap();
    assert!(
        sampled.text().contains("Paris, said the stub model"),
        "{sampled:?}"
    );
    let elicited = client
        .call_tool("trigger-elicitation-request", json!({}))
        .await
        .unwrap();
    assert!(!elicited.is_error, "{elicited:?}");
    assert!(elicited.text().contains("Ada"), "{elicited:?}");
    let asked = recorder.asked();
    assert!(
        asked.contains(&"sampling/createMessage".to_owned()),
        "{asked:?}"
    );
    assert!(
        asked.contains(&"elicitation/create".to_owned()),
        "{asked:?}"
    );

    // Logging: the level is set, the simulated logs arrive at it or above.
    client.set_level(LoggingLevel::Debug).await.unwrap();
    client
        .call_tool("toggle-simulated-logging", json!({}))
        .await
        .unwrap();
    next_matching(notifications, |n| {
        matches!(n, Notification::Log { data, .. } if data.as_str().is_some_and(|d| d.contains("message")))
    })
    .await;
    client
        .call_tool("toggle-simulated-logging", json!({}))
        .await
        .unwrap();

    // A session resource registered by a tool changes the resource list.
    let gzipped = client
        .call_tool(
            "gzip-file-as-resource",
            json!({"name": "hello.txt.gz", "data": "data:text/plain;base64,SGVsbG8gZnJvbSB0aGUgY2xpZW50"}),
        )
        .await
        .unwrap();
    assert!(!gzipped.is_error, "{gzipped:?}");
    next_matching(notifications, |n| {
        matches!(n, Notification::ResourcesListChanged)
    })
    .await;
    let resources = client.list_resources().await.unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "demo://resource/session/hello.txt.gz"),
        "{resources:?}"
    );
    client.ping().await.unwrap();
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let (recorder, mut notifications) = Recorder::new();
    let client = Client::builder()
        .handler(Arc::clone(&recorder))
        .stdio(everything_stdio())
        .await
        .unwrap();
    // The conditional tools registered once the server knew our capabilities (over HTTP this
    // comes before the standalone stream is open, and is lost, as the spec allows).
    next_matching(&mut notifications, |n| {
        matches!(n, Notification::ToolsListChanged)
    })
    .await;
    exercise_server_everything(&client, &recorder, &mut notifications).await;
    // The server asked for our roots once it was initialized (it waits 350 ms).
    tokio::time::timeout(WAIT, async {
        while !recorder.asked().contains(&"roots/list".to_owned()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the server asked for roots");
    let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(roots.text().contains("file:///work/project"), "{roots:?}");
    client.close().await.unwrap();
    assert!(client.closed_reason().is_some());
    assert!(matches!(client.ping().await, Err(ClientError::Closed(_))));
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let (_server, url) = everything_http().await;
    let (recorder, mut notifications) = Recorder::new();
    let client = Client::builder()
        .handler(Arc::clone(&recorder))
        .header("x-test", "client")
        .http(&url)
        .await
        .unwrap();
    exercise_server_everything(&client, &recorder, &mut notifications).await;

    // A request's own handler answers what the server asks on that request's stream.
    let sampled = client
        .call_tool_with(
            "trigger-sampling-request",
            json!({"prompt": "who answers?", "maxTokens": 20}),
            &RequestOptions::new().handler(FnHandler::new().on_request(|method, _| async move {
                assert_eq!(method, "sampling/createMessage");
                Ok(json!({"role": "assistant", "content": {"type": "text", "text": "the call's own handler"}, "model": "own"}))
            })),
        )
        .await
        .unwrap();
    assert!(
        sampled.text().contains("the call's own handler"),
        "{sampled:?}"
    );

    // Resource updates come on the standalone GET stream.
    client
        .subscribe("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    client
        .call_tool("toggle-subscriber-updates", json!({}))
        .await
        .unwrap();
    let updated = next_matching(&mut notifications, |n| {
        matches!(n, Notification::ResourceUpdated { .. })
    })
    .await;
    assert_eq!(
        updated,
        Notification::ResourceUpdated {
            uri: "demo://resource/dynamic/text/1".into()
        }
    );
    client
        .unsubscribe("demo://resource/dynamic/text/1")
        .await
        .unwrap();

    // Closing deletes the session: a second client's requests still work, this one's fail.
    client.close().await.unwrap();
    let other = Client::builder().http(&url).await.unwrap();
    other.ping().await.unwrap();
}

/// A call whose future is dropped is cancelled: the server hears of it, the connection goes
/// on, and the late answer is discarded.
#[tokio::test]
async fn dropping_a_call_cancels_it_and_a_timeout_is_an_error() {
    let client = Client::builder().stdio(everything_stdio()).await.unwrap();
    let (options, seen) = progress_sink();
    let call = client.call_tool_with(
        "trigger-long-running-operation",
        json!({"duration": 3, "steps": 30}),
        &options,
    );
    let dropped = tokio::time::timeout(Duration::from_millis(400), call).await;
    assert!(dropped.is_err(), "the call was cut short");
    let before = seen.lock().unwrap().len();
    assert!(before >= 1, "progress arrived before the drop");
    // The connection serves on, and the dropped call's progress no longer reaches anyone.
    let echoed = client
        .call_tool("echo", json!({"message": "still here"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: still here");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(seen.lock().unwrap().len(), before);

    // A timeout is an error naming the method, and the call is given up the same way.
    let started = tokio::time::Instant::now();
    let timed_out = client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
            &RequestOptions::new().timeout(Duration::from_millis(300)),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(3));
    match timed_out {
        Err(ClientError::Timeout { method, timeout }) => {
            assert_eq!(method, "tools/call");
            assert_eq!(timeout, Duration::from_millis(300));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    client.ping().await.unwrap();
}

/// A child that dies mid-call gives that call an error naming its exit, and later calls too.
#[tokio::test]
async fn a_child_that_dies_mid_call_fails_the_call() {
    // server-everything, which writes its process id for the test to kill it in the middle of
    // a 10 s call (`exec` keeps the shell's id), whatever the load makes its start-up take.
    let pid_file =
        std::env::temp_dir().join(format!("mcp-dies-mid-call-{}.pid", std::process::id()));
    let script = format!(
        "echo $$ > '{}' && exec '{}' '{}' stdio",
        pid_file.display(),
        node().display(),
        server_everything_js().display()
    );
    let command = StdioCommand::new("sh")
        .arg("-c")
        .arg(script)
        .stderr(Stderr::Null);
    let client = Client::builder()
        .era(Era::Handshake(ProtocolVersion::V2025_11_25))
        .stdio(command)
        .await
        .unwrap();
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let _ = std::fs::remove_file(&pid_file);
    let started = tokio::time::Instant::now();
    let call = client.call_tool(
        "trigger-long-running-operation",
        json!({"duration": 10, "steps": 2}),
    );
    let kill = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let killed = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(format!("kill {}", pid.trim()))
            .status()
            .await
            .unwrap();
        assert!(killed.success(), "kill {pid}");
    };
    let (outcome, ()) = tokio::join!(call, kill);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the error came at the death"
    );
    match outcome {
        Err(ClientError::Closed(reason)) => {
            assert!(reason.contains("exited"), "{reason}");
        }
        other => panic!("expected the connection's end, got {other:?}"),
    }
    assert!(client.closed_reason().is_some());
    assert!(matches!(client.ping().await, Err(ClientError::Closed(_))));
}

/// `mcp-server-time` (PyPI) over stdio, in both eras: the Python SDK 2.3 behind it serves
/// 2026-07-28, which the automatic rule finds, and the handshake when asked.
#[tokio::test]
async fn mcp_server_time_over_stdio_in_both_eras() {
    let time = || {
        StdioCommand::new(python())
            .args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
            .stderr(Stderr::Capture)
    };
    for era in [Era::Auto, Era::Handshake(ProtocolVersion::V2025_06_18)] {
        let client = Client::builder().era(era).stdio(time()).await.unwrap();
        let expected = match era {
            Era::Auto => ProtocolVersion::V2026_07_28,
            _ => ProtocolVersion::V2025_06_18,
        };
        assert_eq!(client.protocol_version(), expected, "{era:?}");
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"get_current_time"), "{names:?}");
        assert!(names.contains(&"convert_time"), "{names:?}");
        let now = client
            .call_tool("get_current_time", json!({"timezone": "Europe/Paris"}))
            .await
            .unwrap();
        assert!(!now.is_error, "{now:?}");
        assert!(now.text().contains("Europe/Paris"), "{now:?}");
        let converted = client
            .call_tool(
                "convert_time",
                json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
            )
            .await
            .unwrap();
        assert!(converted.text().contains("21:00"), "{converted:?}");
        let unknown = client
            .call_tool("get_current_time", json!({"timezone": "Mars/Olympus"}))
            .await;
        match unknown {
            Ok(result) => assert!(result.is_error, "{result:?}"),
            Err(error) => assert!(error.rpc().is_some(), "{error}"),
        }
        client.close().await.unwrap();
    }
}

/// What the Python SDK's `MCPServer` gives, over stdio and HTTP, in each era it speaks.
async fn exercise_python_upstream(client: &Client) {
    assert_eq!(
        client.server_info().instructions.as_deref(),
        Some("A test upstream built with MCPServer.")
    );
    let tools = client.list_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["add", "count_with_progress", "flood"]
    );
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));
    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources[0].uri, "info://version");
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "greeting://{name}");
    let read = client.read_resource("greeting://Ada").await.unwrap();
    assert!(
        matches!(&read.contents[0], ResourceContents::Text(text) if text.text == "Hello, Ada!"),
        "{read:?}"
    );
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "review");
    assert_eq!(prompts[0].arguments[0].name, "code");
    let prompt = client
        .get_prompt("review", json!({"code": "fn main() {}"}))
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&prompt.messages)
            .unwrap()
            .contains("fn main() {}"),
        "{prompt:?}"
    );
    let (options, seen) = progress_sink();
    let counted = client
        .call_tool_with("count_with_progress", json!({"steps": 4}), &options)
        .await
        .unwrap();
    assert_eq!(
        counted.structured_content,
        Some(json!({"result": "counted 4"}))
    );
    let seen: Vec<f64> = seen.lock().unwrap().iter().map(|p| p.progress).collect();
    assert_eq!(seen, [1.0, 2.0, 3.0, 4.0]);
    let missing = client.call_tool("nope", json!({})).await;
    match missing {
        Ok(result) => assert!(result.is_error, "{result:?}"),
        Err(error) => assert!(error.rpc().is_some(), "{error}"),
    }
}

#[tokio::test]
async fn python_sdk_server_over_stdio_and_http_in_both_eras() {
    for era in [Era::Auto, Era::Handshake(ProtocolVersion::V2025_11_25)] {
        let client = Client::builder()
            .era(era)
            .stdio(python_upstream())
            .await
            .unwrap();
        assert_eq!(
            client.is_stateless(),
            era == Era::Auto,
            "{era:?} over stdio"
        );
        exercise_python_upstream(&client).await;
        client.close().await.unwrap();
    }
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(root().join("tests/python/upstream_server.py"))
        .args(["http", &port.to_string()]);
    let _server = listening(command, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    for era in [Era::Auto, Era::Handshake(ProtocolVersion::V2025_03_26)] {
        let client = Client::builder().era(era).http(&url).await.unwrap();
        let expected = match era {
            Era::Auto => ProtocolVersion::V2026_07_28,
            _ => ProtocolVersion::V2025_03_26,
        };
        assert_eq!(client.protocol_version(), expected, "{era:?} over HTTP");
        exercise_python_upstream(&client).await;
        client.close().await.unwrap();
    }
}

/// An upstream that floods notifications faster than the handler takes them loses the newest
/// past the queue's bound; the client's memory does not grow, and the connection serves on.
#[tokio::test]
async fn a_flooding_upstream_is_bounded_by_the_notification_queue() {
    let (gate_tx, gate) = tokio::sync::watch::channel(false);
    let received = Arc::new(Mutex::new(0usize));
    let counter = Arc::clone(&received);
    let handler = FnHandler::new().on_notification(move |notification| {
        let mut gate = gate.clone();
        let counter = Arc::clone(&counter);
        async move {
            if matches!(notification, Notification::Log { .. }) {
                // The handler is stuck until the test opens the gate.
                let _ = gate.wait_for(|open| *open).await;
                *counter.lock().unwrap() += 1;
            }
        }
    });
    let client = Client::builder()
        .era(Era::Handshake(ProtocolVersion::V2025_11_25))
        .handler(handler)
        .notification_queue(64, 1024 * 1024)
        .stdio(python_upstream())
        .await
        .unwrap();
    let sent = client
        .call_tool_with(
            "flood",
            json!({"count": 3000}),
            &RequestOptions::new().timeout(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    assert_eq!(
        sent.structured_content,
        Some(json!({"result": "sent 3000"}))
    );
    let dropped = client.dropped_notifications();
    // One is in the stuck handler, 64 wait in the queue: the rest were dropped.
    assert!(dropped >= 3000 - 64 - 1, "dropped {dropped}");
    gate_tx.send(true).unwrap();
    tokio::time::timeout(WAIT, async {
        while *received.lock().unwrap() < (3000 - dropped) as usize {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the queued notifications were delivered");
    assert!(*received.lock().unwrap() <= 65);
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 2})));
}

/// The 2026-07-28 era against our own `everything` example over HTTP: discover, the envelope
/// and standard headers (a non-ASCII `Mcp-Param-Region`), `input_required` answered by the
/// handler and retried, logging by `logLevel`, progress, and `list_changed` on the listen
/// stream the client opened; then, in the handshake era, a response stream resumed with
/// `Last-Event-ID`.
#[tokio::test]
async fn the_stateless_era_against_our_everything_over_http() {
    let port = free_port();
    let mut command = Command::new(example_binary("everything"));
    command.args(["--port", &port.to_string()]);
    let _server = listening(command, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (recorder, mut notifications) = Recorder::new();
    let client = Client::builder()
        .handler(Arc::clone(&recorder))
        .http(&url)
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert!(client.is_stateless());
    assert!(client.server_info().implementation.is_some());
    assert!(matches!(client.ping().await, Err(ClientError::NotInEra(_))));

    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "test_header_echo"));
    let echoed = client
        .call_tool("test_header_echo", json!({"region": "Île-de-France"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Region: Île-de-France");

    for (tool, expected) in [
        ("test_input_required_result_elicitation", "Hello, Ada!"),
        (
            "test_input_required_result_sampling",
            "Paris, said the stub model",
        ),
        (
            "test_input_required_result_list_roots",
            "file:///work/project",
        ),
        ("test_input_required_result_multi_round", ""),
    ] {
        let result = client.call_tool(tool, json!({})).await.unwrap();
        assert!(!result.is_error, "{tool}: {result:?}");
        assert!(result.text().contains(expected), "{tool}: {result:?}");
    }
    let asked = recorder.asked();
    for method in ["elicitation/create", "sampling/createMessage", "roots/list"] {
        assert!(asked.contains(&method.to_owned()), "{asked:?}");
    }
    // A request's own handler answers its input requests; the client's is not asked.
    let own = FnHandler::new()
        .on_request(|_, _| async { Ok(json!({"action": "accept", "content": {"name": "Grace"}})) });
    let greeted = client
        .call_tool_with(
            "test_input_required_result_elicitation",
            json!({}),
            &RequestOptions::new().handler(own),
        )
        .await
        .unwrap();
    assert_eq!(greeted.text(), "Hello, Grace!");
    assert_eq!(recorder.asked().len(), asked.len());

    let (options, seen) = progress_sink();
    client
        .call_tool_with("test_tool_with_progress", json!({}), &options)
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap().len(), 3);

    client.set_level(LoggingLevel::Info).await.unwrap();
    client
        .call_tool("test_tool_with_logging", json!({}))
        .await
        .unwrap();
    let log = next_matching(&mut notifications, |n| {
        matches!(n, Notification::Log { .. })
    })
    .await;
    assert!(
        matches!(
            log,
            Notification::Log {
                level: LoggingLevel::Info,
                ..
            }
        ),
        "{log:?}"
    );

    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    next_matching(&mut notifications, |n| {
        matches!(n, Notification::ToolsListChanged)
    })
    .await;
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    client.close().await.unwrap();

    // The same server in the handshake era: it ends a tool's SSE response before the answer
    // (SEP-1699), and the client resumes the stream with `Last-Event-ID` to read it.
    let client = Client::builder()
        .era(Era::Handshake(ProtocolVersion::V2025_11_25))
        .http(&url)
        .await
        .unwrap();
    let resumed = client
        .call_tool("test_reconnection", json!({}))
        .await
        .unwrap();
    assert_eq!(resumed.text(), "Reconnection test completed successfully");
    client.close().await.unwrap();
}

/// 2026-07-28 over stdio against our `everything` example: a dropped call is cancelled with
/// `notifications/cancelled`, and a child's stderr is captured.
#[tokio::test]
async fn the_stateless_era_over_stdio_with_captured_stderr() {
    let client = Client::builder()
        .era(Era::Stateless)
        .stdio(
            StdioCommand::new(example_binary("everything"))
                .env("RUST_LOG", "debug")
                .stderr(Stderr::Capture),
        )
        .await
        .unwrap();
    assert!(client.is_stateless());
    let greeting = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .unwrap();
    assert!(greeting.text().contains("Ada"), "{greeting:?}");
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool("slow_compute", json!({"seconds": 5.0})),
    )
    .await;
    assert!(dropped.is_err());
    let greeting = client
        .call_tool("greet", json!({"name": "Grace"}))
        .await
        .unwrap();
    assert!(greeting.text().contains("Grace"));
    tokio::time::timeout(WAIT, async {
        while !client.stderr_tail().unwrap_or_default().contains("cancel") {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the server logged the cancellation: {:?}",
            client.stderr_tail()
        )
    });
}

/// The body of the stub's standalone stream: one `tools/list_changed` event, then open and
/// silent until the client goes.
struct OneEvent(bool);

impl hyper::body::Body for OneEvent {
    type Data = hyper::body::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        if std::mem::replace(&mut self.0, true) {
            return std::task::Poll::Pending;
        }
        let event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
        std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(event.into()))))
    }
}

/// A server still counting a session's previous standalone stream as open answers a new GET
/// with 409 for a moment: the client tries again after its backoff, and hears what the stream
/// then carries. (A stub on loopback, as no real server refuses on cue: it answers the
/// handshake, refuses the first GET, and sends one notification on the second.)
#[tokio::test]
async fn a_standalone_stream_refused_as_busy_is_opened_on_a_later_try() {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::{IntoResponse, Response};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let gets = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&gets);
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(|body: axum::body::Bytes| async move {
            let message: Value = serde_json::from_slice(&body).unwrap_or_default();
            let Some(id) = message.get("id").cloned() else {
                return StatusCode::ACCEPTED.into_response();
            };
            let result = if message["method"] == "initialize" {
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "busy-stream", "version": "0.0.0"},
                })
            } else {
                json!({})
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
            let mut headers = HeaderMap::new();
            headers.insert("content-type", "application/json".parse().unwrap());
            headers.insert("mcp-session-id", "stub-session".parse().unwrap());
            (headers, reply).into_response()
        })
        .get(move || {
            let counted = Arc::clone(&counted);
            async move {
                if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                    return (
                        StatusCode::CONFLICT,
                        "this session already has its standalone stream open",
                    )
                        .into_response();
                }
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(axum::body::Body::new(OneEvent(false)))
                    .unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let (recorder, mut notifications) = Recorder::new();
    let client = Client::builder()
        .era(Era::Handshake(ProtocolVersion::V2025_11_25))
        .handler(Arc::clone(&recorder))
        .http(&url)
        .await
        .unwrap();
    next_matching(&mut notifications, |n| {
        matches!(n, Notification::ToolsListChanged)
    })
    .await;
    assert_eq!(
        gets.load(Ordering::SeqCst),
        2,
        "one refused GET, one that opened"
    );
    client.close().await.unwrap();
    server.abort();
}
