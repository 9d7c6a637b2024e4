//! Every JSON-RPC error body carries `id` (JSON-RPC 2.0, section 5): the request's when the
//! server read it, `null` when it could not (the body was not read, or its id is unreadable).
//! Over Streamable HTTP on 127.0.0.1, for every refusal the transport answers by itself; the
//! refusals of the dispatcher, over stdio and HTTP alike, are rows of `bad_input.rs`. The 503
//! of a Redis that is down is `tests/replicas` (it needs a real redis-server).

use std::time::Duration;

use hyper::Request;
use mcp_runtime::Server;
use mcp_tests::http::{body_json, initialize, post, send, start};
use serde_json::{Value, json};

use crate::fixtures::*;

/// A JSON-RPC error answering `id`, with `status`: the body is `{"jsonrpc", "id", "error"}`,
/// `id` present even when it is `null`.
async fn assert_error(response: hyper::Response<hyper::body::Incoming>, status: u16, id: Value) {
    assert_eq!(response.status().as_u16(), status);
    let body = body_json(response).await;
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert!(body["error"]["code"].is_i64(), "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    assert_eq!(body.get("id"), Some(&id), "{body}");
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn initialize_request(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "error-ids", "version": "1"}}})
}

#[tokio::test]
async fn a_request_the_server_read_is_answered_with_its_id() {
    let addr = start(Server::builder().tool(add)).await;
    // No session header, an unknown session, an ended one: 400 and 404 answering the request.
    assert_error(
        send(&addr, post(&addr, None, ping(11))).await,
        400,
        json!(11),
    )
    .await;
    assert_error(
        send(&addr, post(&addr, Some("no-such-session"), ping(12))).await,
        404,
        json!(12),
    )
    .await;
    let session = initialize(&addr).await;
    let delete = Request::delete("/mcp")
        .header("host", &addr)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(String::new())
        .unwrap();
    assert!(send(&addr, delete).await.status().is_success());
    let string_id = json!({"jsonrpc": "2.0", "id": "after-delete", "method": "ping"});
    assert_error(
        send(&addr, post(&addr, Some(&session), string_id)).await,
        404,
        json!("after-delete"),
    )
    .await;
    // 2026-07-28 in the header without the envelope in the body.
    let mut modern = post(&addr, None, ping(13));
    modern
        .headers_mut()
        .insert("mcp-protocol-version", "2026-07-28".parse().unwrap());
    assert_error(send(&addr, modern).await, 400, json!(13)).await;
    // An unsupported `MCP-Protocol-Version` on a request of a live session.
    let session = initialize(&addr).await;
    let mut unsupported = post(&addr, Some(&session), ping(14));
    unsupported
        .headers_mut()
        .insert("mcp-protocol-version", "1999-01-01".parse().unwrap());
    assert_error(send(&addr, unsupported).await, 400, json!(14)).await;
}

#[tokio::test]
async fn an_initialize_refused_for_room_is_answered_with_its_id() {
    let addr = start(Server::builder().tool(add).max_sessions(1)).await;
    initialize(&addr).await;
    assert_error(
        send(&addr, post(&addr, None, initialize_request("second"))).await,
        503,
        json!("second"),
    )
    .await;

    let addr = start(Server::builder().tool(add).max_sessions_per_peer(1)).await;
    initialize(&addr).await;
    assert_error(
        send(&addr, post(&addr, None, initialize_request("same-peer"))).await,
        503,
        json!("same-peer"),
    )
    .await;
}

