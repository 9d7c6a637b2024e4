//! Tasks as the dispatch serves them: the [`Tasking`] the server's core defines, implemented
//! by [`Tasks`]. A task-capable `tools/call` becomes a task here; the `tasks/*` methods and a
//! listen's `taskIds` are answered here.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use serde_json::{Value, json};

use super::{
    LEASE_REFRESH, MAX_WATCHED, StoreError, TaskPeer, Tasks, cancel, created, declared, get,
    legacy, legacy_cancel, legacy_get, legacy_list, legacy_result, outcome_of, panicked,
    required_error, session_owner, spawn, update, watch,
};
use crate::context::{CancelFlag, ClientInfo, Peer};
use crate::protocol::{ErrorObject, Method, Object, Request};
use crate::server::catch::panic_message;
use crate::server::dispatch::{
    Call, Reply, TaskInvocation, Tasking, context_with, interrupted, peer_of,
};
use crate::server::stateless::Interrupt;
use crate::server::store::BoxFuture;
use crate::tool::{CallToolResult, TaskSupport, ToolDef, ToolReply};

impl Tasking for Tasks {
    fn declared(&self, client: &ClientInfo) -> bool {
        declared(client)
    }

    fn required(&self, what: &str) -> ErrorObject {
        required_error(what)
    }

    fn listened(
        &self,
        call: &Call<'_>,
        request: &Request,
    ) -> Result<Option<Vec<String>>, ErrorObject> {
        task_ids(call, request)
    }

    fn watch(&self, call: &Call<'_>, request: &Request, ids: Vec<String>) -> Box<dyn Send> {
        Box::new(watch_tasks(self, call, request, ids))
    }

    fn method<'a>(
        &'a self,
        call: &'a Call<'a>,
        method: Method,
        request: &'a Request,
    ) -> BoxFuture<'a, Result<Reply, ErrorObject>> {
        Box::pin(task_method(self, call, method, request))
    }

    fn legacy_method<'a>(
        &'a self,
        call: &'a Call<'a>,
        method: Method,
        request: &'a Request,
    ) -> BoxFuture<'a, Result<Reply, ErrorObject>> {
        Box::pin(legacy_task_method(self, call, method, request))
    }

    fn call_tool<'a>(
        &'a self,
        call: &'a Call<'a>,
        tool: &'a ToolDef,
        invocation: TaskInvocation,
    ) -> BoxFuture<'a, Result<Reply, ErrorObject>> {
        Box::pin(call_tool_task(self, call, tool, invocation))
    }

    fn running<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            self.store
                .list(&session_owner(session))
                .await
                .into_iter()
                .filter(|task| !task.status.is_terminal())
                .map(|task| task.id)
                .collect()
        })
    }

    fn release<'a>(&'a self, session: &'a str) -> BoxFuture<'a, usize> {
        Box::pin(async move { self.store.release(&session_owner(session)).await })
    }

    #[cfg(feature = "redis")]
    fn connect_redis(&self, store: Arc<dyn Any + Send + Sync>) {
        if let (Some(tasks), Ok(store)) = (
            &self.redis,
            store.downcast::<crate::shared::redis::RedisStore>(),
        ) {
            tasks.bind(store);
        }
    }
}

/// Stops what a listen started when it ends, however it ends.
struct AbortOnDrop(Vec<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for handle in &self.0 {
            handle.abort();
        }
    }
}

/// `notifications.taskIds` of a listen (tasks extension), honoured only for a request that
/// declared the extension.
fn task_ids(call: &Call<'_>, request: &Request) -> Result<Option<Vec<String>>, ErrorObject> {
    let asked = request
        .params
        .get("notifications")
        .and_then(|n| n.get("taskIds"));
    let ids: Vec<String> = match asked {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(ids)) if ids.len() <= MAX_WATCHED => ids
            .iter()
            .map(|id| id.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| ErrorObject::invalid_params("`taskIds` must be an array of strings"))?,
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`taskIds` must be an array of at most {} strings",
                MAX_WATCHED
            )));
        }
    };
    Ok(declared(&call.scope.client).then_some(ids))
}

