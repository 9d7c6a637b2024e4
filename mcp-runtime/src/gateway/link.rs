//! One upstream and the gateway over all of them: each upstream's state, the calls in flight
//! through it and what it lists; what the gateway put in the registry. The task that keeps an
//! upstream connected is in `supervise.rs`, which writes this state; the items (`items.rs`),
//! the relay of the upstream's requests (`relay.rs`) and its tasks (`task.rs`) read it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};

use super::{Target, Upstream};
use crate::client::{Client, ClientError, Prompt, ResourceTemplate, Tool};
use crate::context::Context;
use crate::protocol::{Implementation, ProtocolVersion};
use crate::resource::ResourceInfo;
use crate::server::{Attached, ClientKey, Core};

/// A connection that stayed up this long resets the backoff.
pub(super) const STABLE: Duration = Duration::from_secs(60);
/// The most pages of one list read from an upstream: 10,000 items in pages of 10, and an
/// upstream that pages without end costs a bounded number of requests a refresh.
pub(super) const MAX_LIST_PAGES: usize = 1000;
/// The most URIs one upstream is subscribed to on behalf of downstream clients.
pub(crate) const MAX_UPSTREAM_SUBSCRIPTIONS: usize = 256;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a proxied upstream is doing: [`McpService::upstreams`](crate::McpService::upstreams).
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamStatus {
    /// The namespace its items are served under (empty: their own names).
    pub namespace: String,
    /// Its command line or URL.
    pub upstream: String,
    /// Connected, connecting, or down.
    pub state: UpstreamState,
    /// How many times it was connected again after a failure (restarted, for stdio).
    pub reconnects: u64,
    /// How many of its tools, prompts, resources and templates it last listed (at most
    /// [`Upstream::max_items`] of each).
    pub items: [usize; 4],
    /// How many items of its last listing are not served here, each with a warning in the
    /// log: unreadable ones, ones whose name or URI another item has, ones this server cannot
    /// serve as listed (a URI template that does not parse, say). Those past
    /// [`Upstream::max_items`] are not counted (they are not read).
    pub left_out: usize,
}

/// Whether a proxied upstream is connected.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UpstreamState {
    /// The first connection is being made, or a new one after a failure.
    Connecting,
    /// Connected; its items are served.
    Connected {
        /// The revision spoken with it.
        protocol_version: ProtocolVersion,
        /// Who it says it is.
        server: Option<Implementation>,
    },
    /// Not connected: its items answer an error until it is back.
    Down {
        /// Why.
        reason: String,
        /// When the next attempt is made.
        retry_in: Duration,
    },
}

pub(super) enum State {
    Connecting,
    Up(Client),
    Down { reason: String, retry_at: Instant },
}

/// What an upstream last listed.
#[derive(Default)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<ResourceInfo>,
    pub(crate) templates: Vec<ResourceTemplate>,
    /// How many items of each kind (in that order) did not decode.
    pub(super) unreadable: [usize; 4],
}

/// The kinds an upstream said changed, not listed again yet.
#[derive(Default)]
pub(super) struct Changed {
    pub(super) tools: AtomicBool,
    pub(super) prompts: AtomicBool,
    pub(super) resources: AtomicBool,
    pub(super) notify: Notify,
}

/// A downstream call in flight through an upstream, for the messages that name no call.
struct OpenCall {
    ctx: Context,
    ended: watch::Receiver<bool>,
}

/// An upstream's places for forwarded requests, shared fairly: each downstream client (its
/// principal, else its address) holds at most `per_client` of them at once, and waits for one
/// of its own to end past that, so one client's calls (however many, however long) leave the
/// others room. The upstream connection's own limit (`Upstream::max_in_flight`) bounds them
/// all together.
pub(crate) struct FairSlots {
    per_client: usize,
    clients: Mutex<HashMap<ClientKey, Arc<tokio::sync::Semaphore>>>,
}

