//! The stateless era (2026-07-28) over stdio (the in-process client runs the real stdio
//! transport): the envelope, `server/discover`, result shaping, removed methods, input-required
//! round trips behind the unchanged `ctx.elicit`/`ctx.sample`/`ctx.roots`, and
//! `subscriptions/listen`.

use std::time::Duration;

use mcp_runtime::testing::Client;
use mcp_runtime::{CacheHint, Cacheable, Server};
use mcp_tests::first_input_key;
use serde_json::{Value, json};

use crate::fixtures::*;

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
const SUBSCRIPTION_KEY: &str = "io.modelcontextprotocol/subscriptionId";

fn server() -> Server {
    Server::builder()
        .name("stateless-test")
        .version("2.0.0")
        .instructions("Be kind.")
        .tool(add)
        .tool(who)
        .tool(interview)
        .tool(chatty)
        .tool(three_steps)
        .tool(patient)
        .tool(explode)
        .resource(static_text)
        .resource(note)
        .prompt(simple)
        .request_timeout(Duration::from_millis(500))
}

fn capable() -> mcp_runtime::testing::ClientBuilder {
    Client::builder()
        .stateless()
        .capabilities(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
}

/// Everything that arrived outside request answers, until a short quiet.
async fn drain(client: &Client) -> Vec<Value> {
    let mut messages = Vec::new();
    while let Ok(message) = client.next_message().await {
        messages.push(message);
    }
    messages
}

/// A stateless client of [`server`].
async fn stateless_client() -> Client {
    Client::builder()
        .stateless()
        .connect(server())
        .await
        .unwrap()
}

/// A client of [`server`] that sends its own lines, with no handshake.
async fn raw_client() -> Client {
    Client::builder()
        .skip_initialize()
        .connect(server())
        .await
        .unwrap()
}

/// A stateless client that waits a short while for messages.
fn quiet() -> mcp_runtime::testing::ClientBuilder {
    Client::builder()
        .stateless()
        .timeout(Duration::from_millis(300))
}

/// `subscriptions/listen` with the JSON-RPC id `id` for `notifications`: the first message
/// the server sends back (its acknowledgement).
async fn listen(client: &Client, id: Value, notifications: Value) -> Value {
    let listen = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": envelope(), "notifications": notifications}});
    client
        .send_line_and_receive(listen.to_string())
        .await
        .unwrap()
}

/// The whole JSON-RPC response to a `tools/call` with `params`.
async fn call_raw(client: &Client, params: Value) -> Value {
    client.request_raw("tools/call", params).await.unwrap()
}

/// The interview's retry with `input_responses` and the request state it was given.
async fn retry_interview(
    client: &Client,
    input_responses: Value,
    state: impl serde::Serialize,
) -> Value {
    let params = json!({"name": "interview", "arguments": {},
                        "inputResponses": input_responses, "requestState": state});
    call_raw(client, params).await
}

fn envelope() -> Value {
    json!({VERSION_KEY: "2026-07-28", CAPS_KEY: {}})
}

#[tokio::test]
async fn discover_describes_the_server_without_a_handshake() {
    let client = Client::builder()
        .stateless()
        .connect(server().cache_hint(
            Cacheable::Discover,
            CacheHint::public(Duration::from_secs(60)),
        ))
        .await
        .unwrap();
    let result = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(
        result["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["instructions"], "Be kind.");
    assert_eq!(
        result["_meta"][SERVER_INFO_KEY],
        json!({"name": "stateless-test", "version": "2.0.0"})
    );
    let capabilities = &result["capabilities"];
    assert!(capabilities["tools"].is_object());
    assert!(capabilities["resources"]["subscribe"].as_bool().unwrap());
    assert!(capabilities["prompts"].is_object());
    assert!(capabilities.get("tasks").is_none());
}

#[tokio::test]
async fn every_result_is_stamped_and_lists_carry_cache_hints() {
    let client = stateless_client().await;
    let tools = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(tools["resultType"], "complete");
    assert_eq!(tools["ttlMs"], 0);
    assert_eq!(tools["cacheScope"], "private");
    assert_eq!(tools["_meta"][SERVER_INFO_KEY]["name"], "stateless-test");
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "tools/list is in a deterministic order");

    let call = client
        .request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .await
        .unwrap();
    assert_eq!(call["resultType"], "complete");
    assert_eq!(call["structuredContent"], json!({"result": 5}));
    assert!(
        call.get("ttlMs").is_none(),
        "tool results are not cacheable"
    );
    assert_eq!(call["_meta"][SERVER_INFO_KEY]["version"], "2.0.0");

    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let result = client.request(method, json!({})).await.unwrap();
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(result["cacheScope"], "private", "{method}");
    }
    let read = client
        .request("resources/read", json!({"uri": "notes://7"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "note 7");
    assert_eq!(read["ttlMs"], 0);
    let prompt = client
        .request("prompts/get", json!({"name": "simple"}))
        .await
        .unwrap();
    assert_eq!(prompt["resultType"], "complete");
    assert!(prompt.get("ttlMs").is_none());
}

#[tokio::test]
async fn the_envelope_is_checked_key_by_key_and_version_by_version() {
    let client = raw_client().await;
    let request = |id: u32, method: &str, meta: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta}}).to_string()
    };
    let reply = client
        .send_line_and_receive(request(1, "tools/list", json!({VERSION_KEY: "2026-07-28"})))
        .await;
    // An error with an id is routed to no pending request: it arrives as a message.
    let reply = reply.unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["error"]["code"], -32602);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains(CAPS_KEY)
    );

    let reply = client
        .send_line_and_receive(request(
            2,
            "tools/list",
            json!({VERSION_KEY: "1900-01-01", CAPS_KEY: {}}),
        ))
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32022);
    assert_eq!(reply["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(
        reply["error"]["data"]["supported"][0], "2026-07-28",
        "newest first, handshake revisions included for a fallback"
    );
    assert!(
        reply["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25"))
    );

    let reply = client
        .send_line_and_receive(request(
            3,
            "tools/list",
            json!({VERSION_KEY: "2026-07-28", CAPS_KEY: {}, "io.modelcontextprotocol/logLevel": "loud"}),
        ))
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32602);

    // `server/discover` without an envelope names the missing key.
    let reply = client
        .send_line_and_receive(
            json!({"jsonrpc": "2.0", "id": 4, "method": "server/discover"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32602);

    // Methods the stateless era removed are unknown there.
    for (id, method) in [
        (5, "ping"),
        (6, "logging/setLevel"),
        (7, "resources/subscribe"),
        (8, "tasks/list"),
    ] {
        let reply = client
            .send_line_and_receive(request(id, method, envelope()))
            .await
            .unwrap();
        assert_eq!(reply["error"]["code"], -32601, "{method}");
    }

    // A missing resource is -32602 with the URI.
    let reply = client
        .send_line_and_receive(
            json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read",
                   "params": {"uri": "notes://999", "_meta": envelope()}})
            .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32602);
    assert_eq!(reply["error"]["data"]["uri"], "notes://999");
}

