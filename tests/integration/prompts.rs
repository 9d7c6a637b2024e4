//! Prompts and prompt completion as a client sees them.

use mcp_runtime::Server;
use mcp_runtime::testing::Client;
use serde_json::json;

use crate::fixtures::*;

fn server() -> Server {
    Server::builder()
        .prompt(simple)
        .prompt(counter)
        .prompt(review)
        .prompt(refuse)
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments() {
    let client = Client::connect(server()).await.unwrap();
    assert_eq!(
        client.initialize_result().unwrap()["capabilities"],
        json!({"prompts": {"listChanged": true}, "completions": {}, "logging": {}})
    );
    let list = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(
        list["prompts"][0],
        json!({
            "name": "counter",
            "title": "Counter",
            "description": "Count things.",
            "arguments": [
                {"name": "count", "description": "How many.", "required": true},
                {"name": "label", "description": "What to call them."},
                {"name": "colour", "description": "The colour."}
            ]
        })
    );
    let names: Vec<&str> = list["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["counter", "refuse", "review", "simple"]);
}

#[tokio::test]
async fn arguments_are_parsed_from_strings() {
    let client = Client::connect(server()).await.unwrap();
    let result = client
        .request(
            "prompts/get",
            json!({"name": "counter", "arguments": {"count": "3", "colour": "red"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "3 things"}},
            {"role": "assistant", "content": {"type": "text", "text": "Some(Red)"}}
        ]})
    );
    let simple = client
        .request("prompts/get", json!({"name": "simple"}))
        .await
        .unwrap();
    assert_eq!(
        simple,
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}]})
    );
}

#[tokio::test]
async fn bad_arguments_are_invalid_params_naming_the_argument() {
    let client = Client::connect(server()).await.unwrap();
    let cases = [
        (
            json!({"name": "counter", "arguments": {"count": "many"}}),
            "invalid value for argument `count`: invalid digit found in string",
        ),
        (
            json!({"name": "counter", "arguments": {}}),
            "missing required argument `count`",
        ),
        (
            json!({"name": "counter", "arguments": {"count": "1", "colour": "green"}}),
            "invalid value for argument `colour`: unknown colour `green`",
        ),
        (json!({"name": "nope"}), "unknown prompt `nope`"),
        (
            json!({"name": "refuse", "arguments": {"reason": "no"}}),
            "refused: no",
        ),
    ];
    for (params, message) in cases {
        let error = client
            .request("prompts/get", params.clone())
            .await
            .unwrap_err();
        let error = error.rpc().unwrap();
        assert_eq!(error.code, -32602, "{params}");
        assert!(
            error.message.contains(message),
            "{params}: {}",
            error.message
        );
    }
}

#[tokio::test]
async fn every_content_kind_is_sent_and_shaped_by_revision() {
    let client = Client::connect(server()).await.unwrap();
    let result = client
        .request(
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "fn main() {}", "language": "rust"}}),
        )
        .await
        .unwrap();
    assert_eq!(result["description"], "rust");
    assert_eq!(
        result["messages"][0]["content"],
        json!({"type": "resource", "resource": {"uri": "file:///code", "mimeType": "text/plain", "text": "fn main() {}"}})
    );
    assert_eq!(
        result["messages"][1]["content"],
        json!({"type": "image", "data": "AQI=", "mimeType": "image/png"})
    );
    assert_eq!(
        result["messages"][2]["content"],
        json!({"type": "resource_link", "uri": "file:///code", "name": "code"})
    );
    let old = Client::builder()
        .protocol_version("2025-03-26")
        .connect(server())
        .await
        .unwrap();
    let result = old
        .request(
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        result["messages"][2]["content"],
        json!({"type": "text", "text": "resource: file:///code"})
    );
}

#[tokio::test]
async fn prompt_arguments_complete_from_functions_and_enums() {
    let client = Client::connect(server()).await.unwrap();
    let complete = |prompt: &str, argument: &str, value: &str| {
        client.request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": prompt}, "argument": {"name": argument, "value": value}}),
        )
    };
    assert_eq!(
        complete("review", "language", "ru").await.unwrap(),
        json!({"completion": {"values": ["python", "rust", "typescript"]}})
    );
    assert_eq!(
        complete("counter", "colour", "R").await.unwrap(),
        json!({"completion": {"values": ["red"]}})
    );
    assert_eq!(
        complete("counter", "label", "x").await.unwrap(),
        json!({"completion": {"values": []}})
    );
    assert_eq!(
        complete("nope", "x", "")
            .await
            .unwrap_err()
            .rpc()
            .unwrap()
            .code,
        -32602
    );
}
