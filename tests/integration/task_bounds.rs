//! Tasks held to their owners' shares (issue 26) and what the field found in them (issue 27):
//! one client filling its share of live tasks leaves room for the others, over stdio and HTTP,
//! by session and by address; ending a session frees what it held; results are bounded per task,
//! per owner and in all; `tasks/list` comes in bounded pages; end of input stops running tasks
//! within the grace period and says so; a completed task inlines a 2026-07-28 result
//! (`resultType`); a 2025-11-25 client's `task.ttl` is honoured; the last progress message
//! stays; a task-only tool called without `task` says what to do.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::Request;
use mcp_runtime::Server;
use mcp_runtime::prelude::*;
use mcp_runtime::tasks::{MemoryTaskStore, TaskStore};
use mcp_runtime::testing::{Client, ClientError};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

use mcp_tests::http::{WAIT, initialize, post, response_from, response_of, start, stateless_post};

const EXTENSION: &str = "io.modelcontextprotocol/tasks";
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// Done at once, but only ever as a task.
#[tool(task = "required")]
async fn instant(n: u64) -> String {
    format!("job {n} done")
}

/// Sleeps `millis` ms.
#[tool(task = "optional")]
async fn snooze(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Returns `kib` KiB of text.
#[tool(task = "required")]
async fn bulky(kib: usize) -> String {
    "x".repeat(kib * 1024)
}

/// Reports three steps of progress and ends right after the last.
#[tool(task = "optional")]
async fn three_steps(ctx: Context) -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    for step in 1..=3 {
        ctx.progress(f64::from(step), 3.0, format!("step {step} of 3"))
            .await;
    }
    "three steps done".to_owned()
}

fn server() -> Server {
    Server::builder()
        .tool(instant)
        .tool(snooze)
        .tool(bulky)
        .tool(three_steps)
}

fn caps() -> Value {
    json!({"extensions": {EXTENSION: {}}})
}

fn stateless_client() -> mcp_runtime::testing::ClientBuilder {
    Client::builder().stateless().capabilities(caps())
}

fn handshake_client() -> mcp_runtime::testing::ClientBuilder {
    Client::builder().protocol_version("2025-11-25")
}

async fn call(client: &Client, name: &str, arguments: Value) -> Result<Value, ClientError> {
    client
        .request("tools/call", json!({"name": name, "arguments": arguments}))
        .await
}

/// A 2025-11-25 `tools/call` as a task, asking for `ttl` ms when given.
async fn task_call(
    client: &Client,
    name: &str,
    arguments: Value,
    ttl: Option<u64>,
) -> Result<Value, ClientError> {
    let task = ttl.map_or_else(|| json!({}), |ttl| json!({ "ttl": ttl }));
    client
        .request(
            "tools/call",
            json!({"name": name, "arguments": arguments, "task": task}),
        )
        .await
}

fn message(error: ClientError) -> (i64, String) {
    let error = error.rpc().expect("a JSON-RPC error");
    (error.code, error.message.to_string())
}

