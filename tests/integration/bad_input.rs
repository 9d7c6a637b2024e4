//! Malformed and hostile input, over stdio (the real stdio transport, in-process, driven with raw
//! bytes) and over Streamable HTTP on 127.0.0.1: every row gets the answer the spec asks for, and
//! after every row a normal `tools/call` still succeeds on the same connection or session.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use mcp_runtime::{McpService, Server};
use mcp_tests::http::{connection, start};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

use crate::fixtures::*;

const WAIT: Duration = Duration::from_secs(20);
const MIB: usize = 1024 * 1024;

/// What a client must see in answer to one row.
#[derive(Debug, Clone)]
enum Expect {
    /// A JSON-RPC error with this code, echoing this id (`None`: an id that could not be read,
    /// answered with `"id": null` as JSON-RPC 2.0 requires).
    Error(i64, Option<Value>),
    /// A `tools/call` result with `isError: true` whose text contains this.
    ToolError(&'static str),
    /// No answer at all (a notification, or a response to nothing).
    Nothing,
}

struct Row {
    name: &'static str,
    input: Vec<u8>,
    expect: Expect,
    /// The status of the POST that carries the row over HTTP.
    http_status: StatusCode,
}

fn row(name: &'static str, input: impl Into<Vec<u8>>, expect: Expect, http: u16) -> Row {
    Row {
        name,
        input: input.into(),
        expect,
        http_status: StatusCode::from_u16(http).unwrap(),
    }
}

/// A row answered with a `-32602` error echoing `id`, status 200 over HTTP.
fn invalid_params(name: &'static str, id: u64, input: impl Into<Vec<u8>>) -> Row {
    row(name, input, Expect::Error(-32602, Some(json!(id))), 200)
}

/// A row answered with a tool error whose text contains `text`, status 200 over HTTP.
fn tool_error(name: &'static str, input: impl Into<Vec<u8>>, text: &'static str) -> Row {
    row(name, input, Expect::ToolError(text), 200)
}

/// A row answered with a parse error (`"id": null`), status 400 over HTTP.
fn parse_error(name: &'static str, input: impl Into<Vec<u8>>) -> Row {
    row(name, input, Expect::Error(-32700, None), 400)
}

/// A 2025-11-25 `initialize` with the JSON-RPC id `id`.
fn initialize_message(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bad-input", "version": "1"}}})
}

fn call(id: Value, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// The rows both transports answer the same way (bar the HTTP status).
fn rows() -> Vec<Row> {
    use Expect::*;
    const INVALID_REQUEST: i64 = -32600;
    const NOT_FOUND: i64 = -32601;
    let id = |v: Value| Some(v);
    vec![
        parse_error("invalid JSON", r#"{"jsonrpc":"2.0","id":1,"#),
        parse_error("garbage", "this is not json"),
        row(
            "JSON that is not JSON-RPC",
            r#"{"hello":"world"}"#,
            Error(INVALID_REQUEST, None),
            400,
        ),
        row("a bare number", "42", Error(INVALID_REQUEST, None), 400),
        row(
            "wrong jsonrpc",
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            Error(INVALID_REQUEST, id(json!(1))),
            200,
        ),
        row(
            "no jsonrpc",
            r#"{"id":"a","method":"tools/list"}"#,
            Error(INVALID_REQUEST, id(json!("a"))),
            200,
        ),
        row(
            "null id",
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            Error(INVALID_REQUEST, None),
            400,
        ),
        row(
            "float id",
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
            Error(INVALID_REQUEST, None),
            400,
        ),
        row(
            "object id",
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#,
            Error(INVALID_REQUEST, None),
            400,
        ),
        row(
            "boolean id",
            r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#,
            Error(INVALID_REQUEST, None),
            400,
        ),
        row(
            "id beyond 64 bits",
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}"#,
            Error(INVALID_REQUEST, None),
            400,
        ),
        row(
            "method not a string",
            r#"{"jsonrpc":"2.0","id":2,"method":7}"#,
            Error(INVALID_REQUEST, id(json!(2))),
            200,
        ),
        row(
            "unknown method",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/explode"}"#,
            Error(NOT_FOUND, id(json!(3))),
            200,
        ),
        row(
            "empty method",
            r#"{"jsonrpc":"2.0","id":"m","method":""}"#,
            Error(NOT_FOUND, id(json!("m"))),
            200,
        ),
        row(
            "method of a capability not served",
            r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"x"}}"#,
            Error(NOT_FOUND, id(json!(4))),
            200,
        ),
        row(
            "second initialize",
            json!({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "again", "version": "1"}}})
            .to_string(),
            Error(INVALID_REQUEST, id(json!(5))),
            200,
        ),
        invalid_params(
            "params an array",
            6,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1,2]}"#,
        ),
        invalid_params(
            "params a string",
            7,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":"all"}"#,
        ),
        invalid_params(
            "name not a string",
            8,
            call(json!(8), json!({"name": 42, "arguments": {}})),
        ),
        invalid_params(
            "name missing",
            9,
            call(json!(9), json!({"arguments": {"a": 1, "b": 2}})),
        ),
        invalid_params(
            "unknown tool",
            10,
            call(json!(10), json!({"name": "multiply", "arguments": {}})),
        ),
        invalid_params(
            "arguments an array",
            11,
            call(json!(11), json!({"name": "add", "arguments": [2, 3]})),
        ),
        invalid_params(
            "arguments a string",
            12,
            call(json!(12), json!({"name": "add", "arguments": "a=2"})),
        ),
        invalid_params(
            "cursor not a string",
            13,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"cursor":5}}"#,
        ),
        invalid_params(
            "log level unknown",
            14,
            r#"{"jsonrpc":"2.0","id":14,"method":"logging/setLevel","params":{"level":"loud"}}"#,
        ),
        tool_error(
            "argument of the wrong type",
            call(
                json!(15),
                json!({"name": "add", "arguments": {"a": "two", "b": 3}}),
            ),
            "argument `a`",
        ),
        tool_error(
            "argument missing",
            call(json!(16), json!({"name": "add", "arguments": {"a": 2}})),
            "`b`",
        ),
        tool_error(
            "argument out of range",
            call(
                json!(17),
                json!({"name": "add", "arguments": {"a": 1e300, "b": 3}}),
            ),
            "argument `a`",
        ),
        tool_error(
            "nested argument of the wrong type",
            call(
                json!(18),
                json!({"name": "paint", "arguments": {"colour": "red", "wall": {"width": "wide"}}}),
            ),
            "wall",
        ),
        tool_error(
            "enum argument out of its values",
            call(
                json!(19),
                json!({"name": "paint", "arguments": {"colour": "green", "wall": {"width": 2}}}),
            ),
            "colour",
        ),
        tool_error(
            "a tool that panics",
            call(json!(20), json!({"name": "explode", "arguments": {}})),
            "failed unexpectedly",
        ),
        parse_error("deep nesting (a million levels)", nested(1_000_000)),
        parse_error(
            "nesting one past the limit, inside arguments",
            format!(
                r#"{{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{{"name":"add","arguments":{{"a":{}}}}}}}"#,
                nested(62)
            ),
        ),
        parse_error(
            "invalid UTF-8 in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/\xff\xfe\"}".to_vec(),
        ),
        parse_error(
            "invalid UTF-8 outside strings",
            b"\xc3\x28\xa0\xa1".to_vec(),
        ),
        row("empty batch", "[]", Error(INVALID_REQUEST, None), 400),
        row(
            "batch on a revision without batches",
            r#"[{"jsonrpc":"2.0","id":23,"method":"ping"}]"#,
            Error(INVALID_REQUEST, None),
            200,
        ),
        row(
            "response to no request",
            r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
            Nothing,
            202,
        ),
        row(
            "unknown notification",
            r#"{"jsonrpc":"2.0","method":"notifications/bogus","params":{"x":1}}"#,
            Nothing,
            202,
        ),
        row(
            "cancellation of nothing",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"no":1}}}"#,
            Nothing,
            202,
        ),
    ]
}

