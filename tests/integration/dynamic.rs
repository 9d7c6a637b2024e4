//! Tools, resources and prompts added, removed, enabled and disabled while clients are
//! connected, as those clients see it: over the in-process stdio client and Streamable HTTP.

use std::time::Duration;

use hyper::{Request, StatusCode};
use mcp_runtime::prompt::{GetPromptResult, PromptBuilder, PromptDef, PromptMessage};
use mcp_runtime::resource::{ResourceBuilder, ResourceDef};
use mcp_runtime::testing::{Client, ClientError};
use mcp_runtime::tool::{ToolBuilder, ToolCall, ToolDef};
use mcp_runtime::{
    CallToolResult, Changes, DefinitionError, Error, McpService, ResourceContents, Server,
};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::fixtures::*;
use crate::http::{body_json, events, initialize, post, send};

/// A client that gives up on a message after a short wait, to check that none comes.
async fn connect(service: &McpService) -> Client {
    let client = Client::builder()
        .timeout(Duration::from_millis(500))
        .connect_service(service)
        .await
        .unwrap();
    // Messages are read in order: once `ping` is answered, `notifications/initialized` was
    // handled, and the session hears of changes.
    client.request("ping", json!({})).await.unwrap();
    client
}

fn list_changed(kind: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": format!("notifications/{kind}/list_changed")})
}

async fn expect_nothing(client: &Client) {
    match client.next_message().await {
        Err(ClientError::Timeout(_)) => {}
        other => panic!("expected no message, got {other:?}"),
    }
}

async fn names(client: &Client, method: &str, key: &str, field: &str) -> Vec<String> {
    let list = client.request(method, json!({})).await.unwrap();
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item[field].as_str().unwrap().to_owned())
        .collect()
}

async fn tool_names(client: &Client) -> Vec<String> {
    names(client, "tools/list", "tools", "name").await
}

fn rpc_error(result: Result<impl std::fmt::Debug, ClientError>) -> (i64, String) {
    let error = result.unwrap_err();
    let rpc = error
        .rpc()
        .unwrap_or_else(|| panic!("not an RPC error: {error}"));
    (rpc.code, rpc.message.to_string())
}

fn definition_errors(result: mcp_runtime::Result<()>) -> Vec<DefinitionError> {
    match result {
        Err(Error::Definition(errors)) => errors,
        other => panic!("expected a definition error, got {other:?}"),
    }
}

/// A tool made from a closure: echoes its `text` argument.
fn echo() -> ToolDef {
    let mut builder = ToolBuilder::new("echo", |mut call: ToolCall| {
        Box::pin(async move {
            let text = call.take_arguments().remove("text").unwrap_or_default();
            CallToolResult::success([format!("echo: {}", text.as_str().unwrap_or("?"))])
        })
    });
    builder.description("Echo the text.");
    builder.raw_input_schema(json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    }));
    builder.build()
}

#[tokio::test]
async fn a_tool_added_while_connected_is_announced_listed_and_callable() {
    let service = Server::builder().dynamic_tools().build().unwrap();
    let client = connect(&service).await;
    assert_eq!(
        client.initialize_result().unwrap()["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    assert!(tool_names(&client).await.is_empty());

    service
        .handle()
        .add_tool(ToolDef::of(add).unwrap())
        .unwrap();
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "add");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]));
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));

    service.handle().add_tool(echo()).unwrap();
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    assert_eq!(tool_names(&client).await, ["add", "echo"]);
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "echo: hi");
    assert!(!echoed.is_error);
}

#[tokio::test]
async fn every_connected_session_hears_of_a_change() {
    let service = Server::builder().tool(add).build().unwrap();
    let (first, second) = (connect(&service).await, connect(&service).await);
    service.handle().add_tool(echo()).unwrap();
    for client in [&first, &second] {
        assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
        assert_eq!(tool_names(client).await, ["add", "echo"]);
    }
}