/// Waits (boundedly) for `check` to hold.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !check() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `tasks/get` (2026-07-28) until the task ended.
async fn ended(client: &Client, id: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let task = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap()) {
            return task;
        }
        assert!(Instant::now() < deadline, "task {id} never ended: {task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// Fair shares of the live tasks (issue 26).

#[tokio::test]
async fn stdio_one_client_fills_its_share_of_live_tasks_and_the_others_are_served() {
    // 10,000 in all: 1,000 a client.
    let store = Arc::new(MemoryTaskStore::new(10_000));
    let on_store = || server().task_store(Arc::clone(&store) as Arc<dyn TaskStore>);
    let attacker = Arc::new(stateless_client().connect(on_store()).await.unwrap());
    let mut created = 0;
    let refusal = 'fill: loop {
        // 100 at a time, in flight together; instantly finished tasks, as in the issue.
        let mut calls = tokio::task::JoinSet::new();
        for n in created..created + 100 {
            let attacker = Arc::clone(&attacker);
            calls.spawn(async move { call(&attacker, "instant", json!({"n": n})).await });
        }
        let mut refused = None;
        while let Some(answer) = calls.join_next().await {
            match answer.unwrap() {
                Ok(task) => {
                    assert_eq!(task["status"], "completed");
                    created += 1;
                }
                Err(error) => refused = Some(message(error)),
            }
        }
        if let Some(refusal) = refused {
            break 'fill refusal;
        }
        assert!(created <= 10_000, "never refused");
    };
    assert_eq!(created, 1_000, "one client holds its share, no more");
    assert_eq!(refusal.0, -32603);
    assert!(
        refusal.1.contains("too many live tasks of yours"),
        "{}",
        refusal.1
    );
    // Other clients of both eras are served while the attacker holds its share.
    let victim = stateless_client().connect(on_store()).await.unwrap();
    let task = call(&victim, "instant", json!({"n": 1})).await.unwrap();
    assert_eq!(task["status"], "completed");
    let handshake = handshake_client().connect(on_store()).await.unwrap();
    let task = task_call(&handshake, "instant", json!({"n": 2}), None)
        .await
        .unwrap();
    assert_eq!(task["task"]["status"], "completed");
    assert_eq!(store.len(), 1_002);
    // The attacker's connection ends: its tasks go with it; the others' stay.
    drop(attacker);
    eventually("the attacker's tasks are released", || store.len() == 2).await;
}

#[tokio::test]
async fn stdio_tasks_are_reclaimed_after_their_ttl() {
    let store = Arc::new(MemoryTaskStore::new(100));
    let server = server()
        .task_store(Arc::clone(&store) as Arc<dyn TaskStore>)
        .task_ttl(Duration::from_secs(1));
    let client = stateless_client().connect(server).await.unwrap();
    let mut first = None;
    for n in 0..10 {
        let created = call(&client, "instant", json!({"n": n})).await.unwrap();
        assert_eq!(created["ttlMs"], 1000);
        first.get_or_insert_with(|| created["taskId"].as_str().unwrap().to_owned());
    }
    let created_all = Instant::now();
    let first = first.unwrap();
    let kept = client
        .request("tasks/get", json!({"taskId": first}))
        .await
        .unwrap();
    assert_eq!(kept["result"]["content"][0]["text"], "job 0 done");
    assert!(
        created_all.elapsed() < Duration::from_millis(900),
        "the check ran before the TTL"
    );
    tokio::time::sleep_until((created_all + Duration::from_millis(1600)).into()).await;
    let gone = client
        .request("tasks/get", json!({"taskId": first}))
        .await
        .unwrap_err();
    assert_eq!(message(gone).0, -32602);
    assert_eq!(store.len(), 0, "every expired task is reclaimed");
    assert_eq!(store.result_bytes(), 0);
}

/// A 2026-07-28 stateless POST with this suite's capabilities (the tasks extension).
fn stateless(addr: &str, method: &str, mut params: Value) -> Request<String> {
    params["_meta"] = json!({VERSION_KEY: "2026-07-28", CAPS_KEY: caps()});
    stateless_post(addr, 1, method, params)
}

#[tokio::test]
async fn http_a_stateless_client_fills_its_share_by_address_and_another_address_is_served() {
    // 100 in all, 10 an owner: the attacker's address holds 10.
    let addr = start(server().max_live_tasks(100)).await;
    let instant = |n: u64| json!({"name": "instant", "arguments": {"n": n}});
    let mut refusal = None;
    for n in 0..100 {
        let answer = response_from(
            &addr,
            "127.0.0.2",
            stateless(&addr, "tools/call", instant(n)),
        )
        .await;
        if let Some(error) = answer.get("error") {
            refusal = Some((n, error.clone()));
            break;
        }
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
    }
    let (n, error) = refusal.expect("the attacker is refused past its share");
    assert_eq!(n, 10, "{error}");
    assert_eq!(error["code"], -32603);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("too many live tasks of yours")
    );
    let served = response_from(
        &addr,
        "127.0.0.3",
        stateless(&addr, "tools/call", instant(1)),
    )
    .await;
    assert_eq!(served["result"]["status"], "completed", "{served}");
    let id = served["result"]["taskId"].as_str().unwrap();
    // A task belongs to the address that created it.
    let theirs = response_from(
        &addr,
        "127.0.0.2",
        stateless(&addr, "tasks/get", json!({"taskId": id})),
    )
    .await;
    assert_eq!(theirs["error"]["code"], -32602);
    let mine = response_from(
        &addr,
        "127.0.0.3",
        stateless(&addr, "tasks/get", json!({"taskId": id})),
    )
    .await;
    assert_eq!(mine["result"]["status"], "completed");
}

