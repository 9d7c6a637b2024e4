//! Where tasks live: the [`TaskStore`] trait and its in-memory implementation.
//!
//! The dispatcher and a running task talk to each other only through the store: the handler
//! records its questions and its outcome there, `tasks/update` records answers, `tasks/cancel`
//! the cancellation, and each side waits for the other with [`TaskStore::changed`]. So a store
//! shared between replicas (Redis and its pub/sub, say) can implement the trait and serve a task
//! whose handler runs on another replica, without the dispatcher changing.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

/// A future a [`TaskStore`] returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// The handler runs.
    Working,
    /// The handler waits for answers to its `inputRequests`.
    InputRequired,
    /// The handler returned a tool result (which may be a tool error).
    Completed,
    /// The handler failed at the protocol level (it panicked): the task carries an `error`.
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl TaskStatus {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether nothing changes it any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome {
    /// The tool's result, as JSON (`content`, `isError`, ...).
    Result(Value),
    /// A JSON-RPC error object (`code`, `message`, `data`).
    Error(Value),
}

/// Everything known about one task.
#[derive(Debug, Clone)]
pub struct TaskRecord {
    /// 128 random bits, URL-safe base64.
    pub id: String,
    /// Who created it; only they may read, answer or cancel it.
    pub owner: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// What the handler last said of its progress.
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When it last changed.
    pub last_updated_at: SystemTime,
    /// Kept at least this long after creation, then reclaimed.
    pub ttl: Duration,
    /// How often the client should poll.
    pub poll_interval: Duration,
    /// The questions waiting for an answer, by key: `{"method", "params"}`.
    pub input_requests: Map<String, Value>,
    /// Answers received and not yet taken by the handler.
    pub answers: Map<String, Value>,
    /// Every input key the task ever used: keys are unique for its lifetime.
    pub used_keys: HashSet<String>,
    /// How it ended: only for `completed` and `failed`.
    pub outcome: Option<TaskOutcome>,
    /// Bumped on every change; [`TaskStore::changed`] waits for it to pass a value.
    pub version: u64,
}

impl TaskRecord {
    /// A new working task.
    pub fn new(id: String, owner: String, ttl: Duration, poll_interval: Duration) -> Self {
        let now = SystemTime::now();
        Self {
            id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl,
            poll_interval,
            input_requests: Map::new(),
            answers: Map::new(),
            used_keys: HashSet::new(),
            outcome: None,
            version: 0,
        }
    }

    // The changes every store makes, each returning whether the record changed (a task that
    // ended changes no more). Arguments are borrowed: a shared store may apply a change again
    // when another replica wrote the record first.

    /// A question for the client under `key`: the task waits for input.
    pub(crate) fn ask(&mut self, key: &str, request: &Value) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.used_keys.insert(key.to_owned());
        self.input_requests.insert(key.to_owned(), request.clone());
        self.status = TaskStatus::InputRequired;
        true
    }

    /// The client's answers to open questions (others are ignored); working again once none
    /// is open.
    pub(crate) fn answer(&mut self, answers: &Map<String, Value>) -> bool {
        let mut changed = false;
        for (key, answer) in answers {
            if self.input_requests.remove(key).is_some() {
                self.answers.insert(key.clone(), answer.clone());
                changed = true;
            }
        }
        if changed && self.input_requests.is_empty() && self.status == TaskStatus::InputRequired {
            self.status = TaskStatus::Working;
        }
        changed
    }

    /// Ends the task with its tool's `outcome`: completed or failed.
    pub(crate) fn finish(&mut self, outcome: &TaskOutcome) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = match outcome {
            TaskOutcome::Result(_) => TaskStatus::Completed,
            TaskOutcome::Error(_) => TaskStatus::Failed,
        };
        self.input_requests.clear();
        self.answers.clear();
        self.outcome = Some(outcome.clone());
        true
    }

    /// Ends the task as cancelled.
    pub(crate) fn cancel(&mut self) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = TaskStatus::Cancelled;
        self.input_requests.clear();
        self.answers.clear();
        true
    }

    /// The task's `statusMessage`.
    pub(crate) fn set_message(&mut self, message: &str) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status_message = Some(message.to_owned());
        true
    }
}

