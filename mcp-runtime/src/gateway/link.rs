//! One upstream, kept connected: its state, the calls in flight through it, what it lists,
//! and the task that connects it, lists it again on its `list_changed`, watches for its end
//! and reconnects with backoff.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};

use super::relay::UpstreamHandler;
use super::{Target, Upstream};
use crate::client::{
    BoundedList, Client, ClientError, Prompt, ResourceTemplate, StdioCommand, Tool,
};
use crate::context::Context;
use crate::protocol::{Implementation, LoggingLevel, ProtocolVersion};
use crate::resource::ResourceInfo;
use crate::server::{Attached, Core};

/// A connection that stayed up this long resets the backoff.
const STABLE: Duration = Duration::from_secs(60);
/// The most pages of one list read from an upstream: 10,000 items in pages of 10, and an
/// upstream that pages without end costs a bounded number of requests a refresh.
const MAX_LIST_PAGES: usize = 1000;
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

enum State {
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
    unreadable: [usize; 4],
}

/// The kinds an upstream said changed, not listed again yet.
#[derive(Default)]
struct Changed {
    tools: AtomicBool,
    prompts: AtomicBool,
    resources: AtomicBool,
    notify: Notify,
}

/// A downstream call in flight through an upstream, for the messages that name no call.
struct OpenCall {
    ctx: Context,
    ended: watch::Receiver<bool>,
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
    state: Mutex<State>,
    calls: Mutex<(u64, HashMap<u64, OpenCall>)>,
    pub(crate) listing: Mutex<Listing>,
    changed: Changed,
    /// A request met a transport error: check whether the upstream is still there (HTTP).
    nudge: Notify,
    /// The URIs downstream clients subscribed to, which the upstream is asked for.
    pub(crate) subscribed: Mutex<HashSet<String>>,
    reconnects: AtomicU64,
    /// Its items' layers ([`Upstream::layer`]), shared by every definition made for it.
    layer: Option<crate::metadata::ItemLayer>,
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
    fn new(index: usize, namespace: String, upstream: Upstream) -> Self {
        let layer = upstream
            .layers
            .as_ref()
            .map(|stack| crate::server::middleware::enclose_item(None, stack));
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
        }
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

    fn is_http(&self) -> bool {
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
    client_info: Implementation,
    /// What the gateway put in the registry, and the warnings given (see `items.rs`).
    pub(crate) registered: Mutex<super::items::Registered>,
    /// Upstreams whose first attempt has not settled yet.
    pending: AtomicUsize,
    ready: watch::Sender<bool>,
}

impl Gateway {
    /// Starts a supervisor for each upstream.
    pub(crate) fn start(
        upstreams: Vec<(String, Upstream)>,
        core: &Arc<Core>,
    ) -> (Arc<dyn Attached>, watch::Receiver<bool>) {
        let links: Vec<Arc<Link>> = upstreams
            .into_iter()
            .enumerate()
            .map(|(i, (namespace, upstream))| Arc::new(Link::new(i, namespace, upstream)))
            .collect();
        let (ready, ready_rx) = watch::channel(links.is_empty());
        let gateway = Arc::new_cyclic(|me| Self {
            me: me.clone(),
            core: Arc::downgrade(core),
            client_info: core.info.clone(),
            registered: Mutex::default(),
            pending: AtomicUsize::new(links.len()),
            ready,
            links,
        });
        for link in &gateway.links {
            let closing = core.watch_closing();
            tokio::spawn(supervise(
                Arc::clone(link),
                Arc::downgrade(&gateway),
                closing,
            ));
        }
        (gateway, ready_rx)
    }

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

    /// One upstream's first attempt settled, one way or the other.
    fn settled(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.ready.send_replace(true);
        }
    }
}

