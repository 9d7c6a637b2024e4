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
    /// The last progress message not yet stored as the task's `statusMessage`.
    message: Arc<std::sync::Mutex<Option<String>>>,
    /// Held while a message is written, so messages reach the store in the order they were
    /// reported, and the last one before the task ends.
    writing: Arc<tokio::sync::Mutex<()>>,
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
            message: Arc::default(),
            writing: Arc::default(),
        }
    }

    /// Stores the last progress message as the task's `statusMessage`, after any being written.
    pub(crate) async fn flush_message(&self) {
        write_message(&self.store, &self.id, &self.message, &self.writing).await;
    }

    /// Whether the handler is inside `before_task` and the task was not handed out yet (a
    /// `before_task` reached later is too late for input-required rounds: its questions go to
    /// the task like the others).
    pub(crate) fn in_before_task(&self) -> bool {
        self.depth.load(Ordering::Acquire) > 0 && !self.escalated.load(Ordering::Acquire)
    }
}

/// Takes the message waiting in `pending` (the latest, when several were reported) and stores
/// it, in turn.
async fn write_message(
    store: &Arc<dyn TaskStore>,
    id: &str,
    pending: &std::sync::Mutex<Option<String>>,
    writing: &tokio::sync::Mutex<()>,
) {
    let _turn = writing.lock().await;
    let text = pending.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(text) = text {
        store.set_message(id, text).await;
    }
}

impl Peer for TaskPeer {
    fn send(&self, message: Outgoing) {
        let escalated = self.escalated.load(Ordering::Acquire);
        // Before the task is handed out, messages go with the request, except progress on the
        // token the dispatcher made up (the client never saw it).
        if !escalated && self.own_token.is_none() {
            self.before.send(message);
            return;
        }
        let progress = match &message {
            Outgoing::Message(bytes) => serde_json::from_slice::<Value>(bytes)
                .ok()
                .filter(|v| v["method"] == "notifications/progress"),
            _ => None,
        };
        let Some(progress) = progress else {
            if !escalated {
                self.before.send(message);
            }
            // Nothing else reaches the client once it is a task (no progress or logs on the
            // listen stream).
            return;
        };
        let ours = self
            .own_token
            .as_deref()
            .is_some_and(|token| progress["params"]["progressToken"] == token);
        if !escalated && !ours {
            self.before.send(message);
        }
        // Progress keeps the task's `statusMessage`.
        let Some(text) = progress["params"]["message"].as_str() else {
            return;
        };
        let text = crate::protocol::cut(text, super::store::MAX_STATUS_MESSAGE).to_owned();
        let first = self
            .message
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(text)
            .is_none();
        if first {
            let (store, id) = (Arc::clone(&self.store), Arc::clone(&self.id));
            let (pending, writing) = (Arc::clone(&self.message), Arc::clone(&self.writing));
            tokio::spawn(async move { write_message(&store, &id, &pending, &writing).await });
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