#[tokio::test]
async fn http_deleting_a_session_frees_its_tasks() {
    // One session may take every slot here, so that only its end can make room.
    let addr = start(server().max_live_tasks(20).max_live_tasks_per_owner(20)).await;
    let rpc = |id: u32, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let call = |n: u32| {
        rpc(
            n,
            "tools/call",
            json!({"name": "snooze", "arguments": {"millis": 600_000}, "task": {}}),
        )
    };
    let attacker = initialize(&addr).await;
    let mut running = Vec::new();
    for n in 0..20 {
        let created = response_of(&addr, post(&addr, Some(&attacker), call(n))).await;
        running.push(
            created["result"]["task"]["taskId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let victim = initialize(&addr).await;
    let refused = response_of(&addr, post(&addr, Some(&victim), call(0))).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many live tasks"),
        "{refused}"
    );
    let mut delete = post(&addr, Some(&attacker), json!({}));
    *delete.method_mut() = hyper::Method::DELETE;
    *delete.body_mut() = String::new();
    let response = mcp_tests::http::send(&addr, delete).await;
    assert_eq!(response.status(), hyper::StatusCode::OK);
    let served = response_of(&addr, post(&addr, Some(&victim), call(1))).await;
    assert_eq!(served["result"]["task"]["status"], "working", "{served}");
}

// Bounded results and pages (issue 26).

#[tokio::test]
async fn stdio_results_are_bounded_per_task_and_per_owner() {
    let server = server()
        .max_task_result(64 * 1024)
        .task_results_total(1 << 20, Some(200 * 1024));
    let client = stateless_client().connect(server).await.unwrap();
    let big = call(&client, "bulky", json!({"kib": 100})).await.unwrap();
    assert_eq!(big["status"], "failed");
    let error = &big_error(&client, &big).await;
    assert_eq!(error["code"], -32603);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("over the server's bound of 65536 bytes a task"),
        "{error}"
    );
    // 50 KiB each: three fit in the client's 200 KiB, the fourth does not.
    for _ in 0..3 {
        let fits = call(&client, "bulky", json!({"kib": 50})).await.unwrap();
        assert_eq!(fits["status"], "completed");
    }
    let full = call(&client, "bulky", json!({"kib": 50})).await.unwrap();
    assert_eq!(full["status"], "failed");
    let error = big_error(&client, &full).await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("each client may hold"),
        "{error}"
    );
    // Another client has its own share.
    let other = stateless_client()
        .connect(
            Server::builder()
                .tool(bulky)
                .max_task_result(64 * 1024)
                .task_results_total(1 << 20, Some(200 * 1024)),
        )
        .await
        .unwrap();
    let fits = call(&other, "bulky", json!({"kib": 50})).await.unwrap();
    assert_eq!(fits["status"], "completed");
}

async fn big_error(client: &Client, created: &Value) -> Value {
    let id = created["taskId"].as_str().unwrap();
    ended(client, id).await["error"].clone()
}

