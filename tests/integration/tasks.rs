//! Tasks (the `io.modelcontextprotocol/tasks` extension, 2026-07-28) over stdio (the in-process
//! client) and Streamable HTTP (real sockets): a task outlives its call and a slow client, only
//! its creator sees it, cancelling it stops its handler, a panic inside it ends it `failed`, and
//! the store stays within its bound and gives memory back after the TTL.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hyper::Request;
use mcp_runtime::Server;
use mcp_runtime::prelude::*;
use mcp_runtime::testing::{Client, ClientError};
use mcp_tests::first_input_key;
use serde_json::{Value, json};

use mcp_tests::http::{WAIT, response_of, send, start, stateless_post};

const EXTENSION: &str = "io.modelcontextprotocol/tasks";
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// Sleeps `millis` ms, then says so.
#[tool(task = "optional")]
async fn nap(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Done at once, but only ever as a task.
#[tool(task = "required")]
async fn instant_job(n: u64) -> String {
    format!("job {n} done")
}

static TICKS: AtomicU64 = AtomicU64::new(0);

/// Counts in `TICKS` every 10 ms until stopped.
#[tool(task = "optional")]
async fn ticker() -> String {
    loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        TICKS.fetch_add(1, Ordering::SeqCst);
    }
}

/// Panics after a moment.
#[tool(task = "optional")]
async fn blow_up() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    panic!("blow_up panics on purpose")
}

#[derive(Debug, Serialize, Deserialize, Elicit)]
struct Answer {
    /// The answer
    text: String,
}

/// Asks a question halfway through the task.
#[tool(task = "optional")]
async fn quiz(ctx: Context) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    let answer = match ctx.elicit::<Answer>("Six times seven?").await? {
        Elicitation::Accept(answer) => answer.text,
        _ => "no answer".to_owned(),
    };
    Ok(format!("you said {answer}"))
}

fn server() -> Server {
    Server::builder()
        .tool(nap)
        .tool(instant_job)
        .tool(ticker)
        .tool(blow_up)
        .tool(quiz)
}

fn caps() -> Value {
    json!({"elicitation": {}, "extensions": {EXTENSION: {}}})
}

fn tasks_client() -> mcp_runtime::testing::ClientBuilder {
    Client::builder().stateless().capabilities(caps())
}

/// `tools/call`, its result as the client sees it.
async fn call(client: &Client, name: &str, arguments: Value) -> Result<Value, ClientError> {
    client
        .request("tools/call", json!({"name": name, "arguments": arguments}))
        .await
}

/// `method` (`tasks/get`, `tasks/cancel`, ...) for the task `id`.
async fn on_task(client: &Client, method: &str, id: &str) -> Result<Value, ClientError> {
    client.request(method, json!({"taskId": id})).await
}

fn code(error: ClientError) -> i64 {
    error.rpc().expect("a JSON-RPC error").code
}

/// Polls `get` (the task's `tasks/get` object) until its status is `want` or terminal.
async fn settle_with<F, Fut>(id: &str, want: &str, mut get: F) -> Value
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        let task = get().await;
        let status = task["status"].as_str().unwrap().to_owned();
        if status == want || ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return task;
        }
        assert!(Instant::now() < deadline, "task {id} stuck in {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `tasks/get` until the task's status is `want` or terminal.
async fn settle(client: &Client, id: &str, want: &str) -> Value {
    settle_with(id, want, move || async move {
        on_task(client, "tasks/get", id).await.unwrap()
    })
    .await
}

#[tokio::test]
async fn stdio_a_task_answers_at_once_and_completes_later() {
    let client = tasks_client().connect(server()).await.unwrap();
    let discover = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(discover["capabilities"]["extensions"][EXTENSION], json!({}));
    let started = Instant::now();
    let created = call(&client, "nap", json!({"millis": 300})).await.unwrap();
    assert!(started.elapsed() < Duration::from_millis(300));
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert!(id.len() >= 22, "128 random bits, base64: {id}");
    assert!(created["ttlMs"].as_u64().unwrap() > 0);
    let working = on_task(&client, "tasks/get", &id).await.unwrap();
    assert_eq!(working["status"], "working");
    assert!(working.get("result").is_none());
    let done = settle(&client, &id, "completed").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "slept 300 ms");
    assert_eq!(done["resultType"], "complete");
}

