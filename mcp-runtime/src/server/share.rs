//! Fair shares: what one client may hold of each bound the server's clients share.
//!
//! Every shared bound (connections, request bytes in flight, sessions, open streams, unread
//! stream bytes, event logs, subscriptions) has a total for the whole server and a share for
//! each client, by default a quarter of the total (`Server::client_share`). A client past its
//! share is refused as if the server were full, while the others keep theirs: one client can
//! never take the whole of a bound, so a newcomer is served while the server has room.
//!
//! A client is its authenticated principal when OAuth is on, else its address (see
//! [`ClientKey`]). What a session holds (its subscriptions, its event logs, its streams) counts
//! toward the client that opened it. Each client's holdings live in one [`Client`], shared by
//! everything that holds something for it (a connection, a session, a charge) and dropped from
//! the registry with the last of them, so the registry holds at most one entry per live holder.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The bounds a client holds a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Open HTTP connections.
    Connections,
    /// Bytes of requests in flight: their text as it arrives, then what parsing it builds.
    RequestBytes,
    /// Bytes of the small messages admitted past a full request budget (`ping`, `initialize`,
    /// notifications, responses), which hold nothing once handled.
    ControlBytes,
    /// HTTP sessions (both transports).
    Sessions,
    /// Open SSE responses.
    Streams,
    /// Bytes queued for streams and not yet read by their clients.
    Unread,
    /// Bytes of the event logs kept for `Last-Event-ID`.
    EventLogs,
    /// Bytes of subscription URIs.
    Subscriptions,
}

impl Kind {
    const COUNT: usize = 8;

    fn index(self) -> usize {
        self as usize
    }
}

/// Who a client is, for its shares.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ClientKey {
    /// An authenticated principal (OAuth): its issuer and subject.
    Principal(Arc<str>),
    /// An address: IPv4 as it is; IPv6 by its /64 prefix, which one host commonly owns whole
    /// (an IPv4-mapped IPv6 address is its IPv4 address).
    Address(IpAddr),
}

impl ClientKey {
    /// The key of the client at `ip`.
    pub(crate) fn address(ip: IpAddr) -> Self {
        Self::Address(match ip {
            IpAddr::V4(_) => ip,
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let mut segments = v6.segments();
                    segments[4..].fill(0);
                    IpAddr::V6(segments.into())
                }
            },
        })
    }
}

/// One client's holdings of every shared bound.
pub(crate) struct Client {
    key: ClientKey,
    held: [AtomicUsize; Kind::COUNT],
    /// The registry, to leave it when the last holder lets go.
    registry: Weak<Mutex<HashMap<ClientKey, Weak<Client>>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("key", &self.key).finish()
    }
}

impl Client {
    /// A client outside any registry (tests).
    #[cfg(test)]
    pub(crate) fn detached(key: ClientKey) -> Arc<Self> {
        Arc::new(Self {
            key,
            held: Default::default(),
            registry: Weak::new(),
        })
    }

    pub(crate) fn key(&self) -> &ClientKey {
        &self.key
    }

    /// The client's address, when it is known by one (no principal).
    pub(crate) fn address(&self) -> Option<IpAddr> {
        match self.key {
            ClientKey::Address(ip) => Some(ip),
            ClientKey::Principal(_) => None,
        }
    }

    /// Takes `amount` of `kind` if the client then holds at most `cap`; whether it did.
    pub(crate) fn take(&self, kind: Kind, amount: usize, cap: usize) -> bool {
        self.held[kind.index()]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                let after = held.checked_add(amount)?;
                (after <= cap).then_some(after)
            })
            .is_ok()
    }

    /// Takes `amount` of `kind` whatever the cap (what a log or a reply already holds).
    pub(crate) fn force(&self, kind: Kind, amount: usize) {
        self.held[kind.index()].fetch_add(amount, Ordering::AcqRel);
    }

    /// Gives back `amount` of `kind` taken before.
    pub(crate) fn give(&self, kind: Kind, amount: usize) {
        self.held[kind.index()].fetch_sub(amount, Ordering::AcqRel);
    }

    /// What the client holds of `kind` now.
    pub(crate) fn holds(&self, kind: Kind) -> usize {
        self.held[kind.index()].load(Ordering::Acquire)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        let mut clients = registry.lock().unwrap_or_else(|e| e.into_inner());
        // A newer entry for the same key (made after this one's last holder let go) stays.
        if clients
            .get(&self.key)
            .is_some_and(|entry| entry.strong_count() == 0)
        {
            clients.remove(&self.key);
        }
    }
}

/// The clients that hold something now, by key.
#[derive(Default)]
pub(crate) struct Clients {
    // SipHash: the keys are the clients' own (addresses, token subjects), and this map is
    // reached once per connection or session, not on every request.
    map: Arc<Mutex<HashMap<ClientKey, Weak<Client>>>>,
}

impl Clients {
    /// The client with `key`, the same one for every holder while any holds it.
    pub(crate) fn get(&self, key: ClientKey) -> Arc<Client> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = map.get(&key).and_then(Weak::upgrade) {
            return client;
        }
        let client = Arc::new(Client {
            key: key.clone(),
            held: Default::default(),
            registry: Arc::downgrade(&self.map),
        });
        map.insert(key, Arc::downgrade(&client));
        client
    }

    /// How many clients hold something.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// `percent` of `total`, and at least `floor`: one client's share of a bound.
pub(crate) fn share_of(total: usize, percent: u8, floor: usize) -> usize {
    let part = total / 100 * usize::from(percent) + total % 100 * usize::from(percent) / 100;
    part.max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn ipv6_clients_are_their_slash_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(ClientKey::address(a), ClientKey::address(b));
        assert_ne!(ClientKey::address(a), ClientKey::address(c));
        let mapped = IpAddr::V6(Ipv4Addr::new(10, 0, 0, 7).to_ipv6_mapped());
        assert_eq!(
            ClientKey::address(mapped),
            ClientKey::Address(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7)))
        );
        assert_eq!(
            ClientKey::address(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            ClientKey::Address(IpAddr::V6(Ipv6Addr::UNSPECIFIED))
        );
    }

    #[test]
    fn a_client_is_one_entry_while_held_and_none_after() {
        let clients = Clients::default();
        let key = ClientKey::address("127.0.0.2".parse().unwrap());
        let a = clients.get(key.clone());
        let b = clients.get(key.clone());
        assert!(Arc::ptr_eq(&a, &b));
        assert!(a.take(Kind::Sessions, 2, 2));
        assert!(!b.take(Kind::Sessions, 1, 2));
        assert_eq!(b.holds(Kind::Sessions), 2);
        drop(a);
        assert_eq!(clients.len(), 1);
        drop(b);
        assert_eq!(clients.len(), 0);
        // A new holder starts from nothing.
        assert_eq!(clients.get(key).holds(Kind::Sessions), 0);
    }

    #[test]
    fn shares_are_a_percentage_with_a_floor() {
        assert_eq!(share_of(512, 25, 1), 128);
        assert_eq!(share_of(10_000, 25, 1), 2_500);
        assert_eq!(share_of(100, 100, 1), 100);
        assert_eq!(share_of(3, 25, 1), 1);
        // The floor wins, but never past what it takes to hold the floor.
        assert_eq!(share_of(64, 25, 40), 40);
        assert_eq!(share_of(usize::MAX, 50, 0), usize::MAX / 2);
    }
}
