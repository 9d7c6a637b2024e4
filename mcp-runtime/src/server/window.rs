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

use crate::protocol::{ErrorObject, Incoming, Message, Method, error_codes};

pub(crate) struct Window {
    taken: AtomicUsize,
    size: usize,
}

/// A place in the window, held until dropped.
pub(crate) struct Slot {
    window: Arc<Window>,
}

impl Window {
    pub(crate) fn new(size: usize) -> Arc<Self> {
        Arc::new(Self {
            taken: AtomicUsize::new(0),
            size,
        })
    }

    /// Whether a message runs a handler, and so needs a slot: a request other than `ping` and
    /// `initialize` (answered on the spot, so a full window never blocks them), or a batch.
    pub(crate) fn needs_slot(incoming: &Incoming) -> bool {
        match incoming {
            Incoming::Batch(_) => true,
            Incoming::Single(Ok(Message::Request(request))) => {
                Method::parse(&request.method).is_none_or(Method::needs_slot)
            }
            Incoming::Single(_) => false,
        }
    }

    /// A slot, or the error to answer with.
    pub(crate) fn enter(self: &Arc<Self>) -> Result<Slot, ErrorObject> {
        let taken = self
            .taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
                (taken < self.size).then_some(taken + 1)
            });
        match taken {
            Ok(_) => Ok(Slot {
                window: Arc::clone(self),
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
        self.window.taken.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_come_back_when_dropped() {
        let window = Window::new(2);
        let a = window.enter().unwrap();
        let b = window.enter().unwrap();
        let full = window.enter().err().expect("the window is full");
        assert_eq!(full.code, error_codes::SERVER_ERROR);
        drop(a);
        let c = window.enter().unwrap();
        drop((b, c));
        assert_eq!(window.taken.load(Ordering::Acquire), 0);
    }
}
