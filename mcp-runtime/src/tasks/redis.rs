//! [`TaskStore`] on the server's Redis: a task started on one replica is polled,
//! answered and cancelled through the others.
//!
//! Keys, under the server's prefix `P`:
//! - `P:task:ID`: the record (JSON), expiring with the task's TTL; every change is a
//!   compare-and-set of the whole record (a script), then a [`Fanout::Task`] message wakes
//!   [`TaskStore::changed`] on every replica;
//! - `P:tasks`: sorted set of live task ids scored by their expiry (ms): the bound;
//! - `P:tasks-of:OWNER`: the same for one owner (`tasks/list`, the owner's share, and its
//!   release when its session ends);
//! - `P:task-lease:ID`: the lease of the replica running the handler, refreshed every
//!   [`LEASE_REFRESH`](super::LEASE_REFRESH) and expiring after [`LEASE_EXPIRY`]. A working or input-required task
//!   whose lease is gone ran on a replica that died: reading it stores it `failed`.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::store::{
    StoreError, StoreFuture, TaskLimits, TaskOutcome, TaskRecord, TaskStatus, TaskStore,
};
use crate::protocol::error_codes;
use crate::server::store::Fanout;
use crate::shared::redis::RedisStore;

/// How long a lease outlives its last refresh.
pub(crate) const LEASE_EXPIRY: Duration = Duration::from_secs(6);

/// Bounds and adds a task, with its lease, atomically.
static CREATE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
redis.call('ZREMRANGEBYSCORE', KEYS[2], 0, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], 0, ARGV[3])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return 2 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('SET', KEYS[4], '1', 'PX', ARGV[7])
return 1
"#,
    )
});

/// Replaces a record only if it is still the one read.
static SWAP: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"#,
    )
});

/// How a record is kept in Redis.
#[derive(Serialize, Deserialize)]
struct Stored {
    id: String,
    owner: String,
    status: String,
    #[serde(default)]
    message: Option<String>,
    created: u64,
    updated: u64,
    ttl: u64,
    poll: u64,
    #[serde(default)]
    requests: Map<String, Value>,
    #[serde(default)]
    answers: Map<String, Value>,
    #[serde(default)]
    used: Vec<String>,
    /// The result's JSON as it is (an object).
    #[serde(default)]
    result: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    error: Option<Value>,
    version: u64,
}

fn ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn status(name: &str) -> TaskStatus {
    match name {
        "working" => TaskStatus::Working,
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "cancelled" => TaskStatus::Cancelled,
        _ => TaskStatus::Failed,
    }
}

fn encode(record: &TaskRecord) -> String {
    let (result, error) = match &record.outcome {
        Some(TaskOutcome::Result(json)) => (
            serde_json::value::RawValue::from_string(json.to_string()).ok(),
            None,
        ),
        Some(TaskOutcome::Error(value)) => (None, Some(value.clone())),
        None => (None, None),
    };
    let mut used: Vec<String> = record.used_keys.iter().cloned().collect();
    used.sort();
    let stored = Stored {
        id: record.id.clone(),
        owner: record.owner.clone(),
        status: record.status.as_str().to_owned(),
        message: record.status_message.clone(),
        created: ms(record.created_at),
        updated: ms(record.last_updated_at),
        ttl: record.ttl.as_millis() as u64,
        poll: record.poll_interval.as_millis() as u64,
        requests: record.input_requests.clone(),
        answers: record.answers.clone(),
        used,
        result,
        error,
        version: record.version,
    };
    serde_json::to_string(&stored).unwrap_or_default()
}

fn decode(json: &str) -> Option<TaskRecord> {
    let stored: Stored = serde_json::from_str(json).ok()?;
    let outcome = match (stored.result, stored.error) {
        (Some(result), _) => Some(TaskOutcome::Result(Arc::from(result.get()))),
        (None, Some(error)) => Some(TaskOutcome::Error(error)),
        (None, None) => None,
    };
    Some(TaskRecord {
        id: stored.id,
        owner: stored.owner,
        status: status(&stored.status),
        status_message: stored.message,
        created_at: time(stored.created),
        last_updated_at: time(stored.updated),
        ttl: Duration::from_millis(stored.ttl),
        poll_interval: Duration::from_millis(stored.poll),
        input_requests: stored.requests,
        answers: stored.answers,
        used_keys: stored.used.into_iter().collect(),
        outcome,
        version: stored.version,
    })
}