#[tokio::test]
async fn handshake_tasks_list_comes_in_pages_of_at_most_100() {
    let client = handshake_client().connect(server()).await.unwrap();
    let mut ids = Vec::new();
    for n in 0..250 {
        let created = task_call(&client, "instant", json!({"n": n}), None)
            .await
            .unwrap();
        ids.push(created["task"]["taskId"].as_str().unwrap().to_owned());
    }
    let mut listed = Vec::new();
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let page = client.request("tasks/list", params).await.unwrap();
        let tasks = page["tasks"].as_array().unwrap();
        pages.push(tasks.len());
        listed.extend(
            tasks
                .iter()
                .map(|t| t["taskId"].as_str().unwrap().to_owned()),
        );
        match page.get("nextCursor") {
            Some(Value::String(next)) => cursor = Some(next.clone()),
            _ => break,
        }
        assert!(pages.len() <= 3, "pages: {pages:?}");
    }
    assert_eq!(pages, [100, 100, 50]);
    let mut sorted = ids.clone();
    sorted.sort();
    listed.sort();
    assert!(listed == sorted, "every task once, and no other");
    let bad = client
        .request("tasks/list", json!({"cursor": "not a cursor"}))
        .await
        .unwrap_err();
    assert_eq!(message(bad).0, -32602);
}

// End of input with tasks running (issue 26 and 27).

/// The `everything` example as a child process with its default log filter (no `RUST_LOG`),
/// `stdio()` for its stdin and stdout and its stderr piped.
fn everything(args: &[&str], stdio: fn() -> Stdio) -> Child {
    tokio::process::Command::new(mcp_tests::example_binary("everything"))
        .args(args)
        .stdin(stdio())
        .stdout(stdio())
        .stderr(Stdio::piped())
        .env_remove("RUST_LOG")
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// Everything `child` wrote to stderr (once it has exited).
async fn logs(child: &mut Child) -> String {
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .await
        .unwrap();
    logs
}

/// The next line of a child's stdout, `what` it must be, within [`WAIT`].
async fn next_line(stdout: &mut Lines<BufReader<ChildStdout>>, what: &str) -> String {
    tokio::time::timeout(WAIT, stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap_or_else(|| panic!("{what}: the output ended"))
}

/// A 2025-11-25 `initialize` on stdio.
fn initialize_message() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "eof", "version": "0"}}})
}

/// How a 3600 s `slow_compute` runs when stdin ends.
#[derive(Clone, Copy, PartialEq)]
enum Running {
    /// A 2025-11-25 task (`params.task`).
    HandshakeTask,
    /// A 2026-07-28 task (the extension declared).
    StatelessTask,
    /// A plain 2025-11-25 call, no task.
    Request,
}

/// The `everything` example on real stdio; end of input while a 3600 s call runs: the process
/// exits within its 5 s grace period, and says on stderr what it stopped.
async fn eof_with_a_task_running(running: Running) {
    let handshake = running != Running::StatelessTask;
    let mut child = everything(&[], Stdio::piped);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    let arguments = json!({"seconds": 3600});
    if handshake {
        send(initialize_message()).await;
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        let mut params = json!({"name": "slow_compute", "arguments": arguments});
        if running == Running::HandshakeTask {
            params["task"] = json!({});
        } else {
            // Its progress shows that it runs.
            params["_meta"] = json!({"progressToken": "p"});
        }
        send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})).await;
    } else {
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "slow_compute", "arguments": arguments,
            "_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: caps()}}}),
        )
        .await;
    }
    let id = if running == Running::Request {
        loop {
            let line = next_line(&mut stdout, "a message").await;
            if line.contains("notifications/progress") || line.contains("\"id\":1") {
                break "tools/call (id 1)".to_owned();
            }
        }
    } else {
        loop {
            let line = next_line(&mut stdout, "a reply").await;
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == 1 {
                let task = if handshake {
                    &reply["result"]["task"]
                } else {
                    &reply["result"]
                };
                assert_eq!(task["status"], "working", "{reply}");
                break task["taskId"].as_str().unwrap().to_owned();
            }
        }
    };
    drop(stdin);
    let closed = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(9), child.wait())
        .await
        .expect("the process exits within its 5 s grace (and a margin) after end of input")
        .unwrap();
    let took = closed.elapsed();
    assert!(status.success(), "{status}");
    assert!(
        took >= Duration::from_secs(4),
        "the task had its grace period: {took:?}"
    );
    let logs = logs(&mut child).await;
    let said = if running == Running::Request {
        "1 request(s) and 0 task(s) still running after the 5.0 s grace period were stopped"
    } else {
        "0 request(s) and 1 task(s) still running after the 5.0 s grace period were stopped"
    };
    assert!(
        logs.contains(said) && logs.contains(&id),
        "what was abandoned is said: {logs}"
    );
}

