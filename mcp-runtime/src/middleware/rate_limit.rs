//! Rate limiting with GCRA (`governor`), keyed per caller, with a bounded number of keys.

use std::hash::{BuildHasher, Hash, Hasher};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::nanos::Nanos;
use governor::state::StateStore;
use governor::state::keyed::ShrinkableKeyedStateStore;
use governor::{Quota, RateLimiter};
use tower::{Layer, Service};

use super::{McpRequest, McpResponse};
use crate::context::BoxFuture;
use crate::protocol::Method;
use crate::server::ClientKey;

/// The parts a key is made of.
const PRINCIPAL: u8 = 1;
const SESSION: u8 = 2;
const PEER: u8 = 4;
const TOOL: u8 = 8;
const CLIENT: u8 = 16;

/// What a [`RateLimitLayer`] counts apart: each distinct key has its own rate.
///
/// A key is made of parts (the client, the caller's OAuth principal, the session, the client's
/// IP address, the tool), combined with [`and`](Self::and) (per client *and* tool: each
/// client's calls of each tool) and given fallbacks with [`or`](Self::or) (per client, or per
/// session when the request has no client). Requests that have none of the alternatives'
/// parts (a stateless HTTP request has no session; a request without OAuth no principal)
/// share one key: give a fallback that every request has.
///
/// A key finer than the client (one with [`session`](Self::session) in it, or
/// [`peer`](Self::peer) with OAuth, where a principal may come from several addresses) still
/// counts against its client: the layer keeps a rate per client too
/// ([`RateLimitLayer::client_limit`], the layer's own rate unless set), so a client that opens
/// more sessions does not get more calls.
///
/// ```
/// use mcp_runtime::middleware::RateKey;
///
/// // Per client (the default): the principal with OAuth, else the address; on stdio the
/// // connection.
/// let caller = RateKey::client().or(RateKey::session());
/// // Each tool, per client.
/// let per_tool = RateKey::client().and(RateKey::tool());
/// # let _ = (caller, per_tool);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateKey {
    /// Alternatives, tried in order: the first whose parts the request all has is its key.
    alternatives: Vec<u8>,
}

impl RateKey {
    fn of(parts: u8) -> Self {
        Self {
            alternatives: vec![parts],
        }
    }

    /// The client, as the fair shares count it (`Server::client_share`): its OAuth principal
    /// when the server has OAuth, else its IP address (an IPv6 address by its /64, which one
    /// host commonly owns whole; behind one of `Server::trusted_proxies`, the client its
    /// forwarding header names). One rate per client across its sessions and connections.
    /// A request with neither (stdio, or a router from `into_router` without `ConnectInfo`)
    /// has no client: give a fallback, such as [`session`](Self::session).
    pub fn client() -> Self {
        Self::of(CLIENT)
    }

    /// The OAuth principal (issuer and subject): one rate per caller across sessions and
    /// replicas of its connections.
    pub fn principal() -> Self {
        Self::of(PRINCIPAL)
    }

    /// The session: a Streamable HTTP or legacy SSE session, or one stdio connection. Each
    /// session of a client has its own rate, and all of them together count against the
    /// client's ([`RateLimitLayer::client_limit`]).
    pub fn session() -> Self {
        Self::of(SESSION)
    }

    /// The client's IP address (HTTP; an IPv6 address by its /64; behind a proxy, the proxy's,
    /// unless it is one of `Server::trusted_proxies`: then the client its forwarding header
    /// names).
    pub fn peer() -> Self {
        Self::of(PEER)
    }

    /// The tool a `tools/call` names (a tool this server serves; calls of unknown tools share
    /// one key), or the method of any other request.
    pub fn tool() -> Self {
        Self::of(TOOL)
    }

    /// One key for every request: a rate for the whole server.
    pub fn global() -> Self {
        Self::of(0)
    }

    /// Both: a key for each combination of this one's parts and `other`'s.
    pub fn and(self, other: RateKey) -> Self {
        let alternatives = self
            .alternatives
            .iter()
            .flat_map(|a| other.alternatives.iter().map(move |b| a | b))
            .collect();
        Self { alternatives }
    }

    /// This key, or `other` for a request that lacks one of this one's parts.
    pub fn or(mut self, other: RateKey) -> Self {
        self.alternatives.extend(other.alternatives);
        self
    }

