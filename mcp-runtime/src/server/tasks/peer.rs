//! A task's way back to its client: questions become the task's `inputRequests`, answered by
//! `tasks/update`; before the task exists ([`Context::before_task`](crate::Context::before_task))
//! they are input-required rounds on the `tools/call` itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use serde_json::{Value, json};

use super::store::TaskStore;
use crate::context::{BoxFuture, ClientRequestError, Peer, Root};
use crate::protocol::{LoggingLevel, Outgoing};

pub(crate) struct TaskPeer {
    /// Where the handler's messages and questions go until the task exists.
    pub(crate) before: Arc<dyn Peer>,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) id: Arc<str>,
    pub(crate) owner: Arc<str>,
    /// How deep the handler is in `before_task` blocks.
    depth: AtomicU32,
    /// The task was handed to the client: messages no longer have a request to travel with.
    pub(crate) escalated: AtomicBool,
    next: AtomicU32,
    /// The progress token the dispatcher gave a call that had none: its progress becomes the
    /// task's `statusMessage` and never reaches the client as a notification.
    pub(crate) own_token: Option<String>,
}

impl TaskPeer {
    pub(crate) fn new(
        before: Arc<dyn Peer>,
        store: Arc<dyn TaskStore>,
        id: Arc<str>,
        owner: Arc<str>,
    ) -> Self {
        Self {
            before,
            store,
            id,
            owner,
            depth: AtomicU32::new(0),
            escalated: AtomicBool::new(false),
            next: AtomicU32::new(0),
            own_token: None,
        }
    }

    /// Whether the handler is inside `before_task` and the task was not handed out yet (a
    /// `before_task` reached later is too late for input-required rounds: its questions go to
    /// the task like the others).
    pub(crate) fn in_before_task(&self) -> bool {
        self.depth.load(Ordering::Acquire) > 0 && !self.escalated.load(Ordering::Acquire)
    }
}

impl Peer for TaskPeer {
    fn send(&self, message: Outgoing) {
        if !self.escalated.load(Ordering::Acquire) {
            self.before.send(message);
            return;
        }
        // Progress keeps the task's `statusMessage`; nothing else reaches the client (no
        // progress or logs on the listen stream).
        let Outgoing::Message(bytes) = &message else {
            return;
        };
        let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
            return;
        };
        if value.get("method").and_then(Value::as_str) != Some("notifications/progress") {
            return;
        }
        if let Some(text) = value["params"]["message"].as_str() {
            let (store, id, text) = (
                Arc::clone(&self.store),
                Arc::clone(&self.id),
                text.to_owned(),
            );
            tokio::spawn(async move { store.set_message(&id, text).await });
        }
    }

    fn is_task(&self) -> bool {
        true
    }

    fn log_level(&self) -> Option<LoggingLevel> {
        if self.escalated.load(Ordering::Acquire) {
            None
        } else {
            self.before.log_level()
        }
    }

    fn request(
        &self,
        key: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        if self.in_before_task() {
            return self.before.request(key, method, params);
        }
        if !matches!(
            method,
            "elicitation/create" | "sampling/createMessage" | "roots/list"
        ) {
            return Box::pin(std::future::ready(Err(ClientRequestError::Unsupported(
                method,
            ))));
        }
        let key = crate::server::stateless::input_key(key, method, &self.next);
        let (store, id, owner) = (
            Arc::clone(&self.store),
            Arc::clone(&self.id),
            Arc::clone(&self.owner),
        );
        Box::pin(async move {
            store
                .ask(&id, &key, json!({"method": method, "params": params}))
                .await;
            loop {
                let record = match store.try_get(&id, &owner).await {
                    Ok(Some(record)) => record,
                    Ok(None) => return Err(ClientRequestError::Closed),
                    // The store failed (a shared one is unreachable): wait for it.
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                        continue;
                    }
                };
                if record.answers.contains_key(&key) {
                    if let Some(answer) = store.take_answer(&id, &key).await {
                        return Ok(answer);
                    }
                    continue;
                }
                if record.status.is_terminal() {
                    return Err(ClientRequestError::Closed);
                }
                // Re-read now and then: a task that expired wakes nobody.
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    store.changed(&id, record.version),
                )
                .await;
            }
        })
    }

    fn missing_capability(
        &self,
        name: &'static str,
        capability: Value,
    ) -> BoxFuture<ClientRequestError> {
        if self.in_before_task() {
            return self.before.missing_capability(name, capability);
        }
        Box::pin(std::future::ready(ClientRequestError::Unsupported(name)))
    }

    fn cached_roots(&self) -> Option<Vec<Root>> {
        None
    }

    fn cache_roots(&self, _: Vec<Root>) {}

    fn before_task(&self, entering: bool) {
        if entering {
            self.depth.fetch_add(1, Ordering::AcqRel);
        } else {
            self.depth.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
