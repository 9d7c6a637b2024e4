//! The deprecated HTTP+SSE transport (2024-11-05, `Server::legacy_sse`) over real sockets on
//! 127.0.0.1, with a raw HTTP/1.1 client and bounded waits: what a client that speaks only it
//! sees.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use mcp_runtime::Server;
use mcp_tests::http::{WAIT, send, start};
use serde_json::{Value, json};

use crate::fixtures::*;

/// A GET of the event stream.
fn get_sse(addr: &str, path: &str) -> Request<String> {
    Request::get(path)
        .header("host", addr)
        .header("accept", "text/event-stream")
        .body(String::new())
        .unwrap()
}

/// A POST of one message to `endpoint` (a path and query, as the endpoint event gave it).
fn post_to(addr: &str, endpoint: &str, body: &Value) -> Request<String> {
    Request::post(endpoint)
        .header("host", addr)
        .header("content-type", "application/json")
        .body(body.to_string())
        .unwrap()
}

/// Reads a legacy event stream: named events (`event:` and `data:`), comments skipped.
struct Events {
    body: Incoming,
    buffer: String,
}

impl Events {
    fn new(response: Response<Incoming>) -> Self {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Self {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The next event (name, data), or `None` when the stream ends; a wait longer than
    /// [`WAIT`] fails the test.
    async fn next(&mut self) -> Option<(String, String)> {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let field = |name: &str| {
                    block
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(str::to_owned)
                };
                if let Some(data) = field("data: ") {
                    return Some((field("event: ").unwrap_or_default(), data));
                }
            }
            let frame = tokio::time::timeout(WAIT, self.body.frame())
                .await
                .expect("no event in time");
            match frame {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.push_str(std::str::from_utf8(&data).unwrap());
                    }
                }
                _ => return None,
            }
        }
    }

    /// The next event, which must be an `event: message`: its JSON.
    async fn message(&mut self) -> Value {
        let (name, data) = self.next().await.expect("the stream ended");
        assert_eq!(name, "message", "{data}");
        serde_json::from_str(&data).unwrap()
    }

    /// The endpoint event that opens the stream: the path and query to POST to.
    async fn endpoint(&mut self) -> String {
        let (name, data) = self.next().await.expect("the stream ended");
        assert_eq!(name, "endpoint");
        data
    }
}

/// Opens a session at `/sse` and initializes it (answers read from the stream): the stream and
/// the endpoint.
async fn connect(addr: &str) -> (Events, String) {
    let mut events = Events::new(send(addr, get_sse(addr, "/sse")).await);
    let endpoint = events.endpoint().await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}}});
    let accepted = send(addr, post_to(addr, &endpoint, &init)).await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let reply = events.message().await;
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        send(addr, post_to(addr, &endpoint, &note)).await.status(),
        StatusCode::ACCEPTED
    );
    (events, endpoint)
}

