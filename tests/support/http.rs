//! A raw HTTP/1.1 client for Streamable HTTP tests on 127.0.0.1, every wait bounded.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::{Body, Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response, StatusCode};
use mcp_runtime::Server;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

/// How long any one HTTP exchange may take.
pub const WAIT: Duration = Duration::from_secs(10);

/// A server on a free loopback port; stopped when the test ends.
pub async fn start(server: Server) -> String {
    let service = server.build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    addr.to_string()
}

/// A server on a free loopback port whose shutdown the test triggers: its address, the
/// trigger, and its task.
pub async fn stoppable(
    server: Server,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<mcp_runtime::Result<()>>,
) {
    let service = server.build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        service
            .serve_http_on(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    (addr, stop, task)
}

/// An HTTP/1.1 connection to `addr` (kept alive; its driver runs on a task of its own).
pub async fn connection<B>(addr: &str) -> SendRequest<B>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    handshake(TcpStream::connect(addr).await.unwrap()).await
}

/// An HTTP/1.1 connection over `stream`, as [`connection`].
pub async fn handshake<B>(stream: TcpStream) -> SendRequest<B>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    sender
}

/// Sends one request on a new connection.
pub async fn send(addr: &str, request: Request<String>) -> Response<Incoming> {
    let mut sender = connection(addr).await;
    tokio::time::timeout(WAIT, sender.send_request(request))
        .await
        .unwrap()
        .unwrap()
}

/// A TCP connection to `addr` from the loopback address `from` (`127.0.0.2`, `127.0.0.3`, ...:
/// distinct peers to the server).
pub async fn connect_from(addr: &str, from: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    tokio::time::timeout(WAIT, socket.connect(addr.parse().unwrap()))
        .await
        .unwrap()
        .unwrap()
}

/// Sends one request on a new connection from the loopback address `from`.
pub async fn send_from(addr: &str, from: &str, request: Request<String>) -> Response<Incoming> {
    let mut sender = handshake(connect_from(addr, from).await).await;
    tokio::time::timeout(WAIT, sender.send_request(request))
        .await
        .unwrap()
        .unwrap()
}

/// A POST to `/mcp` with JSON and SSE accepted, in `session` (at 2025-11-25) when given.
pub fn post(addr: &str, session: Option<&str>, body: Value) -> Request<String> {
    let mut builder = Request::post("/mcp")
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        builder = builder
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    builder.body(body.to_string()).unwrap()
}

/// A stateless POST at 2026-07-28 with the headers such a client sends (SEP-2243):
/// `Mcp-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` with the request's target (the `name` of
/// `tools/call` and `prompts/get`, the `uri` of `resources/read`, the `taskId` of `tasks/*`).
/// `params` goes as given: the `_meta` envelope is the caller's.
pub fn stateless_post(addr: &str, id: u32, method: &str, params: Value) -> Request<String> {
    let mut builder = Request::post("/mcp")
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    let target = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    };
    if let Some(name) = target
        .and_then(|key| params.get(key))
        .and_then(Value::as_str)
    {
        builder = builder.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    builder.body(body.to_string()).unwrap()
}

/// The JSON-RPC response to `request` (on a new connection), whether it came as JSON or on an
/// SSE stream; on a stream, the first message that is a response, not a request of the server's.
pub async fn response_of(addr: &str, request: Request<String>) -> Value {
    rpc_response(send(addr, request).await).await
}

/// [`response_of`] on a new connection from the loopback address `from`.
pub async fn response_from(addr: &str, from: &str, request: Request<String>) -> Value {
    rpc_response(send_from(addr, from, request).await).await
}

/// The JSON-RPC response `response` carries, as [`response_of`] reads it.
pub async fn rpc_response(response: Response<Incoming>) -> Value {
    let bytes = tokio::time::timeout(WAIT, response.into_body().collect())
        .await
        .unwrap()
        .unwrap()
        .to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        return value;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .unwrap_or_else(|| panic!("no response in {text}"))
}

/// Reads SSE events (their `id` and parsed `data`) until `stop` says so or the body ends.
pub async fn events(
    response: Response<Incoming>,
    mut stop: impl FnMut(&Value) -> bool,
) -> Vec<(String, Value)> {
    let mut body = response.into_body();
    let mut buffer = String::new();
    let mut out = Vec::new();
    while let Ok(Some(Ok(frame))) = tokio::time::timeout(WAIT, body.frame()).await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        buffer.push_str(std::str::from_utf8(&data).unwrap());
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let id = event
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .unwrap_or("")
                .to_owned();
            let data = event
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or("");
            let value = if data.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(data).unwrap()
            };
            let done = stop(&value);
            out.push((id, value));
            if done {
                return out;
            }
        }
    }
    out
}

/// The whole body, parsed.
pub async fn body_json(response: Response<Incoming>) -> Value {
    let bytes: Bytes = tokio::time::timeout(WAIT, response.into_body().collect())
        .await
        .unwrap()
        .unwrap()
        .to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

/// `initialize` and `notifications/initialized` at 2025-11-25: the new session's id.
pub async fn initialize(addr: &str) -> String {
    initialize_from(addr, "127.0.0.1").await
}

/// [`initialize`] from the loopback address `from`.
pub async fn initialize_from(addr: &str, from: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "http-test", "version": "1"}}});
    let response = send_from(addr, from, post(addr, None, init)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(session.len() >= 32 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    assert_eq!(
        body_json(response).await["result"]["protocolVersion"],
        "2025-11-25"
    );
    let note = send_from(
        addr,
        from,
        post(
            addr,
            Some(&session),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
    )
    .await;
    assert_eq!(note.status(), StatusCode::ACCEPTED);
    session
}