#[tokio::test]
async fn discover_never_locks_the_era_and_both_eras_share_a_connection() {
    let client = raw_client().await;
    // A handshake request before `initialize` is refused as always...
    let error = client.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32600);
    // ...a stateless probe is answered...
    let discover = client
        .request("server/discover", json!({"_meta": envelope()}))
        .await
        .unwrap();
    assert_eq!(discover["resultType"], "complete");
    // ...and `initialize` still opens a handshake session afterwards.
    let init = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(init["protocolVersion"], "2025-11-25");
    client
        .notify("notifications/initialized", json!({}))
        .unwrap();
    let tools = client.request("tools/list", json!({})).await.unwrap();
    assert!(
        tools.get("resultType").is_none(),
        "handshake results are unstamped"
    );
    // Enveloped requests are still served statelessly on the same connection.
    let tools = client
        .request("tools/list", json!({"_meta": envelope()}))
        .await
        .unwrap();
    assert_eq!(tools["resultType"], "complete");
    // `initialize` offering 2026-07-28 gets the handshake counter-offer.
    let other = Client::builder()
        .protocol_version("2026-07-28")
        .connect(server())
        .await
        .unwrap();
    assert_eq!(
        other.initialize_result().unwrap()["protocolVersion"],
        "2025-11-25"
    );
}

