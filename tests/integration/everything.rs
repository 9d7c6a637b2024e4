//! The `everything` example (the conformance catalogue) over real stdio, driven by a scripted
//! client that answers sampling and elicitation the way the conformance suite's client does.

use base64::Engine as _;
use mcp_runtime::testing::Client;
use mcp_tests::spawn_example;
use serde_json::{Value, json};

fn scripted() -> mcp_runtime::testing::ClientBuilder {
    Client::builder().capabilities(json!({"sampling": {}, "elicitation": {}})).on_request(|method, params| {
        Ok(match method {
            "sampling/createMessage" => json!({
                "role": "assistant",
                "content": {"type": "text", "text": "This is a test response from the client"},
                "model": "test-model",
                "stopReason": "endTurn"
            }),
            "elicitation/create" => {
                let properties = &params["requestedSchema"]["properties"];
                let content = if properties.get("username").is_some() {
                    json!({"username": "testuser", "email": "test@example.com"})
                } else if properties.get("verified").is_some() {
                    json!({"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false})
                } else if properties.get("name").is_some() {
                    json!({"name": "Alice"})
                } else if properties.get("ok").is_some() {
                    json!({"ok": true})
                } else if properties.get("color").is_some() {
                    json!({"color": "blue"})
                } else if properties.get("context").is_some() {
                    json!({"context": "test context"})
                } else {
                    json!({"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                           "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]})
                };
                json!({"action": "accept", "content": content})
            }
            "roots/list" => json!({"roots": [{"uri": "file:///workspace", "name": "workspace"}]}),
            _ => json!({}),
        })
    })
}

/// Calls a tool with a raw line and collects every message up to its result.
async fn call_collecting(
    client: &Client,
    id: &str,
    name: &str,
    arguments: Value,
    meta: Value,
) -> (Vec<Value>, Value) {
    let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments, "_meta": meta}});
    client.send_line(line.to_string()).unwrap();
    let mut before = Vec::new();
    loop {
        let message = client.next_message().await.unwrap();
        if message["id"] == id && message.get("method").is_none() {
            return (before, message);
        }
        before.push(message);
    }
}

fn decodes(base64: &Value) -> bool {
    base64::engine::general_purpose::STANDARD
        .decode(base64.as_str().unwrap_or("!"))
        .is_ok()
}

#[tokio::test]
async fn content_tools_answer_as_the_suite_expects() {
    let server = spawn_example("everything", scripted()).await.unwrap();
    let client = &server.client;
    let tools = client.list_tools().await.unwrap();
    assert!(
        tools
            .iter()
            .all(|t| t["description"].as_str().is_some_and(|d| !d.is_empty())
                && t["inputSchema"]["type"] == "object")
    );
    let simple = client
        .request("tools/call", json!({"name": "test_simple_text"}))
        .await
        .unwrap();
    assert_eq!(
        simple["content"][0]["text"],
        "This is a simple text response for testing."
    );
    let image = client
        .call_tool("test_image_content", json!({}))
        .await
        .unwrap();
    let image = serde_json::to_value(&image).unwrap();
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    assert!(decodes(&image["content"][0]["data"]));
    let audio = serde_json::to_value(
        client
            .call_tool("test_audio_content", json!({}))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    assert!(decodes(&audio["content"][0]["data"]));
    let embedded = serde_json::to_value(
        client
            .call_tool("test_embedded_resource", json!({}))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        embedded["content"][0]["resource"],
        json!({"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."})
    );
    let mixed = serde_json::to_value(
        client
            .call_tool("test_multiple_content_types", json!({}))
            .await
            .unwrap(),
    )
    .unwrap();
    let kinds: Vec<&str> = mixed["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    let error = client
        .call_tool("test_error_handling", json!({}))
        .await
        .unwrap();
    assert!(error.is_error);
    assert_eq!(
        error.text(),
        "This tool intentionally returns an error for testing"
    );
}

#[tokio::test]
async fn logging_and_progress_arrive_before_the_result() {
    let server = spawn_example("everything", scripted()).await.unwrap();
    let client = &server.client;
    assert_eq!(
        client
            .request("logging/setLevel", json!({"level": "debug"}))
            .await
            .unwrap(),
        json!({})
    );
    let (before, result) = call_collecting(
        client,
        "log",
        "test_tool_with_logging",
        json!({}),
        json!({}),
    )
    .await;
    let logs: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 3);
    assert_eq!(
        logs[0]["params"],
        json!({"level": "info", "data": "Tool execution started"})
    );
    assert!(result["result"]["content"][0]["text"].is_string());

    let (before, _) = call_collecting(
        client,
        "prog",
        "test_tool_with_progress",
        json!({}),
        json!({"progressToken": 1}),
    )
    .await;
    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3);
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(values, [0.0, 50.0, 100.0]);
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == 1 && p["params"]["total"] == 100.0)
    );
}