/// A forwarded request's place in its client's share; given back when dropped.
pub(crate) struct Slot {
    slots: Arc<FairSlots>,
    key: ClientKey,
    places: Arc<tokio::sync::Semaphore>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl FairSlots {
    pub(super) fn new(per_client: usize) -> Arc<Self> {
        Arc::new(Self {
            per_client: per_client.max(1),
            clients: Mutex::default(),
        })
    }

    /// Waits for a place of `client`'s (none is needed by a caller with no identity: stdio's
    /// one client).
    pub(crate) async fn acquire(self: &Arc<Self>, client: Option<ClientKey>) -> Option<Slot> {
        let key = client?;
        let places = Arc::clone(
            lock(&self.clients)
                .entry(key.clone())
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(self.per_client))),
        );
        let permit = Arc::clone(&places).acquire_owned().await.ok();
        Some(Slot {
            slots: Arc::clone(self),
            key,
            places,
            permit,
        })
    }

    /// How many clients hold or wait for places.
    #[cfg(test)]
    fn clients(&self) -> usize {
        lock(&self.clients).len()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut clients = lock(&self.slots.clients);
        // The map's and this one's: nobody else holds or waits for a place of this client's.
        if Arc::strong_count(&self.places) == 2
            && self.places.available_permits() == self.slots.per_client
        {
            clients.remove(&self.key);
        }
    }
}

/// One upstream.
pub(crate) struct Link {
    pub(crate) index: usize,
    pub(crate) namespace: String,
    /// How messages name it: "the upstream `time`", or by its command line or URL.
    pub(crate) label: String,
    pub(crate) upstream: Upstream,
    /// What its items' errors say they came from.
    pub(crate) origin: Arc<str>,
    pub(super) state: Mutex<State>,
    calls: Mutex<(u64, HashMap<u64, OpenCall>)>,
    pub(crate) listing: Mutex<Listing>,
    pub(super) changed: Changed,
    /// A request met a transport error: check whether the upstream is still there (HTTP).
    pub(super) nudge: Notify,
    /// The URIs downstream clients subscribed to, which the upstream is asked for.
    pub(crate) subscribed: Mutex<HashSet<String>>,
    pub(super) reconnects: AtomicU64,
    /// Its items' layers ([`Upstream::layer`]), shared by every definition made for it.
    layer: Option<crate::metadata::ItemLayer>,
    /// The places for forwarded requests, shared fairly between downstream clients.
    pub(crate) slots: Arc<FairSlots>,
    /// Whether this gateway refused a `roots/list` of no call on the current connection (the
    /// upstream may say so on its stderr, which its exit quotes).
    pub(crate) roots_refused: AtomicBool,
}

/// Keeps a call registered while it runs; dropping it ends the call (its relayed requests
/// give up).
pub(crate) struct CallGuard {
    link: Arc<Link>,
    id: u64,
    _ended: watch::Sender<bool>,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        lock(&self.link.calls).1.remove(&self.id);
    }
}

/// Completes when the call behind `ended` is over.
pub(crate) async fn call_ended(mut ended: watch::Receiver<bool>) {
    // Nothing is ever sent: the sender's drop ends the wait.
    while ended.changed().await.is_ok() {}
}

impl Link {
    pub(super) fn new(
        index: usize,
        namespace: String,
        upstream: Upstream,
        client_share: u8,
    ) -> Self {
        let slots = FairSlots::new(crate::server::share_of(
            upstream.max_in_flight,
            client_share,
            1,
        ));
        let layer = upstream
            .layers
            .as_ref()
            .map(|stack| crate::server::exchange::enclose_item(None, stack));
        let label = if namespace.is_empty() {
            format!("the upstream `{}`", upstream.describe())
        } else {
            format!("the upstream `{namespace}`")
        };
        let origin = if namespace.is_empty() {
            format!("proxied from `{}`", upstream.describe())
        } else {
            format!("proxied from upstream `{namespace}`")
        };
        Self {
            index,
            namespace,
            label,
            upstream,
            origin: Arc::from(origin),
            state: Mutex::new(State::Connecting),
            calls: Mutex::new((0, HashMap::new())),
            listing: Mutex::default(),
            changed: Changed::default(),
            nudge: Notify::new(),
            subscribed: Mutex::default(),
            reconnects: AtomicU64::new(0),
            layer,
            slots,
            roots_refused: AtomicBool::new(false),
        }
    }

