//! Streamable HTTP over real sockets on 127.0.0.1, with a raw HTTP/1.1 client and bounded waits.

use std::time::Duration;

use hyper::{Method, Request, StatusCode};
use mcp_runtime::Server;
pub(crate) use mcp_tests::http::{
    WAIT, body_json, events, initialize, post, send, start, stateless_post, stoppable,
};
use serde_json::{Value, json};

use crate::fixtures::*;

/// A 2025-11-25 `initialize` with the JSON-RPC id `id`.
fn initialize_message(id: u32) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "http-test", "version": "1"}}})
}

/// `request` with the header `name` set to `value`.
fn with(mut request: Request<String>, name: &'static str, value: &str) -> Request<String> {
    request.headers_mut().insert(name, value.parse().unwrap());
    request
}

/// A `method` request to `/mcp` without a body, with `headers` beside `Host`.
fn bare(method: Method, addr: &str, headers: &[(&'static str, &str)]) -> Request<String> {
    let mut request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", addr);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(String::new()).unwrap()
}

/// A GET of `/mcp` that takes an event stream, with `headers` beside `Host` and `Accept`.
fn get_events(addr: &str, headers: &[(&'static str, &str)]) -> Request<String> {
    let mut request = bare(Method::GET, addr, headers);
    let accept = "text/event-stream".parse().unwrap();
    request.headers_mut().insert("accept", accept);
    request
}

/// A connection to `addr` on which `bytes` were sent.
async fn sent(addr: &str, bytes: &[u8]) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt as _;
    let mut connection = tokio::net::TcpStream::connect(addr).await.unwrap();
    connection.write_all(bytes).await.unwrap();
    connection
}

/// A connection to `addr` that sent half of a request's headers and no more.
async fn half_sent_headers(addr: &str) -> tokio::net::TcpStream {
    sent(addr, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-").await
}

/// Waits for a stopped server's `serve_http_on` to return, at most `within`; it must return
/// `Ok`.
async fn returned(
    task: tokio::task::JoinHandle<mcp_runtime::Result<()>>,
    within: Duration,
    when: &str,
) {
    tokio::time::timeout(within, task)
        .await
        .unwrap_or_else(|_| panic!("serve_http_on returns {when}"))
        .unwrap()
        .unwrap();
}

/// A server of `add` whose shutdown this test triggers, configured by `configure`.
async fn stoppable_add(
    configure: impl FnOnce(Server) -> Server,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<mcp_runtime::Result<()>>,
) {
    stoppable(configure(Server::builder().tool(add))).await
}

/// What the server wrote on `connection` before it closed it, which it must do `within`
/// (`closed` says why).
async fn closed_within(
    within: Duration,
    connection: &mut tokio::net::TcpStream,
    closed: &str,
) -> Vec<u8> {
    use tokio::io::AsyncReadExt as _;
    let mut buffer = Vec::new();
    tokio::time::timeout(within, connection.read_to_end(&mut buffer))
        .await
        .expect(closed)
        .unwrap();
    buffer
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_forbidden() {
    let addr = start(Server::builder().tool(add)).await;
    let init = initialize_message(0);
    let evil = with(
        with(post(&addr, None, init.clone()), "host", "evil.example.com"),
        "origin",
        "http://evil.example.com",
    );
    assert_eq!(send(&addr, evil).await.status(), StatusCode::FORBIDDEN);
    let origin = with(
        post(&addr, None, init.clone()),
        "origin",
        "http://evil.example.com",
    );
    assert_eq!(send(&addr, origin).await.status(), StatusCode::FORBIDDEN);
    let good = with(post(&addr, None, init), "origin", &format!("http://{addr}"));
    assert_eq!(send(&addr, good).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn sessions_are_required_and_end_with_delete() {
    let addr = start(Server::builder().tool(add)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(
        send(&addr, post(&addr, None, ping.clone())).await.status(),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        send(&addr, post(&addr, Some("nope"), ping.clone()))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    let session = initialize(&addr).await;
    let response = send(&addr, post(&addr, Some(&session), ping.clone())).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        body_json(response).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    for (version, status) in [
        ("1999-01-01", StatusCode::BAD_REQUEST),
        ("2025-03-26", StatusCode::OK),
    ] {
        let request = post(&addr, Some(&session), ping.clone());
        let request = with(request, "mcp-protocol-version", version);
        assert_eq!(send(&addr, request).await.status(), status, "{version}");
    }
    let delete = bare(Method::DELETE, &addr, &[("mcp-session-id", &session)]);
    assert_eq!(send(&addr, delete).await.status(), StatusCode::OK);
    assert_eq!(
        send(&addr, post(&addr, Some(&session), ping))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
}

/// Sends `request` on the kept-alive connection `sender`, in bounded time.
async fn send_on(
    sender: &mut hyper::client::conn::http1::SendRequest<String>,
    request: Request<String>,
) -> hyper::Response<hyper::body::Incoming> {
    tokio::time::timeout(WAIT, sender.send_request(request))
        .await
        .unwrap()
        .unwrap()
}

/// A connection's requests in one session: each finds it, a second session's end changes
/// nothing for it, and once it is deleted (from another connection) the next request on the
/// same connection is 404, as a request on a new connection is.
#[tokio::test]
async fn a_session_ended_elsewhere_is_unknown_on_a_connection_that_used_it() {
    let addr = start(Server::builder().tool(add)).await;
    let session = initialize(&addr).await;
    let other = initialize(&addr).await;
    let mut kept = mcp_tests::http::connection::<String>(&addr).await;
    let mut call = async |id: u32| {
        let request = post(
            &addr,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": id, "b": 1}}}),
        );
        let response = send_on(&mut kept, request).await;
        let status = response.status();
        (status, body_json(response).await)
    };
    let (status, body) = call(1).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["structuredContent"]["result"], 2, "{body}");
    let delete = |id: &str| bare(Method::DELETE, &addr, &[("mcp-session-id", id)]);
    assert_eq!(send(&addr, delete(&other)).await.status(), StatusCode::OK);
    let (status, body) = call(2).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["structuredContent"]["result"], 3, "{body}");
    let (status, _) = call(3).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(send(&addr, delete(&session)).await.status(), StatusCode::OK);
    let (status, body) = call(4).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["id"], 4, "{body}");
}

/// One connection's POSTs, answered as JSON and as a stream in turn: each gets its own
/// answer and, when it streams, its own progress, in order.
#[tokio::test]
async fn a_connections_posts_stream_in_turn_each_its_own_progress() {
    let addr = start(Server::builder().tool(add).tool(three_steps)).await;
    let session = initialize(&addr).await;
    let mut kept = mcp_tests::http::connection::<String>(&addr).await;
    for round in 0..3u32 {
        let id = 10 * round;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": round, "b": 1}}});
        let request = post(&addr, Some(&session), call);
        let response = send_on(&mut kept, request).await;
        assert_eq!(response.headers()["content-type"], "application/json");
        let body = body_json(response).await;
        assert_eq!(body["id"], id, "{body}");
        assert_eq!(
            body["result"]["structuredContent"]["result"],
            round + 1,
            "{body}"
        );

        let id = 10 * round + 1;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "three_steps", "arguments": {}, "_meta": {"progressToken": id}}});
        let request = post(&addr, Some(&session), call);
        let response = send_on(&mut kept, request).await;
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        // Read to its end, which comes after the answer, so the connection can carry the next.
        let body =
            tokio::time::timeout(WAIT, http_body_util::BodyExt::collect(response.into_body()))
                .await
                .unwrap()
                .unwrap()
                .to_bytes();
        let text = String::from_utf8(body.to_vec()).unwrap();
        let seen: Vec<Value> = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter(|data| !data.trim().is_empty())
            .map(|data| {
                let message: Value = serde_json::from_str(data.trim()).unwrap();
                match message["method"].as_str() {
                    Some(_) => message["params"]["progressToken"].clone(),
                    None => message["id"].clone(),
                }
            })
            .collect();
        assert_eq!(seen, [json!(id), json!(id), json!(id), json!(id)], "{text}");
    }
}

#[tokio::test]
async fn progress_arrives_on_the_post_stream_before_the_result() {
    let addr = start(Server::builder().tool(three_steps)).await;
    let session = initialize(&addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "three_steps", "arguments": {}, "_meta": {"progressToken": 1}}});
    let response = send(&addr, post(&addr, Some(&session), call)).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = events(response, |v| v["id"] == 7).await;
    // Priming first: an id and no data.
    assert!(!events[0].0.is_empty() && events[0].1.is_null());
    let methods: Vec<&str> = events[1..]
        .iter()
        .map(|(_, v)| v["method"].as_str().unwrap_or("result"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "result"
        ]
    );
    assert!(events.iter().all(|(id, _)| !id.is_empty()));
}

#[tokio::test]
async fn a_client_that_drops_the_stream_resumes_with_last_event_id() {
    let addr = start(Server::builder().tool(slow)).await;
    let session = initialize(&addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "slow", "arguments": {"millis": 300}}});
    let response = send(&addr, post(&addr, Some(&session), call)).await;
    // Read the priming event, then hang up before the result.
    let first = events(response, |_| true).await;
    let last_id = first[0].0.clone();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let resume = get_events(
        &addr,
        &[("mcp-session-id", &session), ("last-event-id", &last_id)],
    );
    let response = send(&addr, resume).await;
    assert_eq!(response.status(), StatusCode::OK);
    let replayed = events(response, |v| v["id"] == 9).await;
    let result = &replayed.last().unwrap().1;
    assert_eq!(result["result"]["content"][0]["text"], "done");
}

