//! Budgets shared across clients: what all sessions together may hold of one kind of memory
//! (request bytes in flight, unread stream bytes, event logs, subscriptions) or of one kind of
//! slot (connections, sessions, streams), so that the server's worst case is a sum of settings
//! (see the crate docs' Limits table), and what one client may hold of it (its fair share, see
//! [`share`](super::share)).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::share::{Client, Kind};

/// What one request in flight is charged beyond its own bytes: its task, its entry in the
/// session, its reply's way back (an estimate of the framework's part; a handler's own future
/// comes on top).
pub(crate) const REQUEST_OVERHEAD: usize = 4096;

/// What one queued message, logged event or subscription is charged beyond its bytes: its node
/// or slot and the allocation's own overhead.
pub(crate) const ENTRY_OVERHEAD: usize = 64;

/// What a group of holders may hold together, and what one client of them may.
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicUsize,
    limit: usize,
    /// Which of a client's holdings this is, and the most one client may hold of it; `None`:
    /// the budget is not shared out (stdio's one client, a session's own log budget).
    share: Option<(Kind, usize)>,
}

impl Budget {
    /// A budget with no per-client share.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicUsize::new(0),
            limit,
            share: None,
        })
    }

    /// A budget of which one client may hold at most `share`, counted as its `kind`.
    pub(crate) fn shared(limit: usize, kind: Kind, share: usize) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicUsize::new(0),
            limit,
            share: Some((kind, share)),
        })
    }

    /// The most one client may hold of it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn share(&self) -> usize {
        self.share.map_or(self.limit, |(_, share)| share)
    }

    /// The most all clients may hold of it.
    pub(crate) fn limit(&self) -> usize {
        self.limit
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
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Takes `bytes` and returns them when the charge is dropped; `None` if they do not fit.
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        self.account(None).charge(bytes)
    }

    /// This budget as `client` draws on it (the budget alone for `None`).
    pub(crate) fn account(self: &Arc<Self>, client: Option<&Arc<Client>>) -> Account {
        Account {
            budget: Arc::clone(self),
            client: match self.share {
                Some(_) => client.cloned(),
                None => None,
            },
        }
    }
}

/// A budget as one client draws on it: everything taken is taken from the client's share and
/// from the total, or from neither.
#[derive(Debug, Clone)]
pub(crate) struct Account {
    budget: Arc<Budget>,
    client: Option<Arc<Client>>,
}

impl Account {
    /// Takes `bytes` if they fit in the client's share and in the total; whether they did.
    pub(crate) fn take(&self, bytes: usize) -> bool {
        let (Some(client), Some((kind, share))) = (&self.client, self.budget.share) else {
            return self.budget.take(bytes);
        };
        if !client.take(kind, bytes, share) {
            return false;
        }
        if !self.budget.take(bytes) {
            client.give(kind, bytes);
            return false;
        }
        true
    }

    /// Takes `bytes` whatever the limits.
    pub(crate) fn force(&self, bytes: usize) {
        if let (Some(client), Some((kind, _))) = (&self.client, self.budget.share) {
            client.force(kind, bytes);
        }
        self.budget.force(bytes);
    }

    /// Gives back `bytes` taken before.
    pub(crate) fn give(&self, bytes: usize) {
        if let (Some(client), Some((kind, _))) = (&self.client, self.budget.share) {
            client.give(kind, bytes);
        }
        self.budget.give(bytes);
    }

    /// Takes `bytes` and returns them when the charge is dropped; `None` if they do not fit.
    pub(crate) fn charge(self, bytes: usize) -> Option<Charge> {
        // Never a `Charge` for bytes not taken: dropping one gives its bytes back.
        if self.take(bytes) {
            Some(Charge {
                account: self,
                bytes,
            })
        } else {
            None
        }
    }

    /// The most this client may hold of the budget: its share, or the whole budget when it is
    /// not shared out.
    pub(crate) fn cap(&self) -> usize {
        match (&self.client, self.budget.share) {
            (Some(_), Some((_, share))) => share.min(self.budget.limit),
            _ => self.budget.limit,
        }
    }

    /// The client drawing, when the budget is shared out.
    pub(crate) fn client(&self) -> Option<&Arc<Client>> {
        self.client.as_ref()
    }
}

/// Bytes held from a budget until dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    account: Account,
    bytes: usize,
}

impl Charge {
    /// Takes `more` bytes into this charge if they fit; whether they did.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn grow(&mut self, more: usize) -> bool {
        let fits = self.account.take(more);
        if fits {
            self.bytes += more;
        }
        fits
    }

    /// Gives back `less` of the bytes held (at most all of them).
    pub(crate) fn shrink(&mut self, less: usize) {
        let less = less.min(self.bytes);
        self.account.give(less);
        self.bytes -= less;
    }

    /// The bytes held.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The most its holder may hold of the budget (see [`Account::cap`]).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn cap(&self) -> usize {
        self.account.cap()
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.account.give(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::share::ClientKey;

    #[test]
    fn charges_come_back_when_dropped() {
        let budget = Budget::new(100);
        let mut a = budget.charge(60).unwrap();
        assert!(budget.charge(50).is_none());
        assert!(a.grow(40));
        assert!(!a.grow(1));
        assert_eq!(budget.used(), 100);
        a.shrink(30);
        assert_eq!(budget.used(), 70);
        drop(a);
        assert_eq!(budget.used(), 0);
        assert!(budget.take(100));
        budget.give(100);
        assert!(!budget.take(101));
    }

    #[test]
    fn one_client_holds_at_most_its_share_and_others_still_fit() {
        let budget = Budget::shared(100, Kind::RequestBytes, 40);
        let greedy = Client::detached(ClientKey::address("127.0.0.2".parse().unwrap()));
        let newcomer = Client::detached(ClientKey::address("127.0.0.3".parse().unwrap()));
        let greedy = budget.account(Some(&greedy));
        let held = greedy.clone().charge(40).unwrap();
        assert!(greedy.clone().charge(1).is_none(), "past its share");
        let newcomer = budget.account(Some(&newcomer));
        let theirs = newcomer.clone().charge(40).unwrap();
        assert_eq!(budget.used(), 80);
        // The total still binds: a third client finds only what is left.
        let third = Client::detached(ClientKey::address("127.0.0.4".parse().unwrap()));
        let third = budget.account(Some(&third));
        assert!(third.clone().charge(21).is_none());
        let last = third.clone().charge(20).unwrap();
        drop((held, theirs, last));
        assert_eq!(budget.used(), 0);
        assert!(greedy.charge(40).is_some());
    }
}