    /// The hash of `request`'s key, and the hash of its client's when the key is finer than
    /// the client (see the type's docs).
    fn hash(
        &self,
        request: &McpRequest,
        hasher: &foldhash::fast::RandomState,
    ) -> (u64, Option<u64>) {
        let principal = request.principal().map(|p| p.binding_key());
        let session = request.session_id();
        let peer = request.peer_addr().map(|a| ClientKey::address(a.ip()));
        let client = request.client_key();
        let has = |parts: u8| {
            (parts & PRINCIPAL == 0 || principal.is_some())
                && (parts & SESSION == 0 || session.is_some())
                && (parts & PEER == 0 || peer.is_some())
                && (parts & CLIENT == 0 || client.is_some())
        };
        let (index, parts) = self
            .alternatives
            .iter()
            .copied()
            .enumerate()
            .find(|&(_, parts)| has(parts))
            // None fits: every such request shares the last alternative's key, its missing
            // parts hashed as absent.
            .unwrap_or((self.alternatives.len(), 0));
        let mut state = hasher.build_hasher();
        index.hash(&mut state);
        if parts & CLIENT != 0 {
            client.hash(&mut state);
        }
        if parts & PRINCIPAL != 0 {
            principal.hash(&mut state);
        }
        if parts & SESSION != 0 {
            session.hash(&mut state);
        }
        if parts & PEER != 0 {
            peer.hash(&mut state);
        }
        if parts & TOOL != 0 {
            match request.tool() {
                Some(tool) => ("tool", tool.name()).hash(&mut state),
                None => match Method::parse(request.method()) {
                    Some(_) if request.method() != "tools/call" => {
                        ("method", request.method()).hash(&mut state);
                    }
                    _ => "other".hash(&mut state),
                },
            }
        }
        // A session is finer than its client; so is an address where the client is a
        // principal (who may come from several).
        let finer = parts & (CLIENT | PRINCIPAL) == 0
            && (parts & SESSION != 0 || (parts & PEER != 0 && principal.is_some()));
        let ceiling = match (&client, finer) {
            (Some(client), true) => Some(hasher.hash_one(("client", client))),
            _ => None,
        };
        (state.finish(), ceiling)
    }
}

/// Limits how often requests may come, per [`RateKey`], with the generic cell rate algorithm
/// (`governor`): a steady rate with room for a burst, no queue. A request over the rate is
/// answered at once, without running, with -32023
/// ([`RATE_LIMITED`](crate::protocol::error_codes::RATE_LIMITED), SEP-3304) and `data:
/// {"retryAfterMs": ms}`; over HTTP, when it is a POST's whole answer, with status 429 and
/// `Retry-After` = ceil(ms / 1000). It sends no `limit` or `remaining`: GCRA has no window
/// whose count they could honestly report.
///
/// By default it counts every request that goes through the layers, per client
/// (`RateKey::client().or(RateKey::session())`: the OAuth principal, else the client's address,
/// as the fair shares count clients; on stdio the connection), so a client that opens more
/// sessions or connections gets no more calls. [`methods`](Self::methods) narrows it to some
/// methods, [`key`](Self::key) changes what is counted apart (a key finer than the client, per
/// session say, still counts against the client: [`client_limit`](Self::client_limit)).
/// Several compose: each `Server::layer` adds one more limit.
///
/// **Memory**: one entry (a key hash and a time, about 32 bytes) per key seen within its
/// burst's time, at most [`max_keys`](Self::max_keys) (100,000 by default; 3.2 MiB), and as
/// many again for the clients of a key finer than the client. Past it, keys whose rate is back
/// to full are dropped; if none is, new keys share one overflow key, so a flood of new callers
/// is limited together rather than growing the map.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::Server;
/// use mcp_runtime::middleware::{RateKey, RateLimitLayer};
///
/// let server = Server::new("demo", "1.0.0")
///     // 10 `tools/call` a second per session (bursts of 20), and 40 a second for all the
///     // sessions of one client together.
///     .layer(
///         RateLimitLayer::per_second(10)
///             .burst(20)
///             .key(RateKey::session())
///             .client_limit(40, Duration::from_secs(1))
///             .methods(["tools/call"]),
///     )
///     // And 1,000 requests a minute per client address, whatever they are.
///     .layer(RateLimitLayer::new(1_000, Duration::from_secs(60)).key(RateKey::peer()));
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    settings: Settings,
}