#[tokio::test]
async fn stdio_end_of_input_stops_a_running_2025_11_25_task_within_the_grace() {
    eof_with_a_task_running(Running::HandshakeTask).await;
}

#[tokio::test]
async fn stdio_end_of_input_stops_a_running_2026_07_28_task_within_the_grace() {
    eof_with_a_task_running(Running::StatelessTask).await;
}

/// End of input with nothing running (a task that already ended): the process exits at once,
/// without waiting out the grace period, and says nothing was stopped.
#[tokio::test]
async fn stdio_end_of_input_with_nothing_running_exits_at_once() {
    let mut child = everything(&[], Stdio::piped);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    for message in [
        initialize_message(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "slow_compute", "arguments": {"seconds": 0.1}, "task": {}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {}}),
    ] {
        let mut message = message;
        if message["id"] == 2 {
            // `tasks/result` for the task id 1 created, once it is known.
            let id = loop {
                let line = next_line(&mut stdout, "a reply").await;
                let reply: Value = serde_json::from_str(&line).unwrap();
                if reply["id"] == 1 {
                    break reply["result"]["task"]["taskId"].clone();
                }
            };
            message["params"]["taskId"] = id;
        }
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    loop {
        let line = next_line(&mut stdout, "the task's result").await;
        if serde_json::from_str::<Value>(&line).unwrap()["id"] == 2 {
            break;
        }
    }
    drop(stdin);
    let closed = Instant::now();
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    assert!(
        closed.elapsed() < Duration::from_secs(2),
        "nothing ran, so nothing was waited for: {:?}",
        closed.elapsed()
    );
    let logs = logs(&mut child).await;
    assert!(!logs.contains("still running"), "{logs}");
}

#[tokio::test]
async fn stdio_end_of_input_stops_a_running_request_within_the_grace_and_says_so() {
    eof_with_a_task_running(Running::Request).await;
}

/// `serve_http` on SIGTERM with a request in flight: the log says shutdown started, what it
/// waits for, and when it is done (the example's default log filter, no `RUST_LOG`).
#[cfg(unix)]
#[tokio::test]
async fn sigterm_logs_that_shutdown_started_what_it_waits_for_and_when_it_is_done() {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut child = everything(&["--port", &port.to_string()], Stdio::null);
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + WAIT;
    while tokio::net::TcpStream::connect(&addr).await.is_err() {
        assert!(Instant::now() < deadline, "the example never listened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A call that takes a second is in flight when the signal comes.
    let session = initialize(&addr).await;
    let slow = post(
        &addr,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "slow_compute", "arguments": {"seconds": 1}}}),
    );
    let call = tokio::spawn({
        let addr = addr.clone();
        async move { response_of(&addr, slow).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let answer = call.await.unwrap();
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("computed for 1 s"),
        "the call in flight finished: {answer}"
    );
    let status = tokio::time::timeout(Duration::from_secs(9), child.wait())
        .await
        .expect("exits within the grace")
        .unwrap();
    assert!(status.success(), "{status}");
    let logs = logs(&mut child).await;
    for said in [
        "SIGTERM received: shutting down",
        "HTTP shutdown: no new connections; waiting up to 5s for the",
        "HTTP shutdown: done in",
    ] {
        assert!(logs.contains(said), "{said:?} not in: {logs}");
    }
}

// What the field found (issue 27).

#[tokio::test]
async fn a_completed_task_inlines_a_2026_07_28_result_everywhere_it_is_replayed() {
    // tasks/get over stdio.
    let client = stateless_client().connect(server()).await.unwrap();
    let created = call(&client, "snooze", json!({"millis": 50}))
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();
    let done = ended(&client, &id).await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "slept 50 ms");

    // notifications/tasks on a listen.
    let created = call(&client, "snooze", json!({"millis": 100}))
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();
    let listen = json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
        "params": {"_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: caps()},
                   "notifications": {"taskIds": [id]}}});
    client
        .send_line_and_receive(listen.to_string())
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        let message = client.next_message().await.unwrap();
        if message["params"]["status"] == "completed" {
            assert_eq!(
                message["params"]["result"]["resultType"], "complete",
                "{message}"
            );
            break;
        }
        assert!(Instant::now() < deadline);
    }

    // tasks/get over HTTP.
    let addr = start(server()).await;
    let created = response_of(
        &addr,
        stateless(
            &addr,
            "tools/call",
            json!({"name": "snooze", "arguments": {"millis": 10}}),
        ),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        let got = response_of(&addr, stateless(&addr, "tasks/get", json!({"taskId": id}))).await;
        if got["result"]["status"] == "completed" {
            assert_eq!(got["result"]["result"]["resultType"], "complete", "{got}");
            assert_eq!(got["result"]["result"]["content"][0]["text"], "slept 10 ms");
            break;
        }
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // 2025-11-25's tasks/result stays as that revision's result: no `resultType`.
    let handshake = handshake_client().connect(server()).await.unwrap();
    let created = task_call(&handshake, "snooze", json!({"millis": 10}), None)
        .await
        .unwrap();
    let id = created["task"]["taskId"].as_str().unwrap();
    let result = handshake
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "slept 10 ms");
    assert!(result.get("resultType").is_none(), "{result}");
}