/// The server every table row runs against.
fn table_server() -> Server {
    Server::builder()
        .tool(add)
        .tool(paint)
        .tool(explode)
        .tool(slow)
        .tool(long_text)
        .tool(hang)
}

/// Checks one answer against what the row expects.
fn check(name: &str, expect: &Expect, reply: Option<&Value>) {
    match (expect, reply) {
        (Expect::Nothing, None) => {}
        (Expect::Nothing, Some(reply)) => panic!("{name}: expected no answer, got {reply}"),
        (_, None) => panic!("{name}: expected {expect:?}, got no answer"),
        (Expect::Error(code, id), Some(reply)) => {
            assert_eq!(reply["jsonrpc"], "2.0", "{name}: {reply}");
            assert_eq!(reply["error"]["code"], *code, "{name}: {reply}");
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
                "{name}: {reply}"
            );
            assert!(reply.get("result").is_none(), "{name}: {reply}");
            match id {
                Some(id) => assert_eq!(reply["id"], *id, "{name}: {reply}"),
                None => assert_eq!(reply.get("id"), Some(&Value::Null), "{name}: {reply}"),
            }
        }
        (Expect::ToolError(text), Some(reply)) => {
            let result = &reply["result"];
            assert_eq!(result["isError"], true, "{name}: {reply}");
            let message = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(message.contains(text), "{name}: {reply}");
            assert!(!message.contains("secret"), "{name} leaks detail: {reply}");
        }
    }
}