/// `notifications/tasks` for each task in `ids` the caller may see, until the listen ends.
fn watch_tasks(tasks: &Tasks, call: &Call<'_>, request: &Request, ids: Vec<String>) -> AbortOnDrop {
    let owner = task_owner(call);
    let subscription = request.id.to_json();
    let handles = ids
        .iter()
        .map(|id| {
            watch(
                Arc::clone(&tasks.store),
                id.clone(),
                owner.clone(),
                call.sink.clone(),
                subscription.clone(),
            )
        })
        .collect();
    AbortOnDrop(handles)
}

/// Who a task belongs to, and whose share of the task bounds it takes: the authenticated
/// principal (OAuth) when there is one, else the session (or stdio connection) that created it,
/// else (a stateless HTTP request) the client's address. Only the owner sees the task.
fn task_owner(call: &Call<'_>) -> String {
    // An authenticated caller owns its tasks whatever session or replica it comes through;
    // otherwise the session (handshake era) or the connection.
    if let Some(principal) = call.sink.principal() {
        return format!("principal:{}", principal.binding_key());
    }
    if let Some(name) = call.link.and_then(|l| l.trace_name()) {
        return session_owner(name);
    }
    match call.sink.client_address() {
        Some(address) => format!("peer:{address}"),
        None => "anonymous".to_owned(),
    }
}

/// `tasks/get`, `tasks/update`, `tasks/cancel` (2026-07-28): only for a request that declared
/// the extension.
async fn task_method(
    tasks: &Tasks,
    call: &Call<'_>,
    method: Method,
    request: &Request,
) -> Result<Reply, ErrorObject> {
    if !declared(&call.scope.client) {
        return Err(required_error(&format!("`{}`", request.method)));
    }
    let owner = task_owner(call);
    let store = tasks;
    let params = &request.params;
    let value = match method {
        Method::TasksGet => return Ok(Reply::Raw(get(store, &owner, params).await?.into())),
        Method::TasksUpdate => update(store, &owner, params).await?,
        _ => cancel(store, &owner, params).await?,
    };
    Ok(Reply::Value(value))
}

/// 2025-11-25's experimental `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, for
/// the session that created the task.
async fn legacy_task_method(
    tasks: &Tasks,
    call: &Call<'_>,
    method: Method,
    request: &Request,
) -> Result<Reply, ErrorObject> {
    let owner = task_owner(call);
    let store = tasks;
    let params = &request.params;
    let value = match method {
        Method::TasksGet => legacy_get(store, &owner, params).await?,
        Method::TasksList => legacy_list(store, &owner, params).await?,
        Method::TasksCancel => legacy_cancel(store, &owner, params).await?,
        _ => {
            let peer = peer_of(call);
            let ask = move |method: &'static str, params: Value| peer.request(None, method, params);
            legacy_result(store, &owner, params, ask).await?
        }
    };
    Ok(Reply::Value(value))
}

/// How the handler's first run in the request ended.
enum Inline {
    Done(Result<CallToolResult, ErrorObject>),
    Interrupt(Interrupt),
    Panic(Box<dyn Any + Send>),
    /// It waits for something, outside `before_task`: it becomes a task.
    Escalate,
}

