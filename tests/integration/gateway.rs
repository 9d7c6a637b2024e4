//! Gateways: `Server::mount` (in-process, checked when the server is built) and
//! `Server::proxy` (real MCP servers through `mcp_runtime::client`), driven with the
//! in-process testing client in both eras. The upstreams nobody here wrote are installed by
//! `scripts/client-upstreams.sh`: `@modelcontextprotocol/server-everything` (stdio and
//! Streamable HTTP), `mcp-server-time` and the Python SDK's `MCPServer`
//! (tests/python/upstream_server.py); our own `everything` example runs as a child too.
//! tests/python/test_gateway.py drives the `gateway` example with the official Python SDK
//! client.

use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::client::{Stderr, StdioCommand};
use mcp_runtime::gateway::{Upstream, UpstreamState};
use mcp_runtime::middleware::{self, McpLayer, McpRequest, Next};
use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use mcp_runtime::{CallToolResult, Error, McpService};
use mcp_tests::example_binary;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use super::upstreams::{free_port, listening, node, python, root, server_everything_js};

/// How long any one wait in these tests may take.
const WAIT: Duration = Duration::from_secs(20);

/// `@modelcontextprotocol/server-everything` on stdio.
fn server_everything() -> StdioCommand {
    StdioCommand::new(node())
        .arg(server_everything_js())
        .arg("stdio")
        .stderr(Stderr::Capture)
}

/// `mcp-server-time` (PyPI) on stdio.
fn server_time() -> StdioCommand {
    StdioCommand::new(python())
        .args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
        .stderr(Stderr::Capture)
}

/// Our `everything` example on stdio.
fn our_everything() -> StdioCommand {
    StdioCommand::new(example_binary("everything")).stderr(Stderr::Capture)
}

/// Our `everything` over Streamable HTTP on `port`.
async fn our_everything_http(port: u16) -> Child {
    let mut command = Command::new(example_binary("everything"));
    command.args(["--port", &port.to_string()]);
    listening(command, port).await
}

