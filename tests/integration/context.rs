//! What handlers ask of their context: logging, progress, cancellation, and requests to the
//! client answered by a scripted client.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_runtime::Server;
use mcp_runtime::protocol::ErrorObject;
use mcp_runtime::testing::Client;
use serde_json::{Value, json};

use crate::fixtures::*;

fn server() -> Server {
    Server::builder()
        .tool(three_steps)
        .tool(chatty)
        .tool(patient)
        .tool(who)
        .tool(ask)
        .tool(workspace)
        .request_timeout(Duration::from_millis(500))
}

/// Every message the client received that answered no request of its own, until a short quiet.
async fn drain(client: &Client) -> Vec<Value> {
    let mut messages = Vec::new();
    while let Ok(message) = client.next_message().await {
        messages.push(message);
    }
    messages
}

async fn quick(builder: mcp_runtime::testing::ClientBuilder) -> Client {
    builder
        .timeout(Duration::from_millis(300))
        .connect(server())
        .await
        .unwrap()
}

#[tokio::test]
async fn progress_arrives_before_the_result_and_increases() {
    let client = quick(Client::builder()).await;
    client
        .send_line(r#"{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"three_steps","arguments":{},"_meta":{"progressToken":"tok-1"}}}"#)
        .unwrap();
    let messages = drain(&client).await;
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{messages:?}");
    for (i, note) in progress.iter().enumerate() {
        assert_eq!(note["params"]["progressToken"], "tok-1");
        assert_eq!(note["params"]["progress"], (i + 1) as f64);
        assert_eq!(note["params"]["total"], 3.0);
        assert_eq!(note["params"]["message"], format!("step {}", i + 1));
    }
    let result_at = messages.iter().position(|m| m["id"] == "p").unwrap();
    let last_progress_at = messages
        .iter()
        .rposition(|m| m["method"] == "notifications/progress")
        .unwrap();
    assert!(last_progress_at < result_at);
}

#[tokio::test]
async fn numeric_progress_tokens_echo_as_numbers_and_none_without_a_token() {
    let client = quick(Client::builder()).await;
    client
        .send_line(r#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"three_steps","_meta":{"progressToken":7}}}"#)
        .unwrap();
    let messages = drain(&client).await;
    assert!(
        messages
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .all(|m| m["params"]["progressToken"] == 7)
    );
    let result = client.call_tool("three_steps", json!({})).await.unwrap();
    assert_eq!(result.text(), "done");
    assert!(drain(&client).await.is_empty());
}

#[tokio::test]
async fn set_level_filters_log_messages() {
    let client = quick(Client::builder()).await;
    assert_eq!(
        client.initialize_result().unwrap()["capabilities"]["logging"],
        json!({})
    );
    client.call_tool("chatty", json!({})).await.unwrap();
    let levels: Vec<Value> = drain(&client)
        .await
        .iter()
        .map(|m| m["params"]["level"].clone())
        .collect();
    assert_eq!(
        levels,
        [json!("info"), json!("warning"), json!("error")],
        "info is the default threshold"
    );

    assert_eq!(
        client
            .request("logging/setLevel", json!({"level": "warning"}))
            .await
            .unwrap(),
        json!({})
    );
    client.call_tool("chatty", json!({})).await.unwrap();
    let messages = drain(&client).await;
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[0]["params"],
        json!({"level": "warning", "data": "a warning"})
    );
    assert_eq!(
        messages[1]["params"],
        json!({"level": "error", "data": "an error", "logger": "db"})
    );

    for level in [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ] {
        assert_eq!(
            client
                .request("logging/setLevel", json!({"level": level}))
                .await
                .unwrap(),
            json!({})
        );
    }
    let error = client
        .request("logging/setLevel", json!({"level": "verbose"}))
        .await
        .unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32602);
}

/// Logs data that does not serialize (a map with tuple keys), then a line that does.
#[mcp_runtime::tool]
async fn unserializable_log(ctx: mcp_runtime::Context) -> String {
    let pairs = std::collections::BTreeMap::from([((1, 2), "pair")]);
    ctx.info(pairs).await;
    ctx.info("after").await;
    "logged".to_owned()
}

#[tokio::test]
async fn log_data_that_does_not_serialize_is_not_sent_as_null() {
    let client = Client::builder()
        .timeout(Duration::from_millis(300))
        .connect(Server::builder().tool(unserializable_log))
        .await
        .unwrap();
    client
        .call_tool("unserializable_log", json!({}))
        .await
        .unwrap();
    let params: Vec<Value> = drain(&client)
        .await
        .iter()
        .map(|m| m["params"].clone())
        .collect();
    assert_eq!(params, [json!({"level": "info", "data": "after"})]);
}