fn contact(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

#[tokio::test]
async fn a_tool_that_elicits_works_unchanged_in_both_eras() {
    let answer = |method: &str, params: &Value| match method {
        "elicitation/create" => {
            assert_eq!(params["message"], "Your name?");
            assert_eq!(params["requestedSchema"]["required"], json!(["name"]));
            Ok(contact("Ada"))
        }
        "sampling/createMessage" => Ok(json!({
            "role": "assistant", "model": "m", "content": {"type": "text", "text": "Hello Ada"}
        })),
        "roots/list" => Ok(json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]})),
        other => panic!("unexpected {other}"),
    };
    let handshake = Client::builder()
        .capabilities(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
        .on_request(answer)
        .timeout(Duration::from_millis(300))
        .connect(server())
        .await
        .unwrap();
    let stateless = capable()
        .on_request(answer)
        .timeout(Duration::from_millis(300))
        .connect(server())
        .await
        .unwrap();
    for client in [&handshake, &stateless] {
        let result = client.call_tool("interview", json!({})).await.unwrap();
        assert!(!result.is_error, "{result:?}");
        assert_eq!(result.text(), "Hello Ada (2 roots)");
    }
    // The handshake client was asked with requests; the stateless one with none.
    let asked: Vec<Value> = drain(&handshake).await;
    assert_eq!(asked.len(), 3);
    assert!(asked.iter().all(|m| m.get("id").is_some()));
    assert!(drain(&stateless).await.is_empty());
}

