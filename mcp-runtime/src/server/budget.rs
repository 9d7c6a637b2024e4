//! Byte budgets shared across clients: what all sessions together may hold of one kind of
//! memory (request bodies in flight, unread stream bytes, event logs, subscriptions), so that
//! the server's worst case is a sum of settings (see the crate docs' Limits table).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one request in flight is charged beyond its own bytes: its task, its entry in the
/// session, its reply's way back (an estimate of the framework's part; a handler's own future
/// comes on top).
pub(crate) const REQUEST_OVERHEAD: usize = 4096;

/// What one queued message, logged event or subscription is charged beyond its bytes: its node
/// or slot and the allocation's own overhead.
pub(crate) const ENTRY_OVERHEAD: usize = 64;

/// Bytes that a group of holders may hold together.
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicUsize,
    limit: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicUsize::new(0),
            limit,
        })
    }

    /// Takes `bytes` if they fit; whether they did.
    pub(crate) fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                let after = used.checked_add(bytes)?;
                (after <= self.limit).then_some(after)
            })
            .is_ok()
    }

    /// Takes `bytes` whether they fit or not (what is already held elsewhere, counted again).
    pub(crate) fn force(&self, bytes: usize) {
        self.used.fetch_add(bytes, Ordering::AcqRel);
    }

    /// Gives back `bytes` taken before.
    pub(crate) fn give(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// The bytes held now.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Takes `bytes` and returns them when the charge is dropped; `None` if they do not fit.
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        self.take(bytes).then(|| Charge {
            budget: Arc::clone(self),
            bytes,
        })
    }
}

/// Bytes held from a budget until dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Charge {
    /// Takes `more` bytes into this charge if they fit; whether they did.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn grow(&mut self, more: usize) -> bool {
        let fits = self.budget.take(more);
        if fits {
            self.bytes += more;
        }
        fits
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_come_back_when_dropped() {
        let budget = Budget::new(100);
        let mut a = budget.charge(60).unwrap();
        assert!(budget.charge(50).is_none());
        assert!(a.grow(40));
        assert!(!a.grow(1));
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 0);
        assert!(budget.take(100));
        budget.give(100);
        assert!(!budget.take(101));
    }
}
