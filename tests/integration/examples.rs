//! The feature examples (`resources`, `prompts`, `context`, `http`) as real child processes:
//! each serves what its file says, over real stdio or a real socket.

use std::process::Stdio;

use hyper::{Request, StatusCode};
use mcp_runtime::testing::Client;
use mcp_tests::{example_binary, spawn_example};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::http::{WAIT, body_json, post, send};

async fn complete(client: &Client, reference: Value, argument: &str, value: &str) -> Value {
    let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
    let result = client.request("completion/complete", params).await.unwrap();
    result["completion"]["values"].clone()
}

#[tokio::test]
async fn resources_example_lists_reads_and_completes() {
    let server = spawn_example("resources", Client::builder()).await.unwrap();
    let client = &server.client;
    let listed = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"library://catalogue"), "{uris:?}");
    assert!(uris.contains(&"library://books/dune"), "{uris:?}");
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(templates["resourceTemplates"].as_array().unwrap().len(), 2);

    let read = client
        .request(
            "resources/read",
            json!({"uri": "library://genres/fiction?limit=1"}),
        )
        .await
        .unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "application/json");
    let books: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        books,
        json!([{"id": "dune", "title": "Dune", "genre": "fiction"}])
    );
    let missing = client
        .request("resources/read", json!({"uri": "library://books/nope"}))
        .await
        .unwrap_err();
    assert_eq!(missing.rpc().unwrap().code, -32002);

    let books_ref = json!({"type": "ref/resource", "uri": "library://books/{id}"});
    assert_eq!(
        complete(client, books_ref, "id", "d").await,
        json!(["dune", "dracula"])
    );
    let genres_ref = json!({"type": "ref/resource", "uri": "library://genres/{genre}{?limit}"});
    assert_eq!(
        complete(client, genres_ref, "genre", "h").await,
        json!(["history"])
    );
}