impl Attached for Gateway {
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

/// Why a connection ended.
enum Ended {
    /// It failed: the reason.
    Failed(String),
    /// The server is gone: stop.
    Shutdown,
}

/// Completes when the server is gone (its `Core` dropped).
async fn server_gone(mut closing: watch::Receiver<bool>) {
    while closing.changed().await.is_ok() {}
}

/// Keeps one upstream connected for as long as the server lives.
async fn supervise(link: Arc<Link>, gateway: Weak<Gateway>, closing: watch::Receiver<bool>) {
    let (initial, max) = link.upstream.backoff;
    let mut delay = initial;
    let mut first = true;
    loop {
        *lock(&link.state) = State::Connecting;
        let attempt = tokio::select! {
            attempt = tokio::time::timeout(link.upstream.connect_timeout, connect(&link, &gateway)) => attempt,
            () = server_gone(closing.clone()) => return,
        };
        let reason = match attempt {
            Ok(Ok(client)) => {
                if !first {
                    link.reconnects.fetch_add(1, Ordering::Relaxed);
                }
                let since = Instant::now();
                tracing::info!(upstream = %link.label, version = %client.protocol_version(), "upstream connected");
                let ended = run(&link, &gateway, &client, &mut first, closing.clone()).await;
                // Requests in flight fail, a child is killed; not waited for here.
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(3), client.close()).await;
                });
                if since.elapsed() >= STABLE {
                    delay = initial;
                }
                match ended {
                    Ended::Shutdown => return,
                    Ended::Failed(reason) => reason,
                }
            }
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no connection within {:?}", link.upstream.connect_timeout),
        };
        let wait = jitter(delay);
        tracing::warn!(upstream = %link.label, %reason, retry_in = ?wait, "upstream unavailable");
        *lock(&link.state) = State::Down {
            reason,
            retry_at: Instant::now() + wait,
        };
        if std::mem::take(&mut first)
            && let Some(gateway) = gateway.upgrade()
        {
            gateway.settled();
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = server_gone(closing.clone()) => return,
        }
        delay = (delay * 2).min(max);
    }
}

/// `delay` give or take a tenth, so gateways restarted together do not reconnect together.
fn jitter(delay: Duration) -> Duration {
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    // 0.9 to 1.1.
    let factor = 0.9 + f64::from(byte[0]) / 255.0 * 0.2;
    delay.mul_f64(factor)
}

/// One connection attempt: the handshake (or discover), then the first listing.
async fn connect(link: &Arc<Link>, gateway: &Weak<Gateway>) -> Result<Client, ClientError> {
    let upstream = &link.upstream;
    let info = gateway
        .upgrade()
        .map(|g| g.client_info.clone())
        .unwrap_or_else(|| Implementation::new("mcp-runtime-gateway", env!("CARGO_PKG_VERSION")));
    let handler = UpstreamHandler {
        link: Arc::downgrade(link),
        gateway: gateway.clone(),
    };
    let (notifications, bytes) = upstream.notification_queue;
    let builder = Client::builder()
        .era(upstream.era)
        .client_info(info)
        .handler(handler)
        .timeout(upstream.timeout)
        .notification_queue(notifications, bytes)
        .max_subscriptions(MAX_UPSTREAM_SUBSCRIPTIONS)
        .max_list_pages(MAX_LIST_PAGES);
    let client = match &upstream.target {
        Target::Stdio(command) => builder.stdio(StdioCommand::clone(command)).await?,
        Target::Http {
            url,
            headers,
            bearer,
        } => {
            let mut builder = builder;
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            if let Some(token) = bearer {
                builder = builder.bearer_token(token);
            }
            builder.http(url).await?
        }
    };
    if !client.is_stateless() && client.server_info().capabilities.logging.is_some() {
        // Everything, filtered per downstream client (whose levels differ).
        if let Err(error) = client.set_level(LoggingLevel::Debug).await {
            tracing::debug!(upstream = %link.label, %error, "the upstream refused `logging/setLevel`");
        }
    }
    Ok(client)
}

/// Serves one connection until it ends: lists, relists on `list_changed`, re-subscribes,
/// watches for the end.
async fn run(
    link: &Arc<Link>,
    gateway: &Weak<Gateway>,
    client: &Client,
    first: &mut bool,
    closing: watch::Receiver<bool>,
) -> Ended {
    // Listed before it is served: its items answer once they are there.
    let listed = list(link, client, [true; 3]).await;
    *lock(&link.state) = State::Up(client.clone());
    if let Some(gateway) = gateway.upgrade() {
        gateway.reconcile();
        if std::mem::take(first) {
            gateway.settled();
        }
    }
    if let Err(error) = listed {
        return Ended::Failed(error.to_string());
    }
    let subscribed: Vec<String> = lock(&link.subscribed).iter().cloned().collect();
    for uri in subscribed {
        if let Err(error) = client.subscribe(&uri).await {
            tracing::warn!(upstream = %link.label, %uri, %error, "the upstream refused a resource subscription");
            if error.is_disconnect() {
                return Ended::Failed(error.to_string());
            }
        }
    }
    let http = link.is_http();
    let mut health = tokio::time::interval(link.upstream.health_interval);
    health.tick().await;
    loop {
        tokio::select! {
            () = client.closed() => {
                let reason = client
                    .closed_reason()
                    .unwrap_or_else(|| "the connection closed".to_owned());
                return Ended::Failed(reason);
            }
            () = link.changed.notify.notified() => {
                let kinds = [
                    link.changed.tools.swap(false, Ordering::AcqRel),
                    link.changed.prompts.swap(false, Ordering::AcqRel),
                    link.changed.resources.swap(false, Ordering::AcqRel),
                ];
                let listed = list(link, client, kinds).await;
                if let Some(gateway) = gateway.upgrade() {
                    gateway.reconcile();
                }
                if let Err(error) = listed {
                    return Ended::Failed(error.to_string());
                }
            }
            () = link.nudge.notified(), if http => {
                if let Err(reason) = probe(link, client).await {
                    return Ended::Failed(reason);
                }
            }
            _ = health.tick(), if http => {
                if let Err(reason) = probe(link, client).await {
                    return Ended::Failed(reason);
                }
            }
            () = server_gone(closing.clone()) => return Ended::Shutdown,
        }
    }
}