#[tokio::test]
async fn a_removed_tool_is_gone_and_calling_it_is_an_unknown_tool() {
    let service = Server::builder().tool(add).tool(greet).build().unwrap();
    let client = connect(&service).await;
    assert!(service.handle().remove_tool("add"));
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    assert_eq!(tool_names(&client).await, ["greet"]);
    let (code, message) = rpc_error(client.call_tool("add", json!({"a": 1, "b": 2})).await);
    assert_eq!((code, message.as_str()), (-32602, "unknown tool `add`"));
    // Removing what is not there changes nothing and announces nothing.
    assert!(!service.handle().remove_tool("add"));
    expect_nothing(&client).await;
    // The last tool going leaves an empty list, not an unknown method.
    assert!(service.handle().remove_tool("greet"));
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    assert!(tool_names(&client).await.is_empty());
}

#[tokio::test]
async fn a_disabled_tool_is_hidden_until_enabled() {
    let service = Server::builder().tool(add).tool(greet).build().unwrap();
    let client = connect(&service).await;
    let handle = service.handle();
    assert!(handle.disable_tool("greet"));
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    assert_eq!(tool_names(&client).await, ["add"]);
    let (code, message) = rpc_error(client.call_tool("greet", json!({"name": "Ada"})).await);
    assert_eq!((code, message.as_str()), (-32602, "unknown tool `greet`"));
    assert!(!handle.disable_tool("greet"));
    assert!(!handle.enable_tool("add"));
    assert!(!handle.enable_tool("nope"));
    expect_nothing(&client).await;

    // A disabled tool's name stays taken.
    let errors = definition_errors(handle.add_tool(ToolDef::of(greet).unwrap()));
    assert!(
        matches!(&errors[..], [DefinitionError::Duplicate { name, .. }] if name == "greet"),
        "{errors:?}"
    );

    assert!(handle.enable_tool("greet"));
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    assert_eq!(tool_names(&client).await, ["add", "greet"]);
    let hello = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .unwrap();
    assert_eq!(hello.text(), "Hello, Ada!");
}

#[tokio::test]
async fn a_duplicate_or_invalid_tool_is_refused_and_nothing_changes() {
    let service = Server::builder().tool(add).build().unwrap();
    let client = connect(&service).await;
    let error = service
        .handle()
        .add_tool(ToolDef::of(add).unwrap())
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("duplicate tool name `add`") && message.contains("fixtures.rs:"),
        "{message}"
    );
    let bad = ToolBuilder::new("no spaces allowed", |_call| {
        Box::pin(async { CallToolResult::default() })
    })
    .build();
    let errors = definition_errors(service.handle().add_tool(bad));
    assert!(
        matches!(&errors[..], [DefinitionError::InvalidName { name, .. }] if name == "no spaces allowed"),
        "{errors:?}"
    );
    expect_nothing(&client).await;
    assert_eq!(tool_names(&client).await, ["add"]);
}

#[tokio::test]
async fn only_macro_items_have_a_definition_to_find() {
    let error = ToolDef::of(plain).unwrap_err();
    assert!(matches!(
        error,
        DefinitionError::NotAnItem { kind: "tool", .. }
    ));
    assert!(error.to_string().contains("plain"), "{error}");
    assert!(ToolDef::of(static_text).is_err());
    assert_eq!(ResourceDef::of(static_text).unwrap().uri(), "test://static");
    assert_eq!(PromptDef::of(simple).unwrap().name(), "simple");
}

