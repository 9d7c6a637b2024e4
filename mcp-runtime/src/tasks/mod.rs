//! Tasks: a tool call that answers with a handle at once and runs on; the client polls it,
//! answers its questions and reads its result (the extension `io.modelcontextprotocol/tasks`,
//! SEP-2663, in 2026-07-28).
//!
//! A tool opts in with `#[tool(task = "optional")]` or `task = "required"`
//! ([`TaskSupport`]). The dispatcher creates the task record, polls
//! the handler once in the request (so questions inside
//! [`Context::before_task`](crate::Context::before_task) become input-required rounds of the
//! `tools/call`), then hands the handler to a tokio task and answers `CreateTaskResult`. From
//! then on everything goes through the [`TaskStore`].
//!
//! # Where it sits
//!
//! A capability above the server's core: it may import the server (the dispatch's `Tasking`,
//! which it implements in `serve.rs`, the sink, the panic catcher, the shared store's
//! interface), `shared` (the Redis task store), the items, `context` and `protocol`. The
//! dispatch and the sessions call it only through `Tasking`; the server's builder and options
//! name it to hold its settings and install it, and the transports may import it.

mod peer;
#[cfg(feature = "redis")]
pub(crate) mod redis;
mod serve;
pub(crate) mod store;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Map, Value, json};

pub(crate) use self::peer::TaskPeer;
pub use self::store::{
    MAX_STATUS_MESSAGE, MemoryTaskStore, StoreError, StoreFuture, TaskLimits, TaskOutcome,
    TaskRecord, TaskStatus, TaskStore,
};
use crate::context::{BoxFuture, CancelFlag, ClientInfo};
use crate::protocol::Members;
use crate::protocol::{ErrorObject, ProtocolVersion, echo, error_codes};
use crate::server::catch::{catch_unwind, panic_message};
use crate::tool::CallToolResult;
pub use crate::tool::TaskSupport;

/// The extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The task settings and store a server runs with.
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    /// The Redis store, to connect when the server connects its Redis.
    #[cfg(feature = "redis")]
    pub(crate) redis: Option<Arc<redis::RedisTaskStore>>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    /// The bound on one task's result, whatever the store.
    pub(crate) max_result_bytes: usize,
}

/// The settings a [`Server`](crate::Server) collects.
#[derive(Clone)]
pub(crate) struct TaskOptions {
    pub(crate) store: Option<Arc<dyn TaskStore>>,
    pub(crate) max_live: usize,
    /// `None`: a tenth of `max_live`.
    pub(crate) max_live_per_owner: Option<usize>,
    pub(crate) max_result_bytes: usize,
    pub(crate) result_bytes_total: usize,
    /// `None`: an eighth of `result_bytes_total`.
    pub(crate) result_bytes_per_owner: Option<usize>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    /// Advertise the extension though no tool is task-capable at build (a gateway's proxied
    /// tools may be).
    pub(crate) advertise: bool,
}

impl TaskOptions {
    /// The bounds of the default stores.
    pub(crate) fn limits(&self) -> TaskLimits {
        let defaults = TaskLimits::with_max_live(self.max_live);
        TaskLimits {
            max_live: self.max_live,
            max_live_per_owner: self
                .max_live_per_owner
                .unwrap_or(defaults.max_live_per_owner)
                .max(1),
            max_result_bytes: self.max_result_bytes,
            result_bytes_total: self.result_bytes_total,
            result_bytes_per_owner: self
                .result_bytes_per_owner
                .unwrap_or(self.result_bytes_total / 8),
        }
    }
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("custom_store", &self.store.is_some())
            .field("limits", &self.limits())
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .finish()
    }
}

impl Default for TaskOptions {
    fn default() -> Self {
        let limits = TaskLimits::default();
        Self {
            store: None,
            max_live: limits.max_live,
            max_live_per_owner: None,
            max_result_bytes: limits.max_result_bytes,
            result_bytes_total: limits.result_bytes_total,
            result_bytes_per_owner: None,
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(500),
            advertise: false,
        }
    }
}

