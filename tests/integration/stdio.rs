//! The calculator example as a real child process on real stdio.

use std::time::Duration;

use mcp_runtime::testing::Client;
use mcp_tests::spawn_example;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

fn validate(schema: &Value, instance: &Value) {
    let validator = jsonschema::draft202012::new(schema).expect("a valid 2020-12 schema");
    assert!(
        validator.is_valid(instance),
        "{instance} does not validate against {schema}"
    );
}

#[tokio::test]
async fn calculator_lists_documented_tools() {
    let server = spawn_example("calculator", Client::builder())
        .await
        .unwrap();
    let client = &server.client;
    let init = client.initialize_result().unwrap();
    assert_eq!(init["serverInfo"]["name"], "calculator");
    assert_eq!(
        init["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "divide", "statistics"]);
    let add = &tools[0];
    assert_eq!(add["description"], "Add two integers.");
    assert_eq!(
        add["inputSchema"]["properties"]["a"]["description"],
        "The first addend."
    );
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    let statistics = &tools[2];
    assert_eq!(statistics["inputSchema"]["required"], json!(["numbers"]));
    assert_eq!(statistics["outputSchema"]["type"], "object");
    assert!(statistics["outputSchema"]["properties"]["mean"].is_object());
}

#[tokio::test]
async fn calculator_struct_tool_returns_structured_content_matching_its_schema() {
    let server = spawn_example("calculator", Client::builder())
        .await
        .unwrap();
    let client = &server.client;
    let tools = client.list_tools().await.unwrap();
    let schema = &tools.iter().find(|t| t["name"] == "statistics").unwrap()["outputSchema"];
    for numbers in [json!([1, 2, 3.5]), json!([])] {
        let result = client
            .call_tool("statistics", json!({"numbers": numbers}))
            .await
            .unwrap();
        assert!(!result.is_error);
        let structured = result.structured_content.clone().unwrap();
        validate(schema, &structured);
        assert_eq!(
            serde_json::from_str::<Value>(&result.text()).unwrap(),
            structured
        );
    }
    let result = client
        .call_tool("statistics", json!({"numbers": [1, 2, 3.5]}))
        .await
        .unwrap();
    assert_eq!(result.structured_content.unwrap()["mean"], 2.166667);
}

#[tokio::test]
async fn calculator_errors_are_the_spec_errors_and_service_continues() {
    let server = spawn_example("calculator", Client::builder())
        .await
        .unwrap();
    let client = &server.client;
    let result = client
        .call_tool("divide", json!({"dividend": 1, "divisor": 0}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("divide by zero"));
    let result = client.call_tool("add", json!({"a": "x"})).await.unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("argument `a`"), "{}", result.text());
    let error = client
        .request("tools/call", json!({"name": "multiply", "arguments": {}}))
        .await
        .unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32602);
    let reply = client
        .send_line_and_receive("this is not json")
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(
        client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .text(),
        "5"
    );
}

#[tokio::test]
async fn calculator_exits_cleanly_on_eof_and_logs_only_to_stderr() {
    let mut server = spawn_example("calculator", Client::builder())
        .await
        .unwrap();
    let mut stderr = server.child.stderr.take().unwrap();
    server
        .client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    // Anything on stdout that is not JSON would arrive as a string in the inbox.
    server.client.request("ping", json!({})).await.unwrap();
    let status = {
        let mcp_tests::ChildServer { client, mut child } = server;
        client.close();
        tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .expect("exits on EOF")
            .unwrap()
    };
    assert!(status.success(), "{status}");
    let mut logs = String::new();
    stderr.read_to_string(&mut logs).await.unwrap();
    assert!(!logs.contains("\"jsonrpc\""), "protocol on stderr: {logs}");
}

#[tokio::test]
async fn calculator_answers_a_piped_session() {
    let binary = mcp_tests::example_binary("calculator");
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":20,"b":22}}}"#,
        "\n",
    );
    let mut child = tokio::process::Command::new(binary)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, input.as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success());
    let lines: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        lines[1],
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}}})
    );
}
