//! Defects the conformance suite 0.2.0-alpha.12 (`--requirements 2026-07-28`) found in the
//! stateless era, pinned against the `everything` example over real stdio, and over HTTP where
//! that transport answers differently.

use hyper::{Request, StatusCode};
use mcp_runtime::Server;
use mcp_runtime::testing::Client;
use mcp_tests::spawn_example;
use serde_json::{Value, json};

use crate::fixtures::add;
use crate::http::{body_json, send, start};

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

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