impl Tasks {
    /// With `shared` (the server has a Redis) and no store of the caller's, the tasks live in
    /// that Redis.
    pub(crate) fn new(options: &TaskOptions, shared: bool) -> Self {
        let limits = options.limits();
        #[cfg(feature = "redis")]
        let redis = (shared && options.store.is_none())
            .then(|| Arc::new(redis::RedisTaskStore::new(limits)));
        #[cfg(not(feature = "redis"))]
        let _ = shared;
        #[cfg(feature = "redis")]
        let fallback = redis.clone().map(|r| r as Arc<dyn TaskStore>);
        #[cfg(not(feature = "redis"))]
        let fallback: Option<Arc<dyn TaskStore>> = None;
        Self {
            store: options
                .store
                .clone()
                .or(fallback)
                .unwrap_or_else(|| Arc::new(MemoryTaskStore::with_limits(limits))),
            #[cfg(feature = "redis")]
            redis,
            ttl: options.ttl,
            poll_interval: options.poll_interval,
            max_result_bytes: limits.max_result_bytes,
        }
    }

    /// A new record for `owner`, not yet stored, kept for `requested` (the client's `ttl`, in
    /// milliseconds) when it asked for no longer than the server's TTL, else for that.
    pub(crate) fn record(&self, owner: &str, requested: Option<u64>) -> TaskRecord {
        TaskRecord::new(
            new_id(),
            owner.to_owned(),
            ttl_for(requested, self.ttl),
            self.poll_interval,
        )
    }
}

/// The TTL a task gets: what the client asked for (2025-11-25's `task.ttl`, in ms) up to the
/// server's own, which is also what it gets when it asked for none. At least a second, so that
/// the client can read what it created.
pub(crate) fn ttl_for(requested: Option<u64>, max: Duration) -> Duration {
    requested
        .map(Duration::from_millis)
        .map_or(max, |asked| asked.min(max))
        .max(Duration::from_secs(1).min(max))
}

/// Who owns a task: a session (or stdio connection), by its name.
pub(crate) fn session_owner(name: &str) -> String {
    format!("session:{name}")
}

/// 128 random bits, URL-safe base64 (22 characters).
pub(crate) fn new_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: never a guessable counter, so refuse to go on quietly.
        panic!("no system randomness for task ids");
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Whether the client declared the tasks extension for this request.
pub(crate) fn declared(client: &ClientInfo) -> bool {
    client
        .capabilities
        .0
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// -32021: the client must declare the tasks extension.
pub(crate) fn required_error(what: &str) -> ErrorObject {
    ErrorObject::new(
        error_codes::MISSING_CLIENT_CAPABILITY,
        format!("{what} needs the `{EXTENSION}` extension, which the request did not declare"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } }))
}

/// What a client gets when the store failed: no detail (it was logged).
fn unavailable(_: StoreError) -> ErrorObject {
    ErrorObject::internal("the task store is unavailable")
}

fn unknown(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown or expired task `{}`", echo(id)))
}

/// The caller's task `id`, or the error a client sees for one it may not see or that is gone.
async fn find(store: &dyn TaskStore, id: &str, owner: &str) -> Result<TaskRecord, ErrorObject> {
    store
        .try_get(id, owner)
        .await
        .map_err(unavailable)?
        .ok_or_else(|| unknown(id))
}

/// An empty acknowledgement if the store found the task (`tasks/update`, `tasks/cancel`).
fn acknowledged(found: Result<bool, StoreError>, id: &str) -> Result<Value, ErrorObject> {
    if found.map_err(unavailable)? {
        Ok(json!({}))
    } else {
        Err(unknown(id))
    }
}

/// Ties `message` (a result or a request's params) to task `id` in its `_meta` (2025-11-25).
fn relate_to_task(message: &mut Value, id: &str) {
    if let Value::Object(map) = message {
        let meta = map.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(RELATED_TASK_KEY.into(), json!({ "taskId": id }));
        }
    }
}