#[tokio::test]
async fn cancelling_stops_the_work_and_no_response_follows() {
    let client = quick(Client::builder()).await;
    PATIENT_FINISHED.store(false, Ordering::SeqCst);
    client
        .send_line(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"patient","arguments":{"millis":400}}}"#)
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    client
        .notify(
            "notifications/cancelled",
            json!({"requestId": "slow", "reason": "changed my mind"}),
        )
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        !PATIENT_FINISHED.load(Ordering::SeqCst),
        "the cancelled tool ran to the end"
    );
    assert!(drain(&client).await.is_empty());
    // Unknown and malformed cancellations are ignored.
    client
        .notify("notifications/cancelled", json!({"requestId": "never"}))
        .unwrap();
    client.notify("notifications/cancelled", json!({})).unwrap();
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}

fn form_capable() -> mcp_runtime::testing::ClientBuilder {
    Client::builder()
        .capabilities(json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}}))
}

#[tokio::test]
async fn elicitation_sends_the_restricted_form_schema_and_returns_a_typed_value() {
    let client = form_capable()
        .on_request(|method, params| {
            assert_eq!(method, "elicitation/create");
            let colour = if params["message"] == "Who are you?" { "dark" } else { "light" };
            Ok(json!({"action": "accept", "content": {
                "name": "Ada", "email": "ada@example.com", "newsletter": false, "colour": colour, "topics": ["rust_lang"]
            }}))
        })
        .connect(server())
        .await
        .unwrap();
    let result = client.call_tool("who", json!({})).await.unwrap();
    assert_eq!(
        result.text(),
        "Ada <ada@example.com> Dark [RustLang] None false"
    );
    let request = client.next_message().await.unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(
        request["params"]["requestedSchema"],
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your name.", "minLength": 1},
                "email": {"type": "string", "description": "Your email address.", "format": "email"},
                "age": {"type": "integer", "minimum": 0, "description": "How old you are.", "maximum": 150},
                "newsletter": {"type": "boolean", "description": "Whether to send news.", "default": true},
                "colour": {"type": "string", "oneOf": [{"const": "light", "title": "Light shade"}, {"const": "dark", "title": "Dark shade"}], "description": "Preferred colour."},
                "topics": {"type": "array", "items": {"type": "string", "enum": ["rust_lang", "go_lang"]}, "description": "Interests."}
            },
            "required": ["name", "email", "colour", "topics"]
        })
    );
}

#[tokio::test]
async fn declined_cancelled_and_unsupported_elicitations() {
    for (action, expected) in [("decline", "declined"), ("cancel", "cancelled")] {
        let client = form_capable()
            .on_request(move |_, _| Ok(json!({"action": action})))
            .connect(server())
            .await
            .unwrap();
        assert_eq!(
            client.call_tool("who", json!({})).await.unwrap().text(),
            expected
        );
    }
    let plain = Client::connect(server()).await.unwrap();
    let result = plain.call_tool("who", json!({})).await.unwrap();
    assert!(result.is_error);
    assert_eq!(result.text(), "the client does not support elicitation");
    // 2025-06-18 clients get the legacy titled-enum form.
    let june = form_capable()
        .protocol_version("2025-06-18")
        .on_request(|_, _| Ok(json!({"action": "decline"})))
        .connect(server())
        .await
        .unwrap();
    june.call_tool("who", json!({})).await.unwrap();
    let request = june.next_message().await.unwrap();
    let colour = &request["params"]["requestedSchema"]["properties"]["colour"];
    assert_eq!(colour["enum"], json!(["light", "dark"]));
    assert_eq!(colour["enumNames"], json!(["Light shade", "Dark shade"]));
    assert!(
        request["params"]["requestedSchema"]["properties"]["newsletter"]
            .get("default")
            .is_some()
    );
}