#[tokio::test]
async fn prompts_example_parses_arguments_and_completes() {
    let server = spawn_example("prompts", Client::builder()).await.unwrap();
    let client = &server.client;
    let listed = client.request("prompts/list", json!({})).await.unwrap();
    let names: Vec<&str> = listed["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["explain", "greet", "review"]);

    let explain = client
        .request(
            "prompts/get",
            json!({"name": "explain", "arguments": {"topic": "tides"}}),
        )
        .await
        .unwrap();
    let messages = explain["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[0]["content"]["text"],
        "Explain tides to a curious adult."
    );
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[2]["content"]["text"], "2 short paragraphs.");

    let wrong = client
        .request(
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x", "strictness": "harsh"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.rpc().unwrap().code, -32602);

    let explain_ref = json!({"type": "ref/prompt", "name": "explain"});
    assert_eq!(
        complete(client, explain_ref, "audience", "c").await,
        json!(["children"])
    );
    let review_ref = json!({"type": "ref/prompt", "name": "review"});
    assert_eq!(
        complete(client, review_ref, "strictness", "t").await,
        json!(["thorough"])
    );
}

#[tokio::test]
async fn context_example_logs_reports_progress_and_asks_the_client() {
    let builder = Client::builder()
        .capabilities(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
        .on_request(|method, _| match method {
            "elicitation/create" => Ok(json!({"action": "accept",
                "content": {"name": "Ada", "drink": "tea", "sugars": 1}})),
            "sampling/createMessage" => Ok(json!({"role": "assistant", "model": "test",
                "content": {"type": "text", "text": "an old pond"}})),
            "roots/list" => Ok(json!({"roots": [{"uri": "file:///work"}]})),
            other => Err(mcp_runtime::protocol::ErrorObject::method_not_found(other)),
        });
    let server = spawn_example("context", builder).await.unwrap();
    let client = &server.client;
    client
        .request("logging/setLevel", json!({"level": "debug"}))
        .await
        .unwrap();
    let counted = client
        .request(
            "tools/call",
            json!({"name": "count", "arguments": {"to": 2}, "_meta": {"progressToken": "p"}}),
        )
        .await
        .unwrap();
    assert_eq!(counted["content"][0]["text"], "counted to 2");
    let mut methods = Vec::new();
    for _ in 0..5 {
        methods.push(client.next_message().await.unwrap()["method"].clone());
    }
    assert_eq!(
        methods,
        [
            "notifications/message",
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message"
        ]
    );

    let order = client.call_tool("order", json!({})).await.unwrap();
    assert_eq!(order.text(), "Tea with 1 sugars for Ada");
    let haiku = client
        .call_tool("haiku", json!({"topic": "frogs"}))
        .await
        .unwrap();
    assert_eq!(haiku.text(), "an old pond");
    let roots = client.call_tool("workspace", json!({})).await.unwrap();
    assert_eq!(roots.text(), "file:///work");
}

#[tokio::test]
async fn context_example_questions_are_tool_errors_without_the_capability() {
    let server = spawn_example("context", Client::builder()).await.unwrap();
    let result = server.client.call_tool("order", json!({})).await.unwrap();
    assert!(result.is_error);
    assert_eq!(result.text(), "the client does not support elicitation");
}

#[tokio::test]
async fn http_example_serves_both_eras_next_to_its_own_route() {
    let mut child = tokio::process::Command::new(example_binary("http"))
        .args(["--port", "0"])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the http example");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, stderr.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let addr = line
        .strip_prefix("serving MCP on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_owned();

    let health = Request::get("/health")
        .header("host", &addr)
        .body(String::new())
        .unwrap();
    let health = send(&addr, health).await;
    assert_eq!(health.status(), StatusCode::OK);

    // The handshake era: a session, then a call.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = send(&addr, post(&addr, None, init)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        body_json(response).await["result"]["serverInfo"]["name"],
        "http-example"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    send(&addr, post(&addr, Some(&session), initialized)).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let response = send(&addr, post(&addr, Some(&session), call)).await;
    // A quick, silent tool: plain JSON even to a client that takes streams.
    assert_eq!(response.headers()["content-type"], "application/json");
    let answer = body_json(response).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"result": 5}));

    // The stateless era on the same endpoint: no session, cache hints as configured.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let request = Request::post("/mcp")
        .header("host", &addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(list.to_string())
        .unwrap();
    let response = send(&addr, request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    let result = &body_json(response).await["result"];
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["tools"].as_array().unwrap().len(), 2);
}

/// The `openapi` example against a real HTTP server (the echo server of `tests/support/echo.rs`,
/// which answers with the request it saw): each generated tool sends the request its
/// description says, and the hand-written replacement calls the generated function.
#[tokio::test]
async fn openapi_example_calls_the_api_at_its_base_url() {
    let addr = mcp_tests::echo::start().await;
    let base = format!("http://{addr}");
    let server =
        mcp_tests::spawn_example_with("openapi", &["--base-url", &base], Client::builder())
            .await
            .unwrap();
    let client = &server.client;
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["add_book", "get_book", "list_books", "remove_book_politely"]
    );

    let seen = |result: &mcp_runtime::CallToolResult| -> Value {
        assert!(!result.is_error, "{}", result.text());
        serde_json::from_str(&result.text()).unwrap()
    };
    let listed = client
        .call_tool("list_books", json!({"author": "Le Guin", "limit": 2}))
        .await
        .unwrap();
    let request = seen(&listed);
    assert_eq!(request["method"], "GET");
    assert_eq!(request["target"], "/books?author=Le+Guin&limit=2");
    // The list's schema is not an object's: its JSON goes in `{"result": ..}`.
    assert_eq!(listed.structured_content, Some(json!({"result": request})));

    let added = seen(
        &client
            .call_tool(
                "add_book",
                json!({"title": "Dune", "author": "Herbert", "year": 1965}),
            )
            .await
            .unwrap(),
    );
    assert_eq!(added["method"], "POST");
    let body: Value = serde_json::from_str(added["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"title": "Dune", "author": "Herbert", "year": 1965})
    );

    let removed = client
        .call_tool(
            "remove_book_politely",
            json!({"book_id": 7, "reason": "worn out"}),
        )
        .await
        .unwrap();
    assert_eq!(removed.text(), "book 7 removed (200)");

    let wrong = client
        .call_tool("get_book", json!({"bookId": "seven"}))
        .await
        .unwrap();
    assert!(wrong.is_error);
    assert_eq!(
        wrong.text(),
        "GET /books/{bookId}: argument `bookId` must be an integer"
    );
}

/// The gateway example with no upstream: its own tools and the server it mounts (the proxies
/// are driven in tests/integration/gateway.rs and tests/python/test_gateway.py).
#[tokio::test]
async fn gateway_example_serves_its_own_items_and_a_mounted_server() {
    let server = spawn_example("gateway", Client::builder()).await.unwrap();
    let client = &server.client;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["echo", "math_add", "math_multiply", "upstreams"]);
    let sum = client
        .call_tool("math_add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 5})));
    let none = client.call_tool("upstreams", json!({})).await.unwrap();
    assert_eq!(none.text(), "");
}

#[tokio::test]
async fn an_http_server_serves_stdio_when_the_environment_says_so() {
    // `everything --port` serves Streamable HTTP through `serve_http`; with the variable that
    // `cargo mcp dev` sets it answers on stdin and stdout instead, and binds nothing.
    let mut child = tokio::process::Command::new(example_binary("everything"))
        .args(["--port", "0"])
        .env("MCP_RUNTIME_TRANSPORT", "stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the everything example");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let client = Client::builder()
        .timeout(WAIT)
        .connect_io(stdout, stdin)
        .await
        .unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "test_simple_text"),
        "{listed}"
    );
}

/// Every example built by default answers `--help` (and `-h`) with its usage on stdout and exit
/// status 0, before it serves anything: a stdio example does not wait for input, and the
/// gateway does not take the flag for an unknown argument. (`otlp` needs `--features otel`,
/// which the default build leaves out.)
#[test]
fn every_example_prints_its_usage_for_help() {
    let examples = [
        "auth",
        "calculator",
        "context",
        "dynamic",
        "everything",
        "gateway",
        "http",
        "notes",
        "openapi",
        "prompts",
        "resources",
        "skills_apps",
        "tasks",
    ];
    for name in examples {
        for flag in ["--help", "-h"] {
            // stdin closed: an example that served stdio instead would read EOF and exit 0
            // with nothing on stdout, which the usage check below tells apart.
            let output = std::process::Command::new(example_binary(name))
                .arg(flag)
                .stdin(Stdio::null())
                .output()
                .expect("run the example");
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "{name} {flag}: {:?}, stderr {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                stdout.starts_with(&format!("usage: {name} ")),
                "{name} {flag} printed: {stdout}"
            );
        }
    }
}