#[tokio::test]
async fn a_kind_the_server_never_advertised_cannot_be_added() {
    let service = Server::builder().tool(add).build().unwrap();
    let client = connect(&service).await;
    assert_eq!(
        client.initialize_result().unwrap()["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    let errors = definition_errors(service.handle().add_prompt(PromptDef::of(simple).unwrap()));
    assert!(
        matches!(
            &errors[..],
            [DefinitionError::NotAdvertised {
                capability: "prompts",
                ..
            }]
        ),
        "{errors:?}"
    );
    assert!(errors[0].to_string().contains("Server::dynamic_prompts()"));
    let errors = definition_errors(
        service
            .handle()
            .add_resource(ResourceDef::of(static_text).unwrap()),
    );
    assert!(
        matches!(
            &errors[..],
            [DefinitionError::NotAdvertised {
                capability: "resources",
                ..
            }]
        ),
        "{errors:?}"
    );
    // Prompts are served, completion is not: a prompt that completes would never be asked.
    let service = Server::builder().prompt(simple).build().unwrap();
    let errors = definition_errors(service.handle().add_prompt(PromptDef::of(review).unwrap()));
    assert!(
        matches!(
            &errors[..],
            [DefinitionError::NotAdvertised {
                capability: "completions",
                ..
            }]
        ),
        "{errors:?}"
    );
    service
        .handle()
        .add_prompt(PromptDef::of(refuse).unwrap())
        .unwrap();
    expect_nothing(&client).await;
}

#[tokio::test]
async fn changes_apply_together_with_one_notification_or_not_at_all() {
    let service = Server::builder()
        .tool(add)
        .tool(greet)
        .prompt(simple)
        .build()
        .unwrap();
    let client = connect(&service).await;
    let mut changes = Changes::new();
    changes
        .remove_tool("add")
        .add_tool(echo())
        .disable_tool("greet")
        .add_prompt(PromptDef::of(refuse).unwrap());
    service.handle().apply(changes).unwrap();
    let mut heard = vec![
        client.next_message().await.unwrap(),
        client.next_message().await.unwrap(),
    ];
    heard.sort_by_key(Value::to_string);
    assert_eq!(heard, [list_changed("prompts"), list_changed("tools")]);
    expect_nothing(&client).await;
    assert_eq!(tool_names(&client).await, ["echo"]);
    assert_eq!(
        names(&client, "prompts/list", "prompts", "name").await,
        ["refuse", "simple"]
    );

    // One bad change refuses them all, with every problem named.
    let mut changes = Changes::new();
    changes
        .enable_tool("greet")
        .remove_tool("missing")
        .add_tool(echo());
    let errors = definition_errors(service.handle().apply(changes));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        matches!(&errors[0], DefinitionError::Unknown { kind: "tool", name } if name == "missing")
    );
    assert!(matches!(&errors[1], DefinitionError::Duplicate { name, .. } if name == "echo"));
    expect_nothing(&client).await;
    assert_eq!(tool_names(&client).await, ["echo"]);
}

#[tokio::test]
async fn a_request_in_flight_finishes_on_the_snapshot_it_started_with() {
    let service = Server::builder().tool(slow).tool(add).build().unwrap();
    let client = connect(&service).await;
    let call = client.call_tool("slow", json!({"millis": 300}));
    let change = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(service.handle().remove_tool("slow"));
        // The removal is announced while the call still runs.
        assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
        assert_eq!(tool_names(&client).await, ["add"]);
    };
    let (result, ()) = tokio::join!(call, change);
    assert_eq!(result.unwrap().text(), "done");
    let (code, _) = rpc_error(client.call_tool("slow", json!({"millis": 1})).await);
    assert_eq!(code, -32602);
}

#[tokio::test]
async fn a_cursor_from_before_a_change_still_gets_an_answer() {
    let service = Server::builder()
        .tool(add)
        .tool(greet)
        .tool(slow)
        .page_size(2)
        .build()
        .unwrap();
    let client = connect(&service).await;
    let first = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(first["tools"].as_array().unwrap().len(), 2);
    let cursor = first["nextCursor"].clone();
    assert!(service.handle().remove_tool("slow"));
    assert!(service.handle().remove_tool("greet"));
    // Past the end of the shorter list: an empty last page.
    let rest = client
        .request("tools/list", json!({"cursor": cursor}))
        .await
        .unwrap();
    assert_eq!(rest, json!({"tools": []}));
    // A cursor this server never minted is still refused.
    let (code, _) = rpc_error(
        client
            .request("tools/list", json!({"cursor": "bogus"}))
            .await,
    );
    assert_eq!(code, -32602);
}