    /// Waits for a place for a forwarded request of `ctx`'s client (see [`FairSlots`]).
    pub(crate) async fn slot(&self, ctx: &Context) -> Option<Slot> {
        let client = match ctx.principal() {
            Some(principal) => Some(ClientKey::Principal(principal.binding_key().into())),
            None => ctx
                .address()
                .map(|address| ClientKey::address(address.ip())),
        };
        self.slots.acquire(client).await
    }

    /// The connection, or why there is none, in words for the downstream client.
    pub(crate) fn client(&self) -> Result<Client, String> {
        match &*lock(&self.state) {
            State::Up(client) => Ok(client.clone()),
            State::Connecting => Err(format!("{} is connecting; try again shortly", self.label)),
            State::Down { reason, retry_at } => {
                let wait = retry_at.saturating_duration_since(Instant::now());
                Err(format!(
                    "{} is unavailable ({reason}); retrying in {} s",
                    self.label,
                    wait.as_secs_f64().ceil()
                ))
            }
        }
    }

    /// What each of its items' `layer` holds: [`Upstream::layer`]'s stack, made once.
    pub(crate) fn item_layer(&self) -> Option<crate::metadata::ItemLayer> {
        self.layer.clone()
    }

    /// Registers a downstream call in flight; dropping the guard ends it.
    pub(crate) fn open_call(self: &Arc<Self>, ctx: Context) -> (CallGuard, watch::Receiver<bool>) {
        let (sender, ended) = watch::channel(false);
        let mut calls = lock(&self.calls);
        calls.0 += 1;
        let id = calls.0;
        calls.1.insert(
            id,
            OpenCall {
                ctx,
                ended: ended.clone(),
            },
        );
        drop(calls);
        let guard = CallGuard {
            link: Arc::clone(self),
            id,
            _ended: sender,
        };
        (guard, ended)
    }

    /// The one call in flight, for a message that names none; else how many there are. For a
    /// log message (`logs`) of a 2026-07-28 upstream, only calls that asked for logs count:
    /// such an upstream logs for no other.
    pub(crate) fn sole_call(&self, logs: bool) -> Result<(Context, watch::Receiver<bool>), usize> {
        let calls = lock(&self.calls);
        let stateless = matches!(&*lock(&self.state), State::Up(c) if c.is_stateless());
        let mut candidates = calls
            .1
            .values()
            .filter(|call| !(logs && stateless) || call.ctx.log_level().is_some());
        match (candidates.next(), candidates.next()) {
            (Some(call), None) => Ok((call.ctx.clone(), call.ended.clone())),
            (None, _) => Err(0),
            (Some(_), Some(_)) => Err(calls.1.len()),
        }
    }

    /// The upstream said a list changed.
    pub(crate) fn list_changed(&self, tools: bool, prompts: bool, resources: bool) {
        if tools {
            self.changed.tools.store(true, Ordering::Release);
        }
        if prompts {
            self.changed.prompts.store(true, Ordering::Release);
        }
        if resources {
            self.changed.resources.store(true, Ordering::Release);
        }
        self.changed.notify.notify_one();
    }

    /// A request met a transport error: have the supervisor check the connection.
    pub(crate) fn nudge(&self) {
        self.nudge.notify_one();
    }

    pub(super) fn is_http(&self) -> bool {
        matches!(self.upstream.target, Target::Http { .. })
    }