/// The fields every form of a task carries; `ttl` and `poll` name the two durations (in
/// milliseconds): `ttlMs`/`pollIntervalMs` in 2026-07-28, `ttl`/`pollInterval` in 2025-11-25.
fn base(record: &TaskRecord, ttl: &str, poll: &str) -> Map<String, Value> {
    let mut task = Map::new();
    task.insert("taskId".into(), Value::from(&*record.id));
    task.insert("status".into(), Value::from(record.status.as_str()));
    if let Some(message) = &record.status_message {
        task.insert("statusMessage".into(), Value::from(&**message));
    }
    task.insert("createdAt".into(), Value::from(iso8601(record.created_at)));
    task.insert(
        "lastUpdatedAt".into(),
        Value::from(iso8601(record.last_updated_at)),
    );
    task.insert(ttl.into(), Value::from(millis(record.ttl)));
    task.insert(
        poll.into(),
        Value::from(millis(record.poll_interval).max(1)),
    );
    task
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The flat `CreateTaskResult` (2026-07-28).
pub(crate) fn created(record: &TaskRecord) -> Value {
    let mut task = base(record, "ttlMs", "pollIntervalMs");
    task.insert("resultType".into(), Value::from("task"));
    Value::Object(task)
}

/// `tasks/get` (2026-07-28), serialized: the task with what its status inlines, and `extra`
/// fields (a notification's `_meta`). The inlined `result` is the stored one as it is, with the
/// `resultType: "complete"` that a 2026-07-28 `tools/call` result carries.
pub(crate) fn detailed(record: &TaskRecord, extra: Option<(&str, Value)>) -> String {
    let mut task = base(record, "ttlMs", "pollIntervalMs");
    let mut result = None;
    match (&record.status, &record.outcome) {
        (TaskStatus::InputRequired, _) => {
            task.insert(
                "inputRequests".into(),
                Value::Object(record.input_requests.clone()),
            );
        }
        (TaskStatus::Completed, Some(TaskOutcome::Result(stored))) => result = Some(stored),
        (TaskStatus::Failed, Some(TaskOutcome::Error(error))) => {
            task.insert("error".into(), error.clone());
        }
        _ => {}
    }
    if let Some((key, value)) = extra {
        task.insert(key.into(), value);
    }
    let mut out = Value::Object(task).to_string();
    if let Some(stored) = result {
        // The object's closing brace, then `,"result":{"resultType":"complete",...}}`: the stored
        // result is not parsed again.
        out.pop();
        out.reserve(stored.len() + 40);
        out.push_str(",\"result\":");
        out.push_str(&complete(stored));
        out.push('}');
    }
    out
}

/// A stored result (a serialized JSON object) with `resultType: "complete"` in front.
fn complete(stored: &str) -> String {
    let rest = stored
        .trim_start()
        .strip_prefix('{')
        .unwrap_or("}")
        .trim_start();
    let mut out = String::with_capacity(stored.len() + 26);
    out.push_str("{\"resultType\":\"complete\"");
    if !rest.starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
    out
}

/// The `Task` object of 2025-11-25's experimental core tasks (`ttl`, `pollInterval`).
pub(crate) fn legacy(record: &TaskRecord) -> Value {
    Value::Object(base(record, "ttl", "pollInterval"))
}

/// `_meta` key tying a message to a task (2025-11-25).
pub(crate) const RELATED_TASK_KEY: &str = "io.modelcontextprotocol/related-task";

/// `tasks/get` (2025-11-25).
pub(crate) async fn legacy_get(
    tasks: &Tasks,
    owner: &str,
    params: &impl Members,
) -> Result<Value, ErrorObject> {
    let id = task_id(params)?;
    Ok(legacy(&find(&*tasks.store, id, owner).await?))
}

/// Most tasks on one page of `tasks/list`.
pub(crate) const LIST_PAGE: usize = 100;

/// `tasks/list` (2025-11-25): the caller's live tasks, oldest first, [`LIST_PAGE`] a page. The
/// cursor names the last task of the page before (its creation time and id), so tasks created
/// or reclaimed meanwhile shift no page.
pub(crate) async fn legacy_list(
    tasks: &Tasks,
    owner: &str,
    params: &impl Members,
) -> Result<Value, ErrorObject> {
    let after = list_cursor(params)?;
    let mut all = tasks.store.try_list(owner).await.map_err(unavailable)?;
    // In the cursor's own order: tasks created within one millisecond are told apart by id.
    let key = |record: &TaskRecord| (millis_since_epoch(record.created_at), record.id.clone());
    all.sort_by_cached_key(key);
    let mut rest = all
        .iter()
        .filter(|record| after.as_ref().is_none_or(|after| key(record) > *after))
        .peekable();
    let mut page = Vec::with_capacity(LIST_PAGE.min(all.len()));
    let mut last = None;
    while page.len() < LIST_PAGE {
        let Some(record) = rest.next() else { break };
        page.push(legacy(record));
        last = Some(record);
    }
    let mut result = json!({ "tasks": page });
    if let (Some(last), Some(_)) = (last, rest.peek()) {
        let (at, id) = key(last);
        result["nextCursor"] = Value::from(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("task:{at}:{id}")),
        );
    }
    Ok(result)
}