/// How many `waits` handlers were stopped before they answered.
static STOPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts its handler stopped when dropped before it answered.
struct Waiting;

impl Drop for Waiting {
    fn drop(&mut self) {
        STOPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Waits `millis`, then answers.
#[mcp_runtime::tool]
async fn waits(millis: u64) -> String {
    let waiting = Waiting;
    tokio::time::sleep(Duration::from_millis(millis)).await;
    std::mem::forget(waiting);
    "waited".to_owned()
}

#[tokio::test]
async fn a_stream_its_client_left_and_did_not_resume_has_its_requests_cancelled() {
    use std::sync::atomic::Ordering;
    let addr = start(
        Server::builder()
            .tool(waits)
            .stream_resume_grace(Duration::from_millis(400)),
    )
    .await;
    let session = initialize(&addr).await;
    let call = |id: u32, millis: u64| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "waits", "arguments": {"millis": millis}}});
        post(&addr, Some(&session), body)
    };
    // Left after its priming event, not resumed: stopped once the grace is over.
    let stopped = STOPPED.load(Ordering::SeqCst);
    let response = send(&addr, call(1, 60_000)).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let primed = events(response, |_| true).await;
    assert!(!primed[0].0.is_empty(), "a priming event with an id");
    let left = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(5), async {
        while STOPPED.load(Ordering::SeqCst) == stopped {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the handler of a stream given up is stopped");
    assert!(
        left.elapsed() >= Duration::from_millis(300),
        "not before the grace: {:?}",
        left.elapsed()
    );
    // Left, then resumed within the grace: it runs on, and the resumed stream gets its answer.
    let stopped = STOPPED.load(Ordering::SeqCst);
    let response = send(&addr, call(2, 1_500)).await;
    let last_id = events(response, |_| true).await[0].0.clone();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let resume = get_events(
        &addr,
        &[("mcp-session-id", &session), ("last-event-id", &last_id)],
    );
    let resumed = send(&addr, resume).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let replayed = events(resumed, |v| v["id"] == 2).await;
    assert_eq!(
        replayed.last().unwrap().1["result"]["content"][0]["text"],
        "waited"
    );
    assert_eq!(
        STOPPED.load(Ordering::SeqCst),
        stopped,
        "a resumed stream's request is not stopped"
    );
}

#[tokio::test]
async fn a_long_session_keeps_only_its_latest_finished_streams() {
    let addr = start(Server::builder().tool(three_steps)).await;
    let session = initialize(&addr).await;
    let mut first_ids = Vec::new();
    for id in 1..=200 {
        // Progress makes the answer a stream.
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "three_steps", "arguments": {}, "_meta": {"progressToken": id}}});
        let response = send(&addr, post(&addr, Some(&session), call)).await;
        let events = events(response, |v| v["id"] == id).await;
        assert_eq!(
            events.last().unwrap().1["result"]["content"][0]["text"],
            "done"
        );
        first_ids.push(events[0].0.clone());
    }
    let resume = |last_id: &str| {
        get_events(
            &addr,
            &[("mcp-session-id", &session), ("last-event-id", last_id)],
        )
    };
    // The first call's stream is long gone; the last call's can still be replayed.
    let old = send(&addr, resume(&first_ids[0])).await;
    assert_eq!(old.status(), StatusCode::NOT_FOUND);
    let recent = send(&addr, resume(first_ids.last().unwrap())).await;
    assert_eq!(recent.status(), StatusCode::OK);
    let replayed = events(recent, |v| v["id"] == 200).await;
    assert_eq!(
        replayed.last().unwrap().1["result"]["content"][0]["text"],
        "done"
    );
}

