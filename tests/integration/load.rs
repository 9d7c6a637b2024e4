//! Bounded load against the example binaries as child processes (so their memory can be read on
//! its own): pipelined `tools/call` over stdio and over Streamable HTTP with many connections.
//! Every request gets exactly one answer, the right one, and the server's resident memory after
//! the run is within a small margin of what it was after warm-up. Each run is bounded in count and
//! by a hard timeout; the counts are sized for debug builds on two shared cores.

use std::collections::HashSet;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::sync::Semaphore;

/// Requests over stdio, and how many may be unanswered at once.
const STDIO_CALLS: u64 = 200_000;
const STDIO_WINDOW: usize = 64;
/// Requests over HTTP, spread over this many keep-alive connections.
const HTTP_CALLS: u64 = 50_000;
const HTTP_CONNECTIONS: u64 = 32;
/// Answers counted before the memory baseline is taken.
const WARM_UP: u64 = 10_000;
/// The most a run may take, however slow the machine.
const HARD_LIMIT: Duration = Duration::from_secs(300);

/// The resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

/// Memory after the run may exceed the warmed-up baseline by 8 MiB or a quarter, whichever is
/// more: allocator noise, not growth per request (which would be hundreds of MiB here).
fn assert_flat(what: &str, warm: u64, end: u64) {
    let margin = (8 * 1024).max(warm / 4);
    assert!(
        end <= warm + margin,
        "{what}: RSS grew from {warm} KiB after warm-up to {end} KiB"
    );
}

fn spawn(name: &str, args: &[&str]) -> Child {
    Command::new(mcp_tests::example_binary(name))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the example")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_answers_every_pipelined_call_exactly_once_in_flat_memory() {
    let mut child = spawn("calculator", &[]);
    let pid = child.id().unwrap();
    let mut stdin = BufWriter::new(child.stdin.take().unwrap());
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "load", "version": "1"}}});
    stdin
        .write_all(
            format!(
                "{init}\n{}\n",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let reply: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(reply["id"], "init");

    let window = Arc::new(Semaphore::new(STDIO_WINDOW));
    let writer_window = Arc::clone(&window);
    let writer = tokio::spawn(async move {
        for i in 0..STDIO_CALLS {
            let slot = match writer_window.try_acquire() {
                Ok(slot) => slot,
                Err(_) => {
                    stdin.flush().await.unwrap();
                    writer_window.acquire().await.unwrap()
                }
            };
            slot.forget();
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{i},"b":1}}}}}}"#
            );
            stdin.write_all(line.as_bytes()).await.unwrap();
            stdin.write_all(b"\n").await.unwrap();
        }
        stdin.flush().await.unwrap();
        stdin
    });
    let run = async {
        let mut seen = vec![false; STDIO_CALLS as usize];
        let mut warm = 0;
        for answered in 0..STDIO_CALLS {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("an answer per request");
            let reply: Value = serde_json::from_str(&line).unwrap();
            let id = reply["id"].as_u64().unwrap_or_else(|| panic!("{reply}"));
            assert!(
                !std::mem::replace(&mut seen[id as usize], true),
                "{id} answered twice"
            );
            assert_eq!(
                reply["result"]["content"][0]["text"],
                (id + 1).to_string(),
                "{reply}"
            );
            window.add_permits(1);
            if answered + 1 == WARM_UP {
                warm = rss_kib(pid);
            }
        }
        assert!(seen.iter().all(|&s| s));
        warm
    };
    let started = Instant::now();
    let warm = tokio::time::timeout(HARD_LIMIT, run)
        .await
        .expect("the run ends within the hard limit");
    let end = rss_kib(pid);
    eprintln!(
        "stdio: {STDIO_CALLS} calls in {:?}; RSS {warm} KiB after warm-up, {end} KiB at the end",
        started.elapsed()
    );
    assert_flat("stdio", warm, end);
    // Nothing more was sent: the next thing on stdout is the end, once stdin closes.
    drop(writer.await.unwrap());
    let rest = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest, None);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}

async fn post(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    addr: &str,
    session: Option<&str>,
    body: String,
) -> (StatusCode, Option<String>, Bytes) {
    let mut builder = Request::post("/mcp")
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json");
    if let Some(session) = session {
        builder = builder
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    // A kept-alive connection takes the next request only once it has settled the last one.
    sender.ready().await.unwrap();
    let response = sender
        .send_request(builder.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, session, body)
}

async fn connect(addr: &str) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let stream = loop {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(stream) => break stream,
            Err(error) => {
                assert!(
                    Instant::now() < deadline,
                    "the server never listened: {error}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    mcp_tests::http::handshake(stream).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_answers_every_call_over_many_connections_exactly_once_in_flat_memory() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let child = spawn("everything", &["--port", &port.to_string()]);
    let pid = child.id().unwrap();
    let addr = format!("127.0.0.1:{port}");
    let mut sender = connect(&addr).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "load", "version": "1"}}});
    let (status, session, _) = post(&mut sender, &addr, None, init.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let session = session.expect("a session id");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = post(&mut sender, &addr, Some(&session), note.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let answered = Arc::new(Mutex::new(HashSet::new()));
    let warm = Arc::new(Mutex::new(None));
    let per_connection = HTTP_CALLS / HTTP_CONNECTIONS;
    let started = Instant::now();
    let clients = (0..HTTP_CONNECTIONS).map(|c| {
        let (addr, session) = (addr.clone(), session.clone());
        let (answered, warm) = (Arc::clone(&answered), Arc::clone(&warm));
        tokio::spawn(async move {
            let mut sender = connect(&addr).await;
            for n in 0..per_connection {
                let id = c * per_connection + n;
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "test_simple_text", "arguments": {}}});
                let (status, _, body) =
                    post(&mut sender, &addr, Some(&session), call.to_string()).await;
                assert_eq!(status, StatusCode::OK);
                let reply: Value = serde_json::from_slice(&body).unwrap();
                assert_eq!(reply["id"], id, "{reply}");
                assert!(reply["result"]["content"][0]["text"].is_string(), "{reply}");
                let mut answered = answered.lock().unwrap();
                assert!(answered.insert(id), "{id} answered twice");
                if answered.len() as u64 == WARM_UP {
                    *warm.lock().unwrap() = Some(rss_kib(pid));
                }
            }
        })
    });
    let clients: Vec<_> = clients.collect();
    let run = async {
        for client in clients {
            client.await.unwrap();
        }
    };
    tokio::time::timeout(HARD_LIMIT, run)
        .await
        .expect("the run ends within the hard limit");
    let end = rss_kib(pid);
    let warm = warm.lock().unwrap().expect("a warm-up measure");
    eprintln!(
        "http: {HTTP_CALLS} calls on {HTTP_CONNECTIONS} connections in {:?}; RSS {warm} KiB after warm-up, {end} KiB at the end",
        started.elapsed()
    );
    assert_eq!(
        answered.lock().unwrap().len() as u64,
        per_connection * HTTP_CONNECTIONS
    );
    assert_flat("http", warm, end);
    drop(child);
}