fn millis_since_epoch(time: SystemTime) -> u64 {
    millis(time.duration_since(UNIX_EPOCH).unwrap_or_default())
}

/// Where a `tasks/list` page starts: after the task its cursor names; -32602 for a cursor we
/// did not mint.
fn list_cursor(params: &impl Members) -> Result<Option<(u64, String)>, ErrorObject> {
    let invalid = || {
        ErrorObject::invalid_params(
            "invalid cursor: pass back a `nextCursor` exactly as it was received",
        )
    };
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(cursor)) => cursor,
        Some(_) => return Err(invalid()),
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (at, id) = text
        .strip_prefix("task:")
        .and_then(|rest| rest.split_once(':'))
        .ok_or_else(invalid)?;
    Ok(Some((at.parse().map_err(|_| invalid())?, id.to_owned())))
}

/// `tasks/cancel` (2025-11-25): the cancelled task; -32602 for one that already ended.
pub(crate) async fn legacy_cancel(
    tasks: &Tasks,
    owner: &str,
    params: &impl Members,
) -> Result<Value, ErrorObject> {
    let id = task_id(params)?;
    let record = find(&*tasks.store, id, owner).await?;
    if record.status.is_terminal() {
        return Err(ErrorObject::invalid_params(format!(
            "task `{}` already ended ({})",
            echo(id),
            record.status.as_str()
        )));
    }
    tasks
        .store
        .try_cancel(id, owner)
        .await
        .map_err(unavailable)?;
    Ok(legacy(&find(&*tasks.store, id, owner).await?))
}