#[tokio::test]
async fn stdio_a_client_without_the_extension_gets_no_task() {
    let client = Client::builder()
        .stateless()
        .capabilities(json!({}))
        .connect(server())
        .await
        .unwrap();
    let plain = call(&client, "nap", json!({"millis": 1})).await.unwrap();
    assert_eq!(plain["content"][0]["text"], "slept 1 ms");
    assert!(plain.get("taskId").is_none());
    let refused = call(&client, "instant_job", json!({"n": 1}))
        .await
        .unwrap_err();
    let error = refused.rpc().unwrap();
    assert_eq!(error.code, -32021);
    assert_eq!(
        error.data.as_ref().unwrap()["requiredCapabilities"]["extensions"][EXTENSION],
        json!({})
    );
    let get = client
        .request("tasks/get", json!({"taskId": "whatever"}))
        .await
        .unwrap_err();
    assert_eq!(code(get), -32021);
}

#[tokio::test]
async fn stdio_another_session_can_neither_see_nor_cancel_a_task() {
    let service = server().build().unwrap();
    let owner = tasks_client().connect_service(&service).await.unwrap();
    let other = tasks_client().connect_service(&service).await.unwrap();
    let created = call(&owner, "nap", json!({"millis": 500})).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    for method in ["tasks/get", "tasks/cancel"] {
        let refused = on_task(&other, method, id).await.unwrap_err();
        assert_eq!(code(refused), -32602, "{method} from another session");
    }
    let refused = other
        .request(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"elicit-1": {"action": "accept"}}}),
        )
        .await
        .unwrap_err();
    assert_eq!(code(refused), -32602);
    let done = settle(&owner, id, "completed").await;
    assert_eq!(
        done["status"], "completed",
        "the other session's cancel did nothing"
    );
}

#[tokio::test]
async fn stdio_cancelling_a_task_stops_its_handler() {
    let client = tasks_client().connect(server()).await.unwrap();
    let created = call(&client, "ticker", json!({})).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(TICKS.load(Ordering::SeqCst) > 0, "the handler runs");
    let ack = on_task(&client, "tasks/cancel", id).await.unwrap();
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("status").is_none());
    let cancelled = settle(&client, id, "cancelled").await;
    assert_eq!(cancelled["status"], "cancelled");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let after = TICKS.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(TICKS.load(Ordering::SeqCst), after, "the handler stopped");
    // Cancelling again is the same empty acknowledgement.
    let again = on_task(&client, "tasks/cancel", id).await.unwrap();
    assert_eq!(again["resultType"], "complete");
}

#[tokio::test]
async fn stdio_a_panic_inside_a_task_ends_it_failed_and_the_server_lives() {
    let client = tasks_client().connect(server()).await.unwrap();
    let created = call(&client, "blow_up", json!({})).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    let failed = settle(&client, id, "failed").await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed.get("result").is_none());
    let next = call(&client, "nap", json!({"millis": 1})).await.unwrap();
    assert!(next["taskId"].is_string() || next["content"].is_array());
}

#[tokio::test]
async fn stdio_a_question_inside_a_task_is_answered_with_tasks_update() {
    let client = tasks_client().connect(server()).await.unwrap();
    let created = call(&client, "quiz", json!({})).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    let waiting = settle(&client, id, "input_required").await;
    assert_eq!(waiting["status"], "input_required");
    let requests = waiting["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let ack = client
        .request(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {
                key.clone(): {"action": "accept", "content": {"text": "42"}},
                "no-such-key": {"action": "decline"},
            }}),
        )
        .await
        .unwrap();
    assert_eq!(ack["resultType"], "complete");
    let done = settle(&client, id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "you said 42");
}