#[tokio::test]
async fn input_required_carries_questions_and_a_state_the_retry_echoes() {
    let client = capable().connect(server()).await.unwrap();
    let first = call_raw(&client, json!({"name": "interview", "arguments": {}})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    assert!(result.get("content").is_none());
    assert_eq!(result["_meta"][SERVER_INFO_KEY]["name"], "stateless-test");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Your name?");
    let state = result["requestState"].as_str().unwrap().to_owned();

    // The retry gets the next question, with a state that remembers the first answer.
    let second = retry_interview(&client, json!({key.clone(): contact("Grace")}), &state).await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required");
    let (sample_key, request) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(
        request["params"]["messages"][0]["content"]["text"],
        "Greet Grace"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    // A modified state is refused...
    let mut tampered = state.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let refused = retry_interview(&client, json!({}), tampered).await;
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state");
    // ...and so is a valid one echoed on another tool or other arguments.
    for (name, arguments) in [("who", json!({})), ("interview", json!({"x": 1}))] {
        let params = json!({"name": name, "arguments": arguments, "requestState": state});
        let refused = call_raw(&client, params).await;
        assert_eq!(refused["error"]["code"], -32602, "{name}");
    }

    // Answering the rest completes it.
    let sampled = json!({"role": "assistant", "model": "m",
                         "content": {"type": "text", "text": "Hi Grace"}});
    let third = retry_interview(&client, json!({sample_key.clone(): sampled}), &state).await;
    let roots_key = first_input_key(&third["result"]);
    let state = third["result"]["requestState"].clone();
    let done = retry_interview(&client, json!({roots_key: {"roots": []}}), &state).await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "Hi Grace (0 roots)");
}

#[tokio::test]
async fn a_question_the_client_cannot_answer_is_missing_capability() {
    let client = Client::builder()
        .stateless()
        .capabilities(json!({"elicitation": {}}))
        .on_request(|_, _| Ok(contact("Ada")))
        .connect(server())
        .await
        .unwrap();
    let error = client.call_tool("interview", json!({})).await.unwrap_err();
    let error = error.rpc().unwrap();
    assert_eq!(error.code, -32021);
    assert_eq!(
        error.data.as_ref().unwrap()["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn logs_need_a_log_level_and_progress_stays_on_the_request() {
    let silent = quiet().connect(server()).await.unwrap();
    assert_eq!(
        silent.call_tool("chatty", json!({})).await.unwrap().text(),
        "logged"
    );
    assert!(drain(&silent).await.is_empty(), "no logLevel, no logs");

    let warned = Client::builder()
        .stateless()
        .log_level("warning")
        .timeout(Duration::from_millis(300))
        .connect(server())
        .await
        .unwrap();
    warned.call_tool("chatty", json!({})).await.unwrap();
    let levels: Vec<Value> = drain(&warned)
        .await
        .into_iter()
        .map(|m| m["params"]["level"].clone())
        .collect();
    assert_eq!(levels, [json!("warning"), json!("error")]);

    let result = warned
        .request(
            "tools/call",
            json!({"name": "three_steps", "arguments": {}, "_meta": {"progressToken": "p"}}),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "done");
    let progress: Vec<Value> = drain(&warned)
        .await
        .into_iter()
        .map(|m| m["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, [json!(1.0), json!(2.0), json!(3.0)]);
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result_in_the_stateless_era_too() {
    let client = stateless_client().await;
    let result = client.call_tool("explode", json!({})).await.unwrap();
    assert!(result.is_error);
    assert_eq!(
        client
            .call_tool("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap()
            .text(),
        "2"
    );
}

#[tokio::test]
async fn listen_acknowledges_then_delivers_only_what_was_asked_tagged_with_its_id() {
    let service = server().build().unwrap();
    let client = quiet().connect_service(&service).await.unwrap();
    let ack = listen(
        &client,
        json!("sub-1"),
        json!({
            "toolsListChanged": true,
            "resourceSubscriptions": ["notes://1"],
        }),
    )
    .await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["notes://1"]})
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_KEY], "sub-1");

    let handle = service.handle();
    handle.prompts_list_changed(); // not asked for
    handle.resource_updated("notes://2"); // not subscribed
    handle.tools_list_changed();
    handle.resource_updated("notes://1");
    let received = drain(&client).await;
    assert_eq!(received.len(), 2, "{received:?}");
    assert_eq!(received[0]["method"], "notifications/tools/list_changed");
    assert_eq!(received[0]["params"]["_meta"][SUBSCRIPTION_KEY], "sub-1");
    assert_eq!(received[1]["method"], "notifications/resources/updated");
    assert_eq!(received[1]["params"]["uri"], "notes://1");
    assert_eq!(received[1]["params"]["_meta"][SUBSCRIPTION_KEY], "sub-1");

    // `notifications/cancelled` ends it: nothing more, and no result.
    client
        .notify("notifications/cancelled", json!({"requestId": "sub-1"}))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    handle.tools_list_changed();
    assert!(drain(&client).await.is_empty());
}

#[tokio::test]
async fn a_server_shutting_down_ends_listens_with_a_final_result() {
    let service = server().build().unwrap();
    let client = Client::builder()
        .stateless()
        .connect_service(&service)
        .await
        .unwrap();
    let ack = listen(&client, json!(42), json!({"promptsListChanged": true})).await;
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_KEY], 42);
    service.close_subscriptions();
    let last = client.next_message().await.unwrap();
    assert_eq!(last["id"], 42);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(last["result"]["_meta"][SUBSCRIPTION_KEY], 42);
}

#[tokio::test]
async fn listen_is_unknown_in_the_handshake_era() {
    let client = Client::connect(server()).await.unwrap();
    let error = client
        .request(
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32601);
}

#[tokio::test]
async fn a_tool_added_while_listening_is_announced_on_the_listen_and_then_listed() {
    let service = server().dynamic_tools().build().unwrap();
    let client = quiet().connect_service(&service).await.unwrap();
    let ack = listen(&client, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    service
        .handle()
        .add_tool(mcp_runtime::tool::ToolDef::of(greet).unwrap())
        .unwrap();
    let changed = client.next_message().await.unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"][SUBSCRIPTION_KEY], "l");
    let tools = client.request("tools/list", json!({})).await.unwrap();
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "greet")
    );
    assert_eq!(
        client
            .call_tool("greet", json!({"name": "Ada"}))
            .await
            .unwrap()
            .text(),
        "Hello, Ada!"
    );
}