/// `tasks/result` (2025-11-25): waits for the task to end, asking the client (on this
/// request's stream, through `ask`) every question the task has meanwhile; then the tool's
/// result, or the task's error.
pub(crate) async fn legacy_result<A>(
    tasks: &Tasks,
    owner: &str,
    params: &impl Members,
    ask: A,
) -> Result<Value, ErrorObject>
where
    A: Fn(&'static str, Value) -> BoxFuture<Result<Value, crate::context::ClientRequestError>>,
{
    let id = task_id(params)?;
    let store = &tasks.store;
    loop {
        let record = find(&**store, id, owner).await?;
        match (&record.status, &record.outcome) {
            (TaskStatus::Completed, Some(TaskOutcome::Result(result))) => {
                let mut result: Value = serde_json::from_str(result).map_err(|_| {
                    ErrorObject::internal(format!("task `{id}`'s stored result is not JSON"))
                })?;
                relate_to_task(&mut result, id);
                return Ok(result);
            }
            (TaskStatus::Failed, Some(TaskOutcome::Error(error))) => {
                let code = error["code"]
                    .as_i64()
                    .unwrap_or(error_codes::INTERNAL_ERROR);
                let message = error["message"].as_str().unwrap_or("the task failed");
                return Err(ErrorObject::new(code, message.to_owned()));
            }
            (status, _) if status.is_terminal() => {
                return Err(ErrorObject::internal(format!(
                    "task `{id}` ended {}",
                    status.as_str()
                )));
            }
            _ => {}
        }
        if let Some((key, request)) = record.input_requests.iter().next() {
            let method = match request["method"].as_str() {
                Some("sampling/createMessage") => "sampling/createMessage",
                Some("roots/list") => "roots/list",
                _ => "elicitation/create",
            };
            let mut params = request["params"].clone();
            relate_to_task(&mut params, id);
            let answer = match ask(method, params).await {
                Ok(answer) => answer,
                // The client could not answer: the question is declined, not left hanging.
                Err(error) => {
                    tracing::debug!(task = %id, %error, "a task's question went unanswered");
                    json!({"action": "cancel"})
                }
            };
            let mut answers = Map::new();
            answers.insert(key.clone(), answer);
            store
                .try_answer(id, owner, answers)
                .await
                .map_err(unavailable)?;
            continue;
        }
        let _ =
            tokio::time::timeout(Duration::from_secs(1), store.changed(id, record.version)).await;
    }
}

/// `2026-11-24T02:42:14.123Z`.
pub(crate) fn iso8601(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The `taskId` parameter.
fn task_id(params: &impl Members) -> Result<&str, ErrorObject> {
    match params.get("taskId") {
        Some(Value::String(id)) => Ok(id),
        Some(_) => Err(ErrorObject::invalid_params("`taskId` must be a string")),
        None => Err(ErrorObject::invalid_params("`tasks/*` needs `taskId`")),
    }
}

/// `tasks/get` (2026-07-28), serialized.
pub(crate) async fn get(
    tasks: &Tasks,
    owner: &str,
    params: &impl Members,
) -> Result<String, ErrorObject> {
    let id = task_id(params)?;
    Ok(detailed(&find(&*tasks.store, id, owner).await?, None))
}

/// `tasks/update`: answers to the task's input requests; an empty acknowledgement.
pub(crate) async fn update(
    tasks: &Tasks,
    owner: &str,
    params: &impl Members,
) -> Result<Value, ErrorObject> {
    let id = task_id(params)?;
    let answers = match params.get("inputResponses") {
        Some(Value::Object(answers)) => answers.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "`inputResponses` must be an object",
            ));
        }
    };
    acknowledged(tasks.store.try_answer(id, owner, answers).await, id)
}

/// `tasks/cancel`: an empty acknowledgement, the same for a task that already ended.
pub(crate) async fn cancel(
    tasks: &Tasks,
    owner: &str,
    params: &impl Members,
) -> Result<Value, ErrorObject> {
    let id = task_id(params)?;
    acknowledged(tasks.store.try_cancel(id, owner).await, id)
}

/// The tool result as a task stores it: its JSON, or an error when it is over `max` bytes (or
/// the error a relayed tool's upstream answered with: the task failed with it).
pub(crate) fn outcome_of(
    result: &Result<CallToolResult, ErrorObject>,
    version: ProtocolVersion,
    max: usize,
) -> TaskOutcome {
    let result = match result {
        Ok(result) => result,
        Err(error) => {
            return TaskOutcome::Error(serde_json::to_value(error).unwrap_or_else(
                |_| json!({"code": error_codes::INTERNAL_ERROR, "message": "internal error"}),
            ));
        }
    };
    match serde_json::to_string(&result.clone().for_version(version)) {
        Ok(json) if json.len() > max => store::too_large(format!(
            "the task's result is {} bytes, over the server's bound of {max} bytes a task",
            json.len()
        )),
        Ok(json) => TaskOutcome::Result(Arc::from(json)),
        Err(_) => TaskOutcome::Error(json!({
            "code": error_codes::INTERNAL_ERROR,
            "message": "the result could not be serialized",
        })),
    }
}

/// What a panic inside a task becomes.
pub(crate) fn panicked() -> TaskOutcome {
    TaskOutcome::Error(json!({
        "code": error_codes::INTERNAL_ERROR,
        "message": "internal error: the tool failed unexpectedly",
    }))
}