/// Whether an HTTP upstream still answers: `ping`, or in 2026-07-28 `server/discover`.
async fn probe(link: &Link, client: &Client) -> Result<(), String> {
    let outcome = if client.is_stateless() {
        client
            .request("server/discover", serde_json::json!({}))
            .await
            .map(drop)
    } else {
        client.ping().await
    };
    match outcome {
        Ok(()) | Err(ClientError::Rpc(_)) => Ok(()),
        Err(error) => {
            tracing::debug!(upstream = %link.label, %error, "the upstream failed its health check");
            Err(error.to_string())
        }
    }
}

/// Lists the kinds asked for (tools; prompts; resources and templates) that the upstream
/// advertises, at most [`Upstream::max_items`] of each (the pages past them are not asked
/// for), leaving out, with a warning, items that do not decode. A list that fails with the
/// connection's end is an error; any other failure keeps what was listed before (with a
/// warning).
async fn list(
    link: &Link,
    client: &Client,
    [tools, prompts, resources]: [bool; 3],
) -> Result<(), ClientError> {
    let caps = &client.server_info().capabilities;
    let max = link.upstream.max_items;
    fn kept<T>(
        link: &Link,
        what: &str,
        max: usize,
        outcome: Result<BoundedList<T>, ClientError>,
    ) -> Result<Option<(Vec<T>, usize)>, ClientError> {
        match outcome {
            Ok(listed) => {
                if listed.left_out > 0 {
                    let reasons = listed.malformed.join("; ");
                    tracing::warn!(upstream = %link.label, what, left_out = listed.left_out, %reasons, "the upstream lists items this gateway cannot read: they are left out");
                }
                if listed.more {
                    tracing::warn!(upstream = %link.label, what, served = listed.items.len(), max, "the upstream lists more items than the gateway serves from one upstream: the rest are left out");
                }
                Ok(Some((listed.items, listed.left_out)))
            }
            Err(error) if error.is_disconnect() || matches!(error, ClientError::Transport(_)) => {
                Err(error)
            }
            Err(error) => {
                tracing::warn!(upstream = %link.label, what, %error, "listing the upstream failed; keeping what it listed before");
                Ok(None)
            }
        }
    }
    if tools
        && caps.tools.is_some()
        && let Some((items, unreadable)) =
            kept(link, "tools", max, client.list_tools_up_to(max).await)?
    {
        let mut listing = lock(&link.listing);
        listing.tools = items;
        listing.unreadable[0] = unreadable;
    }
    if prompts
        && caps.prompts.is_some()
        && let Some((items, unreadable)) = kept(
            link,
            "prompts",
            max,
            client
                .list_pages("prompts/list", "prompts", max, true)
                .await,
        )?
    {
        let mut listing = lock(&link.listing);
        listing.prompts = items;
        listing.unreadable[1] = unreadable;
    }
    if resources && caps.resources.is_some() {
        if let Some((items, unreadable)) = kept(
            link,
            "resources",
            max,
            client
                .list_pages("resources/list", "resources", max, true)
                .await,
        )? {
            let mut listing = lock(&link.listing);
            listing.resources = items;
            listing.unreadable[2] = unreadable;
        }
        if let Some((items, unreadable)) = kept(
            link,
            "resource templates",
            max,
            client
                .list_pages("resources/templates/list", "resourceTemplates", max, true)
                .await,
        )? {
            let mut listing = lock(&link.listing);
            listing.templates = items;
            listing.unreadable[3] = unreadable;
        }
    }
    Ok(())
}
