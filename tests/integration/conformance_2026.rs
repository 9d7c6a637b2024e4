//! Defects the conformance suite 0.2.0-alpha.12 (`--requirements 2026-07-28`) found in the
//! stateless era, pinned against the `everything` example over real stdio, and over HTTP where
//! that transport answers differently.

use std::process::Stdio;
use std::time::Duration;

use hyper::{Request, StatusCode};
use mcp_runtime::Server;
use mcp_runtime::testing::Client;
use mcp_tests::{ChildServer, example_binary, spawn_example};
use serde_json::{Value, json};
use tokio::process::Command;

use crate::fixtures::add;
use crate::http::{WAIT, body_json, events, send, start};

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const SUBSCRIPTION_KEY: &str = "io.modelcontextprotocol/subscriptionId";

fn envelope() -> Value {
    json!({VERSION_KEY: "2026-07-28", CAPS_KEY: {"elicitation": {}}})
}

fn line(id: u32, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Every version the -32022 error offers is one `server/discover` lists, and the other way round.
#[tokio::test]
async fn discover_and_unsupported_version_agree() {
    let server = spawn_example("everything", Client::builder().skip_initialize())
        .await
        .unwrap();
    let client = &server.client;
    let discover = client
        .send_line_and_receive(line(1, "server/discover", json!({"_meta": envelope()})))
        .await
        .unwrap();
    let error = client
        .send_line_and_receive(line(
            2,
            "tools/list",
            json!({"_meta": {VERSION_KEY: "v999.0.0", CAPS_KEY: {}}}),
        ))
        .await
        .unwrap();
    assert_eq!(error["error"]["code"], -32022);
    assert_eq!(
        error["error"]["data"]["supported"], discover["result"]["supportedVersions"],
        "{discover} vs {error}"
    );
}

/// The methods the 2026-07-28 revision removed, each with the params a handshake client would send.
fn removed_methods() -> [(&'static str, Value); 5] {
    [
        (
            "initialize",
            json!({"protocolVersion": "2026-07-28", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "debug"})),
        ("resources/subscribe", json!({"uri": "test://static-text"})),
        (
            "resources/unsubscribe",
            json!({"uri": "test://static-text"}),
        ),
    ]
}

/// `initialize` and the other removed methods under the 2026 envelope are unknown methods, with
/// the id echoed (over stdio: the -32601 error, no handshake).
#[tokio::test]
async fn removed_methods_with_the_envelope_are_unknown() {
    let server = spawn_example("everything", Client::builder().skip_initialize())
        .await
        .unwrap();
    for (id, (method, mut params)) in (7..).zip(removed_methods()) {
        params["_meta"] = envelope();
        let reply = server
            .client
            .send_line_and_receive(line(id, method, params))
            .await
            .unwrap();
        assert_eq!(reply["id"], id, "{method}: {reply}");
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
    }
}

/// The same over stateless HTTP: 404 with the -32601 body and the id echoed.
#[tokio::test]
async fn removed_methods_with_the_envelope_are_404_over_http() {
    let addr = start(Server::builder().tool(add)).await;
    for (id, (method, mut params)) in (7..).zip(removed_methods()) {
        params["_meta"] = envelope();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let request = Request::post("/mcp")
            .header("host", &addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .body(body.to_string())
            .unwrap();
        let response = send(&addr, request).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method}");
        let reply = body_json(response).await;
        assert_eq!(reply["id"], id, "{method}: {reply}");
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
    }
}

/// A retry without the asked key, or with a wrong one, is asked again; extra keys are ignored.
#[tokio::test]
async fn missing_or_wrong_input_responses_are_asked_again() {
    let builder = Client::builder()
        .stateless()
        .capabilities(json!({"elicitation": {}}));
    let server = spawn_example("everything", builder).await.unwrap();
    let client = &server.client;
    let call = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    let first = client
        .request_raw("tools/call", call.clone())
        .await
        .unwrap();
    let key = first["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let state = first["result"]["requestState"].clone();
    let answer = json!({"action": "accept", "content": {"name": "Alice"}});
    for responses in [json!({}), json!({"wrong_key": answer})] {
        let mut retry = call.clone();
        retry["inputResponses"] = responses.clone();
        retry["requestState"] = state.clone();
        let reply = client.request_raw("tools/call", retry).await.unwrap();
        assert_eq!(
            reply["result"]["resultType"], "input_required",
            "{responses}: {reply}"
        );
    }
    let mut retry = call.clone();
    retry["inputResponses"] = json!({key: answer, "extra": {"ignored": true}});
    retry["requestState"] = state;
    let reply = client.request_raw("tools/call", retry).await.unwrap();
    assert_eq!(
        reply["result"]["content"][0]["text"], "Hello, Alice!",
        "{reply}"
    );
}

/// The `everything` example over stdio, for a stateless client that can answer every question.
async fn everything_stateless() -> ChildServer {
    let builder = Client::builder()
        .stateless()
        .capabilities(json!({"sampling": {}, "elicitation": {}, "roots": {}}));
    spawn_example("everything", builder).await.unwrap()
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The keys of an `input_required` reply's `inputRequests`, sorted (none for any other reply).
fn input_keys(reply: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = reply["result"]["inputRequests"]
        .as_object()
        .map(|requests| requests.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

/// The input-required fixtures ask under the keys the suite answers by name (the handlers chose
/// them with `ctx.input`), and an answer under that key is used even on a first call without
/// `requestState`, unknown keys beside it ignored.
#[tokio::test]
async fn input_requests_carry_the_keys_the_handlers_chose() {
    let server = everything_stateless().await;
    let client = &server.client;
    let call = |tool: &str| json!({"name": tool, "arguments": {}});
    for (tool, keys, method) in [
        (
            "test_input_required_result_elicitation",
            vec!["user_name"],
            "elicitation/create",
        ),
        (
            "test_input_required_result_sampling",
            vec!["capital_question"],
            "sampling/createMessage",
        ),
        (
            "test_input_required_result_list_roots",
            vec!["client_roots"],
            "roots/list",
        ),
        (
            "test_input_required_result_request_state",
            vec!["confirm"],
            "elicitation/create",
        ),
        (
            "test_input_required_result_multiple_inputs",
            vec!["client_roots", "greeting", "user_name"],
            "",
        ),
    ] {
        let reply = client.request_raw("tools/call", call(tool)).await.unwrap();
        assert_eq!(
            reply["result"]["resultType"], "input_required",
            "{tool}: {reply}"
        );
        assert_eq!(input_keys(&reply), keys, "{tool}: {reply}");
        if !method.is_empty() {
            assert_eq!(reply["result"]["inputRequests"][keys[0]]["method"], method);
        }
    }
    let first = client
        .request_raw(
            "tools/call",
            call("test_input_required_result_multiple_inputs"),
        )
        .await
        .unwrap();
    let requests = &first["result"]["inputRequests"];
    assert_eq!(requests["user_name"]["method"], "elicitation/create");
    assert_eq!(requests["greeting"]["method"], "sampling/createMessage");
    assert_eq!(requests["client_roots"]["method"], "roots/list");

    let mut answered = call("test_input_required_result_elicitation");
    answered["inputResponses"] = json!({
        "user_name": accept(json!({"name": "Alice"})),
        "unknown_extra_key": accept(json!({"foo": "bar"})),
    });
    let reply = client.request_raw("tools/call", answered).await.unwrap();
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "Hello, Alice!");
}

/// An answer under the right key that is no answer to the question (a number for a form) is
/// asked for again, not handed to the handler.
#[tokio::test]
async fn a_malformed_answer_is_asked_for_again() {
    let server = everything_stateless().await;
    let mut call = json!({"name": "test_input_required_result_elicitation", "arguments": {},
                          "inputResponses": {"user_name": 12345}});
    let reply = server
        .client
        .request_raw("tools/call", call.clone())
        .await
        .unwrap();
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
    assert_eq!(input_keys(&reply), ["user_name"]);
    // The malformed answer is not sealed into the state: the retry needs a real one.
    call["requestState"] = reply["result"]["requestState"].clone();
    call["inputResponses"] = json!({});
    let again = server.client.request_raw("tools/call", call).await.unwrap();
    assert_eq!(input_keys(&again), ["user_name"], "{again}");
}

/// The multi-round fixture asks `step1` (a name), then `step2` (a color) under a new
/// `requestState`, then completes with both answers.
#[tokio::test]
async fn multi_round_asks_step1_then_step2() {
    let server = everything_stateless().await;
    let client = &server.client;
    let call = json!({"name": "test_input_required_result_multi_round", "arguments": {}});
    let round1 = client
        .request_raw("tools/call", call.clone())
        .await
        .unwrap();
    assert_eq!(input_keys(&round1), ["step1"], "{round1}");
    let mut retry = call.clone();
    retry["inputResponses"] = json!({"step1": accept(json!({"name": "Alice"}))});
    retry["requestState"] = round1["result"]["requestState"].clone();
    let round2 = client.request_raw("tools/call", retry).await.unwrap();
    assert_eq!(input_keys(&round2), ["step2"], "{round2}");
    assert_eq!(
        round2["result"]["inputRequests"]["step2"]["params"]["requestedSchema"]["required"],
        json!(["color"])
    );
    assert_ne!(
        round2["result"]["requestState"],
        round1["result"]["requestState"]
    );
    let mut retry = call;
    retry["inputResponses"] = json!({"step2": accept(json!({"color": "blue"}))});
    retry["requestState"] = round2["result"]["requestState"].clone();
    let round3 = client.request_raw("tools/call", retry).await.unwrap();
    assert_eq!(round3["result"]["resultType"], "complete", "{round3}");
    assert_eq!(
        round3["result"]["content"][0]["text"],
        "Both steps done, Alice likes blue"
    );
}

/// `prompts/get` of the input-required prompt asks `user_context` for a `context` field, and
/// returns the prompt built from the answer.
#[tokio::test]
async fn the_input_required_prompt_asks_user_context() {
    let server = everything_stateless().await;
    let client = &server.client;
    let get = json!({"name": "test_input_required_result_prompt"});
    let first = client
        .request_raw("prompts/get", get.clone())
        .await
        .unwrap();
    assert_eq!(input_keys(&first), ["user_context"], "{first}");
    let question = &first["result"]["inputRequests"]["user_context"];
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(
        question["params"]["requestedSchema"]["required"],
        json!(["context"])
    );
    let mut retry = get;
    retry["inputResponses"] = json!({"user_context": accept(json!({"context": "test context"}))});
    retry["requestState"] = first["result"]["requestState"].clone();
    let reply = client.request_raw("prompts/get", retry).await.unwrap();
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"],
        "A prompt for test context."
    );
}

/// A stateless request to the `everything` example over HTTP, as a 2026-07-28 client without
/// capabilities sends it.
fn stateless_post(addr: &str, id: u32, method: &str, mut params: Value) -> Request<String> {
    params["_meta"] = json!({VERSION_KEY: "2026-07-28", CAPS_KEY: {}});
    crate::http::stateless_post(addr, id, method, params)
}

/// The names `method` lists under `key`, over stateless HTTP.
async fn listed(addr: &str, method: &str, key: &str) -> Vec<String> {
    let reply = body_json(send(addr, stateless_post(addr, 90, method, json!({}))).await).await;
    reply["result"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The hook tools `test_trigger_tool_change` and `test_trigger_prompt_change` change the tool
/// and prompt lists, and each change reaches the `subscriptions/listen` streams over HTTP that
/// asked for it, tagged with the listen's id, and no other.
#[tokio::test]
async fn hook_tools_change_the_lists_and_listen_streams_hear_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _child = Command::new(example_binary("everything"))
        .args(["--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the example");
    let addr = format!("127.0.0.1:{port}");
    let started = tokio::time::Instant::now();
    while tokio::net::TcpStream::connect(&addr).await.is_err() {
        assert!(
            started.elapsed() < WAIT,
            "the example never listened on {addr}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Each listen's frames, as they arrive, until its own list change.
    let mut streams = Vec::new();
    for (id, filter, change) in [
        (1, "toolsListChanged", "notifications/tools/list_changed"),
        (
            2,
            "promptsListChanged",
            "notifications/prompts/list_changed",
        ),
    ] {
        let params = json!({"notifications": {filter: true}});
        let response = send(
            &addr,
            stateless_post(&addr, id, "subscriptions/listen", params),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK);
        let (frames, mut arrived) = tokio::sync::mpsc::unbounded_channel::<Value>();
        let reader = tokio::spawn(events(response, move |frame| {
            let _ = frames.send(frame.clone());
            frame["method"] == change
        }));
        let ack = tokio::time::timeout(WAIT, arrived.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        streams.push((id, change, reader));
    }

    assert!(
        listed(&addr, "tools/list", "tools")
            .await
            .contains(&"test_dynamic_tool".to_owned())
    );
    assert!(
        listed(&addr, "prompts/list", "prompts")
            .await
            .contains(&"test_dynamic_prompt".to_owned())
    );
    for (id, hook) in [
        (3, "test_trigger_tool_change"),
        (4, "test_trigger_prompt_change"),
    ] {
        let call = json!({"name": hook, "arguments": {}});
        let reply =
            body_json(send(&addr, stateless_post(&addr, id, "tools/call", call)).await).await;
        assert_eq!(reply["result"]["isError"], Value::Null, "{hook}: {reply}");
    }
    assert!(
        !listed(&addr, "tools/list", "tools")
            .await
            .contains(&"test_dynamic_tool".to_owned())
    );
    assert!(
        !listed(&addr, "prompts/list", "prompts")
            .await
            .contains(&"test_dynamic_prompt".to_owned())
    );

    // The tool hook ran first: a prompts-only listen that leaked it would show it before its own.
    for (id, change, reader) in streams {
        let frames: Vec<Value> = tokio::time::timeout(WAIT, reader)
            .await
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|(_, frame)| frame)
            .collect();
        let methods: Vec<&str> = frames
            .iter()
            .map(|f| f["method"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            methods,
            ["notifications/subscriptions/acknowledged", change],
            "{frames:?}"
        );
        assert_eq!(frames[1]["params"]["_meta"][SUBSCRIPTION_KEY], id);
    }

    // A second call changes the lists back.
    let call = json!({"name": "test_trigger_tool_change", "arguments": {}});
    send(&addr, stateless_post(&addr, 5, "tools/call", call)).await;
    assert!(
        listed(&addr, "tools/list", "tools")
            .await
            .contains(&"test_dynamic_tool".to_owned())
    );
}