#[derive(Debug, Clone)]
struct Settings {
    /// One request per `period`...
    period: Duration,
    /// ...with bursts of this many.
    burst: NonZeroU32,
    key: RateKey,
    /// The rate of a client across the keys finer than it: one request per `.0`, bursts of
    /// `.1`; `None`: the layer's own.
    client: Option<(Duration, NonZeroU32)>,
    methods: Option<Vec<String>>,
    max_keys: usize,
}

impl RateLimitLayer {
    /// `requests` (at least 1) every `per`, with bursts of as many.
    pub fn new(requests: u32, per: Duration) -> Self {
        let requests = NonZeroU32::new(requests).unwrap_or(NonZeroU32::MIN);
        let period = (per / requests.get()).max(Duration::from_nanos(1));
        Self {
            settings: Settings {
                period,
                burst: requests,
                key: RateKey::client().or(RateKey::session()),
                client: None,
                methods: None,
                max_keys: 100_000,
            },
        }
    }

    /// `requests` a second (at least 1), with bursts of as many.
    pub fn per_second(requests: u32) -> Self {
        Self::new(requests, Duration::from_secs(1))
    }

    /// How many requests may come at once after a quiet time (at least 1).
    pub fn burst(mut self, requests: u32) -> Self {
        self.settings.burst = NonZeroU32::new(requests).unwrap_or(NonZeroU32::MIN);
        self
    }

    /// What is counted apart (per client by default).
    pub fn key(mut self, key: RateKey) -> Self {
        self.settings.key = key;
        self
    }

    /// `requests` (at least 1) every `per`, with bursts of as many, for all the requests of one
    /// client counted under keys finer than the client ([`RateKey::session`], or
    /// [`RateKey::peer`] with OAuth): each such key has the layer's rate, and together they
    /// have this one. Unless set, the layer's own rate: a client that spreads its calls over
    /// sessions gets no more than with one.
    pub fn client_limit(mut self, requests: u32, per: Duration) -> Self {
        let requests = NonZeroU32::new(requests).unwrap_or(NonZeroU32::MIN);
        let period = (per / requests.get()).max(Duration::from_nanos(1));
        self.settings.client = Some((period, requests));
        self
    }

    /// Counts only requests of these methods (`tools/call`, ...); the others pass untouched.
    pub fn methods<S: Into<String>>(mut self, methods: impl IntoIterator<Item = S>) -> Self {
        self.settings.methods = Some(methods.into_iter().map(Into::into).collect());
        self
    }

    /// The most keys remembered at once (100,000 by default).
    pub fn max_keys(mut self, keys: usize) -> Self {
        self.settings.max_keys = keys.max(1);
        self
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;

    fn layer(&self, inner: S) -> RateLimit<S> {
        let settings = &self.settings;
        let governor = |period: Duration, burst: NonZeroU32| {
            let quota = Quota::with_period(period)
                .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
                .allow_burst(burst);
            let store = BoundedStore {
                map: Mutex::default(),
                max: settings.max_keys,
                len: AtomicUsize::new(0),
            };
            RateLimiter::new(quota, store, DefaultClock::default())
        };
        let (client_period, client_burst) =
            settings.client.unwrap_or((settings.period, settings.burst));
        RateLimit {
            inner,
            limiter: Arc::new(Limiter {
                governor: governor(settings.period, settings.burst),
                clients: governor(client_period, client_burst),
                key: settings.key.clone(),
                methods: settings.methods.clone(),
                hasher: foldhash::fast::RandomState::default(),
                swept: AtomicU64::new(0),
                born: Instant::now(),
                max_keys: settings.max_keys,
            }),
        }
    }
}

/// The service of a [`RateLimitLayer`].
#[derive(Clone)]
pub struct RateLimit<S> {
    inner: S,
    limiter: Arc<Limiter>,
}

impl<S> std::fmt::Debug for RateLimit<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("key", &self.limiter.key)
            .field("keys", &self.limiter.governor.len())
            .finish_non_exhaustive()
    }
}

type Governor = RateLimiter<u64, BoundedStore, DefaultClock>;

struct Limiter {
    governor: Governor,
    /// The rates of clients whose requests are counted under keys finer than them.
    clients: Governor,
    key: RateKey,
    methods: Option<Vec<String>>,
    hasher: foldhash::fast::RandomState,
    /// When keys back at full rate were last dropped, in milliseconds since `born`.
    swept: AtomicU64,
    born: Instant,
    max_keys: usize,
}

