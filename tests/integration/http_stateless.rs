//! Streamable HTTP in the stateless era (2026-07-28), over real sockets on 127.0.0.1: POST only,
//! the standard headers checked against the body, statuses by error code, JSON or a per-request
//! SSE stream, input-required round trips, listen streams, and cancellation by closing.

use std::sync::atomic::Ordering;
use std::time::Duration;

use base64::Engine as _;
use hyper::{Request, StatusCode};
use mcp_runtime::Server;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::fixtures::*;
use crate::http::{WAIT, body_json, events, send, start, stateless_post};

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const SUBSCRIPTION_KEY: &str = "io.modelcontextprotocol/subscriptionId";

fn server() -> Server {
    Server::builder()
        .tool(add)
        .tool(three_steps)
        .tool(interview)
        .tool(lingering)
        .resource(note)
}

fn envelope(capabilities: Value) -> Value {
    json!({VERSION_KEY: "2026-07-28", CAPS_KEY: capabilities})
}

/// A change that makes a request's headers disagree with its body.
type Spoil = Box<dyn Fn(&mut Request<String>)>;

fn with_envelope(mut params: Value) -> Value {
    params["_meta"] = envelope(json!({}));
    params
}

#[tokio::test]
async fn a_stateless_post_is_answered_with_json_and_no_session() {
    let addr = start(server()).await;
    let response = send(
        &addr,
        stateless_post(&addr, 1, "server/discover", with_envelope(json!({}))),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    assert_eq!(
        response.headers()["content-type"],
        "application/json",
        "a quick answer is plain JSON"
    );
    let discover = body_json(response).await;
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );

    let params = with_envelope(json!({"name": "add", "arguments": {"a": 20, "b": 22}}));
    let mut call = stateless_post(&addr, 2, "tools/call", params);
    // An old session id is ignored, never echoed.
    call.headers_mut()
        .insert("mcp-session-id", "stale".parse().unwrap());
    let response = send(&addr, call).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    let result = body_json(response).await;
    assert_eq!(result["result"]["structuredContent"], json!({"result": 42}));
    assert_eq!(result["result"]["resultType"], "complete");
}

#[tokio::test]
async fn standard_headers_must_agree_with_the_body() {
    let addr = start(server()).await;
    let call = || with_envelope(json!({"name": "add", "arguments": {"a": 1, "b": 2}}));
    let cases: Vec<(&str, Spoil)> = vec![
        (
            "missing version",
            Box::new(|r| {
                r.headers_mut().remove("mcp-protocol-version");
            }),
        ),
        (
            "version differs",
            Box::new(|r| {
                r.headers_mut()
                    .insert("mcp-protocol-version", "2025-11-25".parse().unwrap());
            }),
        ),
        (
            "method differs",
            Box::new(|r| {
                r.headers_mut()
                    .insert("mcp-method", "tools/list".parse().unwrap());
            }),
        ),
        (
            "name differs",
            Box::new(|r| {
                r.headers_mut().insert("mcp-name", "mul".parse().unwrap());
            }),
        ),
        (
            "name missing",
            Box::new(|r| {
                r.headers_mut().remove("mcp-name");
            }),
        ),
        (
            "name repeated",
            Box::new(|r| {
                r.headers_mut().append("mcp-name", "add".parse().unwrap());
            }),
        ),
    ];
    for (case, spoil) in cases {
        let mut bad = stateless_post(&addr, 1, "tools/call", call());
        spoil(&mut bad);
        let response = send(&addr, bad).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{case}");
        let body = body_json(response).await;
        assert_eq!(body["error"]["code"], -32020, "{case}");
        assert_eq!(body["id"], 1, "{case}");
    }
    // The base64 form of a header value is decoded before comparing.
    let mut encoded = stateless_post(&addr, 2, "tools/call", call());
    let sentinel = format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode("add")
    );
    encoded
        .headers_mut()
        .insert("mcp-name", sentinel.parse().unwrap());
    let response = send(&addr, encoded).await;
    assert_eq!(response.status(), StatusCode::OK);
    // The server keeps serving.
    let response = send(&addr, stateless_post(&addr, 3, "tools/call", call())).await;
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "3"
    );
}