/// Why a store refused a new task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// As many tasks as allowed are alive.
    #[error("too many live tasks: the server keeps at most {max}; try again when some expire")]
    Full {
        /// The bound.
        max: usize,
    },
    /// The backend failed.
    #[error("the task store failed: {0}")]
    Backend(String),
}

/// Where tasks are kept. Every method that reads or changes a task on a client's behalf takes
/// the `owner` and acts as if the task did not exist for anyone else. An expired task does not
/// exist either.
///
/// The in-memory [`MemoryTaskStore`] is the default; a shared store implements the same methods
/// (and makes [`changed`](Self::changed) wake across replicas).
pub trait TaskStore: Send + Sync + 'static {
    /// Adds a new task; refuses it when the store is full.
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), StoreError>>;
    /// The task, if `owner` created it and it has not expired.
    fn get<'a>(&'a self, id: &'a str, owner: &'a str) -> StoreFuture<'a, Option<TaskRecord>>;
    /// Forgets a task at once (one that never reached its client).
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()>;
    /// The handler asks a question under `key`: the task turns `input_required`.
    fn ask<'a>(&'a self, id: &'a str, key: &'a str, request: Value) -> StoreFuture<'a, ()>;
    /// The client's answers: partial answers allowed, unknown or already answered keys ignored.
    /// `false` when there is no such task for `owner`.
    fn answer<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        answers: Map<String, Value>,
    ) -> StoreFuture<'a, bool>;
    /// The handler takes the answer to its question `key`, once there is one.
    fn take_answer<'a>(&'a self, id: &'a str, key: &'a str) -> StoreFuture<'a, Option<Value>>;
    /// The handler ended; ignored when the task already ended (it was cancelled).
    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> StoreFuture<'a, ()>;
    /// The client cancels it; a task that already ended stays as it was. `false` when there is
    /// no such task for `owner`.
    fn cancel<'a>(&'a self, id: &'a str, owner: &'a str) -> StoreFuture<'a, bool>;
    /// Sets the task's `statusMessage` (the handler's last progress message).
    fn set_message<'a>(&'a self, id: &'a str, message: String) -> StoreFuture<'a, ()>;
    /// The live tasks `owner` created, oldest first.
    fn list<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<TaskRecord>>;
    /// Resolves once the task's version passes `seen`, or it is gone.
    fn changed<'a>(&'a self, id: &'a str, seen: u64) -> StoreFuture<'a, ()>;

    /// [`get`](Self::get) for a client's request, saying when the backend failed (the client
    /// gets -32603). By default `get`, which cannot fail.
    fn try_get<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move { Ok(self.get(id, owner).await) })
    }
    /// [`answer`](Self::answer), saying when the backend failed.
    fn try_answer<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        answers: Map<String, Value>,
    ) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move { Ok(self.answer(id, owner, answers).await) })
    }
    /// [`cancel`](Self::cancel), saying when the backend failed.
    fn try_cancel<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
    ) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move { Ok(self.cancel(id, owner).await) })
    }
    /// [`list`](Self::list), saying when the backend failed.
    fn try_list<'a>(
        &'a self,
        owner: &'a str,
    ) -> StoreFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        Box::pin(async move { Ok(self.list(owner).await) })
    }
    /// The replica running the task's handler is alive: called every couple of seconds while
    /// it runs. A shared store lets the lease expire when the calls stop and then reports the
    /// task `failed`; a store in one process needs nothing (the default).
    fn lease<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        let _ = id;
        Box::pin(std::future::ready(()))
    }
}

struct Entry {
    record: TaskRecord,
    expires: Instant,
    changes: tokio::sync::watch::Sender<u64>,
}