/// `server` built, once every upstream it proxies is connected.
async fn connected(server: Server) -> McpService {
    let service = server.build().unwrap();
    service.ready().await;
    tokio::time::timeout(WAIT, async {
        while !service
            .upstreams()
            .iter()
            .all(|s| matches!(s.state, UpstreamState::Connected { .. }))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the upstreams did not connect: {:?}", service.upstreams()));
    service
}

fn names(list: &[Value]) -> Vec<String> {
    list.iter()
        .map(|item| item["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn listed(client: &Client, method: &str, key: &str) -> Vec<Value> {
    let result = client.request(method, json!({})).await.unwrap();
    result[key].as_array().cloned().unwrap_or_default()
}

/// What `client` got for calling `tool` with `arguments`, which must be answered.
async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    client.call_tool(tool, arguments).await.unwrap()
}

/// The next notification with `method` (others are skipped), within [`WAIT`].
async fn notification(client: &Client, method: &str) -> Value {
    tokio::time::timeout(WAIT, async {
        loop {
            let message = client.next_message().await.expect("a message");
            if message["method"] == method {
                return message;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {method} arrived"))
}

/// A downstream client that answers sampling, elicitation (filling the form in) and roots.
fn answering(era: &str) -> mcp_runtime::testing::ClientBuilder {
    let builder = Client::builder()
        .capabilities(json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {}}))
        .timeout(WAIT)
        .on_request(|method, params| match method {
            "sampling/createMessage" => Ok(json!({
                "role": "assistant",
                "model": "downstream-model",
                "content": {"type": "text", "text": "answered by the downstream client"},
                "stopReason": "endTurn",
            })),
            "elicitation/create" => {
                let mut content = serde_json::Map::new();
                if let Some(Value::Object(properties)) = params["requestedSchema"].get("properties")
                {
                    for (name, property) in properties {
                        let value = match property["type"].as_str() {
                            Some("boolean") => json!(true),
                            Some("integer") => json!(7),
                            Some("number") => json!(3.5),
                            Some("array") => continue,
                            _ => match property.get("enum").and_then(|e| e.get(0)) {
                                Some(first) => first.clone(),
                                None => match property["format"].as_str() {
                                    Some("email") => json!("ada@example.com"),
                                    Some("uri") => json!("https://example.com"),
                                    Some("date") => json!("1815-12-10"),
                                    Some("date-time") => json!("1815-12-10T00:00:00Z"),
                                    _ => json!("Ada"),
                                },
                            },
                        };
                        content.insert(name.clone(), value);
                    }
                }
                Ok(json!({"action": "accept", "content": content}))
            }
            _ => Ok(json!({"roots": [{"uri": "file:///downstream/project", "name": "project"}]})),
        });
    match era {
        "stateless" => builder.stateless().log_level("debug"),
        _ => builder,
    }
}

/// A client of `service` as [`answering`] makes it, in `era`.
async fn downstream(service: &McpService, era: &str) -> Client {
    answering(era).connect_service(service).await.unwrap()
}

// ---------------------------------------------------------------------------------------------
// Mount: in-process, checked when the server is built.

/// Tomorrow's weather in a city; asks the user which unit they want.
#[tool]
async fn gw_forecast(city: String, ctx: Context) -> Result<String, ToolError> {
    #[derive(Deserialize, Elicit)]
    struct Unit {
        /// Celsius or Fahrenheit?
        unit: String,
    }
    let unit = match ctx.elicit::<Unit>("Which unit?").await? {
        Elicitation::Accept(form) => form.unit,
        _ => "C".to_owned(),
    };
    Ok(format!("Sunny in {city}, 21 {unit}"))
}

/// The weather stations.
#[resource("weather://stations", mime_type = "text/plain")]
async fn gw_stations() -> &'static str {
    "Oslo, Lyon"
}

/// One station's readings.
#[resource("weather://stations/{id}", mime_type = "text/plain")]
async fn gw_station(id: String) -> String {
    format!("readings of {id}")
}

/// Ask about the weather.
#[prompt]
fn gw_ask(city: String) -> String {
    format!("What is the weather in {city}?")
}

/// Add two integers.
#[tool]
async fn gw_add(a: i64, b: i64) -> i64 {
    a + b
}

/// A tool whose name the `weather` namespace owns once a mount takes it.
#[tool(name = "weather_gw_forecast")]
async fn gw_squatter() -> &'static str {
    "not the forecast"
}

/// Another server's items under a namespace, in both eras: names prefixed, URIs kept, the
/// handler in the outer request's context (its question reaches the outer client, as an
/// `input_required` round in 2026-07-28), its server's required scopes carried, and the
/// mounted `#[tool]` left out of the outer `Server::new` selection.
#[tokio::test]
async fn mount_serves_another_servers_items_under_a_namespace() {
    let weather = Server::builder()
        .tool(gw_forecast)
        .resource(gw_stations)
        .resource(gw_station)
        .prompt(gw_ask)
        .required_scopes(["weather:read"]);
    let service = Server::builder()
        .tool(gw_add)
        .mount("weather", weather)
        .build()
        .unwrap();
    for era in ["handshake", "stateless"] {
        let client = answering(era)
            .on_request(|_, _| Ok(json!({"action": "accept", "content": {"unit": "K"}})))
            .connect_service(&service)
            .await
            .unwrap();
        let tools = client.list_tools().await.unwrap();
        assert_eq!(names(&tools), ["gw_add", "weather_gw_forecast"], "{era}");
        let forecast = call(&client, "weather_gw_forecast", json!({"city": "Oslo"})).await;
        assert_eq!(forecast.text(), "Sunny in Oslo, 21 K", "{era}");
        let prompts = listed(&client, "prompts/list", "prompts").await;
        assert_eq!(names(&prompts), ["weather_gw_ask"], "{era}");
        let asked = client
            .request(
                "prompts/get",
                json!({"name": "weather_gw_ask", "arguments": {"city": "Lyon"}}),
            )
            .await
            .unwrap();
        assert!(asked.to_string().contains("weather in Lyon"), "{asked}");
        let read = client
            .request(
                "resources/read",
                json!({"uri": "weather://stations/oslo-1"}),
            )
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "readings of oslo-1");
        let resources = listed(&client, "resources/list", "resources").await;
        assert_eq!(resources[0]["uri"], "weather://stations");
    }

    // The outer `Server::new` serves every `#[tool]` of the binary but the mounted one.
    let everything = Server::new("outer", "1.0.0")
        .mount("weather", Server::builder().tool(gw_forecast))
        .build();
    // This test binary's other modules bring tools of their own; whatever they are, the
    // mounted tool is there once, under the namespace (the squatter clashes: refused).
    let error = everything.expect_err("the squatter clashes");
    let text = error.to_string();
    assert!(
        text.contains("duplicate tool name `weather_gw_forecast`"),
        "{text}"
    );
    assert!(text.contains("(mounted as `weather`)"), "{text}");
    assert!(
        !text.contains("duplicate tool name `gw_forecast`"),
        "{text}"
    );
}

/// What a mount cannot be: every problem at once, each naming both places.
#[test]
fn mount_clashes_and_bad_namespaces_are_refused_at_build() {
    let error = Server::builder()
        .tool(gw_squatter)
        .mount("weather", Server::builder().tool(gw_forecast))
        .mount("weather", Server::builder().tool(gw_add))
        .mount("twice", Server::builder().resource(gw_stations))
        .mount("again", Server::builder().resource(gw_stations))
        .mount("no spaces", Server::builder().tool(gw_add))
        .mount("n".repeat(60), Server::builder().tool(gw_forecast))
        .build()
        .expect_err("refused");
    let Error::Definition(problems) = &error else {
        panic!("{error:?}")
    };
    let text = error.to_string();
    assert!(
        text.contains(
            "duplicate tool name `weather_gw_forecast`: defined at tests/integration/gateway.rs"
        ),
        "{text}"
    );
    assert!(text.contains("(mounted as `weather`)"), "{text}");
    assert!(text.contains("duplicate namespace `weather`"), "{text}");
    assert!(
        text.contains("duplicate resource URI `weather://stations`")
            && text.contains("(mounted as `twice`)")
            && text.contains("(mounted as `again`)"),
        "{text}"
    );
    assert!(text.contains("`no spaces`"), "{text}");
    // 60 + 1 + 11 characters: over 64.
    assert!(
        text.contains(&format!(
            "invalid tool name `{}_gw_forecast`",
            "n".repeat(60)
        )),
        "{text}"
    );
    assert_eq!(problems.len(), 5, "{text}");
}

/// A proxy's namespace owns its prefix: a local name in it, or two namespaces one of which
/// prefixes the other, are refused; and a proxy is built inside a tokio runtime.
#[tokio::test]
async fn proxy_namespaces_own_their_prefix() {
    let error = Server::builder()
        .tool(gw_squatter)
        .proxy("weather", Upstream::command(our_everything()))
        .proxy("weather_eu", Upstream::command(our_everything()))
        .build()
        .expect_err("refused");
    let text = error.to_string();
    assert!(
        text.contains("tool `weather_gw_forecast`")
            && text
                .contains("starts with `weather_`, which the upstream proxied as `weather` owns"),
        "{text}"
    );
    assert!(
        text.contains("the namespace `weather_eu` starts with the namespace `weather`"),
        "{text}"
    );
    let outside = std::thread::spawn(|| {
        Server::builder()
            .proxy("ev", Upstream::command(our_everything()))
            .build()
            .err()
            .map(|e| e.to_string())
    })
    .join()
    .unwrap();
    assert!(
        outside.is_some_and(|e| e.contains("build it inside a tokio runtime")),
        "a proxy outside a runtime is refused"
    );
}

// ---------------------------------------------------------------------------------------------
// Proxy: real upstreams.

/// Our `everything` over stdio (2026-07-28 between gateway and upstream), driven by a
/// handshake-era and a 2026-07-28 downstream client: content, errors as the upstream sent
/// them, progress, logging, sampling, elicitation and roots asked of the downstream client
/// (keys kept), a prompt with completion, a template read, a subscription relayed with its
/// update, and list changes announced downstream.
#[tokio::test]
async fn our_everything_through_the_gateway_in_both_eras() {
    let service = connected(
        Server::builder()
            .name("gateway")
            .version("1.0.0")
            .proxy("ev", Upstream::command(our_everything())),
    )
    .await;
    let status = &service.upstreams()[0];
    assert!(
        matches!(&status.state, UpstreamState::Connected { protocol_version, .. } if *protocol_version == ProtocolVersion::V2026_07_28),
        "{status:?}"
    );
    for era in ["handshake", "stateless"] {
        let client = downstream(&service, era).await;
        let tools = client.list_tools().await.unwrap();
        let names = names(&tools);
        for expected in ["ev_test_simple_text", "ev_test_sampling", "ev_slow_compute"] {
            assert!(names.contains(&expected.to_owned()), "{era}: {names:?}");
        }
        let header_tool = tools
            .iter()
            .find(|t| t["name"] == "ev_test_header_echo")
            .expect("listed");
        assert_eq!(
            header_tool["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region",
            "schemas are served as the upstream lists them"
        );
        let mixed = call(&client, "ev_test_multiple_content_types", json!({})).await;
        assert_eq!(mixed.content.len(), 3, "{era}: {mixed:?}");
        let failed = call(&client, "ev_test_error_handling", json!({})).await;
        assert!(failed.is_error, "{era}");

        // Progress with the downstream token, logs at the downstream level.
        if era == "handshake" {
            client
                .request("logging/setLevel", json!({"level": "debug"}))
                .await
                .unwrap();
        }
        client
            .request(
                "tools/call",
                json!({"name": "ev_test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p-1"}}),
            )
            .await
            .unwrap();
        let progress = notification(&client, "notifications/progress").await;
        assert_eq!(progress["params"]["progressToken"], "p-1", "{era}");
        call(&client, "ev_test_tool_with_logging", json!({})).await;
        let log = notification(&client, "notifications/message").await;
        assert_eq!(log["params"]["logger"], "ev", "{era}: {log}");

        // The upstream's questions reach this client, and the answers get back.
        let sampled = call(
            &client,
            "ev_test_sampling",
            json!({"prompt": "capital of France?"}),
        )
        .await;
        assert!(
            sampled.text().contains("answered by the downstream client"),
            "{era}: {sampled:?}"
        );
        let named = call(
            &client,
            "ev_test_input_required_result_elicitation",
            json!({}),
        )
        .await;
        assert_eq!(named.text(), "Hello, Ada!", "{era}");
        let roots = call(
            &client,
            "ev_test_input_required_result_list_roots",
            json!({}),
        )
        .await;
        assert!(
            roots.text().contains("file:///downstream/project"),
            "{era}: {roots:?}"
        );
        if era == "stateless" {
            // The upstream's key is the downstream question's key.
            let first = client
                .request_raw(
                    "tools/call",
                    json!({"name": "ev_test_input_required_result_elicitation", "arguments": {}}),
                )
                .await
                .unwrap();
            assert!(
                first["result"]["inputRequests"]["user_name"].is_object(),
                "{first}"
            );
        }

        // A prompt, its completion at the upstream, a template read.
        let prompt = client
            .request(
                "prompts/get",
                json!({"name": "ev_test_prompt_with_arguments", "arguments": {"arg1": "one", "arg2": "two"}}),
            )
            .await
            .unwrap();
        assert!(prompt.to_string().contains("one"), "{prompt}");
        let completion = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "ev_test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "p"}}),
            )
            .await
            .unwrap();
        assert!(
            completion["completion"]["values"].is_array(),
            "{completion}"
        );
        let read = client
            .request("resources/read", json!({"uri": "test://template/42/data"}))
            .await
            .unwrap();
        assert!(
            read["contents"][0]["text"].as_str().unwrap().contains("42"),
            "{read}"
        );
        let missing = client
            .request("resources/read", json!({"uri": "test://nothing-here"}))
            .await
            .unwrap_err();
        let code = if era == "stateless" { -32602 } else { -32002 };
        assert_eq!(missing.rpc().map(|e| e.code), Some(code), "{era}");
    }

    // Handshake era: a subscription is relayed, and so is the upstream's update; the tool
    // list's change reaches this client.
    let client = downstream(&service, "handshake").await;
    client
        .request(
            "resources/subscribe",
            json!({"uri": "test://watched-resource"}),
        )
        .await
        .unwrap();
    // The upstream subscribes asynchronously; its update reaches this client once it has.
    let updated = tokio::time::timeout(WAIT, async {
        loop {
            call(&client, "ev_test_trigger_resource_update", json!({})).await;
            let next = tokio::time::timeout(Duration::from_millis(500), client.next_message());
            if let Ok(Ok(message)) = next.await
                && message["method"] == "notifications/resources/updated"
            {
                return message;
            }
        }
    })
    .await
    .expect("the update arrived");
    assert_eq!(updated["params"]["uri"], "test://watched-resource");
    call(&client, "ev_test_trigger_tool_change", json!({})).await;
    notification(&client, "notifications/tools/list_changed").await;
    let tools = client.list_tools().await.unwrap();
    assert!(!names(&tools).contains(&"ev_test_dynamic_tool".to_owned()));
    call(&client, "ev_test_trigger_tool_change", json!({})).await;
    notification(&client, "notifications/tools/list_changed").await;
    let tools = client.list_tools().await.unwrap();
    assert!(names(&tools).contains(&"ev_test_dynamic_tool".to_owned()));
}

/// A task-capable downstream client gets this server's tasks for the upstream's task tools:
/// an optional one, a required one (an upstream task, its pre-task question a round of the
/// call), a failure that fails the task, and a cancellation.
#[tokio::test]
async fn upstream_task_tools_run_as_tasks() {
    let service =
        connected(Server::builder().proxy("ev", Upstream::command(our_everything()))).await;
    let tasks =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}});
    let client = Client::builder()
        .stateless()
        .capabilities(tasks)
        .on_request(|_, _| Ok(json!({"action": "accept", "content": {"name": "Alice"}})))
        .timeout(WAIT)
        .connect_service(&service)
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    let required = tools
        .iter()
        .find(|t| t["name"] == "ev_failing_job")
        .unwrap();
    assert_eq!(required["execution"]["taskSupport"], "required");

    /// What a task-capable `tools/call` of `name` answered: a task, or a result.
    async fn task(client: &Client, name: &str, arguments: Value) -> Value {
        let params = json!({"name": name, "arguments": arguments});
        client.request("tools/call", params).await.unwrap()
    }

    /// `task` once it has ended.
    async fn finished(client: &Client, task: &Value) -> Value {
        let id = task["taskId"].clone();
        tokio::time::timeout(WAIT, async {
            loop {
                let got = client
                    .request("tasks/get", json!({"taskId": id}))
                    .await
                    .unwrap();
                if !matches!(got["status"].as_str(), Some("working" | "input_required")) {
                    return got;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await
        .expect("the task ended")
    }

    let computed = task(
        &client,
        "ev_slow_compute",
        json!({"seconds": 0.3, "label": "x"}),
    )
    .await;
    assert_eq!(computed["resultType"], "task", "{computed}");
    let done = finished(&client, &computed).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(done["result"].to_string().contains("x: computed"), "{done}");

    let failing = task(&client, "ev_failing_job", json!({})).await;
    let done = finished(&client, &failing).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");

    let protocol = task(&client, "ev_protocol_error_job", json!({})).await;
    let done = finished(&client, &protocol).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert!(done["error"]["code"].is_i64(), "{done}");

    let greeted = task(&client, "ev_test_tool_with_task", json!({})).await;
    assert_eq!(greeted["resultType"], "task", "{greeted}");
    let done = finished(&client, &greeted).await;
    assert!(done["result"].to_string().contains("Alice"), "{done}");

    let long = task(&client, "ev_slow_compute", json!({"seconds": 30})).await;
    client
        .request("tasks/cancel", json!({"taskId": long["taskId"]}))
        .await
        .unwrap();
    let done = finished(&client, &long).await;
    assert_eq!(done["status"], "cancelled", "{done}");

    // Without the extension the required tool is refused before anything reaches upstream.
    let plain = downstream(&service, "stateless").await;
    let refused = plain
        .call_tool("ev_failing_job", json!({}))
        .await
        .unwrap_err();
    assert_eq!(refused.rpc().map(|e| e.code), Some(-32021));
}

/// server-everything over stdio (2025-11-25 with the gateway) answered by a 2026-07-28 client
/// and a handshake-era one: its long-running operation's progress, its sampling and
/// elicitation requests (which name no call on stdio: the one call in flight gets them), a
/// resource, a prompt's completion, and its resource list's change.
#[tokio::test]
async fn server_everything_over_stdio_through_the_gateway() {
    let service =
        connected(Server::builder().proxy("se", Upstream::command(server_everything()))).await;
    for era in ["stateless", "handshake"] {
        let client = downstream(&service, era).await;
        let tools = client.list_tools().await.unwrap();
        let names = names(&tools);
        for expected in [
            "se_echo",
            "se_trigger-long-running-operation",
            "se_trigger-sampling-request",
        ] {
            assert!(names.contains(&expected.to_owned()), "{era}: {names:?}");
        }
        let echoed = call(&client, "se_echo", json!({"message": "über the gateway"})).await;
        assert_eq!(echoed.text(), "Echo: über the gateway", "{era}");
        client
            .request(
                "tools/call",
                json!({"name": "se_trigger-long-running-operation", "arguments": {"duration": 0.6, "steps": 3}, "_meta": {"progressToken": 7}}),
            )
            .await
            .unwrap();
        for step in 1..=3u8 {
            let progress = notification(&client, "notifications/progress").await;
            assert_eq!(progress["params"]["progressToken"], 7, "{era}");
            assert_eq!(
                progress["params"]["progress"].as_f64(),
                Some(step.into()),
                "{era}"
            );
        }
        let sampled = call(
            &client,
            "se_trigger-sampling-request",
            json!({"prompt": "capital?", "maxTokens": 20}),
        )
        .await;
        assert!(
            sampled.text().contains("answered by the downstream client"),
            "{era}: {sampled:?}"
        );
        let elicited = call(&client, "se_trigger-elicitation-request", json!({})).await;
        assert!(!elicited.is_error, "{era}: {elicited:?}");
        assert!(elicited.text().contains("Ada"), "{era}: {elicited:?}");
        let read = client
            .request(
                "resources/read",
                json!({"uri": "demo://resource/dynamic/text/3"}),
            )
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["uri"], "demo://resource/dynamic/text/3");
        let completion = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "se_completable-prompt"}, "argument": {"name": "department", "value": "E"}}),
            )
            .await
            .unwrap();
        assert!(
            completion["completion"]["values"]
                .to_string()
                .contains("Engineering"),
            "{completion}"
        );
    }
    let client = downstream(&service, "handshake").await;
    call(
        &client,
        "se_gzip-file-as-resource",
        json!({"name": "gw.txt.gz", "data": "data:text/plain;base64,SGVsbG8gZnJvbSB0aGUgZ2F0ZXdheQ=="}),
    ).await;
    notification(&client, "notifications/resources/list_changed").await;
    let resources = listed(&client, "resources/list", "resources").await;
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == "demo://resource/session/gw.txt.gz"),
        "{resources:?}"
    );
}