/// Checks the answer to the follow-up `add` every row is followed by.
fn check_still_serving(after: &str, id: &Value, reply: Option<&Value>) {
    let reply = reply.unwrap_or_else(|| panic!("after {after}: no answer to `add`"));
    assert_eq!(reply["id"], *id, "after {after}: {reply}");
    assert_eq!(
        reply["result"]["content"][0]["text"], "5",
        "after {after}: {reply}"
    );
}

fn add_request(id: &Value) -> Vec<u8> {
    call(
        id.clone(),
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
    .into_bytes()
}

// ---------------------------------------------------------------------------------------------
// stdio: the real transport over an in-memory pipe, raw bytes in, lines out.

struct Stdio {
    writer: WriteHalf<DuplexStream>,
    lines: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    server: JoinHandle<mcp_runtime::Result<()>>,
}

impl Stdio {
    fn open(service: &McpService) -> Self {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let service = service.clone();
        let server =
            tokio::spawn(async move { service.serve_connection(server_read, server_write).await });
        let (read, writer) = tokio::io::split(client);
        Self {
            writer,
            lines: BufReader::new(read).lines(),
            server,
        }
    }

    async fn connect(service: &McpService) -> Self {
        let mut stdio = Self::open(service);
        stdio.initialize().await;
        stdio
    }

    async fn initialize(&mut self) {
        let init = initialize_message(json!("init"));
        self.send(init.to_string().as_bytes()).await;
        let reply = self.recv().await.expect("an answer to initialize");
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }

    async fn send(&mut self, line: &[u8]) {
        self.writer.write_all(line).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// The next line, parsed; `None` when the server closed its output.
    async fn recv(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("an answer within the wait")
            .unwrap()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}")))
    }

    /// Checks the next line against what `name` expects.
    async fn answers(&mut self, name: &str, expect: Expect) {
        let reply = self.recv().await;
        check(name, &expect, reply.as_ref());
    }

    /// Sends `add` and checks that the very next line is its answer.
    async fn assert_serving(&mut self, after: &str) {
        let id = json!(format!("after {after}"));
        self.send(&add_request(&id)).await;
        let reply = self.recv().await;
        check_still_serving(after, &id, reply.as_ref());
    }
}

#[tokio::test]
async fn every_table_row_over_stdio() {
    let service = table_server().build().unwrap();
    let mut stdio = Stdio::connect(&service).await;
    for row in rows() {
        stdio.send(&row.input).await;
        if !matches!(row.expect, Expect::Nothing) {
            let reply = stdio.recv().await;
            check(row.name, &row.expect, reply.as_ref());
        }
        // For `Nothing`, this also checks that no answer came before it.
        stdio.assert_serving(row.name).await;
    }
}

#[tokio::test]
async fn requests_before_initialize_over_stdio() {
    let service = table_server().build().unwrap();
    let mut stdio = Stdio::open(&service);
    stdio.send(&add_request(&json!(1))).await;
    stdio
        .answers(
            "tools/call before initialize",
            Expect::Error(-32600, Some(json!(1))),
        )
        .await;
    stdio
        .send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    stdio
        .answers(
            "tools/list before initialize",
            Expect::Error(-32600, Some(json!(2))),
        )
        .await;
    // `ping` is allowed before the handshake.
    stdio
        .send(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#)
        .await;
    assert_eq!(
        stdio.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    stdio.initialize().await;
    stdio.assert_serving("requests before initialize").await;
}

#[tokio::test]
async fn duplicate_ids_in_flight_over_stdio() {
    let service = table_server().build().unwrap();
    let mut stdio = Stdio::connect(&service).await;
    let first = call(
        json!("dup"),
        json!({"name": "slow", "arguments": {"millis": 300}}),
    );
    stdio.send(first.as_bytes()).await;
    stdio.send(&add_request(&json!("dup"))).await;
    // The duplicate is refused at once; the first request still gets its own answer.
    stdio
        .answers("duplicate id", Expect::Error(-32600, Some(json!("dup"))))
        .await;
    let reply = stdio.recv().await.unwrap();
    assert_eq!(reply["id"], "dup");
    assert_eq!(reply["result"]["content"][0]["text"], "done", "{reply}");
    stdio.assert_serving("duplicate ids").await;
}

#[tokio::test]
async fn a_100_mib_line_over_stdio_is_refused_and_skipped() {
    let service = table_server().build().unwrap();
    let mut stdio = Stdio::connect(&service).await;
    // Streamed in 1 MiB pieces of one shared buffer: neither side ever holds it whole.
    let chunk = vec![b'x'; MIB];
    stdio
        .writer
        .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#)
        .await
        .unwrap();
    for _ in 0..100 {
        stdio.writer.write_all(&chunk).await.unwrap();
    }
    stdio.send(br#""}}"#).await;
    let reply = stdio.recv().await;
    // The id was in the line's first bytes: the client can match the error to its request.
    check(
        "100 MiB line",
        &Expect::Error(-32600, Some(json!(1))),
        reply.as_ref(),
    );
    let reply = reply.unwrap();
    let message = reply["error"]["message"].to_string();
    assert!(message.contains("exceeds the limit"), "{message}");
    stdio.assert_serving("a 100 MiB line").await;
}

#[tokio::test]
async fn a_stdio_client_that_stops_reading_is_held_back_not_buffered() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    // A 64 KiB stream buffer: past it the server stops reading requests.
    let service = table_server().stream_buffer(64 * 1024).build().unwrap();
    let Stdio {
        mut writer,
        mut lines,
        server,
    } = Stdio::connect(&service).await;
    // 80,000 pings (about 3.5 MiB), written by a task without reading a single answer.
    const PINGS: usize = 80_000;
    let written = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&written);
    let pings = tokio::spawn(async move {
        for i in 0..PINGS {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n");
            writer.write_all(line.as_bytes()).await.unwrap();
            counter.fetch_add(line.len(), Ordering::Relaxed);
        }
        writer
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Without backpressure the server reads everything and queues every answer; with it, the
    // pipe fills once the unread answers pass the buffer (plus the pipe's and the reader's own
    // buffers), and the client's writes wait.
    let taken = written.load(Ordering::Relaxed);
    assert!(
        taken < MIB,
        "the server kept reading while nothing was read: {taken} bytes taken"
    );
    // Once the client reads again, every request is answered, in order.
    for i in 0..PINGS {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("an answer within the wait")
            .unwrap()
            .expect("an answer");
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], i, "{reply}");
    }
    let writer = pings.await.unwrap();
    let mut stdio = Stdio {
        writer,
        lines,
        server,
    };
    stdio.assert_serving("a client that stopped reading").await;
}

#[tokio::test]
async fn a_stdio_client_that_disconnects_mid_response_ends_only_its_session() {
    let service = table_server().build().unwrap();
    let mut stdio = Stdio::connect(&service).await;
    let big = call(
        json!(1),
        json!({"name": "long_text", "arguments": {"bytes": 8 * MIB}}),
    );
    stdio.send(big.as_bytes()).await;
    // Read a little of the answer, then hang up in the middle of it.
    let mut inner = stdio.lines.into_inner();
    let mut some = vec![0u8; 1024];
    tokio::time::timeout(
        WAIT,
        tokio::io::AsyncReadExt::read_exact(&mut inner, &mut some),
    )
    .await
    .unwrap()
    .unwrap();
    drop(inner);
    drop(stdio.writer);
    let ended = tokio::time::timeout(WAIT, stdio.server).await;
    assert!(
        matches!(ended, Ok(Ok(Ok(())))),
        "the session ends cleanly: {ended:?}"
    );
    // The service goes on serving other connections.
    Stdio::connect(&service)
        .await
        .assert_serving("a client that disconnected")
        .await;
}

#[tokio::test]
async fn a_flood_of_cancellations_over_stdio_frees_the_window() {
    let service = table_server().max_in_flight_requests(16).build().unwrap();
    let mut stdio = Stdio::connect(&service).await;
    for i in 0..16 {
        let hang = call(
            json!(format!("hang {i}")),
            json!({"name": "hang", "arguments": {}}),
        );
        stdio.send(hang.as_bytes()).await;
    }
    // The window is full: the next request is refused at once, not queued.
    stdio.send(&add_request(&json!("one too many"))).await;
    stdio
        .answers(
            "a full window",
            Expect::Error(-32000, Some(json!("one too many"))),
        )
        .await;
    // `ping` never waits for the window.
    stdio
        .send(br#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#)
        .await;
    assert_eq!(stdio.recv().await.unwrap()["id"], "ping");
    let mut flood = Vec::new();
    for i in 0..10_000 {
        let request_id = match i % 4 {
            0 => json!(i),
            1 => json!(format!("nobody {i}")),
            2 => json!(null),
            _ => json!({"nested": [i]}),
        };
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "flood"}});
        flood.extend_from_slice(cancel.to_string().as_bytes());
        flood.push(b'\n');
    }
    stdio.writer.write_all(&flood).await.unwrap();
    for i in 0..16 {
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": format!("hang {i}")}});
        stdio.send(cancel.to_string().as_bytes()).await;
    }
    // Cancelled requests are never answered, and their slots are free again.
    stdio.assert_serving("a flood of cancellations").await;
    for i in 0..16 {
        let id = json!(format!("again {i}"));
        stdio.send(&add_request(&id)).await;
    }
    for _ in 0..16 {
        let reply = stdio.recv().await.unwrap();
        assert!(
            reply["id"].as_str().unwrap().starts_with("again"),
            "{reply}"
        );
        assert_eq!(reply["result"]["content"][0]["text"], "5", "{reply}");
    }
}

