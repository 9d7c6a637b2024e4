//! Fair shares over real sockets: an attacker on 127.0.0.2 holds what one client may of each
//! bound the server's clients share, and a victim on 127.0.0.3 (a distinct peer) is served
//! meanwhile. Each test is one lock-out of issue 26, small enough to run in a second or two;
//! `scripts/hostile.sh` runs them at full scale against the release `everything` example.

use std::time::Duration;

use hyper::StatusCode;
use mcp_runtime::Server;
use mcp_tests::http::{
    WAIT, body_json, connect_from, initialize_from, post, send_from, stateless_post,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::fixtures::*;

const ATTACKER: &str = "127.0.0.2";
const VICTIM: &str = "127.0.0.3";

/// A server on a free loopback port, reachable from every 127.0.0.0/8 address.
async fn start(server: Server) -> String {
    mcp_tests::http::start(server).await
}

/// A call of `add` in `session`, from `from`: its HTTP status and body.
async fn add_from(addr: &str, from: &str, session: &str) -> (StatusCode, Value) {
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let response = send_from(addr, from, post(addr, Some(session), call)).await;
    let status = response.status();
    (status, body_json(response).await)
}

/// A `ping` in `session` from `from`: its status.
async fn ping_from(addr: &str, from: &str, session: &str) -> StatusCode {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    send_from(addr, from, post(addr, Some(session), ping))
        .await
        .status()
}

/// The victim gets a session, and `ping` and `tools/call` are answered in it.
async fn victim_is_served(addr: &str) {
    let session = initialize_from(addr, VICTIM).await;
    assert_eq!(ping_from(addr, VICTIM, &session).await, StatusCode::OK);
    let (status, reply) = add_from(addr, VICTIM, &session).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["result"]["content"][0]["text"], "5", "{reply}");
}

/// Request headers declaring a body of `length` bytes that is never sent.
fn declared(addr: &str, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    )
}

#[tokio::test]
async fn a_declared_body_that_never_arrives_holds_nothing() {
    // Before: the declared lengths (16 MiB and just under 1 MiB: with 4 KiB each for their
    // tasks, exactly the 17 MiB request total) were charged before a byte arrived, and every
    // other POST got 503 for as long as they were held.
    let addr = start(Server::builder().tool(add)).await;
    let mut held = Vec::new();
    for length in [16 << 20, (1 << 20) - (8 << 10)] {
        let mut stream = connect_from(&addr, ATTACKER).await;
        stream
            .write_all(declared(&addr, length).as_bytes())
            .await
            .unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    victim_is_served(&addr).await;
    // The attacker's own next request is served too: what it declared holds nothing.
    let session = initialize_from(&addr, ATTACKER).await;
    assert_eq!(add_from(&addr, ATTACKER, &session).await.0, StatusCode::OK);
    drop(held);
}

/// A `slow` call that does not end for a minute, with `pad` bytes in its `_meta`, sent on its
/// own connection from `from`: its status (200 once it runs: its answer turned into an SSE
/// stream; else the refusal), and what to cancel it by, which holds its stream open (a stream
/// its client leaves is given up after `stream_resume_grace`, and its call with it).
async fn hung_call(addr: &str, from: &str, session: &str, pad: usize) -> (StatusCode, Hung) {
    static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "slow", "arguments": {"millis": 60_000}}});
    if pad > 0 {
        call["params"]["_meta"] = json!({"pad": "x".repeat(pad)});
    }
    let response = send_from(addr, from, post(addr, Some(session), call)).await;
    let status = response.status();
    if status == StatusCode::OK {
        assert_eq!(response.headers()["content-type"], "text/event-stream");
    }
    let hung = Hung {
        from: from.to_owned(),
        session: session.to_owned(),
        id,
        _stream: response,
    };
    (status, hung)
}

/// A call left running: its client, session and id, and its answer's stream, unread.
struct Hung {
    from: String,
    session: String,
    id: u64,
    _stream: hyper::Response<hyper::body::Incoming>,
}

impl Hung {
    /// Cancels it (`notifications/cancelled`), which ends it and gives back what it held.
    async fn cancel(&self, addr: &str) {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": self.id}});
        let response = send_from(addr, &self.from, post(addr, Some(&self.session), note)).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }
}