/// Four upstreams behind one gateway, none written here but the last: server-everything over
/// stdio and over Streamable HTTP, mcp-server-time over stdio, our `everything` over HTTP in
/// 2026-07-28; each one's items are listed under its namespace and a tool of each answers.
#[tokio::test]
async fn four_upstreams_behind_one_gateway() {
    let se_port = free_port();
    let mut se_http = Command::new(node());
    se_http
        .arg("--require")
        .arg(root().join("tests/node/loopback.cjs"))
        .arg(server_everything_js())
        .arg("streamableHttp")
        .env("PORT", se_port.to_string());
    let _se_http = listening(se_http, se_port).await;
    let ev_port = free_port();
    let _ev = our_everything_http(ev_port).await;
    let service = connected(
        Server::builder()
            .tool(gw_add)
            .proxy("se", Upstream::command(server_everything()))
            .proxy(
                "sehttp",
                Upstream::http(format!("http://127.0.0.1:{se_port}/mcp"))
                    .header("x-gateway", "test"),
            )
            .proxy("time", Upstream::command(server_time()))
            .proxy(
                "ev",
                Upstream::http(format!("http://127.0.0.1:{ev_port}/mcp")),
            ),
    )
    .await;
    let versions: Vec<String> = service
        .upstreams()
        .iter()
        .map(|s| match &s.state {
            UpstreamState::Connected {
                protocol_version, ..
            } => protocol_version.to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(versions[0], "2025-11-25");
    assert_eq!(versions[1], "2025-11-25");
    assert_eq!(versions[3], "2026-07-28");
    let client = downstream(&service, "handshake").await;
    let tools = names(&client.list_tools().await.unwrap());
    for expected in [
        "gw_add",
        "se_echo",
        "sehttp_echo",
        "time_get_current_time",
        "ev_test_simple_text",
    ] {
        assert!(tools.contains(&expected.to_owned()), "{tools:?}");
    }
    assert_eq!(
        call(&client, "se_echo", json!({"message": "a"}))
            .await
            .text(),
        "Echo: a"
    );
    assert_eq!(
        call(&client, "sehttp_echo", json!({"message": "b"}))
            .await
            .text(),
        "Echo: b"
    );
    let now = call(
        &client,
        "time_get_current_time",
        json!({"timezone": "Europe/Paris"}),
    )
    .await;
    assert!(now.text().contains("Europe/Paris"), "{now:?}");
    assert!(
        !call(&client, "ev_test_simple_text", json!({}))
            .await
            .text()
            .is_empty()
    );
    // The HTTP upstream's sampling request comes on the call's own stream.
    let sampled = call(
        &client,
        "sehttp_trigger-sampling-request",
        json!({"prompt": "p", "maxTokens": 5}),
    )
    .await;
    assert!(
        sampled.text().contains("answered by the downstream client"),
        "{sampled:?}"
    );
}

/// Echo, locally: the name server-everything's `echo` would take.
#[tool(name = "echo")]
async fn gw_echo(message: String) -> String {
    format!("local: {message}")
}

/// With no namespace, upstream items are served under their own names; where two would take
/// one name, who came first keeps it: a local item, then the upstreams in the order added.
#[tokio::test]
async fn clashes_while_serving_go_to_who_came_first() {
    let service = connected(
        Server::builder()
            .tool(gw_echo)
            .proxy("", Upstream::command(server_everything()))
            .proxy("", Upstream::command(our_everything()))
            .proxy("", Upstream::command(our_everything())),
    )
    .await;
    let client = downstream(&service, "handshake").await;
    let tools = names(&client.list_tools().await.unwrap());
    let mut once = tools.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), tools.len(), "no name served twice: {tools:?}");
    assert!(
        tools.contains(&"trigger-long-running-operation".to_owned()),
        "{tools:?}"
    );
    assert!(tools.contains(&"test_simple_text".to_owned()), "{tools:?}");
    // The local `echo` keeps its name.
    let echoed = call(&client, "echo", json!({"message": "hi"})).await;
    assert_eq!(echoed.text(), "local: hi");
    // The second copy of our everything serves nothing: the first took every name.
    let templates = listed(&client, "resources/templates/list", "resourceTemplates").await;
    let ours: Vec<_> = templates
        .iter()
        .filter(|t| t["uriTemplate"] == "test://template/{id}/data")
        .collect();
    assert_eq!(ours.len(), 1, "{templates:?}");
    let statuses = service.upstreams();
    assert_eq!(statuses[1].items, statuses[2].items, "both listed the same");
}