#[tokio::test]
async fn statuses_follow_the_checklist() {
    let addr = start(server()).await;
    // A missing envelope key: 400 + -32602.
    let partial = json!({"_meta": {VERSION_KEY: "2026-07-28"}});
    let response = send(&addr, stateless_post(&addr, 1, "tools/list", partial)).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_json(response).await["error"]["code"], -32602);
    // An unsupported version: 400 + -32022.
    let mut old = stateless_post(
        &addr,
        2,
        "tools/list",
        json!({"_meta": {VERSION_KEY: "1900-01-01", CAPS_KEY: {}}}),
    );
    old.headers_mut()
        .insert("mcp-protocol-version", "1900-01-01".parse().unwrap());
    let response = send(&addr, old).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body = body_json(response).await;
    assert_eq!(body["error"]["code"], -32022);
    assert_eq!(body["error"]["data"]["requested"], "1900-01-01");
    // An unknown or removed method: 404 + -32601.
    for method in ["ping", "nothing/here"] {
        let response = send(
            &addr,
            stateless_post(&addr, 3, method, with_envelope(json!({}))),
        )
        .await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method}");
        assert_eq!(body_json(response).await["error"]["code"], -32601);
    }
    // A missing resource: 400 + -32602 with the URI.
    let response = send(
        &addr,
        stateless_post(
            &addr,
            4,
            "resources/read",
            with_envelope(json!({"uri": "notes://500"})),
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body = body_json(response).await;
    assert_eq!(body["error"]["code"], -32602);
    assert_eq!(body["error"]["data"]["uri"], "notes://500");
    // The 2026-07-28 header without an envelope: 400 + -32602, not the handshake path.
    let response = send(&addr, stateless_post(&addr, 5, "tools/list", json!({}))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_json(response).await["error"]["code"], -32602);
    // GET and DELETE do not exist on the stateless path.
    for method in ["GET", "DELETE"] {
        let other = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", &addr)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .body(String::new())
            .unwrap();
        let response = send(&addr, other).await;
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
        assert_eq!(response.headers()["allow"], "POST");
    }
    // Notifications are accepted and do nothing.
    let note = Request::post("/mcp")
        .header("host", &addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .body(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 9, "_meta": envelope(json!({}))}})
            .to_string(),
        )
        .unwrap();
    assert_eq!(send(&addr, note).await.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn progress_streams_on_the_request_then_the_result_ends_it() {
    let addr = start(server()).await;
    let mut params = with_envelope(json!({"name": "three_steps", "arguments": {}}));
    params["_meta"]["progressToken"] = json!(7);
    let response = send(&addr, stateless_post(&addr, 1, "tools/call", params)).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let received = events(response, |_| false).await;
    let (ids, messages): (Vec<String>, Vec<Value>) = received.into_iter().unzip();
    assert!(
        ids.iter().all(String::is_empty),
        "no event ids: no resumption"
    );
    let methods: Vec<&str> = messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(response)"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "(response)"
        ]
    );
    assert_eq!(messages[0]["params"]["progressToken"], 7);
    assert_eq!(messages[3]["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn elicitation_round_trips_through_input_required_over_http() {
    let addr = start(server()).await;
    let capabilities = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    let mut params = json!({"name": "interview", "arguments": {}, "_meta": envelope(capabilities)});
    let answers = [
        json!({"action": "accept", "content": {"name": "Lin"}}),
        json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "Hey Lin"}}),
        json!({"roots": [{"uri": "file:///x"}]}),
    ];
    for (round, answer) in answers.iter().enumerate() {
        let id = u32::try_from(round).unwrap() + 1;
        let response = send(
            &addr,
            stateless_post(&addr, id, "tools/call", params.clone()),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK);
        let body = body_json(response).await;
        let result = &body["result"];
        assert_eq!(result["resultType"], "input_required", "round {round}");
        let key = result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        params["inputResponses"] = json!({ key: answer });
        params["requestState"] = result["requestState"].clone();
    }
    let response = send(
        &addr,
        stateless_post(&addr, 9, "tools/call", params.clone()),
    )
    .await;
    let body = body_json(response).await;
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(body["result"]["content"][0]["text"], "Hey Lin (1 roots)");

    // A tampered state is refused with 400 + -32602.
    let state = params["requestState"].as_str().unwrap();
    params["requestState"] = json!(format!("{state}x"));
    let response = send(&addr, stateless_post(&addr, 10, "tools/call", params)).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body = body_json(response).await;
    assert_eq!(body["error"]["data"]["reason"], "invalid_request_state");
}