#[tokio::test]
async fn what_has_no_readable_id_is_answered_with_a_null_id() {
    let addr = start(
        Server::builder()
            .tool(add)
            .legacy_sse(true)
            .request_bytes_total(64 * 1024)
            .max_message_size(64 * 1024)
            .client_share(100),
    )
    .await;
    let session = initialize(&addr).await;
    // Refused before the body is read: media types, `Host`, size, the server's request total.
    let mut wrong_type = post(&addr, Some(&session), ping(1));
    wrong_type
        .headers_mut()
        .insert("content-type", "text/plain".parse().unwrap());
    assert_error(send(&addr, wrong_type).await, 415, Value::Null).await;
    let mut wrong_accept = post(&addr, Some(&session), ping(2));
    wrong_accept
        .headers_mut()
        .insert("accept", "text/html".parse().unwrap());
    assert_error(send(&addr, wrong_accept).await, 406, Value::Null).await;
    let mut foreign = post(&addr, Some(&session), ping(3));
    foreign
        .headers_mut()
        .insert("host", "evil.example.com".parse().unwrap());
    assert_error(send(&addr, foreign).await, 403, Value::Null).await;
    let big = json!({"jsonrpc": "2.0", "id": 4, "method": "ping",
                     "params": {"_meta": {"pad": "x".repeat(70 * 1024)}}});
    assert_error(
        send(&addr, post(&addr, Some(&session), big)).await,
        413,
        Value::Null,
    )
    .await;
    // 58,000 bytes of another body arrived and held (and 4 KiB for its request): a call finds
    // no room in the 64 KiB (a `ping` would still get through, on the reserve).
    let mut held = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: 60000\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut held, head.as_bytes())
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut held, &[b' '; 58_000])
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let busy = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    assert_error(
        send(&addr, post(&addr, Some(&session), busy)).await,
        503,
        Value::Null,
    )
    .await;
    drop(held);
    // Read, but with no id to answer: unparseable, an invalid id, a notification.
    let garbage = Request::post("/mcp")
        .header("host", &addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .body("{\"jsonrpc\":".to_owned())
        .unwrap();
    assert_error(send(&addr, garbage).await, 400, Value::Null).await;
    let null_id = json!({"jsonrpc": "2.0", "id": null, "method": "ping"});
    assert_error(
        send(&addr, post(&addr, Some(&session), null_id)).await,
        400,
        Value::Null,
    )
    .await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_error(
        send(&addr, post(&addr, Some("no-such-session"), note)).await,
        404,
        Value::Null,
    )
    .await;
    // GET and DELETE carry no JSON-RPC request.
    for method in ["GET", "DELETE"] {
        let request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", &addr)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", "no-such-session")
            .body(String::new())
            .unwrap();
        assert_error(send(&addr, request).await, 404, Value::Null).await;
    }
    // The deprecated HTTP+SSE transport: its session is looked up before the body is read.
    let legacy = Request::post("/messages?sessionId=no-such-session")
        .header("host", &addr)
        .header("content-type", "application/json")
        .body(ping(6).to_string())
        .unwrap();
    assert_error(send(&addr, legacy).await, 404, Value::Null).await;
}

#[tokio::test]
async fn a_body_not_sent_in_time_is_answered_with_a_null_id() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = start(
        Server::builder()
            .tool(add)
            .body_read_timeout(Duration::from_millis(200)),
    )
    .await;
    let mut connection = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":7"
    );
    connection.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), connection.read_to_end(&mut buffer))
        .await
        .expect("answered and closed past the body timeout")
        .unwrap();
    let text = String::from_utf8_lossy(&buffer);
    assert!(text.starts_with("HTTP/1.1 408 "), "{text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let body: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{text}"));
    assert_eq!(body.get("id"), Some(&Value::Null), "{body}");
}

/// The stateless era's envelope, on a message whose id is `id`.
fn enveloped(id: Value, jsonrpc: &str) -> Value {
    json!({"jsonrpc": jsonrpc, "id": id, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
}

#[tokio::test]
async fn the_stateless_era_answers_with_the_id_or_null_too() {
    // Over HTTP, without a session.
    let addr = start(Server::builder().tool(add)).await;
    let stateless = |body: Value| {
        Request::post("/mcp")
            .header("host", &addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .body(body.to_string())
            .unwrap()
    };
    assert_error(
        send(&addr, stateless(enveloped(json!(21), "1.0"))).await,
        400,
        json!(21),
    )
    .await;
    assert_error(
        send(&addr, stateless(enveloped(Value::Null, "2.0"))).await,
        400,
        Value::Null,
    )
    .await;
    // Over stdio.
    let client = mcp_runtime::testing::Client::connect(Server::builder().tool(add))
        .await
        .unwrap();
    for (message, id) in [
        (enveloped(json!("x"), "1.0"), json!("x")),
        (enveloped(Value::Null, "2.0"), Value::Null),
        (enveloped(json!(1.5), "2.0"), Value::Null),
    ] {
        let reply = client
            .send_line_and_receive(message.to_string())
            .await
            .unwrap();
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
        assert_eq!(reply.get("id"), Some(&id), "{message}: {reply}");
    }
}