    fn status(&self) -> UpstreamStatus {
        let state = match &*lock(&self.state) {
            State::Connecting => UpstreamState::Connecting,
            State::Up(client) => UpstreamState::Connected {
                protocol_version: client.protocol_version(),
                server: client.server_info().implementation.clone(),
            },
            State::Down { reason, retry_at } => UpstreamState::Down {
                reason: reason.clone(),
                retry_in: retry_at.saturating_duration_since(Instant::now()),
            },
        };
        let listing = lock(&self.listing);
        UpstreamStatus {
            namespace: self.namespace.clone(),
            upstream: self.upstream.describe(),
            state,
            reconnects: self.reconnects.load(Ordering::Relaxed),
            items: [
                listing.tools.len(),
                listing.prompts.len(),
                listing.resources.len(),
                listing.templates.len(),
            ],
            left_out: listing.unreadable.iter().sum(),
        }
    }
}

/// The upstreams of one server, running.
pub(crate) struct Gateway {
    /// Itself, for the handlers of the items it makes.
    pub(crate) me: Weak<Gateway>,
    pub(crate) core: Weak<Core>,
    pub(crate) links: Vec<Arc<Link>>,
    pub(super) client_info: Implementation,
    /// What the gateway put in the registry, and the warnings given (see `items.rs`).
    pub(crate) registered: Mutex<Registered>,
    /// Upstreams whose first attempt has not settled yet.
    pub(super) pending: AtomicUsize,
    pub(super) ready: watch::Sender<bool>,
}

impl Gateway {
    pub(crate) fn statuses(&self) -> Vec<UpstreamStatus> {
        let registered = lock(&self.registered);
        self.links
            .iter()
            .map(|link| {
                let mut status = link.status();
                let listed: usize = status.items.iter().sum();
                let served = registered.served_from(link.index);
                // Read and served at different moments: never below the unreadable ones.
                status.left_out += listed.saturating_sub(served);
                status
            })
            .collect()
    }

    /// One upstream's first attempt settled, one way or the other. Once all have, what the
    /// server serves is logged again, the upstreams' items with the rest.
    pub(super) fn settled(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        if let Some(core) = self.core.upgrade() {
            let registry = core.registry();
            let served = crate::server::serving_line(
                &mut registry.tools.enabled_names(),
                &mut registry.resources.enabled_uris(),
                &mut registry.prompts.enabled_names(),
            );
            let upstreams: Vec<String> = self
                .links
                .iter()
                .map(|link| match &*lock(&link.state) {
                    State::Up(_) => format!("{} connected", link.label),
                    State::Connecting => format!("{} connecting", link.label),
                    State::Down { reason, .. } => {
                        format!("{} unavailable ({reason})", link.label)
                    }
                })
                .collect();
            tracing::info!("serving {served}; {}", upstreams.join("; "));
        }
        self.ready.send_replace(true);
    }
}

impl Attached for Gateway {
    fn waiting_for(&self) -> Option<String> {
        let waiting: Vec<&Arc<Link>> = self
            .links
            .iter()
            .filter(|link| matches!(&*lock(&link.state), State::Connecting))
            .collect();
        let longest = waiting
            .iter()
            .map(|link| link.upstream.connect_timeout)
            .max()?;
        let names: Vec<&str> = waiting.iter().map(|link| link.label.as_str()).collect();
        Some(format!(
            "the first connection of {} (at most {} s)",
            names.join(", "),
            longest.as_secs_f64().ceil()
        ))
    }