#[tokio::test]
async fn listen_streams_tagged_notifications_and_ends_with_the_server() {
    let service = server().build().unwrap();
    let handle = service.handle();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        service
            .serve_http_on(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    let params = with_envelope(json!({"notifications": {
        "toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["notes://3"]
    }}));
    let response = send(
        &addr,
        stateless_post(&addr, 5, "subscriptions/listen", params),
    )
    .await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let reader = tokio::spawn(events(response, |_| false));
    tokio::time::sleep(Duration::from_millis(100)).await;
    handle.tools_list_changed();
    handle.resource_updated("notes://4");
    handle.resource_updated("notes://3");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _ = stop.send(());
    let received: Vec<Value> = tokio::time::timeout(WAIT, reader)
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    let methods: Vec<&str> = received
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(result)"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed",
            "notifications/resources/updated",
            "(result)"
        ]
    );
    // No prompts on this server: only what it can honour is acknowledged.
    assert_eq!(
        received[0]["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["notes://3"]})
    );
    for message in &received[..3] {
        assert_eq!(message["params"]["_meta"][SUBSCRIPTION_KEY], 5);
    }
    assert_eq!(received[3]["id"], 5);
    assert_eq!(received[3]["result"]["_meta"][SUBSCRIPTION_KEY], 5);
    // The server drained and stopped.
    tokio::time::timeout(WAIT, served)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn closing_the_stream_cancels_the_request() {
    let addr = start(server()).await;
    let params = with_envelope(json!({"name": "lingering", "arguments": {"millis": 1500}}));
    let stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    let connection = tokio::spawn(connection);
    let pending = tokio::spawn(async move {
        sender
            .send_request(stateless_post(&addr, 1, "tools/call", params))
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The client goes away mid-request.
    pending.abort();
    connection.abort();
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    assert!(
        !LINGERING_FINISHED.load(Ordering::SeqCst),
        "the handler was stopped when the client closed the stream"
    );
}

#[tokio::test]
async fn arguments_marked_as_headers_must_be_mirrored_in_mcp_param_headers() {
    let addr = start(Server::builder().tool(forecast)).await;
    let list = send(
        &addr,
        stateless_post(&addr, 1, "tools/list", with_envelope(json!({}))),
    )
    .await;
    let tools = body_json(list).await;
    let properties = &tools["result"]["tools"][0]["inputSchema"]["properties"];
    assert_eq!(properties["region"]["x-mcp-header"], "Region");
    assert_eq!(properties["days"]["x-mcp-header"], "Days");

    let call = |id: u32, arguments: Value, params: &[(&'static str, &str)]| {
        let mut request = stateless_post(
            &addr,
            id,
            "tools/call",
            with_envelope(json!({"name": "forecast", "arguments": arguments})),
        );
        for (name, value) in params {
            request.headers_mut().insert(*name, value.parse().unwrap());
        }
        request
    };
    let ok = [
        (
            json!({"region": "Nord"}),
            vec![("mcp-param-region", "Nord")],
        ),
        // Numbers compare as numbers; an absent or null argument needs no header.
        (
            json!({"region": "Nord", "days": 3}),
            vec![("mcp-param-region", "Nord"), ("mcp-param-days", "03")],
        ),
        (
            json!({"region": "Nord", "days": null}),
            vec![("Mcp-Param-Region", "Nord")],
        ),
        (
            json!({"region": "Zürich"}),
            vec![("mcp-param-region", "=?base64?WsO8cmljaA==?=")],
        ),
    ];
    for (i, (arguments, params)) in ok.into_iter().enumerate() {
        let response = send(&addr, call(10 + i as u32, arguments.clone(), &params)).await;
        assert_eq!(response.status(), StatusCode::OK, "{arguments}");
    }
    let bad = [
        (json!({"region": "Nord"}), vec![]),
        (json!({"region": "Nord"}), vec![("mcp-param-region", "Sud")]),
        (
            json!({"region": "Nord"}),
            vec![("mcp-param-region", "Nord"), ("mcp-param-days", "2")],
        ),
        (
            json!({"region": "Nord", "days": 2}),
            vec![("mcp-param-region", "Nord")],
        ),
    ];
    for (i, (arguments, params)) in bad.into_iter().enumerate() {
        let response = send(&addr, call(20 + i as u32, arguments.clone(), &params)).await;
        assert_eq!(
            response.status(),
            StatusCode::BAD_REQUEST,
            "{arguments} {params:?}"
        );
        assert_eq!(body_json(response).await["error"]["code"], -32020);
    }
}