#[tokio::test]
async fn handlers_that_never_return_time_out_over_stdio() {
    let service = table_server()
        .resource(forever)
        .handler_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let mut stdio = Stdio::connect(&service).await;
    stdio
        .send(call(json!(1), json!({"name": "hang", "arguments": {}})).as_bytes())
        .await;
    stdio
        .answers("a tool that never returns", Expect::ToolError("timed out"))
        .await;
    stdio.assert_serving("a tool that never returns").await;
    stdio
        .send(br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://forever"}}"#)
        .await;
    stdio
        .answers(
            "a resource that never loads",
            Expect::Error(-32603, Some(json!(2))),
        )
        .await;
    stdio.assert_serving("a resource that never loads").await;
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP: a server on 127.0.0.1, raw HTTP/1.1 requests.

type HttpBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

struct Http {
    addr: String,
    session: String,
}

impl Http {
    async fn connect(addr: String) -> Self {
        let mut http = Self {
            addr,
            session: String::new(),
        };
        let init = initialize_message(json!(0));
        let response = http.send(http.post(init.to_string())).await;
        assert_eq!(response.status(), StatusCode::OK);
        http.session = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let note = http.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(http.send(note).await.status(), StatusCode::ACCEPTED);
        http
    }

    /// A POST of `body` in this session, answered with JSON.
    fn post(&self, body: impl Into<Bytes>) -> Request<HttpBody> {
        self.post_with(Full::new(body.into()).boxed())
    }

    fn post_with(&self, body: HttpBody) -> Request<HttpBody> {
        let mut builder = Request::post("/mcp")
            .header("host", &self.addr)
            .header("content-type", "application/json")
            .header("accept", "application/json");
        if !self.session.is_empty() {
            builder = builder
                .header("mcp-session-id", &self.session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        builder.body(body).unwrap()
    }

    async fn send(&self, request: Request<HttpBody>) -> Response<Incoming> {
        let mut sender = connection(&self.addr).await;
        tokio::time::timeout(WAIT, sender.send_request(request))
            .await
            .expect("an answer within the wait")
            .unwrap()
    }

    /// POSTs `body`: the status, and the JSON body when there is one.
    async fn exchange(&self, body: impl Into<Bytes>) -> (StatusCode, Option<Value>) {
        read(self.send(self.post(body)).await).await
    }

    /// POSTs `body`, which must be answered with 200 and what `name` expects.
    async fn answers(&self, body: impl Into<Bytes>, name: &str, expect: Expect) {
        let (status, reply) = self.exchange(body).await;
        assert_eq!(status, StatusCode::OK, "{name}: {reply:?}");
        check(name, &expect, reply.as_ref());
    }

    /// Sends `request` on a connection of its own, from a task: its status and JSON body.
    fn spawn(&self, request: Request<HttpBody>) -> JoinHandle<(StatusCode, Option<Value>)> {
        let addr = self.addr.clone();
        tokio::spawn(async move {
            let mut sender = connection(&addr).await;
            read(sender.send_request(request).await.unwrap()).await
        })
    }

    async fn assert_serving(&self, after: &str) {
        let id = json!(format!("after {after}"));
        let (status, reply) = self.exchange(add_request(&id)).await;
        assert_eq!(status, StatusCode::OK, "after {after}");
        check_still_serving(after, &id, reply.as_ref());
    }
}

async fn read(response: Response<Incoming>) -> (StatusCode, Option<Value>) {
    let status = response.status();
    let bytes = tokio::time::timeout(WAIT, response.into_body().collect())
        .await
        .expect("the body within the wait")
        .unwrap()
        .to_bytes();
    let value = (!bytes.is_empty()).then(|| {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)))
    });
    (status, value)
}

#[tokio::test]
async fn every_table_row_over_http() {
    let http = Http::connect(start(table_server()).await).await;
    for row in rows() {
        let (status, reply) = http.exchange(row.input).await;
        assert_eq!(status, row.http_status, "{}: {reply:?}", row.name);
        check(row.name, &row.expect, reply.as_ref());
        http.assert_serving(row.name).await;
    }
}

#[tokio::test]
async fn requests_before_initialize_over_http() {
    let addr = start(table_server()).await;
    let mut http = Http {
        addr: addr.clone(),
        session: String::new(),
    };
    let (status, reply) = http.exchange(add_request(&json!(1))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert!(
        reply.unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
    // A notification named `initialize` opens nothing, and is answered at once.
    let (status, reply) = tokio::time::timeout(
        WAIT,
        http.exchange(br#"{"jsonrpc":"2.0","method":"initialize","params":{}}"#.to_vec()),
    )
    .await
    .expect("an answer, not a hang");
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply:?}");
    http.session = "0123456789abcdef0123456789abcdef".to_owned();
    let (status, _) = http.exchange(add_request(&json!(2))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    Http::connect(addr)
        .await
        .assert_serving("requests before initialize")
        .await;
}

#[tokio::test]
async fn duplicate_ids_in_flight_over_http() {
    let http = Http::connect(start(table_server()).await).await;
    let first = http.post(call(
        json!("dup"),
        json!({"name": "slow", "arguments": {"millis": 500}}),
    ));
    let first = http.spawn(first);
    tokio::time::sleep(Duration::from_millis(100)).await;
    http.answers(
        add_request(&json!("dup")),
        "duplicate id",
        Expect::Error(-32600, Some(json!("dup"))),
    )
    .await;
    let (status, reply) = first.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let reply = reply.unwrap();
    assert_eq!(reply["id"], "dup");
    assert_eq!(reply["result"]["content"][0]["text"], "done", "{reply}");
    http.assert_serving("duplicate ids").await;
}

/// A body of `chunks` MiB, made on the fly from one shared MiB.
struct Stream {
    chunk: Bytes,
    left: usize,
}

impl Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        self.left -= 1;
        Poll::Ready(Some(Ok(Frame::data(self.chunk.clone()))))
    }
}

#[tokio::test]
async fn a_100_mib_body_over_http_is_refused() {
    let addr = start(table_server()).await;
    let http = Http::connect(addr).await;
    let body = || Stream {
        chunk: Bytes::from(vec![b' '; MIB]),
        left: 100,
    };
    // Declared up front: refused before a byte of it is read.
    let mut declared = http.post_with(body().boxed());
    declared
        .headers_mut()
        .insert("content-length", (100 * MIB).to_string().parse().unwrap());
    let (status, reply) = read(http.send(declared).await).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    check(
        "100 MiB declared",
        &Expect::Error(-32600, None),
        reply.as_ref(),
    );
    http.assert_serving("a 100 MiB body with its length").await;
    // Chunked: refused as soon as what was read passes the limit.
    let (status, reply) = read(http.send(http.post_with(body().boxed())).await).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    check(
        "100 MiB chunked",
        &Expect::Error(-32600, None),
        reply.as_ref(),
    );
    http.assert_serving("a 100 MiB chunked body").await;
    // A body over axum's own 2 MB default but within ours is served.
    let padded = format!(
        r#"{{"jsonrpc":"2.0","id":"padded","method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},"_meta":{{"pad":"{}"}}}}}}"#,
        "x".repeat(3 * MIB)
    );
    let (status, reply) = http.exchange(padded).await;
    assert_eq!(status, StatusCode::OK);
    check_still_serving("a 3 MiB body", &json!("padded"), reply.as_ref());
}

/// A body sent as these chunks, one frame each (chunked transfer: no `Content-Length`).
struct Chunks(std::collections::VecDeque<Bytes>);

impl Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|chunk| Ok(Frame::data(chunk))))
    }
}