/// A stateless POST at 2026-07-28, with the tasks extension among the client's capabilities.
fn post(addr: &str, method: &str, mut params: Value) -> Request<String> {
    params["_meta"] = json!({VERSION_KEY: "2026-07-28", CAPS_KEY: caps()});
    stateless_post(addr, 1, method, params)
}

/// The JSON-RPC response of a POST, whether it came as JSON or on an SSE stream.
async fn rpc(addr: &str, method: &str, params: Value) -> Value {
    response_of(addr, post(addr, method, params)).await
}

/// A `tools/call` of `name` over HTTP: the response's `result` (the task it created).
async fn http_call(addr: &str, name: &str, arguments: Value) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    rpc(addr, "tools/call", params).await["result"].clone()
}

async fn http_settle(addr: &str, id: &str, want: &str) -> Value {
    settle_with(id, want, move || async move {
        rpc(addr, "tasks/get", json!({"taskId": id})).await["result"].clone()
    })
    .await
}

#[tokio::test]
async fn http_a_task_outlives_the_call_that_created_it() {
    let addr = start(server()).await;
    // The connection that created it is gone once the answer is read.
    let created = http_call(&addr, "nap", json!({"millis": 300})).await;
    assert_eq!(created["resultType"], "task");
    let id = created["taskId"].as_str().unwrap();
    let done = http_settle(&addr, id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 300 ms");
}

#[tokio::test]
async fn http_mcp_name_must_be_the_task_id() {
    let addr = start(server()).await;
    let created = http_call(&addr, "nap", json!({"millis": 200})).await;
    let id = created["taskId"].as_str().unwrap();
    let mut request = post(&addr, "tasks/get", json!({"taskId": id}));
    request
        .headers_mut()
        .insert("mcp-name", "someone-elses-task".parse().unwrap());
    let response = send(&addr, request).await;
    assert_eq!(response.status(), hyper::StatusCode::BAD_REQUEST);
    let body = mcp_tests::http::body_json(response).await;
    assert_eq!(body["error"]["code"], -32020);
}

#[tokio::test]
async fn http_cancel_and_panic_and_questions() {
    let addr = start(server()).await;
    let created = http_call(&addr, "nap", json!({"millis": 60000})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let ack = rpc(&addr, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    assert_eq!(
        http_settle(&addr, &id, "cancelled").await["status"],
        "cancelled"
    );

    let created = http_call(&addr, "blow_up", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let failed = http_settle(&addr, &id, "failed").await;
    assert_eq!(failed["error"]["code"], -32603);

    let created = http_call(&addr, "quiz", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let waiting = http_settle(&addr, &id, "input_required").await;
    let key = first_input_key(&waiting);
    let answers = json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"text": "six"}}}});
    let ack = rpc(&addr, "tasks/update", answers).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let done = http_settle(&addr, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "you said six");

    for removed in ["tasks/result", "tasks/list"] {
        let response = rpc(&addr, removed, json!({})).await;
        assert_eq!(response["error"]["code"], -32601, "{removed}");
    }
}

// The handshake era: 2025-11-25's experimental core tasks (`params.task`, `tasks/result`,
// `tasks/list`, questions sent to the client as requests tied to the task).

const RELATED: &str = "io.modelcontextprotocol/related-task";

fn handshake_client() -> mcp_runtime::testing::ClientBuilder {
    Client::builder()
        .protocol_version("2025-11-25")
        .capabilities(json!({"elicitation": {}}))
        .on_request(|method, params| {
            assert_eq!(method, "elicitation/create");
            assert!(
                params["_meta"][RELATED]["taskId"].is_string(),
                "the question is tied to its task: {params}"
            );
            Ok(json!({"action": "accept", "content": {"text": "forty-two"}}))
        })
}