/// What a task whose replica died ends with.
fn lost() -> TaskOutcome {
    TaskOutcome::Error(json!({
        "code": error_codes::INTERNAL_ERROR,
        "message": "the replica running the task stopped",
    }))
}

/// The detail is logged; the caller gets a fixed message.
fn failed(error: impl std::fmt::Display) -> StoreError {
    tracing::warn!(%error, "task store: Redis failed");
    StoreError::Backend("unavailable".into())
}

/// The Redis [`TaskStore`]: made with the server, connected when the server connects its Redis.
///
/// Of [`TaskLimits`] it keeps the live tasks in all and per owner, across all replicas; the
/// results live in Redis's memory (its `maxmemory` bounds them), each within the per-task bound
/// the dispatcher applies whatever the store.
pub(crate) struct RedisTaskStore {
    limits: TaskLimits,
    shared: OnceLock<Arc<RedisStore>>,
}

impl RedisTaskStore {
    /// A store within `limits`, across all replicas.
    pub(crate) fn new(limits: TaskLimits) -> Self {
        Self {
            limits,
            shared: OnceLock::new(),
        }
    }

    /// Connects it to the server's Redis.
    pub(crate) fn bind(&self, shared: Arc<RedisStore>) {
        let _ = self.shared.set(shared);
    }

    fn shared(&self) -> Result<&Arc<RedisStore>, StoreError> {
        self.shared.get().ok_or_else(|| failed("not connected"))
    }

    async fn load(&self, id: &str) -> Result<Option<(String, TaskRecord)>, StoreError> {
        let shared = self.shared()?;
        let mut connection = shared.retrying();
        let json: Option<String> = redis::cmd("GET")
            .arg(shared.key(&["task", id]))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        Ok(json.and_then(|json| decode(&json).map(|record| (json, record))))
    }

    /// Runs `f` on task `id` (of `owner`, when given) and stores the change when it says it
    /// changed it, retrying when another replica changed it meanwhile. `None` when there is no
    /// such task.
    async fn update<T>(
        &self,
        id: &str,
        owner: Option<&str>,
        mut f: impl FnMut(&mut TaskRecord) -> (T, bool),
    ) -> Result<Option<T>, StoreError> {
        let shared = self.shared()?;
        for _ in 0..50 {
            let Some((old, mut record)) = self.load(id).await? else {
                return Ok(None);
            };
            if owner.is_some_and(|o| o != record.owner) {
                return Ok(None);
            }
            let (out, changed) = f(&mut record);
            if !changed {
                return Ok(Some(out));
            }
            record.version += 1;
            record.last_updated_at = SystemTime::now();
            let mut connection = shared.commands();
            let swapped: i64 = SWAP
                .key(shared.key(&["task", id]))
                .arg(&old)
                .arg(encode(&record))
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            if swapped == 1 {
                let _ = crate::server::store::SharedStore::publish(
                    &**shared,
                    Fanout::Task {
                        id: id.to_owned(),
                        version: record.version,
                    },
                )
                .await;
                return Ok(Some(out));
            }
        }
        Err(failed("too much contention on one task"))
    }

    /// Whether the lease of a running task is gone; such a task is stored `failed`.
    async fn check_lease(&self, record: TaskRecord) -> Result<TaskRecord, StoreError> {
        if record.status.is_terminal() {
            return Ok(record);
        }
        let shared = self.shared()?;
        let mut connection = shared.retrying();
        let leased: bool = redis::cmd("EXISTS")
            .arg(shared.key(&["task-lease", &record.id]))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        if leased {
            return Ok(record);
        }
        let lost = lost();
        self.update(&record.id, None, |r| ((), r.finish(&lost)))
            .await?;
        Ok(self.load(&record.id).await?.map_or(record, |(_, r)| r))
    }

    async fn try_get(&self, id: &str, owner: &str) -> Result<Option<TaskRecord>, StoreError> {
        match self.load(id).await? {
            Some((_, record)) if record.owner == owner => self.check_lease(record).await.map(Some),
            _ => Ok(None),
        }
    }