/// A layer that notes `{label} {target}` for each request it sees.
fn noting(label: &'static str, seen: &Arc<Mutex<Vec<String>>>) -> impl McpLayer + use<> {
    let seen = Arc::clone(seen);
    middleware::from_fn(move |request: McpRequest, next: Next| {
        let seen = Arc::clone(&seen);
        async move {
            if let Some(target) = request.target() {
                seen.lock().unwrap().push(format!("{label} {target}"));
            }
            next.run(request).await
        }
    })
}

/// The gateway's layers wrap proxied and mounted items as they wrap local ones; an upstream's
/// own (`Upstream::layer`) wrap only its items, and a mounted server's own (`Server::layer`)
/// only its items, each inside the gateway's.
#[tokio::test]
async fn layers_wrap_proxied_and_mounted_items() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let service = connected(
        Server::builder()
            .tool(gw_add)
            .mount(
                "m",
                Server::builder()
                    .tool(gw_echo)
                    .layer(noting("mounted", &seen)),
            )
            .proxy(
                "ev",
                Upstream::command(our_everything()).layer(noting("upstream", &seen)),
            )
            .layer(noting("server", &seen)),
    )
    .await;
    let client = downstream(&service, "handshake").await;
    let sum = call(&client, "gw_add", json!({"a": 1, "b": 2})).await;
    assert_eq!(sum.structured_content, Some(json!({"result": 3})));
    let echoed = call(&client, "m_echo", json!({"message": "hi"})).await;
    assert_eq!(echoed.text(), "local: hi");
    let simple = call(&client, "ev_test_simple_text", json!({})).await;
    assert!(!simple.is_error, "{simple:?}");
    let read = client
        .request("resources/read", json!({"uri": "test://template/7/data"}))
        .await
        .unwrap();
    assert!(read["contents"].is_array(), "{read}");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "server gw_add",
            "server m_echo",
            "mounted m_echo",
            "server ev_test_simple_text",
            "upstream ev_test_simple_text",
            "server test://template/7/data",
            "upstream test://template/7/data",
        ]
    );
}