#[tokio::test]
async fn hung_calls_hold_one_clients_share_and_ping_and_initialize_always_get_through() {
    // A 16 MiB request budget with 1 MiB messages: one client may hold 4 MiB of it (a quarter;
    // at least a message's text, its string and that string's copy: 3 MiB and a little).
    let addr = start(
        Server::builder()
            .tool(add)
            .tool(slow)
            .request_bytes_total(16 << 20)
            .max_message_size(1 << 20),
    )
    .await;
    let attacker = initialize_from(&addr, ATTACKER).await;
    let mut hung = Vec::new();
    let mut refused = None;
    for _ in 0..10 {
        let (status, call) = hung_call(&addr, ATTACKER, &attacker, 1_000_000).await;
        if status != StatusCode::OK {
            refused = Some(status);
            break;
        }
        hung.push(call);
    }
    // Before: 17 of them took the whole budget, and everyone got 503.
    assert_eq!(refused, Some(StatusCode::SERVICE_UNAVAILABLE));
    assert!((3..=4).contains(&hung.len()), "{} hung calls", hung.len());
    victim_is_served(&addr).await;

    // Five more attackers at their shares fill the whole budget, with ever smaller calls until
    // not even one without padding fits (a call no larger than the victim's): now nothing that
    // runs fits, but `ping` and a fresh `initialize` still do, on the reserve.
    let fillers = [
        "127.0.0.4",
        "127.0.0.5",
        "127.0.0.6",
        "127.0.0.8",
        "127.0.0.9",
    ];
    let mut sessions = Vec::new();
    for from in fillers {
        sessions.push(initialize_from(&addr, from).await);
    }
    for pad in [1_000_000, 100_000, 10_000, 0] {
        for (from, session) in fillers.iter().zip(&sessions) {
            for _ in 0..20 {
                let (status, call) = hung_call(&addr, from, session, pad).await;
                if status != StatusCode::OK {
                    break;
                }
                hung.push(call);
            }
        }
    }
    let victim = initialize_from(&addr, VICTIM).await;
    assert_eq!(ping_from(&addr, VICTIM, &victim).await, StatusCode::OK);
    let (status, reply) = add_from(&addr, VICTIM, &victim).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
    // The attackers cancel their calls: the room comes back.
    for call in &hung {
        call.cancel(&addr).await;
    }
    assert_eq!(add_from(&addr, VICTIM, &victim).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_body_too_costly_once_parsed_is_refused_before_it_is_built() {
    let addr = start(Server::builder().tool(add)).await;
    let session = initialize_from(&addr, VICTIM).await;
    // 16 MiB of text that would be about 1.5 GB of values: refused unparsed, 413.
    let mut body = String::from(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"x":["#,
    );
    while body.len() < (16 << 20) - 64 {
        body.push_str("[0],");
    }
    body.push_str("[0]]}}}");
    let mut request = post(&addr, Some(&session), Value::Null);
    *request.body_mut() = body;
    let response = send_from(&addr, VICTIM, request).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let reply = body_json(response).await;
    assert_eq!(reply["error"]["code"], -32600);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("once parsed")
            || reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("parsing it builds"),
        "{reply}"
    );
    // The same bytes as one string are served: its parse is its length.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 1, "b": 2},
                                 "_meta": {"x": "0".repeat((16 << 20) - 256)}}});
    let response = send_from(&addr, VICTIM, post(&addr, Some(&session), call)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "3"
    );
}