#[tokio::test]
async fn a_2025_11_25_task_keeps_the_ttl_it_asked_for_up_to_the_servers() {
    let client = handshake_client()
        .connect(server().task_ttl(Duration::from_secs(600)))
        .await
        .unwrap();
    let ttl = async |asked: Option<u64>| {
        let created = task_call(&client, "instant", json!({"n": 1}), asked)
            .await
            .unwrap();
        let id = created["task"]["taskId"].as_str().unwrap().to_owned();
        let got = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(got["ttl"], created["task"]["ttl"]);
        created["task"]["ttl"].as_u64().unwrap()
    };
    assert_eq!(ttl(Some(60_000)).await, 60_000, "honoured");
    assert_eq!(ttl(Some(3_600_000)).await, 600_000, "up to the server's");
    assert_eq!(ttl(None).await, 600_000, "the server's when none was asked");
}

#[tokio::test]
async fn the_last_progress_message_stays_on_the_completed_task() {
    // 2026-07-28.
    let client = stateless_client().connect(server()).await.unwrap();
    for _ in 0..5 {
        let created = call(&client, "three_steps", json!({})).await.unwrap();
        let done = ended(&client, created["taskId"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed");
        assert_eq!(done["statusMessage"], "step 3 of 3", "{done}");
    }
    // 2025-11-25.
    let client = handshake_client().connect(server()).await.unwrap();
    let created = task_call(&client, "three_steps", json!({}), None)
        .await
        .unwrap();
    let id = created["task"]["taskId"].as_str().unwrap();
    client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    let task = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(task["statusMessage"], "step 3 of 3", "{task}");
}

#[tokio::test]
async fn a_task_only_tool_called_without_task_says_what_to_do() {
    // stdio and HTTP, 2025-11-25.
    let client = handshake_client().connect(server()).await.unwrap();
    let refused = call(&client, "instant", json!({"n": 1})).await.unwrap_err();
    let (code, text) = message(refused);
    assert_eq!(code, -32601, "the code 2025-11-25 documents");
    assert_eq!(
        text,
        "the tool `instant` runs only as a task: call it with `task` in the `tools/call` params \
         (for example `\"task\": {}`)"
    );
    let addr = start(server()).await;
    let session = initialize(&addr).await;
    let answer = response_of(
        &addr,
        post(
            &addr,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "instant", "arguments": {"n": 1}}}),
        ),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32601);
    assert_eq!(answer["error"]["message"], text.as_str());
}