async fn task_call(client: &Client, name: &str, arguments: Value) -> Value {
    client
        .request(
            "tools/call",
            json!({"name": name, "arguments": arguments, "task": {"ttl": 60000}}),
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn handshake_a_task_is_created_polled_and_its_result_read() {
    let client = handshake_client().connect(server()).await.unwrap();
    let init = client.initialize_result().unwrap();
    assert!(init["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object());
    assert!(init["capabilities"].get("extensions").is_none());
    let tools = client.list_tools().await.unwrap();
    let nap = tools.iter().find(|t| t["name"] == "nap").unwrap();
    assert_eq!(nap["execution"]["taskSupport"], "optional");

    let created = task_call(&client, "nap", json!({"millis": 200})).await;
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(created["task"]["status"], "working");
    assert!(created["task"]["ttl"].as_u64().unwrap() > 0);
    let task = on_task(&client, "tasks/get", &id).await.unwrap();
    assert_eq!(task["taskId"], id.as_str());
    let result = on_task(&client, "tasks/result", &id).await.unwrap();
    assert_eq!(result["content"][0]["text"], "slept 200 ms");
    assert_eq!(result["_meta"][RELATED]["taskId"], id.as_str());
    let listed = client.request("tasks/list", json!({})).await.unwrap();
    assert!(
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == id.as_str())
    );

    // Without `task`, an optional tool runs as a plain call; a required one is refused.
    let plain = call(&client, "nap", json!({"millis": 1})).await.unwrap();
    assert_eq!(plain["content"][0]["text"], "slept 1 ms");
    let refused = call(&client, "instant_job", json!({"n": 1}))
        .await
        .unwrap_err();
    assert_eq!(code(refused), -32601);
}

#[tokio::test]
async fn handshake_a_question_reaches_the_client_through_tasks_result() {
    let client = handshake_client().connect(server()).await.unwrap();
    let created = task_call(&client, "quiz", json!({})).await;
    let id = created["task"]["taskId"].as_str().unwrap();
    let result = on_task(&client, "tasks/result", id).await.unwrap();
    assert_eq!(result["content"][0]["text"], "you said forty-two");
}

#[tokio::test]
async fn handshake_isolation_cancel_and_panic() {
    let service = server().build().unwrap();
    let owner = handshake_client().connect_service(&service).await.unwrap();
    let other = handshake_client().connect_service(&service).await.unwrap();
    // Not `ticker`: its counter belongs to the cancellation test.
    let created = task_call(&owner, "nap", json!({"millis": 60000})).await;
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let refused = on_task(&other, method, &id).await.unwrap_err();
        assert_eq!(code(refused), -32602, "{method} from another session");
    }
    let theirs = other.request("tasks/list", json!({})).await.unwrap();
    assert_eq!(theirs["tasks"], json!([]));

    let cancelled = on_task(&owner, "tasks/cancel", &id).await.unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    let again = on_task(&owner, "tasks/cancel", &id).await.unwrap_err();
    assert_eq!(
        code(again),
        -32602,
        "an ended task cannot be cancelled again"
    );

    let created = task_call(&owner, "blow_up", json!({})).await;
    let id = created["task"]["taskId"].as_str().unwrap();
    let failed = on_task(&owner, "tasks/result", id).await.unwrap_err();
    assert_eq!(code(failed), -32603);
    let task = on_task(&owner, "tasks/get", id).await.unwrap();
    assert_eq!(task["status"], "failed");
    let alive = task_call(&owner, "nap", json!({"millis": 1})).await;
    assert!(alive["task"]["taskId"].is_string(), "the server lives on");
}

/// The `tasks` example as a child process on real stdio (2026-07-28).
#[tokio::test]
async fn the_tasks_example_builds_asks_and_is_cancelled() {
    let builder = tasks_client().on_request(|method, params| {
        assert_eq!(method, "elicitation/create");
        let message = params["message"].as_str().unwrap_or_default();
        Ok(if message.starts_with("Which version") {
            json!({"action": "accept", "content": {"version": "1.2.0"}})
        } else {
            json!({"action": "accept", "content": {"confirm": true}})
        })
    });
    let server = mcp_tests::spawn_example("tasks", builder).await.unwrap();
    let client = &server.client;

    // A long job with progress: its progress is the task's status message.
    let created = call(client, "build", json!({"steps": 3})).await.unwrap();
    let id = created["taskId"].as_str().unwrap();
    let deadline = Instant::now() + WAIT;
    let mut messages = Vec::new();
    let done = loop {
        let task = on_task(client, "tasks/get", id).await.unwrap();
        if let Some(message) = task["statusMessage"].as_str() {
            messages.push(message.to_owned());
        }
        if task["status"] == "completed" {
            break task;
        }
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["result"]["content"][0]["text"], "built in 3 steps");
    assert!(
        messages.iter().any(|m| m.starts_with("step ")),
        "progress shows as the status message: {messages:?}"
    );

    // Input before the task exists: an input-required round, then the task.
    let created = call(client, "release", json!({})).await.unwrap();
    assert_eq!(created["resultType"], "task");
    let id = created["taskId"].as_str().unwrap();
    let done = settle(client, id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "released 1.2.0");

    // A question halfway, answered with tasks/update.
    let created = call(client, "deploy", json!({"target": "staging"}))
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    let waiting = settle(client, id, "input_required").await;
    let key = first_input_key(&waiting);
    client
        .request(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
        )
        .await
        .unwrap();
    let done = settle(client, id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "deployed to staging");

    // A job that runs until cancelled.
    let created = call(client, "crawl", json!({"site": "example.org"}))
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    on_task(client, "tasks/cancel", id).await.unwrap();
    assert_eq!(settle(client, id, "cancelled").await["status"], "cancelled");
}

#[tokio::test]
async fn stdio_a_listen_with_task_ids_gets_each_change_of_the_task() {
    let client = tasks_client().connect(server()).await.unwrap();
    let created = call(&client, "quiz", json!({})).await.unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();
    let listen = json!({"jsonrpc": "2.0", "id": "tasks-1", "method": "subscriptions/listen",
    "params": {
        "_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: caps()},
        "notifications": {"taskIds": [id]},
    }});
    let ack = client
        .send_line_and_receive(listen.to_string())
        .await
        .unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    // Every notification is the whole task, tagged with the listen; the last one is the end.
    let mut seen = Vec::new();
    let deadline = Instant::now() + WAIT;
    loop {
        let message = client.next_message().await.unwrap();
        assert_eq!(message["method"], "notifications/tasks", "{message}");
        let task = &message["params"];
        assert_eq!(task["taskId"], id.as_str());
        assert_eq!(
            task["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "tasks-1"
        );
        let status = task["status"].as_str().unwrap().to_owned();
        if status == "input_required" && !seen.contains(&status) {
            let key = first_input_key(task);
            let answers = json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"text": "yes"}}}});
            client.request("tasks/update", answers).await.unwrap();
        }
        seen.push(status.clone());
        if status == "completed" {
            assert_eq!(task["result"]["content"][0]["text"], "you said yes");
            break;
        }
        assert!(Instant::now() < deadline, "statuses so far: {seen:?}");
    }
    assert!(seen.contains(&"input_required".to_owned()), "{seen:?}");
}

#[tokio::test]
async fn http_handshake_a_task_outlives_its_call_and_belongs_to_its_session() {
    use mcp_tests::http::{initialize, post};
    let addr = start(server()).await;
    let session = initialize(&addr).await;
    let other = initialize(&addr).await;
    // The response to `method` in `session`.
    let in_session = async |session: &str, id: u32, method: &str, params: Value| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        response_of(&addr, post(&addr, Some(session), request)).await
    };
    let nap = json!({"name": "nap", "arguments": {"millis": 300}, "task": {}});
    let created = in_session(&session, 1, "tools/call", nap).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The call's response is over; the task runs on.
    let theirs = in_session(&other, 2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        theirs["error"]["code"], -32602,
        "another session cannot see it"
    );
    let result = in_session(&session, 3, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "slept 300 ms");
    let listed = in_session(&session, 4, "tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["status"], "completed");
}
