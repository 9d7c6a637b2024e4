//! An upstream tool that runs only as a task (`execution.taskSupport: "required"`): its task
//! followed to its end, its questions relayed, its cancellation relayed.
//!
//! In 2026-07-28 (the tasks extension) the call's answer is a task handle: `tasks/get` is
//! polled at the interval the upstream asks (50 ms to 5 s), its `input_required` questions are
//! asked of the downstream client under their keys and answered with `tasks/update`, and its
//! end is the result (`completed`), the error (`failed`) or a tool error (`cancelled`). In
//! 2025-11-25's experimental tasks the call asked for a task, and `tasks/result` waits for its
//! end (its questions come as the upstream's requests, relayed as any other). If the
//! downstream call ends first, the upstream task is cancelled (`tasks/cancel`).

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::link::{Link, failure};
use crate::client::{Client, ClientError, RequestOptions};
use crate::context::{ClientRequestError, Context};
use crate::protocol::{CLIENT_CAPABILITIES_KEY, ErrorObject};
use crate::tool::CallToolResult;

/// The tasks extension's identifier.
pub(super) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether a `tools/call` answer is a task handle rather than the tool's result.
pub(super) fn is_task(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("task")
        || result.get("task").is_some_and(Value::is_object)
}

/// Cancels the upstream task unless it ended.
struct CancelOnDrop {
    client: Client,
    task_id: String,
    meta: Map<String, Value>,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let client = self.client.clone();
        let id = std::mem::take(&mut self.task_id);
        let options = RequestOptions::new()
            .timeout(Duration::from_secs(10))
            .meta(std::mem::take(&mut self.meta));
        tokio::spawn(async move {
            if let Err(error) = client
                .request_with("tasks/cancel", json!({"taskId": id}), &options)
                .await
            {
                tracing::debug!(%error, "cancelling an upstream task failed");
            }
        });
    }
}