#[tokio::test]
async fn sampling_builds_create_message_and_reads_the_answer() {
    let client = form_capable()
        .on_request(|method, params| {
            assert_eq!(method, "sampling/createMessage");
            assert_eq!(params["maxTokens"], 50);
            assert_eq!(params["systemPrompt"], "Be brief.");
            assert_eq!(params["messages"], json!([{"role": "user", "content": {"type": "text", "text": "Why?"}}]));
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "Because."}, "model": "test-model", "stopReason": "endTurn"}))
        })
        .connect(server())
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("ask", json!({"question": "Why?"}))
            .await
            .unwrap()
            .text(),
        "test-model said: Because."
    );
    let refusing = form_capable()
        .on_request(|_, _| Err(ErrorObject::new(-1, "User rejected sampling request")))
        .connect(server())
        .await
        .unwrap();
    let result = refusing
        .call_tool("ask", json!({"question": "Why?"}))
        .await
        .unwrap();
    assert!(
        result.is_error && result.text().contains("User rejected"),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn a_client_that_never_answers_times_out_and_is_told_so() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    // A peer that reads the server's request and never replies: raw lines over a pipe.
    let service = server().build().unwrap();
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_side);
    tokio::spawn(async move { service.serve_connection(server_read, server_write).await });
    let (read, mut write) = tokio::io::split(client_side);
    let mut lines = BufReader::new(read).lines();
    let mut next = async move || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"mute","version":"1"}}}"#;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"question":"?"}}}"#;
    write
        .write_all(
            format!(
                "{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n{call}\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(next().await["id"], 0);
    let request = next().await;
    assert_eq!(request["method"], "sampling/createMessage");
    let cancelled = next().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    let result = next().await;
    assert_eq!(result["id"], 1);
    assert_eq!(result["result"]["isError"], true);
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not answer")
    );
    // A late answer is ignored, and the session goes on.
    let late = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        request["id"]
    );
    write
        .write_all(
            format!("{late}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}}\n").as_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(
        next().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
}

#[tokio::test]
async fn roots_are_listed_once_until_they_change() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let client = form_capable()
        .on_request(move |method, _| {
            assert_eq!(method, "roots/list");
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]}))
        })
        .connect(server())
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("workspace", json!({}))
            .await
            .unwrap()
            .text(),
        "1 file:///work"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    client.call_tool("workspace", json!({})).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    client
        .notify("notifications/roots/list_changed", json!({}))
        .unwrap();
    client.call_tool("workspace", json!({})).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// Who is calling, by their OAuth principal.
#[mcp_runtime::tool]
async fn caller(who: mcp_runtime::Principal) -> String {
    who.subject().unwrap_or("nobody").to_owned()
}

/// A greeting for the OAuth principal.
#[mcp_runtime::prompt]
fn greet_caller(who: mcp_runtime::Principal) -> String {
    format!("Hello, {}", who.subject().unwrap_or("nobody"))
}

#[tokio::test]
async fn a_context_parameter_the_request_cannot_give_is_named_in_the_answer() {
    // No OAuth, so no principal: the handler does not run, and the client hears which
    // parameter and why.
    let client = Client::connect(Server::builder().tool(caller).prompt(greet_caller))
        .await
        .unwrap();
    let why = "context parameter `who` is unavailable: this request carries no principal";
    let called = client
        .request_raw("tools/call", json!({"name": "caller", "arguments": {}}))
        .await
        .unwrap();
    assert!(called.to_string().contains(why), "{called}");
    let prompted = client
        .request_raw(
            "prompts/get",
            json!({"name": "greet_caller", "arguments": {}}),
        )
        .await
        .unwrap();
    assert!(prompted.to_string().contains(why), "{prompted}");
}

/// What the request said about itself, as the small context extractors read it, between two
/// arguments.
#[mcp_runtime::tool]
async fn request_facts(
    n: i64,
    id: mcp_runtime::protocol::RequestId,
    meta: mcp_runtime::context::Meta,
    version: mcp_runtime::ProtocolVersion,
    m: i64,
) -> String {
    let tag = meta.0.get("tag").and_then(Value::as_str).unwrap_or("none");
    format!("{} id={id} tag={tag} version={version}", n + m)
}

/// Adds two numbers, and reads nothing of its request.
#[mcp_runtime::tool]
async fn plain_sum(n: i64, m: i64) -> i64 {
    n + m
}

#[tokio::test]
async fn each_context_parameter_reads_its_own_request_and_a_tool_without_one_still_answers() {
    let client = Client::connect(Server::builder().tool(request_facts).tool(plain_sum))
        .await
        .unwrap();
    let version = client.initialize_result().unwrap()["protocolVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    // Two requests with their own ids and `_meta`: each handler sees its own, never another's
    // (nor a shared blank one).
    for (id, tag) in [("first", "a"), ("second", "b")] {
        let line = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "request_facts", "arguments": {"n": 2, "m": 3}, "_meta": {"tag": tag}},
        });
        let answer = client
            .send_line_and_receive(line.to_string())
            .await
            .unwrap();
        assert_eq!(answer["id"], id);
        assert_eq!(
            answer["result"]["content"][0]["text"],
            format!("5 id=\"{id}\" tag={tag} version={version}"),
            "{answer}"
        );
    }
    let answer = client
        .send_line_and_receive(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain_sum","arguments":{"n":4,"m":5},"_meta":{"tag":"x"}}}"#,
        )
        .await
        .unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(
        answer["result"]["structuredContent"]["result"], 9,
        "{answer}"
    );
}