#[tokio::test]
async fn sampling_and_elicitation_exchanges() {
    let server = spawn_example("everything", scripted()).await.unwrap();
    let client = &server.client;
    let (before, result) = call_collecting(
        client,
        "s",
        "test_sampling",
        json!({"prompt": "Test prompt for sampling"}),
        json!({}),
    )
    .await;
    assert_eq!(before[0]["method"], "sampling/createMessage");
    assert_eq!(
        before[0]["params"],
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}], "maxTokens": 100})
    );
    assert_eq!(
        result["result"]["content"][0]["text"],
        "LLM response: This is a test response from the client"
    );

    let (before, result) = call_collecting(
        client,
        "e",
        "test_elicitation",
        json!({"message": "Please provide your information"}),
        json!({}),
    )
    .await;
    assert_eq!(
        before[0]["params"],
        json!({"message": "Please provide your information", "requestedSchema": {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            },
            "required": ["username", "email"]
        }})
    );
    assert_eq!(
        result["result"]["content"][0]["text"],
        r#"User response: action=accept, content={"username":"testuser","email":"test@example.com"}"#
    );

    let (before, result) = call_collecting(
        client,
        "d",
        "test_elicitation_sep1034_defaults",
        json!({}),
        json!({}),
    )
    .await;
    let properties = &before[0]["params"]["requestedSchema"]["properties"];
    assert_eq!(properties["name"]["default"], "John Doe");
    assert_eq!(
        properties["age"],
        json!({"type": "integer", "description": "User age", "default": 30})
    );
    assert_eq!(properties["score"]["default"], 95.5);
    assert_eq!(
        properties["status"]["enum"],
        json!(["active", "inactive", "pending"])
    );
    assert_eq!(properties["status"]["default"], "active");
    assert_eq!(
        properties["verified"],
        json!({"type": "boolean", "description": "Verification status", "default": true})
    );
    assert!(
        before[0]["params"]["requestedSchema"]
            .get("required")
            .is_none()
    );
    assert!(result["result"].get("isError").is_none(), "{result}");

    let (before, result) = call_collecting(
        client,
        "n",
        "test_elicitation_sep1330_enums",
        json!({}),
        json!({}),
    )
    .await;
    let properties = &before[0]["params"]["requestedSchema"]["properties"];
    assert_eq!(
        properties["untitledSingle"]["enum"],
        json!(["option1", "option2", "option3"])
    );
    assert!(properties["untitledSingle"].get("oneOf").is_none());
    assert_eq!(
        properties["titledSingle"]["oneOf"][0],
        json!({"const": "value1", "title": "First Option"})
    );
    assert!(properties["titledSingle"].get("enum").is_none());
    assert_eq!(
        properties["legacyEnum"]["enumNames"],
        json!(["Option One", "Option Two", "Option Three"])
    );
    assert_eq!(
        properties["untitledMulti"]["items"],
        json!({"type": "string", "enum": ["option1", "option2", "option3"]})
    );
    assert_eq!(
        properties["titledMulti"]["items"]["anyOf"][2],
        json!({"const": "value3", "title": "Third Choice"})
    );
    assert!(result["result"].get("isError").is_none(), "{result}");
}

