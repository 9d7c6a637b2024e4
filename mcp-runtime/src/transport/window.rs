//! The bounded window of requests one session runs at once (`Server::max_in_flight_requests`).
//!
//! A request takes a slot before it reaches the session and gives it back when its handler has
//! ended, however it ended. A request that finds the window full is answered at once with an
//! error instead of waiting in a queue. A `notifications/cancelled` gives the slot of the request
//! it names back at once: the client may send the next request right after cancelling one, before
//! the stopped handler has been dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::protocol::{
    ErrorObject, Incoming, Message, RequestId, canonical_notification, error_codes,
};

pub(crate) struct Window {
    slots: Arc<Semaphore>,
    size: usize,
    /// The single requests holding a slot, by id, so that a cancellation can free theirs.
    running: Mutex<HashMap<RequestId, Arc<Slot>>>,
}

/// One request's place in the window.
struct Slot(Mutex<Option<OwnedSemaphorePermit>>);

/// A place in the window, held until dropped.
pub(crate) struct Running {
    window: Arc<Window>,
    id: Option<RequestId>,
    slot: Arc<Slot>,
}

impl Window {
    pub(crate) fn new(size: usize) -> Arc<Self> {
        Arc::new(Self {
            slots: Arc::new(Semaphore::new(size)),
            size,
            running: Mutex::new(HashMap::new()),
        })
    }

    /// Whether a message runs a handler, and so needs a slot: a request other than `ping` and
    /// `initialize` (answered on the spot, so a full window never blocks them), or a batch.
    pub(crate) fn needs_slot(incoming: &Incoming) -> bool {
        match incoming {
            Incoming::Batch(_) => true,
            Incoming::Single(Ok(Message::Request(request))) => {
                request.method != "ping" && request.method != "initialize"
            }
            Incoming::Single(_) => false,
        }
    }

    /// A slot for the request `id` (`None` for a batch), or the error to answer with.
    pub(crate) fn enter(self: &Arc<Self>, id: Option<RequestId>) -> Result<Running, ErrorObject> {
        let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() else {
            return Err(ErrorObject::new(
                error_codes::SERVER_ERROR,
                format!(
                    "too many requests in flight (at most {}): wait for an answer before sending more",
                    self.size
                ),
            ));
        };
        let slot = Arc::new(Slot(Mutex::new(Some(permit))));
        if let Some(id) = &id {
            self.running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(id.clone())
                // A duplicate id is refused by the session; the first request keeps its entry.
                .or_insert_with(|| Arc::clone(&slot));
        }
        Ok(Running {
            window: Arc::clone(self),
            id,
            slot,
        })
    }

    /// Looks at what the client sent: a cancellation (alone or in a batch) frees the slot of
    /// the request it names.
    pub(crate) fn observe(&self, incoming: &Incoming) {
        match incoming {
            Incoming::Single(Ok(Message::Notification(note)))
                if canonical_notification(&note.method) == "notifications/cancelled" =>
            {
                if let Some(id) = note.params.get("requestId").and_then(RequestId::from_json) {
                    self.release(&id);
                }
            }
            Incoming::Batch(items) => items.iter().for_each(|item| self.observe_value(item)),
            Incoming::Single(_) => {}
        }
    }

    fn observe_value(&self, message: &Value) {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return;
        };
        if message.get("id").is_some()
            || canonical_notification(method) != "notifications/cancelled"
        {
            return;
        }
        let Some(id) = message
            .get("params")
            .and_then(|p| p.get("requestId"))
            .and_then(RequestId::from_json)
        else {
            return;
        };
        self.release(&id);
    }

    /// Frees the slot of the request `id`, cancelled.
    fn release(&self, id: &RequestId) {
        let slot = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        if let Some(slot) = slot {
            slot.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.slot.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(id) = &self.id {
            let mut running = self
                .window
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            // A later request may have reused the id; its slot is not this one's to free.
            if running
                .get(id)
                .is_some_and(|slot| Arc::ptr_eq(slot, &self.slot))
            {
                running.remove(id);
            }
        }
    }
}