    fn subscription_changed(&self, uri: &str, subscribed: bool) {
        let Some(link) = self.owner_of(uri) else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let uri = uri.to_owned();
        let core = self.core.clone();
        if subscribed {
            let mut held = lock(&link.subscribed);
            if held.contains(&uri) {
                return;
            }
            if held.len() >= MAX_UPSTREAM_SUBSCRIPTIONS {
                tracing::warn!(upstream = %link.label, %uri, limit = MAX_UPSTREAM_SUBSCRIPTIONS, "too many resource subscriptions for one upstream: this one is not relayed");
                return;
            }
            held.insert(uri.clone());
            drop(held);
            if let Ok(client) = link.client() {
                tokio::spawn(async move {
                    if let Err(error) = client.subscribe(&uri).await {
                        tracing::warn!(upstream = %link.label, %uri, %error, "the upstream refused a resource subscription");
                    }
                });
            }
        } else {
            // Checked once the holder that gave it up is gone (a session or listen ends
            // after telling).
            tokio::spawn(async move {
                tokio::task::yield_now().await;
                let Some(core) = core.upgrade() else {
                    return;
                };
                if core.is_subscribed(&uri) || !lock(&link.subscribed).remove(&uri) {
                    return;
                }
                if let Ok(client) = link.client()
                    && let Err(error) = client.unsubscribe(&uri).await
                {
                    tracing::debug!(upstream = %link.label, %uri, %error, "unsubscribing upstream failed");
                }
            });
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The kinds the registry keeps apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Tool,
    Prompt,
    /// A static resource (by URI) or a template (by URI template): one name space.
    Resource,
}

/// One item the gateway serves for an upstream: whose, and what it listed (to tell a change).
#[derive(Clone, PartialEq)]
pub(super) struct Entry {
    pub(super) link: usize,
    pub(super) fingerprint: String,
}

/// What the gateway put in the registry, by kind and served name (URI, template), and the
/// clashes it warned of (once each).
#[derive(Default)]
pub(crate) struct Registered {
    pub(super) served: HashMap<(Kind, String), Entry>,
    warned: HashSet<String>,
}

/// What the warnings remembered may hold; past it they are forgotten and may come again.
const MAX_WARNED: usize = 4096;

impl Registered {
    /// How many items the upstream `link` has served here.
    pub(crate) fn served_from(&self, link: usize) -> usize {
        self.served.values().filter(|e| e.link == link).count()
    }

    pub(super) fn warn_once(&mut self, key: String, warn: impl FnOnce()) {
        if self.warned.len() >= MAX_WARNED {
            self.warned.clear();
        }
        if self.warned.insert(key) {
            warn();
        }
    }
}

/// What a forwarded request's failure (not the upstream's error) says, in words for the
/// downstream client; a transport failure has the supervisor check the upstream.
pub(super) fn failure(link: &Link, error: &ClientError) -> String {
    if error.is_disconnect() || matches!(error, ClientError::Transport(_)) {
        link.nudge();
        format!(
            "{} failed during the request ({error}); it is being reconnected",
            link.label
        )
    } else {
        format!("{} failed during the request: {error}", link.label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_client_holds_at_most_its_share_and_another_gets_a_place_at_once() {
        let slots = FairSlots::new(2);
        let greedy = ClientKey::address("127.0.0.2".parse().unwrap());
        let other = ClientKey::address("127.0.0.3".parse().unwrap());
        let a = slots.acquire(Some(greedy.clone())).await.unwrap();
        let b = slots.acquire(Some(greedy.clone())).await.unwrap();
        // A third of the greedy client's waits for one of its own...
        let third = tokio::spawn({
            let slots = Arc::clone(&slots);
            let greedy = greedy.clone();
            async move { slots.acquire(Some(greedy)).await.map(drop) }
        });
        tokio::task::yield_now().await;
        assert!(!third.is_finished());
        // ... while another client is served at once.
        let c = tokio::time::timeout(Duration::from_secs(1), slots.acquire(Some(other)))
            .await
            .expect("another client's place at once");
        drop(a);
        tokio::time::timeout(Duration::from_secs(1), third)
            .await
            .expect("the greedy client's third once one of its own ended")
            .unwrap();
        drop((b, c));
        assert_eq!(slots.clients(), 0, "no entry once nothing is held");
        // A caller with no identity needs no place.
        assert!(slots.acquire(None).await.is_none());
    }
}
