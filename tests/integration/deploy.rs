//! What a deployment asks of `serve_http`, on real sockets on 127.0.0.1: the liveness and
//! readiness probes (through shutdown and a Redis that goes down), the application's own routes
//! under the server's connection limit, and replies as JSON only.

use std::time::Duration;

use hyper::{Request, StatusCode};
use mcp_runtime::{OAuth, Server};
use mcp_tests::http::{
    WAIT, body_json, connection, events, initialize, post, send, start, stoppable,
};
use serde_json::{Value, json};

use crate::fixtures::*;

/// A GET of `path` with `host` as its `Host`.
fn get(path: &str, host: &str) -> Request<String> {
    Request::get(path)
        .header("host", host)
        .body(String::new())
        .unwrap()
}

/// The status and JSON body of `GET path`.
async fn probe(addr: &str, path: &str) -> (StatusCode, Value) {
    let response = send(addr, get(path, addr)).await;
    let status = response.status();
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["content-type"], "application/json");
    (status, body_json(response).await)
}

/// Probes `path` until it answers `status`, for at most `within`.
async fn probe_until(addr: &str, path: &str, status: StatusCode, within: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let (now, body) = probe(addr, path).await;
        if now == status {
            return body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{path} still answers {now} {body} after {within:?}, not {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn probes_answer_by_default_without_a_token_or_a_loopback_host() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let oauth =
        OAuth::new(format!("http://{addr}/mcp")).authorization_server("https://issuer.example");
    let service = Server::builder().tool(add).oauth(oauth).build().unwrap();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    // The MCP endpoint wants a token, and a loopback `Host`.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(
        send(&addr, post(&addr, None, init)).await.status(),
        StatusCode::UNAUTHORIZED
    );
    // The probes want neither: an orchestrator probes by address.
    for host in [addr.as_str(), "10.0.0.7:8000", "mcp.example.com"] {
        let response = send(&addr, get("/healthz", host)).await;
        assert_eq!(response.status(), StatusCode::OK, "{host}");
        assert_eq!(body_json(response).await, json!({"status": "ok"}));
        let response = send(&addr, get("/readyz", host)).await;
        assert_eq!(response.status(), StatusCode::OK, "{host}");
        assert_eq!(body_json(response).await, json!({"status": "ready"}));
    }
}

#[tokio::test]
async fn probe_paths_move_and_turn_off() {
    let addr = start(Server::builder().tool(add).health_paths("/live", "/ready")).await;
    assert_eq!(probe(&addr, "/live").await.0, StatusCode::OK);
    assert_eq!(probe(&addr, "/ready").await.0, StatusCode::OK);
    let gone = send(&addr, get("/healthz", &addr)).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    let addr = start(Server::builder().tool(add).health_routes(false)).await;
    for path in ["/healthz", "/readyz"] {
        let gone = send(&addr, get(path, &addr)).await;
        assert_eq!(gone.status(), StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn readiness_is_503_from_the_moment_shutdown_starts() {
    let (addr, stop, task) = stoppable(
        Server::builder()
            .tool(add)
            .drain_delay(Duration::from_secs(2))
            .shutdown_grace(Duration::from_millis(500)),
    )
    .await;
    assert_eq!(
        probe(&addr, "/readyz").await,
        (StatusCode::OK, json!({"status": "ready"}))
    );
    let session = initialize(&addr).await;
    let _ = stop.send(());
    let body = probe_until(&addr, "/readyz", StatusCode::SERVICE_UNAVAILABLE, WAIT).await;
    assert_eq!(
        body,
        json!({"status": "unavailable", "reason": "shutting down"})
    );
    // Still live, and still serving while the balancer notices.
    assert_eq!(probe(&addr, "/healthz").await.0, StatusCode::OK);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let response = send(&addr, post(&addr, Some(&session), call)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        body_json(response).await["result"]["structuredContent"]["result"],
        5
    );
    // Then the listener closes and the server returns.
    tokio::time::timeout(WAIT, task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(tokio::net::TcpStream::connect(&addr).await.is_err());
}

/// A `redis-server` of the test's own on a free port; killed when dropped.
struct Redis {
    port: u16,
    child: std::process::Child,
}

impl Redis {
    fn start(port: u16) -> Self {
        mcp_tests::install_component("redis.sh");
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server (scripts/redis.sh installs it)");
        let deadline = std::time::Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { port, child }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn readiness_is_503_while_redis_is_down() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let redis = Redis::start(port);
    let url = format!("redis://127.0.0.1:{}/0", redis.port);
    let addr = start(Server::builder().tool(add).redis(url)).await;
    probe_until(&addr, "/readyz", StatusCode::OK, WAIT).await;
    drop(redis);
    let body = probe_until(&addr, "/readyz", StatusCode::SERVICE_UNAVAILABLE, WAIT).await;
    assert_eq!(
        body,
        json!({"status": "unavailable", "reason": "the shared store does not answer"})
    );
    // Live all the while: the process serves, only this replica should get no traffic.
    assert_eq!(probe(&addr, "/healthz").await.0, StatusCode::OK);
    // Ready again once Redis is back.
    let _redis = Redis::start(port);
    probe_until(&addr, "/readyz", StatusCode::OK, WAIT).await;
}

#[tokio::test]
async fn an_application_route_is_served_within_the_connection_limit() {
    let (addr, _stop, _task) = stoppable(
        Server::builder()
            .tool(add)
            .http_route(
                "/version",
                axum::routing::get(|| async { "1.2.3" })
                    .post(|body: String| async move { format!("got {body}") }),
            )
            .max_connections(1),
    )
    .await;
    // One connection, kept alive: the route answers on it, both methods.
    let mut first = connection::<String>(&addr).await;
    let response = tokio::time::timeout(WAIT, first.send_request(get("/version", &addr)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let text = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(&text[..], b"1.2.3");
    // A second connection is over the limit: refused like any, route or not.
    let mut second = tokio::net::TcpStream::connect(&addr).await.unwrap();
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    second
        .write_all(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .ok();
    let mut refused = Vec::new();
    tokio::time::timeout(WAIT, second.read_to_end(&mut refused))
        .await
        .unwrap()
        .ok();
    let refused = String::from_utf8_lossy(&refused);
    assert!(refused.starts_with("HTTP/1.1 503 "), "{refused}");
    assert!(refused.contains("too many connections"), "{refused}");
    // The first connection still gets the route (and its POST).
    let request = Request::post("/version")
        .header("host", &addr)
        .body("hello".to_owned())
        .unwrap();
    let response = tokio::time::timeout(WAIT, first.send_request(request))
        .await
        .unwrap()
        .unwrap();
    let text = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(&text[..], b"got hello");
}

#[test]
fn a_route_where_the_server_serves_is_refused_at_build() {
    let error = Server::builder()
        .tool(add)
        .http_route("/mcp", axum::routing::get(|| async { "mine" }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("the route `/mcp` is where the MCP endpoint is served"),
        "{error}"
    );
    let error = Server::builder()
        .tool(add)
        .http_path("/readyz")
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("the readiness probe is at `/readyz`, where the MCP endpoint is served"),
        "{error}"
    );
    let error = Server::builder()
        .tool(add)
        .http_route("version", axum::routing::get(|| async { "1" }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(error.contains("must start with `/`"), "{error}");
}

/// A `tools/call` of `name` with `arguments` in `session`, its progress token `token`.
fn call(addr: &str, session: &str, name: &str, arguments: Value) -> Request<String> {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": "p"}}});
    post(addr, Some(session), body)
}

#[tokio::test]
async fn json_response_answers_a_slow_tool_with_json_and_its_progress_on_the_get_stream() {
    // Without it, a slow call is answered with a stream: what the option changes.
    let addr = start(Server::builder().tool(slow)).await;
    let session = initialize(&addr).await;
    let response = send(&addr, call(&addr, &session, "slow", json!({"millis": 300}))).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");

    let addr = start(
        Server::builder()
            .tool(slow)
            .tool(three_steps)
            .json_response(true),
    )
    .await;
    let session = initialize(&addr).await;
    let response = send(&addr, call(&addr, &session, "slow", json!({"millis": 300}))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let reply = body_json(response).await;
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["result"]["content"][0]["text"], "done");

    // Progress is not in the reply; it goes on the session's GET stream.
    let get = Request::get("/mcp")
        .header("host", &addr)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(String::new())
        .unwrap();
    let stream = send(&addr, get).await;
    assert_eq!(stream.status(), StatusCode::OK);
    let response = send(&addr, call(&addr, &session, "three_steps", json!({}))).await;
    assert_eq!(response.headers()["content-type"], "application/json");
    let reply = body_json(response).await;
    assert_eq!(reply["result"]["content"][0]["text"], "done");
    let progress = events(stream, |event| event["params"]["progress"] == 3.0).await;
    let steps: Vec<&Value> = progress
        .iter()
        .filter(|(_, event)| event["method"] == "notifications/progress")
        .map(|(_, event)| &event["params"]["progress"])
        .collect();
    assert_eq!(steps, [&json!(1.0), &json!(2.0), &json!(3.0)]);

    // A client that takes only a stream is told what this server answers with.
    let mut only_sse = call(&addr, &session, "slow", json!({"millis": 1}));
    only_sse
        .headers_mut()
        .insert("accept", "text/event-stream".parse().unwrap());
    assert_eq!(
        send(&addr, only_sse).await.status(),
        StatusCode::NOT_ACCEPTABLE
    );
}