#[tokio::test]
async fn notifications_get_202_and_stateless_mode_has_no_sessions() {
    let addr = start(Server::builder().tool(add).stateless_http()).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 2}}});
    let request = with(post(&addr, None, call), "accept", "application/json");
    let response = send(&addr, request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    // Without `MCP-Protocol-Version` the request is 2025-03-26: no structured content.
    assert_eq!(
        body_json(response).await["result"],
        json!({"content": [{"type": "text", "text": "4"}]})
    );
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let request = with(
        with(post(&addr, None, call), "accept", "application/json"),
        "mcp-protocol-version",
        "2025-11-25",
    );
    assert_eq!(
        body_json(send(&addr, request).await).await["result"]["structuredContent"],
        json!({"result": 5})
    );
    let note = send(
        &addr,
        post(
            &addr,
            None,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
    )
    .await;
    assert_eq!(note.status(), StatusCode::ACCEPTED);
    let get = get_events(&addr, &[]);
    assert_eq!(
        send(&addr, get).await.status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
    let garbage = Request::post("/mcp")
        .header("host", &addr)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body("{not json".to_owned())
        .unwrap();
    let response = send(&addr, garbage).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_json(response).await["error"]["code"], -32700);
}

#[tokio::test]
async fn media_types_streams_limits_and_expiry() {
    let addr = start(
        Server::builder()
            .tool(add)
            .session_idle_timeout(Duration::from_millis(300))
            .max_message_size(1024),
    )
    .await;
    let session = initialize(&addr).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    for (header, value, status) in [
        (
            "content-type",
            "text/plain",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        ("accept", "text/html", StatusCode::NOT_ACCEPTABLE),
    ] {
        let request = with(post(&addr, Some(&session), ping.clone()), header, value);
        assert_eq!(send(&addr, request).await.status(), status, "{header}");
    }
    let big =
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "x".repeat(2000)}});
    assert_eq!(
        send(&addr, post(&addr, Some(&session), big)).await.status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let get = || get_events(&addr, &[("mcp-session-id", &session)]);
    let standalone = send(&addr, get()).await;
    assert_eq!(standalone.status(), StatusCode::OK);
    assert_eq!(send(&addr, get()).await.status(), StatusCode::CONFLICT);
    drop(standalone);
    // Idle past the timeout: the session is gone.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(
        send(&addr, post(&addr, Some(&session), ping))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_quick_silent_tool_is_answered_with_json_even_to_a_client_that_takes_streams() {
    let addr = start(Server::builder().tool(add).tool(slow)).await;
    let session = initialize(&addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    let response = send(&addr, post(&addr, Some(&session), call)).await;
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "3"
    );
    // A tool still running after the window answers with a resumable stream.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {"millis": 300}}});
    let response = send(&addr, post(&addr, Some(&session), call)).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let received = events(response, |v| v["id"] == 2).await;
    assert!(received[0].1.is_null(), "a priming event first");
    assert_eq!(
        received.last().unwrap().1["result"]["content"][0]["text"],
        "done"
    );
}

#[tokio::test]
async fn an_uninitialized_session_expires_and_a_full_server_says_when_to_retry() {
    let addr = start(
        Server::builder()
            .tool(add)
            .max_sessions(1)
            .initialize_timeout(Duration::from_millis(300)),
    )
    .await;
    let init = initialize_message(0);
    // `initialize` alone, never `notifications/initialized`: it takes the only slot...
    let response = send(&addr, post(&addr, None, init.clone())).await;
    assert_eq!(response.status(), StatusCode::OK);
    let lurker = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    // ...so the next one is told to come back, and when.
    let full = send(&addr, post(&addr, None, init)).await;
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    let retry: u64 = full.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
    // Past the initialize timeout the lurker is gone and its slot is free.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(
        send(&addr, post(&addr, Some(&lurker), ping.clone()))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    // An initialized session outlives the initialize timeout.
    let session = initialize(&addr).await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(
        send(&addr, post(&addr, Some(&session), ping))
            .await
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn shutdown_ends_within_its_grace_period_whatever_clients_hold_open() {
    let (addr, stop, task) = stoppable_add(|s| s.shutdown_grace(Duration::from_millis(500))).await;
    let session = initialize(&addr).await;
    // A standalone GET stream, open and never read to its end.
    let get = get_events(
        &addr,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    );
    let stream = send(&addr, get).await;
    assert_eq!(stream.status(), StatusCode::OK);
    // A connection with its headers half sent.
    let half = half_sent_headers(&addr).await;
    let started = std::time::Instant::now();
    stop.send(()).unwrap();
    returned(task, Duration::from_secs(5), "within the grace period").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    drop((stream, half));
}

#[tokio::test]
async fn shutdown_closes_an_idle_keep_alive_connection_at_once() {
    use tokio::io::AsyncReadExt as _;
    // A grace far longer than the test waits: only a graceful close of the idle connection
    // lets the server return in time.
    let (addr, stop, task) = stoppable_add(|s| s.shutdown_grace(Duration::from_secs(30))).await;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    let mut idle = sent(&addr, request.as_bytes()).await;
    // Its response read, the connection stays open, waiting for the next request.
    let mut head = [0u8; 12];
    idle.read_exact(&mut head).await.unwrap();
    assert!(head.starts_with(b"HTTP/1.1 "), "{head:?}");
    let started = std::time::Instant::now();
    stop.send(()).unwrap();
    closed_within(WAIT, &mut idle, "the idle connection is closed on shutdown").await;
    returned(task, WAIT, "once its connections are closed").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn past_the_connection_limit_new_connections_get_503_and_others_are_still_served() {
    // Every connection is from 127.0.0.1 here: no per-client share (`fair.rs` has those).
    let (addr, _stop, _task) = stoppable_add(|s| s.max_connections(2).client_share(100)).await;
    let first = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let second = tokio::net::TcpStream::connect(&addr).await.unwrap();
    // Let the server accept both before the third arrives.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The third sends its request at once, as a client does, then reads.
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: 2\r\n\r\n{{}}"
    );
    let mut third = sent(&addr, request.as_bytes()).await;
    let buffer = closed_within(WAIT, &mut third, "the third connection is closed at once").await;
    // Told why, in HTTP, before the close: the whole response, its length the body's.
    let text = String::from_utf8_lossy(&buffer);
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    assert!(head.starts_with("HTTP/1.1 503 "), "{text}");
    assert!(head.contains("\r\nRetry-After: 1"), "{text}");
    assert!(head.contains("\r\nConnection: close"), "{text}");
    assert_eq!(body, "too many connections; retry\n");
    assert!(
        head.contains(&format!("\r\nContent-Length: {}", body.len())),
        "the declared length is the body's: {text:?}"
    );
    // Once one closes, a new client is served.
    drop((first, second));
    tokio::time::sleep(Duration::from_millis(200)).await;
    initialize(&addr).await;
}

#[tokio::test]
async fn headers_not_sent_in_time_close_the_connection() {
    let (addr, _stop, _task) =
        stoppable_add(|s| s.header_read_timeout(Duration::from_millis(300))).await;
    let mut half = half_sent_headers(&addr).await;
    // Closed (possibly after a 408) well before a client's patience would run out.
    closed_within(
        Duration::from_secs(3),
        &mut half,
        "the connection is closed past the header timeout",
    )
    .await;
    initialize(&addr).await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let (addr, _stop, _task) =
        stoppable_add(|s| s.header_read_timeout(Duration::from_millis(300))).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut connection = sent(&addr, request.as_bytes()).await;
    // One answer, then nothing more from the client: the connection is closed, not kept.
    let buffer = closed_within(
        Duration::from_secs(3),
        &mut connection,
        "an idle keep-alive connection is closed",
    )
    .await;
    assert!(
        String::from_utf8_lossy(&buffer).starts_with("HTTP/1.1 "),
        "{}",
        String::from_utf8_lossy(&buffer)
    );
}

#[tokio::test]
async fn the_header_timeout_runs_only_while_a_connection_waits_for_a_head() {
    use tokio::io::AsyncReadExt as _;
    let (addr, _stop, _task) = stoppable(
        Server::builder()
            .tool(waits)
            .header_read_timeout(Duration::from_millis(300)),
    )
    .await;
    let session = initialize(&addr).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "waits", "arguments": {"millis": 900}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let started = std::time::Instant::now();
    let mut connection = sent(&addr, request.as_bytes()).await;
    // A request three times the timeout long is answered: its connection is not waiting for
    // a head while it runs.
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("waited") {
        let read = tokio::time::timeout(WAIT, connection.read(&mut chunk))
            .await
            .expect("the answer comes")
            .unwrap();
        assert!(
            read > 0,
            "closed after {:?}, before the answer: {}",
            started.elapsed(),
            String::from_utf8_lossy(&answer)
        );
        answer.extend_from_slice(&chunk[..read]);
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200 "));
    assert!(started.elapsed() >= Duration::from_millis(900));
    // Then the wait for the next head starts: closed once it has lasted the timeout.
    let answered = std::time::Instant::now();
    let rest = closed_within(
        Duration::from_secs(3),
        &mut connection,
        "the connection is closed once idle past the header timeout",
    )
    .await;
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    let idle = answered.elapsed();
    assert!(
        idle >= Duration::from_millis(200),
        "closed after {idle:?} idle"
    );
}

#[tokio::test]
async fn a_body_not_sent_in_time_is_refused() {
    let (addr, _stop, _task) =
        stoppable_add(|s| s.body_read_timeout(Duration::from_millis(300))).await;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\""
    );
    let mut connection = sent(&addr, request.as_bytes()).await;
    let buffer = closed_within(
        Duration::from_secs(3),
        &mut connection,
        "the connection is answered and closed past the body timeout",
    )
    .await;
    let text = String::from_utf8_lossy(&buffer);
    assert!(text.starts_with("HTTP/1.1 408 "), "{text}");
    initialize(&addr).await;
}

#[tokio::test]
async fn bodies_are_charged_as_they_arrive_within_the_servers_request_total() {
    use tokio::io::AsyncWriteExt as _;
    // 256 KiB of requests in flight in all, every client (here all on 127.0.0.1) at most that.
    let addr = start(
        Server::builder()
            .tool(add)
            .request_bytes_total(256 << 10)
            .client_share(100),
    )
    .await;
    let session = initialize(&addr).await;
    let call = |pad: usize| {
        post(
            &addr,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"pad": "x".repeat(pad)}}}),
        )
    };
    // A body larger than the whole total could never fit: 413.
    let never = send(&addr, call(300_000)).await;
    assert_eq!(never.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // 200 KB of a body sent, the rest held back: those 200 KB are held, and a 30 KB request
    // (its text, its string once parsed) no longer fits (503, try again); a small one does.
    let mut partial = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: 250000\r\n\r\n"
    );
    partial.write_all(head.as_bytes()).await.unwrap();
    partial.write_all(&[b' '; 200_000]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = send(&addr, call(30_000)).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(send(&addr, call(10)).await.status(), StatusCode::OK);
    // The partial body goes away: its bytes come back.
    drop(partial);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(send(&addr, call(30_000)).await.status(), StatusCode::OK);
    // Nothing stays charged: fifty requests, one after another, each charged its bytes, what
    // parsing them builds and 4 KiB, fit the 256 KiB only if each gives its charge back.
    for _ in 0..50 {
        let served = send(&addr, call(40_000)).await;
        assert_eq!(served.status(), StatusCode::OK);
        let reply = body_json(served).await;
        assert_eq!(reply["result"]["content"][0]["text"], "3", "{reply}");
    }
}