    async fn try_list(&self, owner: &str) -> Result<Vec<TaskRecord>, StoreError> {
        let shared = self.shared()?;
        let mut connection = shared.retrying();
        let ids: Vec<String> = redis::cmd("ZRANGEBYSCORE")
            .arg(shared.key(&["tasks-of", owner]))
            .arg(ms(SystemTime::now()))
            .arg("+inf")
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        let mut tasks = Vec::new();
        for id in ids {
            if let Some(record) = self.try_get(&id, owner).await? {
                tasks.push(record);
            }
        }
        tasks.sort_by_key(|r| r.created_at);
        Ok(tasks)
    }
}

/// Logs a failure of a call that has no way to report it (the handler's side).
fn logged<T>(result: Result<T, StoreError>) -> Option<T> {
    result.ok()
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let shared = self.shared()?;
            let now = ms(SystemTime::now());
            let ttl = record.ttl.as_millis().max(1) as u64;
            let mut connection = shared.commands();
            let created: i64 = CREATE
                .key(shared.key(&["task", &record.id]))
                .key(shared.key(&["tasks"]))
                .key(shared.key(&["tasks-of", &record.owner]))
                .key(shared.key(&["task-lease", &record.id]))
                .arg(encode(&record))
                .arg(ttl)
                .arg(now)
                .arg(self.limits.max_live)
                .arg(now + ttl)
                .arg(&record.id)
                .arg(LEASE_EXPIRY.as_millis() as u64)
                .arg(self.limits.max_live_per_owner)
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            match created {
                1 => Ok(()),
                2 => Err(StoreError::OwnerFull {
                    max: self.limits.max_live_per_owner,
                }),
                _ => Err(StoreError::Full {
                    max: self.limits.max_live,
                }),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str, owner: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move { logged(self.try_get(id, owner).await).flatten() })
    }

    fn try_get<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(RedisTaskStore::try_get(self, id, owner))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Ok(shared) = self.shared() else { return };
            let owner = match self.load(id).await {
                Ok(Some((_, record))) => record.owner,
                _ => String::new(),
            };
            let mut connection = shared.commands();
            let result: Result<(), _> = redis::pipe()
                .del(shared.key(&["task", id]))
                .ignore()
                .del(shared.key(&["task-lease", id]))
                .ignore()
                .zrem(shared.key(&["tasks"]), id)
                .ignore()
                .zrem(shared.key(&["tasks-of", &owner]), id)
                .ignore()
                .query_async(&mut connection)
                .await;
            let _ = result.map_err(failed);
        })
    }

    fn ask<'a>(&'a self, id: &'a str, key: &'a str, request: Value) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _ = self.update(id, None, |r| ((), r.ask(key, &request))).await;
        })
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        answers: Map<String, Value>,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            matches!(
                TaskStore::try_answer(self, id, owner, answers).await,
                Ok(true)
            )
        })
    }

    fn try_answer<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        answers: Map<String, Value>,
    ) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let found = self
                .update(id, Some(owner), |r| ((), r.answer(&answers)))
                .await?;
            Ok(found.is_some())
        })
    }

    fn take_answer<'a>(&'a self, id: &'a str, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        Box::pin(async move {
            logged(
                self.update(id, None, |r| {
                    let answer = r.answers.remove(key);
                    let changed = answer.is_some();
                    (answer, changed)
                })
                .await,
            )
            .flatten()
            .flatten()
        })
    }

    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _ = self.update(id, None, |r| ((), r.finish(&outcome))).await;
        })
    }

    fn cancel<'a>(&'a self, id: &'a str, owner: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move { matches!(TaskStore::try_cancel(self, id, owner).await, Ok(true)) })
    }

    fn try_cancel<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
    ) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let found = self.update(id, Some(owner), |r| ((), r.cancel())).await?;
            Ok(found.is_some())
        })
    }

    fn set_message<'a>(&'a self, id: &'a str, message: String) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _ = self
                .update(id, None, |r| ((), r.set_message(&message)))
                .await;
        })
    }

    fn list<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<TaskRecord>> {
        Box::pin(async move { logged(self.try_list(owner).await).unwrap_or_default() })
    }

    fn try_list<'a>(
        &'a self,
        owner: &'a str,
    ) -> StoreFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        Box::pin(RedisTaskStore::try_list(self, owner))
    }

    fn changed<'a>(&'a self, id: &'a str, seen: u64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Ok(shared) = self.shared() else {
                // Not connected: the callers poll again after a while anyway.
                return std::future::pending().await;
            };
            let mut messages = crate::server::store::SharedStore::receive(&**shared);
            match self.load(id).await {
                Ok(Some((_, record))) if record.version > seen => return,
                Ok(None) => return,
                _ => {}
            }
            loop {
                match messages.recv().await {
                    Ok(Fanout::Task {
                        id: changed,
                        version,
                    }) if changed == id && version > seen => {
                        return;
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                        return std::future::pending().await;
                    }
                }
            }
        })
    }

    fn release<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, usize> {
        Box::pin(async move {
            let Ok(shared) = self.shared() else { return 0 };
            let mut connection = shared.commands();
            let of_owner = shared.key(&["tasks-of", owner]);
            let ids: Vec<String> = match redis::cmd("ZRANGE")
                .arg(&of_owner)
                .arg(0)
                .arg(-1)
                .query_async(&mut connection)
                .await
            {
                Ok(ids) => ids,
                Err(error) => {
                    let _ = failed(error);
                    return 0;
                }
            };
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.del(shared.key(&["task", id]))
                    .ignore()
                    .del(shared.key(&["task-lease", id]))
                    .ignore()
                    .zrem(shared.key(&["tasks"]), id)
                    .ignore();
            }
            pipe.del(&of_owner).ignore();
            let result: Result<(), _> = pipe.query_async(&mut connection).await;
            if let Err(error) = result {
                let _ = failed(error);
                return 0;
            }
            // Whoever waits on one of them (its handler, on whichever replica) finds it gone.
            for id in &ids {
                let _ = crate::server::store::SharedStore::publish(
                    &**shared,
                    Fanout::Task {
                        id: id.clone(),
                        version: u64::MAX,
                    },
                )
                .await;
            }
            ids.len()
        })
    }

    fn lease<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Ok(shared) = self.shared() else { return };
            let mut connection = shared.commands();
            let result: Result<(), _> = redis::cmd("SET")
                .arg(shared.key(&["task-lease", id]))
                .arg("1")
                .arg("PX")
                .arg(LEASE_EXPIRY.as_millis() as u64)
                .query_async(&mut connection)
                .await;
            let _ = result.map_err(failed);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_its_json() {
        let mut record = TaskRecord::new(
            "id".into(),
            "session:s".into(),
            Duration::from_secs(60),
            Duration::from_millis(250),
        );
        record.status = TaskStatus::InputRequired;
        record.status_message = Some("half way".into());
        record
            .input_requests
            .insert("k2".into(), json!({"method": "elicitation/create"}));
        record
            .answers
            .insert("k1".into(), json!({"action": "accept"}));
        record.used_keys.extend(["k1".to_owned(), "k2".to_owned()]);
        record.version = 7;
        let back = decode(&encode(&record)).expect("decodes");
        assert_eq!(back.id, record.id);
        assert_eq!(back.owner, record.owner);
        assert_eq!(back.status, TaskStatus::InputRequired);
        assert_eq!(back.status_message, record.status_message);
        assert_eq!(ms(back.created_at), ms(record.created_at));
        assert_eq!(back.ttl, record.ttl);
        assert_eq!(back.poll_interval, record.poll_interval);
        assert_eq!(back.input_requests, record.input_requests);
        assert_eq!(back.answers, record.answers);
        assert_eq!(back.used_keys, record.used_keys);
        assert_eq!(back.version, 7);
        assert!(back.outcome.is_none());

        for outcome in [TaskOutcome::Result(Arc::from(r#"{"content":[]}"#)), lost()] {
            record.outcome = Some(outcome.clone());
            record.status = match outcome {
                TaskOutcome::Result(_) => TaskStatus::Completed,
                TaskOutcome::Error(_) => TaskStatus::Failed,
            };
            let back = decode(&encode(&record)).unwrap();
            assert_eq!(back.outcome, Some(outcome));
            assert_eq!(back.status, record.status);
        }
        assert!(decode("not json").is_none());
    }
}