impl Limiter {
    /// `Err(wait)` when the request is over its rate (or its client's).
    fn check(&self, request: &McpRequest) -> Result<(), Duration> {
        if let Some(methods) = &self.methods
            && !methods.iter().any(|m| m == request.method())
        {
            return Ok(());
        }
        let (key, client) = self.key.hash(request, &self.hasher);
        self.sweep();
        let now = || self.governor.clock().now();
        // The key first: a request over its session's rate does not spend its client's (the
        // other sessions' room).
        self.governor
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(now()))?;
        match client {
            Some(client) => self
                .clients
                .check_key(&client)
                .map_err(|not_until| not_until.wait_time_from(now())),
            None => Ok(()),
        }
    }

    /// Drops the keys whose rate is back to full, at most once a second, when a map is full.
    fn sweep(&self) {
        if self.governor.len() < self.max_keys && self.clients.len() < self.max_keys {
            return;
        }
        let now = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.swept.load(Ordering::Relaxed);
        if now.saturating_sub(last) < 1_000
            || self
                .swept
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        for governor in [&self.governor, &self.clients] {
            governor.retain_recent();
            governor.shrink_to_fit();
        }
        if self.governor.len() >= self.max_keys || self.clients.len() >= self.max_keys {
            tracing::warn!(
                keys = self.governor.len(),
                clients = self.clients.len(),
                "the rate limiter holds its most keys: new callers share one limit"
            );
        }
    }
}

impl<S> Service<McpRequest> for RateLimit<S>
where
    S: Service<McpRequest, Response = McpResponse> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = BoxFuture<Result<McpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        match self.limiter.check(&request) {
            Ok(()) => Box::pin(self.inner.call(request)),
            Err(wait) => {
                tracing::debug!(request_id = %request.id(), ?wait, "a request over its rate limit was refused");
                let refused = McpResponse::rate_limited(request.id().clone(), wait);
                Box::pin(std::future::ready(Ok(refused)))
            }
        }
    }
}

/// The key that new keys share once the store is full.
const OVERFLOW: u64 = u64::MAX;

/// The limiter's state: the GCRA time of each key hash, at most `max` keys (then new keys share
/// [`OVERFLOW`]). Under one lock, so no compare-and-swap is needed.
struct BoundedStore {
    map: Mutex<crate::server::fast_map::FastMap<u64, u64>>,
    max: usize,
    /// The map's length, kept beside it so a request reads it without the lock.
    len: AtomicUsize,
}

impl BoundedStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, crate::server::fast_map::FastMap<u64, u64>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl StateStore for BoundedStore {
    type Key = u64;

    fn measure_and_replace<T, F, E>(&self, key: &u64, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut map = self.lock();
        let key = if map.contains_key(key) || map.len() < self.max {
            *key
        } else {
            OVERFLOW
        };
        let (outcome, next) = f(map.get(&key).map(|&tat| Nanos::from(tat)))?;
        if map.insert(key, next.into()).is_none() {
            self.len.store(map.len(), Ordering::Relaxed);
        }
        Ok(outcome)
    }
}

impl ShrinkableKeyedStateStore<u64> for BoundedStore {
    fn retain_recent(&self, drop_below: Nanos) {
        let below: u64 = drop_below.into();
        let mut map = self.lock();
        map.retain(|_, tat| *tat >= below);
        self.len.store(map.len(), Ordering::Relaxed);
    }

    fn shrink_to_fit(&self) {
        self.lock().shrink_to_fit();
    }

    fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(store: &BoundedStore, key: u64, tat: u64) -> Option<u64> {
        store
            .measure_and_replace(&key, |old| {
                Ok::<_, ()>((old.map(u64::from), Nanos::from(tat)))
            })
            .unwrap()
    }

    #[test]
    fn new_keys_past_the_bound_share_the_overflow_key() {
        let store = BoundedStore {
            map: Mutex::default(),
            max: 2,
            len: AtomicUsize::new(0),
        };
        assert_eq!(check(&store, 1, 10), None);
        assert_eq!(check(&store, 2, 20), None);
        // A third key finds the store full: it shares the overflow key's state.
        assert_eq!(check(&store, 3, 30), None);
        assert_eq!(check(&store, 4, 40), Some(30));
        // Known keys keep their own.
        assert_eq!(check(&store, 1, 11), Some(10));
        assert_eq!(store.len(), 3);
        store.retain_recent(Nanos::from(25));
        assert_eq!(store.len(), 1, "only the overflow key's time is recent");
        assert_eq!(
            check(&store, 5, 50),
            None,
            "room again for a key of its own"
        );
    }
}