/// A stdio upstream killed in the middle of a call: that call gets a tool error saying so,
/// the other upstream serves on, the dead one's items answer a clear error, and it is
/// restarted within its backoff.
#[tokio::test]
async fn a_killed_stdio_upstream_fails_its_call_and_comes_back() {
    let work = std::env::temp_dir().join(format!("gateway-kill-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let pid_file = work.join("pid");
    let script = format!(
        "echo $$ > '{}'; exec '{}' '{}' stdio",
        pid_file.display(),
        node().display(),
        server_everything_js().display()
    );
    let killable = StdioCommand::new("sh")
        .args(["-c", &script])
        .stderr(Stderr::Capture);
    let service = connected(
        Server::builder()
            .proxy(
                "se",
                Upstream::command(killable)
                    .backoff(Duration::from_millis(300), Duration::from_secs(2)),
            )
            .proxy("ev", Upstream::command(our_everything())),
    )
    .await;
    let client = Arc::new(downstream(&service, "handshake").await);
    let calling = tokio::spawn({
        let client = Arc::clone(&client);
        async move {
            client
                .call_tool(
                    "se_trigger-long-running-operation",
                    json!({"duration": 15, "steps": 3}),
                )
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = tokio::time::Instant::now();
    let failed = calling.await.unwrap().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the error came at the death"
    );
    assert!(failed.is_error, "{failed:?}");
    assert!(failed.text().contains("the upstream `se`"), "{failed:?}");
    // The other upstream serves on.
    let ok = call(&client, "ev_test_simple_text", json!({})).await;
    assert!(!ok.is_error);
    // Back within its backoff (0.3 s, and node's start).
    let back = tokio::time::timeout(WAIT, async {
        loop {
            let echoed = call(&client, "se_echo", json!({"message": "back"})).await;
            if !echoed.is_error {
                return echoed;
            }
            assert!(
                echoed.text().contains("the upstream `se` is"),
                "a clear error meanwhile: {echoed:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the upstream came back");
    assert_eq!(back.text(), "Echo: back");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "back within its backoff"
    );
    assert_eq!(service.upstreams()[0].reconnects, 1);
    let _ = std::fs::remove_dir_all(&work);
}

/// An HTTP upstream that goes away and comes back on the same address is reconnected (a new
/// session); meanwhile its tools answer a clear error.
#[tokio::test]
async fn an_http_upstream_that_restarts_is_reconnected() {
    let port = free_port();
    let mut upstream = our_everything_http(port).await;
    let service = connected(
        Server::builder().proxy(
            "ev",
            Upstream::http(format!("http://127.0.0.1:{port}/mcp"))
                .era(mcp_runtime::client::Era::Handshake(
                    ProtocolVersion::V2025_11_25,
                ))
                .backoff(Duration::from_millis(200), Duration::from_secs(1))
                .health_check(Duration::from_millis(300)),
        ),
    )
    .await;
    let client = downstream(&service, "handshake").await;
    assert!(
        !call(&client, "ev_test_simple_text", json!({}))
            .await
            .is_error
    );
    upstream.kill().await.unwrap();
    let down = call(&client, "ev_test_simple_text", json!({})).await;
    assert!(down.is_error, "{down:?}");
    assert!(down.text().contains("the upstream `ev`"), "{down:?}");
    let _upstream = our_everything_http(port).await;
    tokio::time::timeout(WAIT, async {
        loop {
            let result = call(&client, "ev_test_simple_text", json!({})).await;
            if !result.is_error {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("reconnected");
    assert!(service.upstreams()[0].reconnects >= 1);
}

/// An upstream that floods log notifications (a Python SDK server, 50,000 messages of 2 KiB,
/// about 100 MiB) while the gateway relays them to its client: the gateway's memory stays
/// within its bounds (the notification queue of 16 MiB and the client's stream buffer), and
/// it serves on.
#[tokio::test]
async fn a_flooding_upstream_stays_within_the_gateways_bounds() {
    let upstream = format!(
        "py=stdio:{} {} stdio",
        python().display(),
        root().join("tests/python/upstream_server.py").display()
    );
    let mut gateway = Command::new(example_binary("gateway"))
        .args(["--no-local", "--upstream", &upstream])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = gateway.id().unwrap();
    let stdin = gateway.stdin.take().unwrap();
    let stdout = gateway.stdout.take().unwrap();
    let client = Arc::new(
        Client::builder()
            .timeout(Duration::from_secs(120))
            .connect_io(stdout, stdin)
            .await
            .unwrap(),
    );
    let rss = move || -> usize {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    client
        .request("logging/setLevel", json!({"level": "info"}))
        .await
        .unwrap();
    let before = rss();
    let received = Arc::new(AtomicUsize::new(0));
    let draining = tokio::spawn({
        let client = Arc::clone(&client);
        let received = Arc::clone(&received);
        async move {
            while let Ok(message) = client.next_message().await {
                if message["method"] == "notifications/message" {
                    received.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    });
    let peak = Arc::new(AtomicUsize::new(before));
    let sampling = tokio::spawn({
        let peak = Arc::clone(&peak);
        async move {
            loop {
                peak.fetch_max(rss(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    let flooded = call(&client, "py_flood", json!({"count": 50_000, "pad": 2048})).await;
    sampling.abort();
    assert_eq!(
        flooded.structured_content,
        Some(json!({"result": "sent 50000"}))
    );
    let grown_mib = peak.load(Ordering::Relaxed).saturating_sub(before) / 1024;
    // The queue (16 MiB), the stdio stream's buffer (4 MiB, twice over) and the allocator's
    // slack: the documented bound, far below the 100 MiB that went through.
    assert!(grown_mib < 64, "the gateway grew by {grown_mib} MiB");
    assert!(
        received.load(Ordering::Relaxed) > 0,
        "the logs were relayed"
    );
    let sum = call(&client, "py_add", json!({"a": 1, "b": 2})).await;
    assert_eq!(sum.structured_content, Some(json!({"result": 3})));
    draining.abort();
}

/// An upstream that sends what a careless server sends (tests/python/odd_upstream.py): names
/// that are no valid tool names are made valid, and stay callable under the upstream's own; a
/// made name that another name has takes a digest, the valid one keeps its name; a tool without
/// `inputSchema` gets an object schema; an item that does not decode, a tool whose schema is
/// no object, a template that does not parse and a template no URI could tell from an earlier
/// one are left out and counted, the rest served; a list is read up to `max_items`, however
/// many pages the upstream offers.
#[tokio::test]
async fn an_upstreams_odd_names_and_items_are_made_servable() {
    let odd = StdioCommand::new(python())
        .arg(root().join("tests/python/odd_upstream.py"))
        .stderr(Stderr::Capture);
    let service =
        connected(Server::builder().proxy("odd", Upstream::command(odd).max_items(9))).await;
    let client = downstream(&service, "handshake").await;
    let tools = client.list_tools().await.unwrap();
    let served = names(&tools);
    let digested = |prefix: &str| {
        served
            .iter()
            .filter(|n| n.starts_with(prefix) && n[prefix.len()..].starts_with('-'))
            .cloned()
            .collect::<Vec<_>>()
    };
    let long = digested(&format!("odd_{}", "x".repeat(51)));
    assert_eq!(long.len(), 2, "{served:?}");
    for name in &long {
        assert_eq!(name.len(), 64, "{name}");
    }
    let read_file = digested("odd_read_file");
    assert_eq!(read_file.len(), 1, "{served:?}");
    let mut expected = vec![
        "odd_no_schema",
        "odd__t_",
        "odd_read_file",
        "odd_t10",
        "odd_t9",
    ];
    expected.extend(long.iter().map(String::as_str));
    expected.extend(read_file.iter().map(String::as_str));
    expected.sort_unstable();
    assert_eq!(
        served, expected,
        "the nameless tool and `stringy` left out, t11 past max_items"
    );
    let no_schema = tools.iter().find(|t| t["name"] == "odd_no_schema").unwrap();
    assert_eq!(no_schema["inputSchema"]["type"], "object");
    // Calls reach the upstream under its own names.
    let called = call(&client, "odd_read_file", json!({})).await;
    assert_eq!(called.text(), "called read_file");
    let called = call(&client, &read_file[0], json!({})).await;
    assert_eq!(called.text(), "called read file");
    let called = call(&client, "odd__t_", json!({})).await;
    assert_eq!(called.text(), "called été");
    for name in &long {
        let called = call(&client, name, json!({})).await;
        assert!(
            called
                .text()
                .starts_with(&format!("called {}", "x".repeat(100))),
            "{called:?}"
        );
    }
    // Pages without end: the first nine prompts, one a page.
    let prompts = listed(&client, "prompts/list", "prompts").await;
    let mut expected: Vec<String> = (0..9).map(|i| format!("odd_p{i}")).collect();
    expected.sort_unstable();
    assert_eq!(names(&prompts), expected);
    let got = client
        .request("prompts/get", json!({"name": "odd_p8"}))
        .await
        .unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "got p8");
    let templates = listed(&client, "resources/templates/list", "resourceTemplates").await;
    let uris: Vec<&Value> = templates.iter().map(|t| &t["uriTemplate"]).collect();
    assert_eq!(uris, [&json!("odd://items/{id}")]);
    let read = client
        .request("resources/read", json!({"uri": "odd://items/5"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "read odd://items/5");
    let status = &service.upstreams()[0];
    assert_eq!(status.items, [9, 9, 0, 3], "{status:?}");
    assert_eq!(
        status.left_out, 4,
        "the nameless tool, `stringy`, two templates: {status:?}"
    );
}

/// Counts the calls of an upstream's `hang` that started and the ones stopped since.
#[derive(Default)]
struct Hung {
    started: AtomicUsize,
    stopped: AtomicUsize,
}

/// Stops counting when dropped: the handler was cancelled.
struct Stopped(Arc<Hung>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

/// An upstream with `hang`, which never answers (counted in `hung`), and `quick`.
fn hanging_upstream(hung: &Arc<Hung>) -> Server {
    use mcp_runtime::tool::ToolBuilder;
    let hung = Arc::clone(hung);
    let mut hang = ToolBuilder::new("hang", move |_call: mcp_runtime::tool::ToolCall| {
        let hung = Arc::clone(&hung);
        Box::pin(async move {
            hung.started.fetch_add(1, Ordering::SeqCst);
            let _stopped = Stopped(hung);
            std::future::pending::<()>().await;
            CallToolResult::success([Content::text("never")])
        })
    });
    hang.raw_input_schema(json!({"type": "object"}));
    let mut quick = ToolBuilder::new("quick", |_call: mcp_runtime::tool::ToolCall| {
        Box::pin(async { CallToolResult::success([Content::text("quick")]) })
    });
    quick.raw_input_schema(json!({"type": "object"}));
    Server::builder()
        .tool_def(hang.build())
        .tool_def(quick.build())
}

/// A downstream client that calls an upstream tool that never answers, on a connection per
/// call that it closes once the response's head is in, takes no more than its share of the
/// upstream's places: another client's call through the same upstream is served at once; and
/// once the closed streams are not resumed within the grace, every one of those calls is
/// cancelled upstream (`notifications/cancelled`: its handler stops) and its place comes back.
#[tokio::test]
async fn dropped_downstream_calls_are_cancelled_upstream_and_another_client_is_served_at_once() {
    use mcp_tests::http;
    let hung = Arc::new(Hung::default());
    let upstream = http::start(hanging_upstream(&hung)).await;
    let gateway = http::start(
        Server::builder()
            .stream_resume_grace(Duration::from_millis(300))
            .proxy(
                "up",
                Upstream::http(format!("http://{upstream}/mcp")).max_in_flight(8),
            ),
    )
    .await;
    let call = |session: &str, id: u32, tool: &str| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}}});
        http::post(&gateway, Some(session), body)
    };
    // 12 calls, each dropped once its answer turned into a stream: more than the upstream's 8
    // places, and six times the client's share of them (a quarter: 2).
    let greedy = http::initialize_from(&gateway, "127.0.0.2").await;
    let mut dropped = tokio::task::JoinSet::new();
    for id in 1..=12 {
        let request = call(&greedy, id, "up_hang");
        let gateway = gateway.clone();
        dropped.spawn(async move {
            let response = http::send_from(&gateway, "127.0.0.2", request).await;
            assert_eq!(response.status(), hyper::StatusCode::OK);
            assert_eq!(response.headers()["content-type"], "text/event-stream");
        });
    }
    tokio::time::timeout(WAIT, dropped.join_all())
        .await
        .expect("every stream opened");
    // Another client, from another address, is served at once.
    let other = http::initialize_from(&gateway, "127.0.0.3").await;
    let started = tokio::time::Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), async {
        let response = http::send_from(&gateway, "127.0.0.3", call(&other, 100, "up_quick")).await;
        http::body_json(response).await
    })
    .await
    .expect("another client's call is answered while the first holds its share");
    assert!(
        answer.to_string().contains("quick"),
        "{answer} after {:?}",
        started.elapsed()
    );
    // The dropped calls are cancelled upstream, every one that started there.
    tokio::time::timeout(WAIT, async {
        loop {
            let (on, off) = (
                hung.started.load(Ordering::SeqCst),
                hung.stopped.load(Ordering::SeqCst),
            );
            if on > 0 && on == off {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "calls left running upstream: {} started, {} stopped",
            hung.started.load(Ordering::SeqCst),
            hung.stopped.load(Ordering::SeqCst)
        )
    });
    assert!(
        hung.started.load(Ordering::SeqCst) <= 12,
        "no call started twice"
    );
}

/// `Upstream::stdio` takes `[]` for a command without arguments.
#[tokio::test]
async fn a_stdio_upstream_without_arguments_is_written_with_an_empty_array() {
    let binary = example_binary("everything");
    let service = connected(Server::builder().proxy("ev", Upstream::stdio(&binary, []))).await;
    let client = downstream(&service, "handshake").await;
    let text = call(&client, "ev_test_simple_text", json!({})).await;
    assert!(!text.is_error, "{text:?}");
}

/// An upstream that complains on stderr, when it connects, of the `roots/list` the gateway
/// refused, and ends a moment later: the gateway's error says how long before its end that
/// line was written, and that the gateway refused its roots request and why, rather than
/// passing the complaint off as the cause.
#[tokio::test]
async fn an_upstream_s_end_is_not_blamed_on_its_complaint_about_roots() {
    let script = root().join("tests/python/roots_upstream.py");
    let command = StdioCommand::new("python3")
        .arg(script)
        .stderr(Stderr::Capture);
    let service = connected(Server::builder().proxy(
        "ro",
        Upstream::command(command).backoff(Duration::from_secs(60), Duration::from_secs(60)),
    ))
    .await;
    let reason = tokio::time::timeout(WAIT, async {
        loop {
            if let UpstreamState::Down { reason, .. } = &service.upstreams()[0].state {
                return reason.clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the upstream ended");
    assert!(reason.contains("exited"), "{reason}");
    assert!(
        reason.contains(
            "its last stderr line, written 1 s before it ended: Failed to request roots from client"
        ) || reason.contains(
            "its last stderr line, written 2 s before it ended: Failed to request roots from client"
        ),
        "the line's age: {reason}"
    );
    assert!(
        reason.contains("this gateway refused the upstream's `roots/list` when it connected")
            && reason.contains("not why it ended"),
        "what the gateway did: {reason}"
    );
    // What a client calling its tool reads says the same.
    let client = downstream(&service, "handshake").await;
    let answer = call(&client, "ro_hello", json!({})).await;
    assert!(answer.is_error);
    assert!(
        answer
            .text()
            .contains("refused the upstream's `roots/list`"),
        "{answer:?}"
    );
}

/// The gateway example's start-up log over HTTP with one slow upstream (`--no-local`): the
/// first line of what it serves says the upstream's items are still to come (not a bare
/// `serving 0 tools []`), the wait before `listening on` says what it waits for, and once the
/// upstream is connected what is served is logged again, its tools in it.
#[tokio::test]
async fn the_gateway_s_start_up_log_says_what_it_waits_for() {
    use tokio::io::AsyncBufReadExt as _;
    let work = std::env::temp_dir().join(format!("gateway-slow-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let slow = work.join("slow-everything.sh");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh\nsleep 1\nexec '{}'\n",
            example_binary("everything").display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", &slow.display().to_string()])
        .status()
        .unwrap();
    let port = free_port();
    let mut gateway = Command::new(example_binary("gateway"))
        .args(["--port", &port.to_string(), "--no-local", "--upstream"])
        .arg(format!("ev=stdio:{}", slow.display()))
        .env_remove("RUST_LOG")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(gateway.stderr.take().unwrap()).lines();
    let mut log = Vec::new();
    tokio::time::timeout(WAIT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let done = line.contains("listening on") && !line.contains("waiting for");
            log.push(line);
            if done {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no `listening on` line: {log:#?}"));
    if !log
        .last()
        .is_some_and(|line| line.contains("listening on") && !line.contains("waiting for"))
    {
        panic!("the gateway ended ({:?}): {log:#?}", gateway.wait().await);
    }
    let position = |text: &str| {
        log.iter()
            .position(|line| line.contains(text))
            .unwrap_or_else(|| panic!("no line with `{text}`: {log:#?}"))
    };
    let first = position("serving ");
    assert!(
        log[first].contains(
            "serving 0 tools [], 0 resources [], 0 prompts [] of its own; what its 1 proxied \
             upstream(s) (`ev`) serve is added as each connects"
        ),
        "{log:#?}"
    );
    let waiting = position(&format!(
        "waiting for the first connection of the upstream `ev` (at most 30 s) before listening \
         on http://127.0.0.1:{port}/mcp"
    ));
    let all = position("ev_test_simple_text");
    assert!(
        log[all].contains("; the upstream `ev` connected"),
        "{log:#?}"
    );
    let listening = log.len() - 1;
    assert!(
        first < waiting && waiting < listening && all < listening,
        "{log:#?}"
    );
    let _ = gateway.kill().await;
    let _ = std::fs::remove_dir_all(&work);
}