/// The default [`TaskStore`]: a bounded map in this process.
///
/// At most `max_live` tasks at once (creating another fails with [`StoreError::Full`]); each is
/// kept for its TTL and then reclaimed, on the next store operation after it expired.
pub struct MemoryTaskStore {
    max_live: usize,
    state: Mutex<State>,
}

struct State {
    tasks: HashMap<String, Entry>,
    next_sweep: Instant,
}

impl MemoryTaskStore {
    /// A store holding at most `max_live` live tasks.
    pub fn new(max_live: usize) -> Self {
        Self {
            max_live,
            state: Mutex::new(State {
                tasks: HashMap::new(),
                next_sweep: Instant::now(),
            }),
        }
    }

    /// How many tasks it holds now (expired ones included until they are reclaimed).
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reclaims every expired task now; returns how many.
    pub fn sweep(&self) -> usize {
        let mut state = self.lock();
        Self::sweep_locked(&mut state, Instant::now())
    }

    fn sweep_locked(state: &mut State, now: Instant) -> usize {
        let before = state.tasks.len();
        state.tasks.retain(|_, entry| entry.expires > now);
        state.tasks.shrink_to(state.tasks.len() * 2);
        state.next_sweep = now + Duration::from_millis(500);
        before - state.tasks.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the live task `id` (of `owner`, when given), sweeping expired tasks now and
    /// then; bumps its version when `f` says it changed it.
    fn with<T>(
        &self,
        id: &str,
        owner: Option<&str>,
        f: impl FnOnce(&mut TaskRecord) -> (T, bool),
    ) -> Option<T> {
        let mut state = self.lock();
        let now = Instant::now();
        if now >= state.next_sweep {
            Self::sweep_locked(&mut state, now);
        }
        let entry = state.tasks.get_mut(id)?;
        if entry.expires <= now || owner.is_some_and(|o| o != entry.record.owner) {
            return None;
        }
        let (out, changed) = f(&mut entry.record);
        if changed {
            entry.record.version += 1;
            entry.record.last_updated_at = SystemTime::now();
            entry.changes.send_replace(entry.record.version);
        }
        Some(out)
    }
}

impl Default for MemoryTaskStore {
    /// At most 10,000 live tasks.
    fn default() -> Self {
        Self::new(10_000)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), StoreError>> {
        let mut state = self.lock();
        let now = Instant::now();
        if state.tasks.len() >= self.max_live || now >= state.next_sweep {
            Self::sweep_locked(&mut state, now);
        }
        let result = if state.tasks.len() >= self.max_live {
            Err(StoreError::Full { max: self.max_live })
        } else {
            let expires = now + record.ttl;
            let changes = tokio::sync::watch::Sender::new(record.version);
            state.tasks.insert(
                record.id.clone(),
                Entry {
                    record,
                    expires,
                    changes,
                },
            );
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(&'a self, id: &'a str, owner: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        let record = self.with(id, Some(owner), |r| (r.clone(), false));
        Box::pin(std::future::ready(record))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        self.lock().tasks.remove(id);
        Box::pin(std::future::ready(()))
    }

    fn ask<'a>(&'a self, id: &'a str, key: &'a str, request: Value) -> StoreFuture<'a, ()> {
        self.with(id, None, |r| ((), r.ask(key, &request)));
        Box::pin(std::future::ready(()))
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        answers: Map<String, Value>,
    ) -> StoreFuture<'a, bool> {
        let found = self.with(id, Some(owner), |r| ((), r.answer(&answers)));
        Box::pin(std::future::ready(found.is_some()))
    }