#[tokio::test]
async fn a_chunked_body_just_under_the_limit_is_served() {
    let addr = start(table_server()).await;
    let http = Http::connect(addr).await;
    // 16,145 bytes under the 16 MiB default, in 1 MiB chunks: once counted the first chunk twice
    // from the third chunk on, and got 413.
    let head = r#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"pad":""#;
    let tail = r#""}}}"#;
    let total = 16 * MIB - 16_145;
    let body = format!(
        "{head}{}{tail}",
        "x".repeat(total - head.len() - tail.len())
    );
    assert_eq!(body.len(), total);
    let body = Bytes::from(body);
    let chunks = (0..total)
        .step_by(MIB)
        .map(|start| body.slice(start..(start + MIB).min(total)))
        .collect();
    let (status, reply) = read(http.send(http.post_with(Chunks(chunks).boxed())).await).await;
    assert_eq!(status, StatusCode::OK);
    check_still_serving(
        "a chunked body under the limit",
        &json!("big"),
        reply.as_ref(),
    );
    http.assert_serving("a chunked body under the limit").await;
}

/// Malformed, repeated or opaque `Host`/`Origin` headers: refused with a status (never a panic
/// and a dropped connection), and the next normal call is still answered.
#[tokio::test]
async fn malformed_host_and_origin_headers_are_refused() {
    let addr = start(table_server()).await;
    let http = Http::connect(addr.clone()).await;
    /// A row's name, the headers it sends in place of the normal ones, and its status.
    type HeaderRow = (
        &'static str,
        &'static [(&'static str, &'static str)],
        StatusCode,
    );
    let rows: &[HeaderRow] = &[
        ("Host: [", &[("host", "[")], StatusCode::FORBIDDEN),
        ("Host: [::1", &[("host", "[::1")], StatusCode::FORBIDDEN),
        ("Host: [::1]x", &[("host", "[::1]x")], StatusCode::FORBIDDEN),
        ("Host: :", &[("host", ":")], StatusCode::FORBIDDEN),
        (
            "Origin: http://[",
            &[("origin", "http://[")],
            StatusCode::FORBIDDEN,
        ),
        ("Origin: null", &[("origin", "null")], StatusCode::FORBIDDEN),
        (
            "Origin: http://",
            &[("origin", "http://")],
            StatusCode::FORBIDDEN,
        ),
        (
            "two Host headers",
            &[("host", "127.0.0.1"), ("host", "evil.example.com")],
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (name, headers, expected) in rows {
        let id = json!(*name);
        let mut request = http.post(add_request(&id));
        for (header, _) in *headers {
            request.headers_mut().remove(*header);
        }
        for (header, value) in *headers {
            request
                .headers_mut()
                .append(*header, value.parse().unwrap());
        }
        let (status, _) = read(http.send(request).await).await;
        assert_eq!(status, *expected, "{name}");
        http.assert_serving(name).await;
    }
}

#[tokio::test]
async fn an_http_client_that_disconnects_mid_response_frees_its_slot() {
    let addr = start(table_server().tool(hang_counted).max_in_flight_requests(2)).await;
    let http = Http::connect(addr).await;
    // Cut off in the middle of a large answer.
    let big = http.post(call(
        json!("big"),
        json!({"name": "long_text", "arguments": {"bytes": 8 * MIB}}),
    ));
    let response = http.send(big).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let first = tokio::time::timeout(WAIT, body.frame()).await.unwrap();
    assert!(first.is_some());
    drop(body);
    http.assert_serving("a disconnect mid-body").await;
    // Hang up on requests still running, more of them than the window holds: their answers can
    // never be delivered, so they are cancelled and their slots freed.
    for i in 0..4 {
        let request = http.post(call(
            json!(i),
            json!({"name": "hang_counted", "arguments": {}}),
        ));
        let mut sender = connection(&http.addr).await;
        let pending = sender.send_request(request);
        assert!(
            tokio::time::timeout(Duration::from_millis(200), pending)
                .await
                .is_err(),
            "a hanging tool has no answer"
        );
        drop(sender);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    http.assert_serving("disconnects before the answer").await;
    // And their handlers were stopped.
    let deadline = tokio::time::Instant::now() + WAIT;
    while HANGING.load(std::sync::atomic::Ordering::SeqCst) > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the handlers run on"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_flood_of_cancellations_over_http_frees_the_window() {
    let addr = start(table_server().max_in_flight_requests(8)).await;
    let http = Http::connect(addr).await;
    // Hanging requests on SSE streams: a stream can be resumed, so they run on while open.
    let mut streams = Vec::new();
    for i in 0..8 {
        let mut request = http.post(call(
            json!(format!("hang {i}")),
            json!({"name": "hang", "arguments": {}}),
        ));
        request.headers_mut().insert(
            "accept",
            "application/json, text/event-stream".parse().unwrap(),
        );
        let response = http.send(request).await;
        assert_eq!(response.status(), StatusCode::OK);
        streams.push(response);
    }
    http.answers(
        add_request(&json!("one too many")),
        "a full window",
        Expect::Error(-32000, Some(json!("one too many"))),
    )
    .await;
    let (_, reply) = http
        .exchange(r#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#)
        .await;
    assert_eq!(reply.unwrap()["result"], json!({}));
    // One keep-alive connection, a thousand cancellations of nothing.
    let mut sender = connection(&http.addr).await;
    for i in 0..1_000 {
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": i, "reason": "flood"}});
        sender.ready().await.unwrap();
        let response =
            tokio::time::timeout(WAIT, sender.send_request(http.post(cancel.to_string())))
                .await
                .unwrap()
                .unwrap();
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }
    for i in 0..8 {
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": format!("hang {i}")}});
        assert_eq!(
            http.exchange(cancel.to_string()).await.0,
            StatusCode::ACCEPTED
        );
    }
    http.assert_serving("a flood of cancellations").await;
    // Every slot is free again.
    let calls: Vec<_> = (0..8)
        .map(|i| http.spawn(http.post(add_request(&json!(i)))))
        .collect();
    for call in calls {
        let (status, reply) = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(reply.unwrap()["result"]["content"][0]["text"], "5");
    }
    drop(streams);
}

#[tokio::test]
async fn handlers_that_never_return_time_out_over_http() {
    let addr = start(
        table_server()
            .resource(forever)
            .handler_timeout(Duration::from_millis(300)),
    )
    .await;
    let http = Http::connect(addr).await;
    http.answers(
        call(json!(1), json!({"name": "hang", "arguments": {}})),
        "a tool that never returns",
        Expect::ToolError("timed out"),
    )
    .await;
    http.assert_serving("a tool that never returns").await;
    http.answers(
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://forever"}}"#,
        "a resource that never loads",
        Expect::Error(-32603, Some(json!(2))),
    )
    .await;
    http.assert_serving("a resource that never loads").await;
}

#[tokio::test]
async fn client_text_is_echoed_to_a_bound() {
    use mcp_runtime::testing::Client;
    use mcp_runtime::{Skill, Skills};
    // Before: a 1 MB skill URI got a 2 MB reply (the URI in the message and in `data.uri`).
    let skills = Skills::new().skill(Skill::new(
        "demo",
        "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n",
    ));
    let server = Server::builder()
        .tool(add)
        .resource(static_text)
        .prompt(simple)
        .skills(skills);
    let client = Client::connect(server).await.unwrap();
    let long = "u".repeat(MIB);
    let cases = [
        ("skills/get", json!({"uri": format!("skill://{long}")})),
        ("resources/read", json!({"uri": format!("test://{long}")})),
        ("tools/call", json!({"name": long, "arguments": {}})),
        ("prompts/get", json!({"name": long})),
        (long.as_str(), json!({})),
        (
            "tools/call",
            json!({"name": "add", "arguments": {"a": long, "b": 1, long.clone(): 1}}),
        ),
    ];
    for (method, params) in cases {
        let reply = client.request_raw(method, params).await.unwrap();
        let size = reply.to_string().len();
        assert!(
            size < 8 * 1024,
            "{size} bytes in reply to {}",
            &method[..20.min(method.len())]
        );
        // The head of the text is still there to recognise it by.
        assert!(reply.to_string().contains("uuuuuuuu"), "{reply}");
    }
}