/// Runs the rest of a task's handler on its own tokio task: until it ends (its outcome is
/// stored), or the task is cancelled or expires (the handler is dropped, which stops it, and
/// its cancel flag is set for work it handed elsewhere).
pub(crate) fn spawn(
    tasks: &Tasks,
    peer: Arc<TaskPeer>,
    version: ProtocolVersion,
    cancel: Arc<CancelFlag>,
    handler: crate::tool::ToolFuture,
) {
    let (store, max) = (Arc::clone(&tasks.store), tasks.max_result_bytes);
    let (id, owner) = (Arc::clone(&peer.id), Arc::clone(&peer.owner));
    tokio::spawn(async move {
        let stopped = stopped(&*store, &id, &owner);
        let leased = async {
            loop {
                store.lease(&id).await;
                tokio::time::sleep(LEASE_REFRESH).await;
            }
        };
        let outcome = tokio::select! {
            outcome = catch_unwind(Box::pin(handler)) => Some(outcome),
            () = stopped => None,
            () = leased => None,
        };
        match outcome {
            None => cancel.cancel(),
            Some(Ok(result)) => {
                let result = result.map(crate::tool::ToolReply::into_result);
                // Its last progress message first, so the ended task shows it.
                peer.flush_message().await;
                store.finish(&id, outcome_of(&result, version, max)).await;
            }
            Some(Err(panic)) => {
                tracing::error!(task = %id, panic = panic_message(&*panic), "a task's tool panicked");
                peer.flush_message().await;
                store.finish(&id, panicked()).await;
            }
        }
    });
}

/// How often the replica running a task's handler renews its lease ([`TaskStore::lease`]).
pub(crate) const LEASE_REFRESH: Duration = Duration::from_secs(2);

/// Most task ids one `subscriptions/listen` may follow.
pub(crate) const MAX_WATCHED: usize = 100;

/// Follows task `id` for a listen: `notifications/tasks` with the whole task (as `tasks/get`
/// shows it) at every change, until it ends or is gone; the listen aborts it when it ends.
pub(crate) fn watch(
    store: Arc<dyn TaskStore>,
    id: String,
    owner: String,
    sink: crate::server::outbox::Sink,
    subscription: Value,
) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        let mut seen = None;
        loop {
            let record = match store.try_get(&id, &owner).await {
                Ok(Some(record)) => record,
                Ok(None) => return,
                // The store failed: the listen follows the task again once it is back.
                Err(_) => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            if seen != Some(record.version) {
                seen = Some(record.version);
                let meta = json!({ crate::server::stateless::SUBSCRIPTION_ID_KEY: subscription });
                let params = detailed(&record, Some(("_meta", meta)));
                let mut message = Vec::with_capacity(params.len() + 64);
                message.extend_from_slice(
                    b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks\",\"params\":",
                );
                message.extend_from_slice(params.as_bytes());
                message.push(b'}');
                if sink
                    .send(crate::protocol::Outgoing::Message(message))
                    .is_err()
                {
                    return;
                }
            }
            if record.status.is_terminal() {
                return;
            }
            let _ =
                tokio::time::timeout(Duration::from_secs(1), store.changed(&id, record.version))
                    .await;
        }
    })
    .abort_handle()
}

/// Resolves once the task was cancelled or is gone.
async fn stopped(store: &dyn TaskStore, id: &str, owner: &str) {
    loop {
        let record = match store.try_get(id, owner).await {
            Ok(Some(record)) => record,
            Ok(None) => return,
            // The store failed (a shared one is unreachable): the handler runs on meanwhile.
            Err(_) => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if record.status == TaskStatus::Cancelled {
            return;
        }
        let _ =
            tokio::time::timeout(Duration::from_secs(1), store.changed(id, record.version)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_iso_8601() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_833_734_123);
        assert_eq!(iso8601(t), "2026-11-28T02:42:14.123Z");
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn ids_are_128_random_bits() {
        let (a, b) = (new_id(), new_id());
        assert_eq!(a.len(), 22);
        assert_ne!(a, b);
    }
}
