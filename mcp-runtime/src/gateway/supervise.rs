//! The task that keeps one upstream connected for as long as the server lives: it connects
//! it, lists it again on its `list_changed`, watches for its end and reconnects with backoff;
//! and the gateway's start, a supervisor per upstream.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::link::{Gateway, Link, MAX_LIST_PAGES, MAX_UPSTREAM_SUBSCRIPTIONS, STABLE, State, lock};
use super::relay::UpstreamHandler;
use super::{Target, Upstream};
use crate::client::{BoundedList, Client, ClientError, StdioCommand};
use crate::protocol::{Implementation, LoggingLevel};
use crate::server::{Attached, Core};

impl Gateway {
    /// Starts a supervisor for each upstream.
    pub(crate) fn start(
        upstreams: Vec<(String, Upstream)>,
        core: &Arc<Core>,
    ) -> (Arc<dyn Attached>, watch::Receiver<bool>) {
        let links: Vec<Arc<Link>> = upstreams
            .into_iter()
            .enumerate()
            .map(|(i, (namespace, upstream))| {
                Arc::new(Link::new(i, namespace, upstream, core.options.client_share))
            })
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
        // Set if this connection asks for roots that name no call.
        link.roots_refused.store(false, Ordering::Release);
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
                    Ended::Failed(reason) => with_roots_note(&link, reason),
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

/// `reason` for a connection's end, saying so when this gateway refused the upstream's
/// `roots/list` on it: an upstream commonly complains of that on its stderr when it connects,
/// and that line, quoted as its last, is no cause of its end.
fn with_roots_note(link: &Link, reason: String) -> String {
    if link.roots_refused.load(Ordering::Acquire) {
        format!(
            "{reason} (this gateway refused the upstream's `roots/list` when it connected: roots \
             are relayed only within a call, as the upstream's connection is shared by every \
             client; a complaint of that on its stderr is not why it ended)"
        )
    } else {
        reason
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
        .max_in_flight(upstream.max_in_flight)
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