#[tokio::test]
async fn the_stream_names_the_endpoint_and_carries_every_answer() {
    let addr = start(
        Server::builder()
            .tool(add)
            .tool(three_steps)
            .legacy_sse(true),
    )
    .await;
    let mut events = Events::new(send(&addr, get_sse(&addr, "/sse")).await);
    let endpoint = events.endpoint().await;
    let id = endpoint
        .strip_prefix("/messages?sessionId=")
        .expect(&endpoint);
    assert!(id.len() >= 32 && id.bytes().all(|b| b.is_ascii_hexdigit()));

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}}});
    let accepted = send(&addr, post_to(&addr, &endpoint, &init)).await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    // The POST's body carries no answer: that goes out on the stream.
    let body = accepted.into_body().collect().await.unwrap().to_bytes();
    assert!(!body.starts_with(b"{"), "{body:?}");
    let reply = events.message().await;
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &note)).await.status(),
        StatusCode::ACCEPTED
    );

    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &list)).await.status(),
        StatusCode::ACCEPTED
    );
    let tools = events.message().await;
    assert_eq!(tools["id"], 1);
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "three_steps"]);

    let call = json!({"jsonrpc": "2.0", "id": "call", "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 40}}});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &call)).await.status(),
        StatusCode::ACCEPTED
    );
    let result = events.message().await;
    assert_eq!(result["id"], "call");
    assert_eq!(result["result"]["content"][0]["text"], "42");
    assert_ne!(result["result"]["isError"], true);

    // What a handler sends on the way comes first, on the same stream.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "three_steps", "arguments": {}, "_meta": {"progressToken": "p"}}});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &call)).await.status(),
        StatusCode::ACCEPTED
    );
    let mut progress = Vec::new();
    let result = loop {
        let message = events.message().await;
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "p");
            progress.push(message["params"]["progress"].as_f64().unwrap());
        } else {
            break message;
        }
    };
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn unknown_sessions_are_404_and_the_transport_is_off_by_default() {
    let addr = start(Server::builder().tool(add).legacy_sse(true)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let unknown = send(&addr, post_to(&addr, "/messages?sessionId=nope", &ping)).await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let missing = send(&addr, post_to(&addr, "/messages", &ping)).await;
    assert_eq!(missing.status(), StatusCode::BAD_REQUEST);
    // A Streamable HTTP session's id is not a legacy one.
    let session = mcp_tests::http::initialize(&addr).await;
    let other = send(
        &addr,
        post_to(&addr, &format!("/messages?sessionId={session}"), &ping),
    )
    .await;
    assert_eq!(other.status(), StatusCode::NOT_FOUND);

    let off = start(Server::builder().tool(add)).await;
    assert_eq!(
        send(&off, get_sse(&off, "/sse")).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&off, post_to(&off, "/messages?sessionId=x", &ping))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_session_ends_when_its_stream_closes() {
    let addr = start(Server::builder().tool(add).legacy_sse(true)).await;
    let (events, endpoint) = connect(&addr).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &ping)).await.status(),
        StatusCode::ACCEPTED
    );
    // The client hangs up: the connection closes with the body.
    drop(events);
    // The server notices when it next writes to the stream (at the latest): the pings give it
    // something to write, and before long the session is gone.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = send(&addr, post_to(&addr, &endpoint, &ping)).await.status();
        if status == StatusCode::NOT_FOUND {
            break;
        }
        assert_eq!(status, StatusCode::ACCEPTED);
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session outlived its stream"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_guards_of_the_other_routes_apply() {
    let addr = start(
        Server::builder()
            .tool(add)
            .tool(slow)
            .legacy_sse(true)
            .max_message_size(1024)
            .max_in_flight_requests(1),
    )
    .await;
    // A foreign `Host` or `Origin` is refused, on both routes.
    let mut evil = get_sse(&addr, "/sse");
    evil.headers_mut()
        .insert("origin", "http://evil.example.com".parse().unwrap());
    assert_eq!(send(&addr, evil).await.status(), StatusCode::FORBIDDEN);
    let (mut events, endpoint) = connect(&addr).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let mut evil = post_to(&addr, &endpoint, &ping);
    evil.headers_mut()
        .insert("host", "evil.example.com".parse().unwrap());
    assert_eq!(send(&addr, evil).await.status(), StatusCode::FORBIDDEN);

    // Too large: 413, before anything runs.
    let big = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "pad": "x".repeat(2000)}});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &big)).await.status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    // Not JSON: 400 with the parse error.
    let mut garbage = post_to(&addr, &endpoint, &ping);
    *garbage.body_mut() = "{nope".to_owned();
    let response = send(&addr, garbage).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value =
        serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["error"]["code"], -32700);
    // Not JSON by its type: 415.
    let mut text = post_to(&addr, &endpoint, &ping);
    text.headers_mut()
        .insert("content-type", "text/plain".parse().unwrap());
    assert_eq!(
        send(&addr, text).await.status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );

    // A window of one: the second request while the first runs is refused, on the stream.
    let first = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"millis": 500}}});
    let second = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &first))
            .await
            .status(),
        StatusCode::ACCEPTED
    );
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &second))
            .await
            .status(),
        StatusCode::ACCEPTED
    );
    let refused = events.message().await;
    assert_eq!(refused["id"], 11);
    assert_eq!(refused["error"]["code"], -32000);
    let done = events.message().await;
    assert_eq!(done["id"], 10);
    assert_eq!(done["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn sessions_are_counted_and_one_never_initialized_expires() {
    let addr = start(
        Server::builder()
            .tool(add)
            .legacy_sse(true)
            .max_sessions(1)
            .initialize_timeout(Duration::from_millis(300)),
    )
    .await;
    // A stream that never sends `initialize` takes the only slot...
    let mut lurker = Events::new(send(&addr, get_sse(&addr, "/sse")).await);
    let endpoint = lurker.endpoint().await;
    // ...so another stream, or a Streamable HTTP session, is told to come back.
    let full = send(&addr, get_sse(&addr, "/sse")).await;
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(full.headers().contains_key("retry-after"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let full = send(&addr, mcp_tests::http::post(&addr, None, init)).await;
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    // Past the initialize timeout its stream ends, the session is gone and its slot free.
    assert_eq!(lurker.next().await, None);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &ping)).await.status(),
        StatusCode::NOT_FOUND
    );
    let (_events, _endpoint) = connect(&addr).await;
}

#[tokio::test]
async fn the_paths_can_be_moved() {
    let addr = start(
        Server::builder()
            .tool(add)
            .legacy_sse_paths("/legacy/events", "/legacy/post"),
    )
    .await;
    assert_eq!(
        send(&addr, get_sse(&addr, "/sse")).await.status(),
        StatusCode::NOT_FOUND
    );
    let mut events = Events::new(send(&addr, get_sse(&addr, "/legacy/events")).await);
    let endpoint = events.endpoint().await;
    assert!(
        endpoint.starts_with("/legacy/post?sessionId="),
        "{endpoint}"
    );
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &ping)).await.status(),
        StatusCode::ACCEPTED
    );
    assert_eq!(
        events.message().await,
        json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );
}

#[tokio::test]
async fn shutting_down_ends_the_streams() {
    let service = Server::builder()
        .tool(add)
        .legacy_sse(true)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        service
            .serve_http_on(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    let (mut events, _endpoint) = connect(&addr).await;
    stop.send(()).unwrap();
    // The stream ends at once, so the server drains without waiting out its grace period.
    assert_eq!(events.next().await, None);
    tokio::time::timeout(WAIT, server)
        .await
        .expect("the server did not stop")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn an_idle_session_expires() {
    let addr = start(
        Server::builder()
            .tool(add)
            .legacy_sse(true)
            .session_idle_timeout(Duration::from_millis(1000)),
    )
    .await;
    let (mut events, endpoint) = connect(&addr).await;
    // POSTs keep it alive...
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            send(&addr, post_to(&addr, &endpoint, &ping)).await.status(),
            StatusCode::ACCEPTED
        );
        assert_eq!(events.message().await["id"], 1);
    }
    // ...and without them it ends, stream and all.
    assert_eq!(events.next().await, None);
    assert_eq!(
        send(&addr, post_to(&addr, &endpoint, &ping)).await.status(),
        StatusCode::NOT_FOUND
    );
}