#[tokio::test]
async fn a_handler_can_change_the_server_it_runs_in() {
    let service = Server::builder().tool(add).build().unwrap();
    let client = connect(&service).await;
    let unlock = ToolBuilder::new("unlock", |call: ToolCall| {
        let server = call.context().server().clone();
        Box::pin(async move {
            match server.add_tool(echo()) {
                Ok(()) => CallToolResult::success(["unlocked"]),
                Err(error) => CallToolResult::error(error.to_string()),
            }
        })
    })
    .build();
    service.handle().add_tool(unlock).unwrap();
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    let result = client.call_tool("unlock", json!({})).await.unwrap();
    assert_eq!(result.text(), "unlocked");
    assert_eq!(client.next_message().await.unwrap(), list_changed("tools"));
    assert_eq!(tool_names(&client).await, ["add", "echo", "unlock"]);
    let again = client.call_tool("unlock", json!({})).await.unwrap();
    assert!(again.is_error && again.text().contains("duplicate tool name `echo`"));
}

/// A prompt made from a closure.
fn motto() -> PromptDef {
    let mut builder = PromptBuilder::new("motto", |_call| {
        Box::pin(async { Ok(GetPromptResult::new([PromptMessage::user("Be brief.")])) })
    });
    builder.description("The house motto.");
    builder.build()
}

#[tokio::test]
async fn prompts_come_and_go_with_list_changed() {
    let service = Server::builder().dynamic_prompts().build().unwrap();
    let client = connect(&service).await;
    assert_eq!(
        client.initialize_result().unwrap()["capabilities"],
        json!({"prompts": {"listChanged": true}, "completions": {}, "logging": {}})
    );
    let handle = service.handle();
    handle.add_prompt(motto()).unwrap();
    assert_eq!(
        client.next_message().await.unwrap(),
        list_changed("prompts")
    );
    handle.add_prompt(PromptDef::of(review).unwrap()).unwrap();
    assert_eq!(
        client.next_message().await.unwrap(),
        list_changed("prompts")
    );
    assert_eq!(
        names(&client, "prompts/list", "prompts", "name").await,
        ["motto", "review"]
    );
    let motto = client
        .request("prompts/get", json!({"name": "motto"}))
        .await
        .unwrap();
    assert_eq!(motto["messages"][0]["content"]["text"], "Be brief.");
    let complete = json!({"ref": {"type": "ref/prompt", "name": "review"},
        "argument": {"name": "language", "value": "ru"}});
    let completion = client
        .request("completion/complete", complete.clone())
        .await
        .unwrap();
    assert_eq!(
        completion["completion"]["values"],
        json!(["python", "rust", "typescript"])
    );

    assert!(handle.disable_prompt("review"));
    assert_eq!(
        client.next_message().await.unwrap(),
        list_changed("prompts")
    );
    let (code, message) = rpc_error(client.request("completion/complete", complete).await);
    assert_eq!(
        (code, message.as_str()),
        (-32602, "unknown prompt `review`")
    );
    assert!(handle.remove_prompt("motto"));
    assert_eq!(
        client.next_message().await.unwrap(),
        list_changed("prompts")
    );
    let (code, message) = rpc_error(
        client
            .request("prompts/get", json!({"name": "motto"}))
            .await,
    );
    assert_eq!((code, message.as_str()), (-32602, "unknown prompt `motto`"));
    assert!(
        names(&client, "prompts/list", "prompts", "name")
            .await
            .is_empty()
    );
}

/// A static resource made from a closure.
fn banner() -> ResourceDef {
    let mut builder = ResourceBuilder::new("test://banner", "banner", |call| {
        let uri = call.uri().to_owned();
        Box::pin(async move { Ok(vec![ResourceContents::text(uri, "text/plain", "WELCOME")]) })
    });
    builder.mime_type("text/plain");
    builder.build()
}

