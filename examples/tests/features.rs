//! What a client sees of the runtime's `tasks` and `skills` features: with them (the default,
//! `cargo test -p mcp-examples`) and without them (the stdio-only set, `cargo test -p
//! mcp-examples --no-default-features`, which `.ci/run` runs too).

use mcp_runtime::tasks::TaskSupport;
use mcp_runtime::testing::Client;
use mcp_runtime::tool::{ToolBuilder, ToolDef};
use mcp_runtime::{CallToolResult, Server};
use serde_json::{Value, json};

/// A tool built at run time that may (or must) run as a task.
fn report(support: TaskSupport) -> ToolDef {
    let mut builder = ToolBuilder::new("report", |_call| {
        Box::pin(async { CallToolResult::success(["done"]) })
    });
    builder.description("Writes the report.");
    builder.task_support(support);
    builder.build()
}

/// A 2025-11-25 client that can take tasks.
async fn client(server: Server) -> Client {
    Client::builder()
        .protocol_version("2025-11-25")
        .capabilities(json!({ "tasks": { "requests": { "tools": { "call": {} } } } }))
        .connect(server)
        .await
        .expect("the server starts")
}

fn error_code(response: &Value) -> Option<i64> {
    response["error"]["code"].as_i64()
}

#[cfg(not(feature = "tasks"))]
#[test]
fn without_tasks_a_tool_that_runs_only_as_a_task_fails_the_build() {
    let Err(error) = Server::builder()
        .tool_def(report(TaskSupport::Required))
        .build()
    else {
        panic!("a task-only tool built without the tasks feature");
    };
    let text = error.to_string();
    assert!(text.contains("report"), "{text}");
    assert!(text.contains("`tasks` feature"), "{text}");
}

#[cfg(not(feature = "tasks"))]
#[tokio::test]
async fn without_tasks_a_task_capable_tool_is_an_ordinary_call() {
    let client = client(Server::builder().tool_def(report(TaskSupport::Optional))).await;
    let capabilities = &client.initialize_result().expect("initialized")["capabilities"];
    assert!(capabilities.get("tasks").is_none(), "{capabilities}");
    // Asked for a task, answered with the result itself.
    let result = client
        .request(
            "tools/call",
            json!({ "name": "report", "arguments": {}, "task": { "ttl": 60000 } }),
        )
        .await
        .expect("an ordinary result");
    assert_eq!(result["content"][0]["text"], "done", "{result}");
    assert!(result.get("task").is_none(), "{result}");
    let response = client.request_raw("tasks/list", json!({})).await.unwrap();
    assert_eq!(error_code(&response), Some(-32601), "{response}");
}

#[cfg(feature = "tasks")]
#[tokio::test]
async fn with_tasks_a_task_capable_tool_runs_as_a_task() {
    let client = client(Server::builder().tool_def(report(TaskSupport::Required))).await;
    let capabilities = &client.initialize_result().expect("initialized")["capabilities"];
    assert!(
        capabilities["tasks"]["requests"]["tools"]["call"].is_object(),
        "{capabilities}"
    );
    let created = client
        .request(
            "tools/call",
            json!({ "name": "report", "arguments": {}, "task": { "ttl": 60000 } }),
        )
        .await
        .expect("a task");
    let id = created["task"]["taskId"].as_str().expect("a task id");
    let listed = client.request("tasks/list", json!({})).await.unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], id, "{listed}");
}

#[tokio::test]
async fn skills_methods_exist_only_with_skills() {
    let server = Server::builder().tool_def(report(TaskSupport::Forbidden));
    #[cfg(feature = "skills")]
    let server = server.skills(mcp_runtime::Skills::new().skill(mcp_runtime::Skill::new(
        "report-writing",
        "---\nname: report-writing\ndescription: How reports are written.\n---\nShort.\n",
    )));
    let client = client(server).await;
    let extensions =
        &client.initialize_result().expect("initialized")["capabilities"]["extensions"];
    let response = client.request_raw("skills/list", json!({})).await.unwrap();
    if cfg!(feature = "skills") {
        assert!(
            extensions["io.modelcontextprotocol/skills"].is_object(),
            "{extensions}"
        );
        assert_eq!(error_code(&response), None, "{response}");
    } else {
        assert!(extensions.is_null(), "{extensions}");
        assert_eq!(error_code(&response), Some(-32601), "{response}");
    }
}