    fn take_answer<'a>(&'a self, id: &'a str, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        let answer = self
            .with(id, None, |r| (r.answers.remove(key), false))
            .flatten();
        Box::pin(std::future::ready(answer))
    }

    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> StoreFuture<'a, ()> {
        self.with(id, None, |r| ((), r.finish(&outcome)));
        Box::pin(std::future::ready(()))
    }

    fn cancel<'a>(&'a self, id: &'a str, owner: &'a str) -> StoreFuture<'a, bool> {
        let found = self.with(id, Some(owner), |r| ((), r.cancel()));
        Box::pin(std::future::ready(found.is_some()))
    }

    fn set_message<'a>(&'a self, id: &'a str, message: String) -> StoreFuture<'a, ()> {
        self.with(id, None, |r| ((), r.set_message(&message)));
        Box::pin(std::future::ready(()))
    }

    fn list<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<TaskRecord>> {
        let state = self.lock();
        let now = Instant::now();
        let mut tasks: Vec<TaskRecord> = state
            .tasks
            .values()
            .filter(|e| e.expires > now && e.record.owner == owner)
            .map(|e| e.record.clone())
            .collect();
        tasks.sort_by_key(|r| r.created_at);
        Box::pin(std::future::ready(tasks))
    }

    fn changed<'a>(&'a self, id: &'a str, seen: u64) -> StoreFuture<'a, ()> {
        let receiver = self.lock().tasks.get(id).map(|e| e.changes.subscribe());
        Box::pin(async move {
            if let Some(mut receiver) = receiver {
                let _ = receiver.wait_for(|v| *v > seen).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str, owner: &str, ttl: Duration) -> TaskRecord {
        TaskRecord::new(id.into(), owner.into(), ttl, Duration::from_millis(100))
    }

    #[tokio::test]
    async fn owners_answers_cancel_and_the_bound() {
        let store = MemoryTaskStore::new(2);
        let hour = Duration::from_secs(3600);
        store.create(record("a", "alice", hour)).await.unwrap();
        store.create(record("b", "bob", hour)).await.unwrap();
        assert_eq!(
            store.create(record("c", "alice", hour)).await,
            Err(StoreError::Full { max: 2 })
        );
        assert!(
            store.get("a", "bob").await.is_none(),
            "bob cannot see alice's task"
        );
        assert!(!store.cancel("a", "bob").await);

        store
            .ask("a", "k1", json!({"method": "elicitation/create"}))
            .await;
        store
            .ask("a", "k2", json!({"method": "elicitation/create"}))
            .await;
        let mut partial = Map::new();
        partial.insert("k1".into(), json!({"action": "accept"}));
        partial.insert("unknown".into(), json!({"action": "accept"}));
        assert!(store.answer("a", "alice", partial.clone()).await);
        let task = store.get("a", "alice").await.unwrap();
        assert_eq!(task.status, TaskStatus::InputRequired);
        assert_eq!(task.input_requests.keys().collect::<Vec<_>>(), ["k2"]);
        // Answering k1 again changes nothing.
        let version = task.version;
        store.answer("a", "alice", partial).await;
        assert_eq!(store.get("a", "alice").await.unwrap().version, version);
        assert_eq!(
            store.take_answer("a", "k1").await,
            Some(json!({"action": "accept"}))
        );
        assert_eq!(store.take_answer("a", "k1").await, None);

        assert!(store.cancel("a", "alice").await);
        store
            .finish("a", TaskOutcome::Result(json!({"content": []})))
            .await;
        let task = store.get("a", "alice").await.unwrap();
        assert_eq!(
            task.status,
            TaskStatus::Cancelled,
            "a late outcome does not revive it"
        );
        assert!(task.outcome.is_none());
    }

    #[tokio::test]
    async fn changed_wakes_on_the_next_change_and_expiry_reclaims() {
        let store = std::sync::Arc::new(MemoryTaskStore::new(10));
        store
            .create(record("a", "alice", Duration::from_millis(200)))
            .await
            .unwrap();
        let seen = store.get("a", "alice").await.unwrap().version;
        let waiter = {
            let store = std::sync::Arc::clone(&store);
            tokio::spawn(async move { store.changed("a", seen).await })
        };
        store.set_message("a", "half way".into()).await;
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken by the change")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(store.get("a", "alice").await.is_none(), "expired");
        store.sweep();
        assert!(store.is_empty(), "and reclaimed");
    }
}