#[tokio::test]
async fn one_address_past_its_session_cap_gets_503_and_a_session_it_ends_frees_a_place() {
    let addr = start(Server::builder().tool(add).max_sessions_per_peer(2)).await;
    let first = initialize(&addr).await;
    let _second = initialize(&addr).await;
    let init = initialize_message(1);
    let refused = send(&addr, post(&addr, None, init.clone())).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key("retry-after"));
    // Ending one session gives its place back.
    let delete = bare(
        Method::DELETE,
        &addr,
        &[
            ("mcp-session-id", &first),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    );
    assert!(send(&addr, delete).await.status().is_success());
    let served = send(&addr, post(&addr, None, init)).await;
    assert_eq!(served.status(), StatusCode::OK);
    assert!(served.headers().contains_key("mcp-session-id"));
}

#[tokio::test]
async fn a_redis_that_cannot_be_reached_is_a_startup_error_of_its_own() {
    // A port nothing listens on: the connection is refused.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("redis://:hunter2@127.0.0.1:{port}/0");
    let service = Server::builder().tool(add).redis(&url).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = tokio::time::timeout(
        Duration::from_secs(20),
        service.serve_http_on(listener, std::future::pending()),
    )
    .await
    .expect("startup fails within the connection timeouts");
    let error = served.expect_err("serving without its Redis is an error");
    assert!(
        matches!(error, mcp_runtime::Error::Redis { .. }),
        "{error:#?}"
    );
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!(
            "cannot use Redis at redis://:***@127.0.0.1:{port}/0: "
        )),
        "{shown}"
    );
    assert!(!shown.contains("hunter2"), "{shown}");
}
