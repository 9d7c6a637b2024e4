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
    assert_eq!(
        add["description"],
        "Add two integers.\n\nA sum outside the 64-bit range is an error the model can read, \
         never a wrapped number."
    );
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
    // Overflow is a tool error, not a wrapped sum (i64::MAX + 1 is not i64::MIN).
    let result = client
        .call_tool("add", json!({"a": i64::MAX, "b": 1}))
        .await
        .unwrap();
    assert!(result.is_error, "{:?}", result.structured_content);
    assert!(
        result.text().contains("outside the 64-bit"),
        "{}",
        result.text()
    );
    let result = client
        .call_tool("add", json!({"a": i64::MIN, "b": -1}))
        .await
        .unwrap();
    assert!(result.is_error);
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

/// A session a shell script could send: the handshake and one call.
const SESSION: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":20,"b":22}}}"#,
    "\n",
);

/// The calculator example as a child process with these standard streams.
fn calculator(
    stdin: impl Into<std::process::Stdio>,
    stdout: impl Into<std::process::Stdio>,
    stderr: impl Into<std::process::Stdio>,
) -> tokio::process::Child {
    tokio::process::Command::new(mcp_tests::example_binary("calculator"))
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// The JSON-RPC lines of `output` (anything else, such as logs sharing the pipe, is skipped).
fn replies(output: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(output)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("jsonrpc").is_some())
        .collect()
}

fn assert_session_answered(lines: &[Value]) {
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        lines[1],
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}}})
    );
}

#[tokio::test]
async fn calculator_answers_a_piped_session() {
    use std::process::Stdio;
    let mut child = calculator(Stdio::piped(), Stdio::piped(), Stdio::null());
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, SESSION.as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success());
    assert_session_answered(&replies(&output.stdout));
}

/// stdin that is a file, not a pipe, is read by a thread instead of the reactor.
#[tokio::test]
async fn calculator_reads_stdin_from_a_file() {
    let path = std::env::temp_dir().join(format!("mcp-stdin-{}.jsonl", std::process::id()));
    std::fs::write(&path, SESSION).unwrap();
    let stdin = std::fs::File::open(&path).unwrap();
    let child = calculator(
        stdin,
        std::process::Stdio::piped(),
        std::process::Stdio::null(),
    );
    let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(output.status.success());
    assert_session_answered(&replies(&output.stdout));
}

/// stdout and stderr on one pipe: stdout stays blocking (served by a thread), so a log line
/// written meanwhile cannot fail, and the replies still arrive whole.
#[tokio::test]
async fn calculator_shares_a_pipe_between_stdout_and_stderr() {
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut child = calculator(
        std::process::Stdio::piped(),
        writer.try_clone().unwrap(),
        writer,
    );
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, SESSION.as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let read = tokio::task::spawn_blocking(move || {
        let mut output = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut output).map(|_| output)
    });
    let output = tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(child.wait().await.unwrap().success());
    assert_session_answered(&replies(&output));
}

/// A line over the size limit on a real pipe is skipped as it streams past, and the next
/// request is answered.
#[tokio::test]
async fn an_oversized_line_on_a_pipe_is_skipped() {
    use std::process::Stdio;
    let mut child = calculator(Stdio::piped(), Stdio::piped(), Stdio::null());
    let mut stdin = child.stdin.take().unwrap();
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt as _;
        stdin.write_all(SESSION.as_bytes()).await?;
        // 17 MiB of one string, past the 16 MiB default.
        stdin
            .write_all(br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":""#)
            .await?;
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..17 {
            stdin.write_all(&chunk).await?;
        }
        stdin.write_all(b"\"}}\n").await?;
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n")
            .await?;
        Ok::<_, std::io::Error>(())
    });
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    writer.await.unwrap().unwrap();
    assert!(output.status.success());
    let lines = replies(&output.stdout);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[2]["error"]["code"], -32600);
    assert_eq!(lines[3], json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
}