/// A task-capable `tools/call` from a client that declared the extension: the task is stored,
/// the handler runs in the request until it waits outside `before_task` (questions inside it
/// are input-required rounds; a tool that is done by then and only `optional` answers plainly),
/// then runs on as a task and the request answers `CreateTaskResult`, once `tasks/get` finds it.
async fn call_tool_task(
    tasks: &Tasks,
    call: &Call<'_>,
    tool: &ToolDef,
    invocation: TaskInvocation,
) -> Result<Reply, ErrorObject> {
    let TaskInvocation {
        id,
        meta,
        tool_name,
        arguments,
        binding,
        ttl,
    } = invocation;
    let store = Arc::clone(&tasks.store);
    let owner: Arc<str> = Arc::from(task_owner(call));
    let record = tasks.record(&owner, ttl);
    let task_id: Arc<str> = Arc::from(&*record.id);
    store.create(record).await.map_err(|error| {
        if let StoreError::Backend(_) = error {
            ErrorObject::internal("the task store is unavailable")
        } else {
            ErrorObject::internal(error.to_string())
        }
    })?;
    let inputs = call.scope.stateless.as_ref().map(|s| Arc::clone(&s.inputs));
    let mut peer = TaskPeer::new(
        peer_of(call),
        Arc::clone(&store),
        Arc::clone(&task_id),
        Arc::clone(&owner),
    );
    let mut meta = meta;
    if meta.progress_token().is_none() {
        // So `ctx.progress` reaches the task's `statusMessage` (and only that).
        let token = format!("task-{task_id}");
        meta.0
            .insert("progressToken".into(), Value::from(token.clone()));
        peer.own_token = Some(token);
    }
    let peer = Arc::new(peer);
    let cancel = Arc::new(CancelFlag::default());
    let context = context_with(
        call,
        id,
        meta,
        Arc::clone(&peer) as Arc<dyn Peer>,
        Arc::clone(&cancel),
    );
    // A task keeps its result as a `CallToolResult`: not written straight into a response.
    let mut handler = tool.invoke(tool_name, Object::from(arguments), Some(context), false);
    let inline = std::future::poll_fn(|cx| {
        if let Some(inputs) = &inputs {
            inputs.watch(cx.waker());
        }
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(&mut handler).poll(cx))) {
            Ok(Poll::Ready(result)) => {
                Poll::Ready(Inline::Done(result.map(ToolReply::into_result)))
            }
            Ok(Poll::Pending) => match inputs.as_ref().and_then(|i| i.interrupt()) {
                Some(interrupt) => Poll::Ready(Inline::Interrupt(interrupt)),
                None if peer.in_before_task() => Poll::Pending,
                None => Poll::Ready(Inline::Escalate),
            },
            Err(panic) => Poll::Ready(Inline::Panic(panic)),
        }
    });
    // The lease is held from the start: questions inside `before_task` may take a while.
    let leased = async {
        loop {
            store.lease(&task_id).await;
            tokio::time::sleep(LEASE_REFRESH).await;
        }
    };
    let inline = tokio::select! {
        inline = inline => inline,
        never = leased => never,
    };
    let version = call.scope.version;
    match inline {
        Inline::Interrupt(interrupt) => {
            store.remove(&task_id).await;
            return interrupted(call, &binding, interrupt);
        }
        Inline::Done(result)
            if tool.task_support == TaskSupport::Optional && call.scope.stateless.is_some() =>
        {
            store.remove(&task_id).await;
            return Ok(Reply::Tool(ToolReply::Result(result?.for_version(version))));
        }
        Inline::Done(result) => {
            peer.flush_message().await;
            let max = tasks.max_result_bytes;
            store
                .finish(&task_id, outcome_of(&result, version, max))
                .await;
        }
        Inline::Panic(panic) => {
            tracing::error!(task = %task_id, panic = panic_message(&*panic), "a task's tool panicked");
            peer.flush_message().await;
            store.finish(&task_id, panicked()).await;
        }
        Inline::Escalate => {
            peer.escalated
                .store(true, std::sync::atomic::Ordering::Release);
            spawn(tasks, Arc::clone(&peer), version, cancel, handler);
        }
    }
    match store.get(&task_id, &owner).await {
        Some(record) if call.scope.stateless.is_some() => Ok(Reply::Task(created(&record))),
        Some(record) => Ok(Reply::Value(json!({ "task": legacy(&record) }))),
        None => Err(ErrorObject::internal("the task vanished as it was created")),
    }
}