/// Follows the upstream task `handle` (a `tools/call` answer) to its end: the tool's result
/// as JSON, or the upstream's error. A failure to reach the upstream is a tool error.
pub(super) async fn drive(
    link: &Link,
    client: &Client,
    ctx: &Context,
    options: &RequestOptions,
    handle: Value,
) -> Result<Value, ErrorObject> {
    let error_result =
        |why: String| Ok(serde_json::to_value(CallToolResult::error(why)).unwrap_or_default());
    if !client.is_stateless() {
        // 2025-11-25: `tasks/result` waits for the end.
        let Some(task_id) = handle
            .get("task")
            .and_then(|t| t.get("taskId"))
            .and_then(Value::as_str)
        else {
            return error_result(format!("{} answered with a task without an id", link.label));
        };
        let mut cancel = CancelOnDrop {
            client: client.clone(),
            task_id: task_id.to_owned(),
            meta: Map::new(),
            armed: true,
        };
        let outcome = client
            .request_with("tasks/result", json!({"taskId": task_id}), options)
            .await;
        cancel.armed = !matches!(outcome, Ok(_) | Err(ClientError::Rpc(_)));
        return match outcome {
            Ok(result) => Ok(result),
            Err(ClientError::Rpc(error)) => Err(error),
            Err(error) => error_result(failure(link, &error)),
        };
    }
    let Some(task_id) = handle.get("taskId").and_then(Value::as_str) else {
        return error_result(format!("{} answered with a task without an id", link.label));
    };
    let poll = Duration::from_millis(
        handle
            .get("pollIntervalMs")
            .and_then(Value::as_u64)
            .unwrap_or(500)
            .clamp(50, 5_000),
    );
    let caps = downstream_capabilities(ctx, true);
    let mut meta = Map::new();
    meta.insert(CLIENT_CAPABILITIES_KEY.into(), Value::Object(caps));
    let tasks = RequestOptions::new()
        .timeout(link.upstream.timeout)
        .meta(meta.clone());
    let mut cancel = CancelOnDrop {
        client: client.clone(),
        task_id: task_id.to_owned(),
        meta,
        armed: true,
    };
    let mut answered: HashSet<String> = HashSet::new();
    let mut last_message: Option<String> = None;
    let mut step = 0.0;
    loop {
        tokio::time::sleep(poll).await;
        let task = match client
            .request_with("tasks/get", json!({"taskId": task_id}), &tasks)
            .await
        {
            Ok(task) => task,
            Err(ClientError::Rpc(error)) => {
                cancel.armed = false;
                return Err(error);
            }
            Err(error) => return error_result(failure(link, &error)),
        };
        match task.get("status").and_then(Value::as_str) {
            Some("completed") => {
                cancel.armed = false;
                return Ok(task.get("result").cloned().unwrap_or_default());
            }
            Some("failed") => {
                cancel.armed = false;
                let error = task
                    .get("error")
                    .cloned()
                    .and_then(|e| serde_json::from_value::<ErrorObject>(e).ok())
                    .unwrap_or_else(|| ErrorObject::internal("the upstream task failed"));
                return Err(error);
            }
            Some("cancelled") => {
                cancel.armed = false;
                return error_result(format!("{} cancelled the task", link.label));
            }
            Some("input_required") => {
                let Some(Value::Object(requests)) = task.get("inputRequests") else {
                    continue;
                };
                let asked: Vec<(String, String, Map<String, Value>)> = requests
                    .iter()
                    .filter(|(key, _)| !answered.contains(*key))
                    .map(|(key, request)| {
                        let method = request
                            .get("method")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned();
                        let params = match request.get("params") {
                            Some(Value::Object(params)) => params.clone(),
                            _ => Map::new(),
                        };
                        (key.clone(), method, params)
                    })
                    .collect();
                if asked.is_empty() {
                    continue;
                }
                let mut responses = Map::new();
                for (key, answer) in relay_all(ctx, asked).await {
                    match answer {
                        Ok(answer) => {
                            answered.insert(key.clone());
                            responses.insert(key, answer);
                        }
                        Err(ClientRequestError::Rejected(error)) => return Err(error),
                        Err(error) => {
                            return error_result(format!(
                                "the client could not answer {}'s task: {error}",
                                link.label
                            ));
                        }
                    }
                }
                let update = json!({"taskId": task_id, "inputResponses": responses});
                match client.request_with("tasks/update", update, &tasks).await {
                    Ok(_) => {}
                    Err(ClientError::Rpc(error)) => return Err(error),
                    Err(error) => return error_result(failure(link, &error)),
                }
            }
            _ => {
                let message = task
                    .get("statusMessage")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if message.is_some() && message != last_message {
                    step += 1.0;
                    ctx.progress_now(step, None, message.clone());
                    last_message = message;
                }
            }
        }
    }
}

type Answer = Result<Value, ClientRequestError>;
type Asking<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

/// Asks the client every question at once, polled together on this task (so a 2026-07-28
/// client gets them in one round); the answers by key.
async fn relay_all(
    ctx: &Context,
    asked: Vec<(String, String, Map<String, Value>)>,
) -> Vec<(String, Answer)> {
    let mut pending: Vec<(String, Asking<'_>, Option<Answer>)> = asked
        .into_iter()
        .map(|(key, method, params)| {
            let asking_key = key.clone();
            let future: Asking<'_> =
                Box::pin(async move { ctx.relay(Some(&asking_key), &method, params).await });
            (key, future, None)
        })
        .collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (_, future, output) in &mut pending {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(answer) => *output = Some(answer),
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    pending
        .into_iter()
        .filter_map(|(key, _, output)| Some((key, output?)))
        .collect()
}

/// What a 2026-07-28 upstream is told the client can do, request by request: what the
/// downstream client declared of what the gateway relays (sampling, elicitation, roots), so
/// the upstream asks only what will be answered; and the tasks extension for a call the
/// gateway runs as an upstream task.
pub(super) fn downstream_capabilities(ctx: &Context, tasks: bool) -> Map<String, Value> {
    let declared = &ctx.client().capabilities.0;
    let mut caps: Map<String, Value> = ["sampling", "elicitation", "roots"]
        .into_iter()
        .filter_map(|key| Some((key.to_owned(), declared.get(key)?.clone())))
        .collect();
    if tasks {
        caps.insert("extensions".into(), json!({ EXTENSION: {} }));
    }
    caps
}