#[tokio::test]
async fn resources_and_templates_come_and_go_with_list_changed() {
    let service = Server::builder().dynamic_resources().build().unwrap();
    let client = connect(&service).await;
    assert_eq!(
        client.initialize_result().unwrap()["capabilities"],
        json!({"resources": {"subscribe": true, "listChanged": true}, "completions": {}, "logging": {}})
    );
    let handle = service.handle();
    let mut changes = Changes::new();
    changes
        .add_resource(banner())
        .add_resource(ResourceDef::of(note).unwrap());
    handle.apply(changes).unwrap();
    assert_eq!(
        client.next_message().await.unwrap(),
        list_changed("resources")
    );
    expect_nothing(&client).await;
    assert_eq!(
        names(&client, "resources/list", "resources", "uri").await,
        ["test://banner", "notes://1", "notes://2"]
    );
    assert_eq!(
        names(
            &client,
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate"
        )
        .await,
        ["notes://{id}"]
    );
    let read = |uri: &'static str| client.request("resources/read", json!({"uri": uri}));
    assert_eq!(
        read("test://banner").await.unwrap()["contents"][0]["text"],
        "WELCOME"
    );
    assert_eq!(
        read("notes://7").await.unwrap()["contents"][0]["text"],
        "note 7"
    );
    let complete = json!({"ref": {"type": "ref/resource", "uri": "notes://{id}"},
        "argument": {"name": "id", "value": "14"}});
    let completion = client
        .request("completion/complete", complete.clone())
        .await
        .unwrap();
    assert_eq!(completion["completion"]["values"][0], "14");

    // A template that matches exactly the same URIs is refused.
    let twin = ResourceBuilder::new("notes://{name}", "twin", |_call| {
        Box::pin(async { Ok(Vec::new()) })
    })
    .build();
    let errors = definition_errors(handle.add_resource(twin));
    assert!(
        matches!(&errors[..], [DefinitionError::Ambiguous { .. }]),
        "{errors:?}"
    );

    // Templates are named by their URI template.
    assert!(handle.remove_resource("notes://{id}"));
    assert_eq!(
        client.next_message().await.unwrap(),
        list_changed("resources")
    );
    let (code, _) = rpc_error(read("notes://7").await);
    assert_eq!(code, -32002);
    let (code, _) = rpc_error(client.request("completion/complete", complete).await);
    assert_eq!(code, -32602);
    assert_eq!(
        names(&client, "resources/list", "resources", "uri").await,
        ["test://banner"]
    );

    assert!(handle.disable_resource("test://banner"));
    assert_eq!(
        client.next_message().await.unwrap(),
        list_changed("resources")
    );
    let (code, _) = rpc_error(read("test://banner").await);
    assert_eq!(code, -32002);
    assert!(
        names(&client, "resources/list", "resources", "uri")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_subscription_outlives_the_resource_being_replaced() {
    let service = Server::builder().resource(static_text).build().unwrap();
    let client = connect(&service).await;
    client
        .request("resources/subscribe", json!({"uri": "test://static"}))
        .await
        .unwrap();
    let handle = service.handle();
    assert!(handle.remove_resource("test://static"));
    handle
        .add_resource(ResourceDef::of(static_text).unwrap())
        .unwrap();
    for _ in 0..2 {
        assert_eq!(
            client.next_message().await.unwrap(),
            list_changed("resources")
        );
    }
    handle.resource_updated("test://static");
    assert_eq!(
        client.next_message().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "test://static"}})
    );
}

/// A server with dynamic tools served over HTTP on a free port: its handle and address.
async fn serve_dynamic_http() -> (mcp_runtime::ServerHandle, String) {
    let service = Server::builder().dynamic_tools().build().unwrap();
    let handle = service.handle();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    (handle, addr)
}

/// The GET that opens `session`'s standalone stream, resuming after `last_event_id`.
fn get_stream(addr: &str, session: &str, last_event_id: Option<&str>) -> Request<String> {
    let mut request = Request::get("/mcp")
        .header("host", addr)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session);
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    request.body(String::new()).unwrap()
}

