//! Sync tools run on tokio's blocking pool: one that blocks does not hold up the connection,
//! while `#[tool(inline)]` keeps a trivial one on the request's task.

use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use serde_json::{Value, json};

/// Block the thread, then answer.
#[tool]
fn sleepy(millis: u64) -> String {
    std::thread::sleep(Duration::from_millis(millis));
    "slept".to_owned()
}

/// Block the thread on the request's task, then answer.
#[tool(inline)]
fn sleepy_inline(millis: u64) -> String {
    std::thread::sleep(Duration::from_millis(millis));
    "slept inline".to_owned()
}

/// Echo, on the request's task.
#[tool(inline)]
fn echo(word: String) -> String {
    word
}

/// Panic on the blocking pool.
#[tool]
fn sync_explode() -> String {
    panic!("secret detail from the blocking pool")
}

/// A sync tool with the request's context.
#[tool]
fn sync_context(ctx: Context, word: String) -> String {
    format!("{word} {} {}", ctx.request_id(), ctx.is_cancelled())
}

/// A context parameter that cannot be sent to another thread.
struct Local(std::rc::Rc<String>);

impl FromContext for Local {
    fn from_context(ctx: &Context) -> Result<Self, mcp_runtime::context::ContextError> {
        Ok(Local(std::rc::Rc::new(ctx.request_id().to_string())))
    }
}

/// Inline, a sync tool may take and return what is not `Send`.
#[tool(inline)]
fn local_id(local: Local) -> String {
    format!("local {}", local.0)
}

struct Counter;

#[server]
impl Counter {
    /// A sync `&self` method, on the blocking pool.
    #[tool]
    fn counter_name(&self, suffix: String) -> String {
        format!("counter{suffix}")
    }
}

fn server() -> Server {
    Server::builder()
        .tool(sleepy)
        .tool(sleepy_inline)
        .tool(echo)
        .tool(sync_explode)
        .tool(sync_context)
        .tool(local_id)
        .with(Counter)
}

/// Sends a call of `tool` with `millis`, then a `ping`, as raw lines (their answers then come
/// back through `next_message`, in the order the server wrote them); the ids of the two answers
/// in that order.
async fn call_then_ping(client: &Client, tool: &str, millis: u64) -> Vec<Value> {
    let call = json!({
        "jsonrpc": "2.0", "id": "call", "method": "tools/call",
        "params": {"name": tool, "arguments": {"millis": millis}},
    });
    client.send_line(call.to_string()).unwrap();
    client
        .send_line(r#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#)
        .unwrap();
    let mut order = Vec::new();
    for _ in 0..2 {
        let answer = client.next_message().await.unwrap();
        if answer["id"] == "call" {
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(text.starts_with("slept"), "{answer}");
        } else {
            assert_eq!(answer["result"], json!({}), "{answer}");
        }
        order.push(answer["id"].clone());
    }
    order
}

#[tokio::test]
async fn a_blocking_sync_tool_does_not_hold_up_a_ping() {
    let client = Client::connect(server()).await.unwrap();
    assert_eq!(
        call_then_ping(&client, "sleepy", 2000).await,
        ["ping", "call"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_sync_tool_does_not_hold_up_a_ping_on_a_multi_thread_runtime() {
    let client = Client::connect(server()).await.unwrap();
    assert_eq!(
        call_then_ping(&client, "sleepy", 2000).await,
        ["ping", "call"]
    );
}

#[tokio::test]
async fn an_inline_tool_runs_on_the_request_s_task() {
    let client = Client::connect(server()).await.unwrap();
    let result = client
        .call_tool("echo", json!({"word": "hi"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "hi");
    let raw = client
        .request_raw("tools/call", json!({"name": "local_id", "arguments": {}}))
        .await
        .unwrap();
    let id = raw["id"].to_string();
    assert_eq!(raw["result"]["content"][0]["text"], format!("local {id}"));
    // Blocking inline holds up the requests read after it: that is what `inline` trades.
    assert_eq!(
        call_then_ping(&client, "sleepy_inline", 300).await,
        ["call", "ping"]
    );
}

#[tokio::test]
async fn a_panic_on_the_blocking_pool_becomes_an_error_result() {
    let client = Client::connect(server()).await.unwrap();
    let raw = client
        .request_raw(
            "tools/call",
            json!({"name": "sync_explode", "arguments": {}}),
        )
        .await
        .unwrap();
    assert_eq!(raw["result"]["isError"], true);
    assert_eq!(
        raw["result"]["content"][0]["text"],
        "tool `sync_explode` failed unexpectedly"
    );
    assert!(!raw.to_string().contains("secret"), "{raw}");
    // The server keeps serving.
    let result = client
        .call_tool("echo", json!({"word": "still here"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "still here");
}

#[tokio::test]
async fn sync_tools_take_context_and_self_on_the_blocking_pool() {
    let client = Client::connect(server()).await.unwrap();
    let raw = client
        .request_raw(
            "tools/call",
            json!({"name": "sync_context", "arguments": {"word": "id"}}),
        )
        .await
        .unwrap();
    let id = raw["id"].to_string();
    assert_eq!(
        raw["result"]["content"][0]["text"],
        format!("id {id} false")
    );
    let result = client
        .call_tool("counter_name", json!({"suffix": "-1"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "counter-1");
}