#[tokio::test]
async fn resources_prompts_and_completion() {
    let server = spawn_example("everything", scripted()).await.unwrap();
    let client = &server.client;
    let caps = &client.initialize_result().unwrap()["capabilities"];
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(caps["completions"], json!({}));
    let text = client
        .request("resources/read", json!({"uri": "test://static-text"}))
        .await
        .unwrap();
    assert_eq!(
        text["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let binary = client
        .request("resources/read", json!({"uri": "test://static-binary"}))
        .await
        .unwrap();
    assert!(decodes(&binary["contents"][0]["blob"]));
    let data = client
        .request("resources/read", json!({"uri": "test://template/123/data"}))
        .await
        .unwrap();
    let parsed: Value =
        serde_json::from_str(data["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        parsed,
        json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
    );
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        assert_eq!(
            client
                .request(method, json!({"uri": "test://watched-resource"}))
                .await
                .unwrap(),
            json!({})
        );
    }
    let with_args = client
        .request("prompts/get", json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}))
        .await
        .unwrap();
    assert_eq!(
        with_args["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    );
    let embedded = client
        .request("prompts/get", json!({"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://example-resource"}}))
        .await
        .unwrap();
    assert_eq!(
        embedded["messages"][0]["content"]["resource"]["uri"],
        "test://example-resource"
    );
    let image = client
        .request("prompts/get", json!({"name": "test_prompt_with_image"}))
        .await
        .unwrap();
    assert!(decodes(&image["messages"][0]["content"]["data"]));
    let completion = client
        .request("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "test"}}))
        .await
        .unwrap();
    assert_eq!(
        completion["completion"]["values"],
        json!(["test", "testing"])
    );
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}

/// The 2026-07-28 fixtures: each input-required tool and the prompt complete after the client's
/// answers, a client without `sampling` gets -32021, and the catalogue lists the full 2020-12
/// schema and a header-mirrored string argument as the suite looks for them.
#[tokio::test]
async fn stateless_fixtures_of_the_2026_suite() {
    let builder = scripted()
        .capabilities(json!({"sampling": {}, "elicitation": {}, "roots": {}}))
        .stateless();
    let server = spawn_example("everything", builder).await.unwrap();
    let client = &server.client;
    let text = |result: &Value| {
        result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    for (tool, expected) in [
        ("test_input_required_result_elicitation", "Hello, Alice!"),
        (
            "test_input_required_result_sampling",
            "Sampling result: This is a test response from the client",
        ),
        (
            "test_input_required_result_list_roots",
            "Roots: file:///workspace",
        ),
        (
            "test_input_required_result_request_state",
            "state-ok: confirmed=true",
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Hello, Alice! Greeting: This is a test response from the client; 1 root(s)",
        ),
        (
            "test_input_required_result_multi_round",
            "Both steps done, Alice likes blue",
        ),
        ("test_input_required_result_tampered_state", "state-ok"),
        ("test_input_required_result_capabilities", "Hello, Alice!"),
        ("test_streaming_elicitation", "Hello, Alice!"),
    ] {
        let result = client
            .request("tools/call", json!({"name": tool, "arguments": {}}))
            .await
            .unwrap();
        assert_eq!(result["resultType"], "complete", "{tool}: {result}");
        assert_eq!(text(&result), expected, "{tool}");
    }
    let first = client
        .request_raw(
            "tools/call",
            json!({"name": "test_input_required_result_elicitation", "arguments": {}}),
        )
        .await
        .unwrap();
    assert_eq!(first["result"]["resultType"], "input_required");
    let requests = first["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    assert!(
        requests
            .values()
            .all(|r| r["method"] == "elicitation/create")
    );

    let prompt = client
        .request(
            "prompts/get",
            json!({"name": "test_input_required_result_prompt", "arguments": {}}),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "A prompt for test context."
    );

    let tools = client.list_tools().await.unwrap();
    let schema = &tools
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .unwrap()["inputSchema"];
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert_eq!(
        schema["allOf"][0]["anyOf"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(
        schema["if"]["properties"]["contactMethod"]["const"],
        "phone"
    );
    assert_eq!(schema["then"]["required"], json!(["phone"]));
    assert_eq!(schema["else"]["required"], json!(["email"]));
    assert_eq!(schema["additionalProperties"], false);
    let header = &tools
        .iter()
        .find(|t| t["name"] == "test_header_echo")
        .unwrap()["inputSchema"];
    assert_eq!(header["properties"]["region"]["type"], "string");
    assert_eq!(header["properties"]["region"]["x-mcp-header"], "Region");

    let bare = Client::builder().stateless();
    let server = spawn_example("everything", bare).await.unwrap();
    let missing = server
        .client
        .request_raw(
            "tools/call",
            json!({"name": "test_missing_capability", "arguments": {}}),
        )
        .await
        .unwrap();
    assert_eq!(missing["error"]["code"], -32021, "{missing}");
    assert_eq!(
        missing["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

/// `--rate-limit N` on stdio: N `tools/call` a second on the connection, the rest refused with
/// -32023 (`RateLimited`, SEP-3304) and an integer `retryAfterMs`, other methods untouched;
/// `--metrics-port M` serves the calls' count.
#[tokio::test]
async fn the_rate_limit_and_metrics_flags_on_stdio() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let port_arg = port.to_string();
    let server = mcp_tests::spawn_example_with(
        "everything",
        &["--rate-limit", "2", "--metrics-port", &port_arg],
        Client::builder(),
    )
    .await
    .unwrap();
    let client = &server.client;
    let mut refused = Vec::new();
    for _ in 0..4 {
        if let Err(error) = client
            .request("tools/call", json!({"name": "test_simple_text"}))
            .await
        {
            refused.push(error.rpc().unwrap().clone());
        }
    }
    assert!(!refused.is_empty(), "4 calls at once are over 2 a second");
    for error in &refused {
        assert_eq!(error.code, -32023, "{error:?}");
        // Whole milliseconds (an integer, not 0.4), within the half second a call at 2 a second
        // takes to come back.
        let data = error.data.as_ref().expect("data");
        let millis = data["retryAfterMs"].as_u64();
        assert!(millis.is_some_and(|ms| (1..=500).contains(&ms)), "{data}");
    }
    client.request("tools/list", json!({})).await.unwrap();
    // The metrics port answers with the calls that ran.
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(
        &mut stream,
        format!("GET /metrics HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut text = String::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut text),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let served = 4 - refused.len();
    assert!(
        text.contains(&format!(
            "gen_ai_tool_name=\"test_simple_text\",gen_ai_operation_name=\"execute_tool\",mcp_protocol_version=\"2025-11-25\",network_transport=\"pipe\"}} {served}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("error_type=\"-32023\""),
        "the refusals are counted too: {text}"
    );
}