#[tokio::test]
async fn over_http_the_change_arrives_on_the_get_stream() {
    let (handle, addr) = serve_dynamic_http().await;
    let session = initialize(&addr).await;
    let stream = send(&addr, get_stream(&addr, &session, None)).await;
    assert_eq!(stream.status(), StatusCode::OK);

    handle.add_tool(ToolDef::of(add).unwrap()).unwrap();
    let heard = events(stream, |v| {
        v["method"] == "notifications/tools/list_changed"
    })
    .await;
    assert_eq!(heard.last().unwrap().1, list_changed("tools"));

    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let mut request = post(&addr, Some(&session), list);
    request
        .headers_mut()
        .insert("accept", "application/json".parse().unwrap());
    let tools = body_json(send(&addr, request).await).await;
    assert_eq!(tools["result"]["tools"][0]["name"], "add");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 20, "b": 22}}});
    let mut request = post(&addr, Some(&session), call);
    request
        .headers_mut()
        .insert("accept", "application/json".parse().unwrap());
    let result = body_json(send(&addr, request).await).await;
    assert_eq!(result["result"]["structuredContent"], json!({"result": 42}));
}

#[tokio::test]
async fn a_dropped_get_stream_is_resumed_with_last_event_id() {
    let (handle, addr) = serve_dynamic_http().await;
    let session = initialize(&addr).await;
    let stream = send(&addr, get_stream(&addr, &session, None)).await;
    assert_eq!(stream.status(), StatusCode::OK);
    handle.add_tool(ToolDef::of(add).unwrap()).unwrap();
    let heard = events(stream, |v| {
        v["method"] == "notifications/tools/list_changed"
    })
    .await;
    let (seen, _) = heard.last().unwrap().clone();
    assert!(
        seen.starts_with("0_"),
        "the standalone stream's event id: {seen}"
    );

    // Said while no GET carries the stream: kept in its log for the client's return.
    assert!(handle.remove_tool("add"));
    let resumed = send(&addr, get_stream(&addr, &session, Some(&seen))).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let replayed = events(resumed, |v| {
        v["method"] == "notifications/tools/list_changed"
    })
    .await;
    let (id, message) = replayed.last().unwrap();
    assert_eq!(message, &list_changed("tools"));
    assert_ne!(id, &seen, "only what came after the last event seen");
}

#[tokio::test]
async fn a_change_made_outside_the_runtime_is_a_sessions_first_notification() {
    // A session's notification queue is made on its first notification: here that comes from
    // a thread of the application's own, where there is no runtime to start its task on.
    let (handle, addr) = serve_dynamic_http().await;
    let session = initialize(&addr).await;
    let stream = send(&addr, get_stream(&addr, &session, None)).await;
    assert_eq!(stream.status(), StatusCode::OK);

    std::thread::spawn(move || handle.add_tool(ToolDef::of(add).unwrap()))
        .join()
        .expect("the change is made without a runtime")
        .unwrap();
    let heard = events(stream, |v| {
        v["method"] == "notifications/tools/list_changed"
    })
    .await;
    assert_eq!(heard.last().unwrap().1, list_changed("tools"));
}

#[tokio::test]
async fn a_log_from_the_handle_reaches_every_session_at_its_own_level() {
    let service = Server::builder().dynamic_tools().build().unwrap();
    let quick = || {
        Client::builder()
            .timeout(Duration::from_millis(500))
            .connect_service(&service)
    };
    let default_level = quick().await.unwrap();
    let errors_only = quick().await.unwrap();
    assert_eq!(
        errors_only
            .request("logging/setLevel", json!({"level": "critical"}))
            .await
            .unwrap(),
        json!({})
    );
    let handle = service.handle();
    handle.log(
        mcp_runtime::protocol::LoggingLevel::Error,
        Some("build"),
        json!("error[E0425]: cannot find value `x`"),
    );
    assert_eq!(
        default_level.next_message().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
            "level": "error", "logger": "build", "data": "error[E0425]: cannot find value `x`"
        }})
    );
    assert!(matches!(
        errors_only.next_message().await,
        Err(ClientError::Timeout(_))
    ));
    handle.log(
        mcp_runtime::protocol::LoggingLevel::Debug,
        None,
        json!("below info"),
    );
    assert!(matches!(
        default_level.next_message().await,
        Err(ClientError::Timeout(_))
    ));
}