/// A stateless `subscriptions/listen` stream opened from `from` and never read: the socket,
/// and the response's status.
async fn unread_listen(addr: &str, from: &str, id: u32) -> (tokio::net::TcpStream, u16) {
    let params = json!({
        "notifications": {"toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}});
    let request = stateless_post(addr, id, "subscriptions/listen", params);
    let body = request.body().clone();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (name, value) in request.headers() {
        if name != "host" {
            head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
        }
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let mut stream = connect_from(addr, from).await;
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut status = [0u8; 12];
    let read = tokio::time::timeout(WAIT, stream.read_exact(&mut status)).await;
    let code = match read {
        Ok(Ok(_)) => std::str::from_utf8(&status[9..12])
            .unwrap()
            .parse()
            .unwrap(),
        _ => 0,
    };
    (stream, code)
}

#[tokio::test]
async fn unread_streams_take_one_clients_share_of_connections() {
    // Eight connections in all: two for each client. Before: the attacker's streams took every
    // connection, and everyone else was refused until one closed.
    let addr = start(Server::builder().tool(add).max_connections(8)).await;
    let mut streams = Vec::new();
    for id in 0..2 {
        let (stream, status) = unread_listen(&addr, ATTACKER, id).await;
        assert_eq!(status, 200);
        streams.push(stream);
    }
    // A third connection of the attacker's is refused at once.
    let (_third, status) = unread_listen(&addr, ATTACKER, 2).await;
    assert_eq!(status, 503);
    victim_is_served(&addr).await;
    drop(streams);
}

#[tokio::test]
async fn one_client_holds_at_most_its_share_of_sessions_and_a_newcomer_always_gets_one() {
    // Eight sessions in all: two for each client. Before: one peer's 10,000 sessions left every
    // new client 503.
    let addr = start(Server::builder().tool(add).max_sessions(8)).await;
    let first = initialize_from(&addr, ATTACKER).await;
    initialize_from(&addr, ATTACKER).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "third", "version": "1"}}});
    let refused = send_from(&addr, ATTACKER, post(&addr, None, init.clone())).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key("retry-after"));
    victim_is_served(&addr).await;
    // Three more clients take their shares: eight sessions, the server is full.
    for from in ["127.0.0.4", "127.0.0.5", "127.0.0.6"] {
        initialize_from(&addr, from).await;
    }
    initialize_from(&addr, "127.0.0.4").await;
    initialize_from(&addr, "127.0.0.5").await;
    // A newcomer still gets one: the longest idle session of a client holding more (two)
    // than it does ends, and that session's next request is 404.
    initialize_from(&addr, "127.0.0.7").await;
    assert_eq!(
        ping_from(&addr, ATTACKER, &first).await,
        StatusCode::NOT_FOUND,
        "the attacker's first session was the longest idle"
    );
    // A client that would then hold as many as the most any holds finds no one to take from.
    let full = send_from(&addr, "127.0.0.6", post(&addr, None, init)).await;
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn subscriptions_past_a_clients_share_are_refused_and_others_still_subscribe() {
    // 64 KiB of subscription URIs in all; a quarter (16 KiB) for each client.
    let addr = start(
        Server::builder()
            .resource(static_text)
            .subscription_bytes_total(64 << 10),
    )
    .await;
    let subscribe = |session: &str, n: usize| {
        let uri = format!("test://{n}/{}", "u".repeat(7_000));
        post(
            &addr,
            Some(session),
            json!({"jsonrpc": "2.0", "id": n, "method": "resources/subscribe",
                   "params": {"uri": uri}}),
        )
    };
    let attacker = initialize_from(&addr, ATTACKER).await;
    for n in 0..2 {
        let reply = body_json(send_from(&addr, ATTACKER, subscribe(&attacker, n)).await).await;
        assert!(reply.get("result").is_some(), "{reply}");
    }
    // Its own second session counts toward the same share.
    let another = initialize_from(&addr, ATTACKER).await;
    let reply = body_json(send_from(&addr, ATTACKER, subscribe(&another, 2)).await).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let victim = initialize_from(&addr, VICTIM).await;
    let reply = body_json(send_from(&addr, VICTIM, subscribe(&victim, 3)).await).await;
    assert!(reply.get("result").is_some(), "{reply}");
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_client_is_the_client() {
    let addr = start(
        Server::builder()
            .tool(add)
            .max_sessions(8)
            .trusted_proxies(["127.0.0.2"]),
    )
    .await;
    let init = |forwarded: &str| {
        let mut request = post(
            &addr,
            None,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "proxied", "version": "1"}}}),
        );
        request
            .headers_mut()
            .insert("x-forwarded-for", forwarded.parse().unwrap());
        request
    };
    // Through the proxy, 203.0.113.1 holds its two sessions; 203.0.113.2 is someone else.
    for _ in 0..2 {
        let served = send_from(&addr, ATTACKER, init("203.0.113.1")).await;
        assert_eq!(served.status(), StatusCode::OK);
    }
    let refused = send_from(&addr, ATTACKER, init("198.51.100.7, 203.0.113.1")).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let other = send_from(&addr, ATTACKER, init("203.0.113.2")).await;
    assert_eq!(other.status(), StatusCode::OK);
    // From anyone else the header is ignored: 127.0.0.3 is its own client, whatever it claims.
    for _ in 0..2 {
        let served = send_from(&addr, VICTIM, init("203.0.113.2")).await;
        assert_eq!(served.status(), StatusCode::OK);
    }
    let refused = send_from(&addr, VICTIM, init("203.0.113.9")).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn a_trusted_proxy_that_is_not_an_address_fails_the_build() {
    let error = Server::builder()
        .tool(add)
        .trusted_proxies(["10.0.0.0/8", "proxy.internal"])
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("proxy.internal"), "{error}");
}
