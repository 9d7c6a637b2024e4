//! The bounded window of requests one session runs at once (`Server::max_in_flight_requests`):
//! server state a transport creates per session and checks before handing a request over.
//!
//! A request takes a slot before it reaches the session and gives it back when its handler has
//! ended, however it ended. A request that finds the window full is answered at once with an
//! error instead of waiting in a queue. The session keeps a running request's slot with its
//! entry under the request's id, so a `notifications/cancelled` gives the slot back at once: the
//! client may send the next request right after cancelling one, before the stopped handler has
//! been dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Charge;
use crate::protocol::{ErrorObject, Incoming, Message, Method, error_codes};

pub(crate) struct Window {
    taken: AtomicUsize,
    size: usize,
}

/// Places in the window (one per request; a batch takes one for each of its messages), held
/// until dropped.
pub(crate) struct Slot {
    window: Arc<Window>,
    count: usize,
    /// The request's bytes, charged to the server's total while it runs (HTTP).
    held: Option<Charge>,
}

impl Slot {
    /// Keeps `charge` until the request ends.
    pub(crate) fn hold(&mut self, charge: Charge) {
        self.held = Some(charge);
    }
}

impl Window {
    pub(crate) fn new(size: usize) -> Arc<Self> {
        Arc::new(Self {
            taken: AtomicUsize::new(0),
            size,
        })
    }

    /// How many slots a message needs: one for a request that runs a handler (not `ping` or
    /// `initialize`, answered on the spot, so a full window never blocks them), one per message
    /// of a batch (so a batch is bounded by the window too), none for the rest.
    pub(crate) fn slots_needed(incoming: &Incoming) -> usize {
        match incoming {
            Incoming::Batch(batch) => batch.len(),
            Incoming::Single(Ok(Message::Request(request))) => {
                usize::from(Method::parse(&request.method).is_none_or(Method::needs_slot))
            }
            Incoming::Single(_) => 0,
        }
    }

    /// `count` slots at once, or the error to answer with.
    pub(crate) fn enter(self: &Arc<Self>, count: usize) -> Result<Slot, ErrorObject> {
        let taken = self
            .taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
                let after = taken.checked_add(count)?;
                (after <= self.size).then_some(after)
            });
        match taken {
            Ok(_) => Ok(Slot {
                window: Arc::clone(self),
                count,
                held: None,
            }),
            Err(_) => Err(ErrorObject::new(
                error_codes::SERVER_ERROR,
                format!(
                    "too many requests in flight (at most {}): wait for an answer before sending more",
                    self.size
                ),
            )),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.window.taken.fetch_sub(self.count, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_come_back_when_dropped() {
        let window = Window::new(2);
        let a = window.enter(1).unwrap();
        let b = window.enter(1).unwrap();
        let full = window.enter(1).err().expect("the window is full");
        assert_eq!(full.code, error_codes::SERVER_ERROR);
        drop(a);
        let c = window.enter(1).unwrap();
        drop((b, c));
        assert_eq!(window.taken.load(Ordering::Acquire), 0);
        // A batch takes a slot per message, all or none.
        let batch = window.enter(2).unwrap();
        assert!(window.enter(1).is_err());
        drop(batch);
        assert!(window.enter(3).is_err());
        assert_eq!(window.taken.load(Ordering::Acquire), 0);
    }
}
