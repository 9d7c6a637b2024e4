//! The accept loop of `serve_http`: our own (on hyper's HTTP/1.1 connection builder, which
//! axum's `serve` also runs on) so that connections are counted and limited, in all and per
//! client (its address's share of `max_connections`; a trusted proxy's connections only in
//! all), headers must arrive in time, and every connection task is ours to end. Each request
//! carries its connection's [`Peer`] to the handlers, for the client's other shares.
//!
//! The endpoint's POSTs, the requests a client sends most, go straight to their handler when no
//! layer guards the endpoint (no OAuth): what the router would add for them (matching the path,
//! boxing the handler's future, the extensions it fills) changes nothing they do. Every other
//! request goes through the router.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::Method;
use futures_util::FutureExt as _;
use futures_util::future::Either;
use futures_util::task::AtomicWaker;

use super::client::Peer;
use super::{HttpState, deadline, post};
use crate::server::{Budget, ClientKey, Clients, IpRange, Kind, share_of};

/// The connection limits of [`serve`].
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    /// The percentage of `max_connections` one address may hold.
    pub(crate) client_share: u8,
    pub(crate) header_read_timeout: Duration,
    pub(crate) grace: Duration,
    /// The proxies exempt from the per-address share.
    pub(crate) trusted_proxies: Vec<IpRange>,
}

/// The endpoint whose POSTs [`serve`] hands to their handler without the router.
pub(crate) struct Endpoint {
    pub(crate) path: String,
    pub(crate) state: Arc<HttpState>,
}

impl Endpoint {
    fn serves<B>(&self, request: &hyper::Request<B>) -> bool {
        request.method() == Method::POST && request.uri().path() == self.path
    }
}

/// How long the accept loop pauses after an accept error (out of file descriptors, say), so it
/// neither spins nor stops.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The most a connection buffers while reading a request (hyper's default is about 400 KiB).
const CONNECTION_BUFFER: usize = 64 * 1024;

/// The body of what a connection past the limit hears before it is closed.
const CONNECTION_LIMIT_BODY: &str = "too many connections; retry\n";

/// The whole response a connection past the limit hears: its `Content-Length` is the body's.
fn connection_limit_response() -> Vec<u8> {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{CONNECTION_LIMIT_BODY}",
        CONNECTION_LIMIT_BODY.len()
    )
    .into_bytes()
}

/// How many refused connections at once are closed gracefully (their request read and
/// dropped, so the close is not a reset that could destroy the 503 before the client reads it);
/// past that, a refused connection is dropped at once.
const MAX_LINGERING: usize = 64;

/// How long, and how many bytes of its request, a refused connection is read before it is
/// closed.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 64 * 1024;

/// How often at most a refused connection is logged: one line per burst, not per connection.
const REFUSAL_LOG_PERIOD: Duration = Duration::from_secs(10);

/// Serves the endpoint on `listener` until `shutdown` completes, then lets open connections
/// finish for the grace period and drops those still open.
pub(crate) async fn serve(
    router: Router,
    endpoint: Option<Endpoint>,
    clients: &Clients,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    limits: Limits,
) -> std::io::Result<()> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;

    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        // The header-read timeout is the connections' own (`deadline`), not hyper's.
        .header_read_timeout(None)
        // The connection's read buffer: request headers past it get 431.
        .max_buf_size(CONNECTION_BUFFER);
    // The header-read deadlines: a slot per connection, armed and disarmed by its service and
    // swept every tick (not a timer per request).
    let clock = deadline::Clock::new(limits.header_read_timeout, limits.max_connections);
    let sweeper = tokio::spawn(Arc::clone(&clock).sweep());
    let _sweeper = AbortOnDrop(sweeper.abort_handle());
    let open = Budget::shared(
        limits.max_connections,
        Kind::Connections,
        share_of(limits.max_connections, limits.client_share, 1),
    );
    // Dropped when `serve` returns: the connection tasks still running are aborted with it.
    let endpoint = endpoint.map(Arc::new);
    let mut connections = tokio::task::JoinSet::new();
    let stop = Arc::new(Stop::default());
    let mut last_refusal: Option<Instant> = None;
    let mut refused = 0u64;
    let refusal = Arc::<[u8]>::from(connection_limit_response());
    let lingering = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, address) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "HTTP accept failed; retrying in {ACCEPT_BACKOFF:?}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        // Reap finished connections (their places came back when their tasks ended).
        while connections.try_join_next().is_some() {}
        let ip = address.ip();
        let proxy = limits.trusted_proxies.iter().any(|p| p.contains(ip));
        let client = clients.get(ClientKey::address(ip));
        // A trusted proxy carries many clients: only the total binds it.
        let Some(held) = open.account((!proxy).then_some(&client)).charge(1) else {
            // Told so, if the socket takes it without waiting, then closed (gracefully while
            // few are); logged once per burst.
            let _ = stream.try_write(&refusal);
            close_refused(stream, &lingering);
            refused += 1;
            if last_refusal.is_none_or(|at| at.elapsed() >= REFUSAL_LOG_PERIOD) {
                let full = open.used() >= open.limit();
                tracing::warn!(
                    max_connections = limits.max_connections,
                    per_client = open.share(),
                    refused,
                    "HTTP connection limit reached ({}): refusing new connections",
                    if full {
                        "all clients"
                    } else {
                        "one client's share"
                    }
                );
                last_refusal = Some(Instant::now());
                refused = 0;
            }
            continue;
        };
        // Small SSE writes must not wait for the client's delayed ACK.
        let _ = stream.set_nodelay(true);
        let peer = Arc::new(Peer {
            client,
            address,
            proxy,
            host: std::sync::OnceLock::new(),
            last_session: std::sync::Mutex::new(None),
            spare_replies: std::sync::Mutex::new(None),
        });
        let inner = TowerToHyperService::new(router.clone());
        let endpoint = endpoint.clone();
        let head = clock.connection();
        let deadline = head.clone();
        let service = hyper::service::service_fn(move |mut request| {
            // A head is in; the wait for the next starts when this response is written.
            let deadline = deadline.head_in();
            match &endpoint {
                Some(endpoint) if endpoint.serves(&request) => {
                    let state = Arc::clone(&endpoint.state);
                    // The handler's own future, with nothing around it that would hold the
                    // request a second time.
                    let served = post::serve_post(state, request, Some(Arc::clone(&peer)));
                    Either::Left(served.map(move |response| {
                        Ok::<_, std::convert::Infallible>(deadline.after_response(response))
                    }))
                }
                _ => {
                    request.extensions_mut().insert(Arc::clone(&peer));
                    let served = hyper::service::Service::call(&inner, request);
                    Either::Right(served.map(move |response| {
                        response.map(|response| deadline.after_response(response))
                    }))
                }
            }
        });
        let builder = builder.clone();
        let stopped = stop.waiter();
        connections.spawn(async move {
            // The connection's place, given back when it ends however it ends.
            let _held = held;
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            // A connection past its head deadline is closed, at once (as hyper's own timeout
            // would): nothing is answered to a client that has not finished asking.
            tokio::select! {
                biased;
                _ = head.within(connection.as_mut()) => return,
                () = stopped => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = head.within(connection).await;
        });
    }
    drop(listener);
    let started = Instant::now();
    stop.stop();
    while connections.try_join_next().is_some() {}
    tracing::info!(
        open = connections.len(),
        "HTTP shutdown: no new connections; waiting up to {:?} for the {} open (requests in \
         flight finish, streams end)",
        limits.grace,
        connections.len()
    );
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.grace, drained).await.is_err() {
        tracing::warn!(
            open = connections.len(),
            "HTTP shutdown: {} connection(s) still open after the {:?} grace period are dropped",
            connections.len(),
            limits.grace
        );
    }
    tracing::info!(
        "HTTP shutdown: done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Closes a refused connection: its write side at once (the client reads the 503 and the end),
/// then, while fewer than [`MAX_LINGERING`] are, what it sent is read and dropped for at most
/// [`LINGER`] before the socket is closed. Closing a socket with unread input resets it, and a
/// reset can reach the client before it reads the 503.
fn close_refused(stream: tokio::net::TcpStream, lingering: &Arc<std::sync::atomic::AtomicUsize>) {
    let Ok(std_stream) = stream.into_std() else {
        return;
    };
    let _ = std_stream.shutdown(std::net::Shutdown::Write);
    let admitted = lingering
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_LINGERING).then_some(n + 1)
        })
        .is_ok();
    if !admitted {
        return;
    }
    let Ok(mut stream) = tokio::net::TcpStream::from_std(std_stream) else {
        lingering.fetch_sub(1, Ordering::AcqRel);
        return;
    };
    let lingering = Arc::clone(lingering);
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt as _;
        let drain = async {
            let mut buffer = [0u8; 4096];
            let mut read = 0;
            while read < LINGER_BYTES {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read += n,
                }
            }
        };
        let _ = tokio::time::timeout(LINGER, drain).await;
        lingering.fetch_sub(1, Ordering::AcqRel);
    });
}

/// Tells every connection task that the server stops, so that each shuts its connection down
/// gracefully. A task wakes for its connection's I/O on every request and checks for the stop
/// each time: here that is a flag and a registered waker, where a channel's receiver would be
/// polled in full.
#[derive(Default)]
struct Stop {
    stopped: AtomicBool,
    waiting: Mutex<Waiting>,
}

/// The wakers of the connection tasks, as the tasks hold them: an entry whose task is gone is
/// dropped once the list has doubled since it was last pruned, so it stays within twice the
/// open connections (and [`Waiting::FIRST_PRUNE`]).
#[derive(Default)]
struct Waiting {
    wakers: Vec<Weak<AtomicWaker>>,
    prune_at: usize,
}

impl Waiting {
    const FIRST_PRUNE: usize = 64;
}

impl Stop {
    /// What a new connection's task waits on.
    fn waiter(self: &Arc<Self>) -> Stopped {
        let waker = Arc::new(AtomicWaker::new());
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if waiting.wakers.len() >= waiting.prune_at.max(Waiting::FIRST_PRUNE) {
            waiting.wakers.retain(|waker| waker.strong_count() > 0);
            waiting.prune_at = waiting.wakers.len() * 2;
        }
        waiting.wakers.push(Arc::downgrade(&waker));
        Stopped {
            stop: Arc::clone(self),
            waker,
        }
    }

    /// Stops: every waiting task wakes and finds the flag set.
    fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        let wakers = std::mem::take(
            &mut self
                .waiting
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .wakers,
        );
        for waker in wakers.iter().filter_map(Weak::upgrade) {
            waker.wake();
        }
    }
}

/// Completes once the server stops.
struct Stopped {
    stop: Arc<Stop>,
    waker: Arc<AtomicWaker>,
}

impl std::future::Future for Stopped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.stop.stopped.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        self.waker.register(cx.waker());
        // Checked again: a stop between the first check and the registration woke nothing.
        if self.stop.stopped.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Aborts a task when dropped: the sweeper ends with the accept loop, however that ends.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stop_wakes_every_waiting_connection_and_the_list_stays_bounded() {
        let stop = Arc::new(Stop::default());
        let waiting: Vec<_> = (0..3).map(|_| tokio::spawn(stop.waiter())).collect();
        tokio::task::yield_now().await;
        // Connections that came and went: their entries are pruned as the list grows.
        for _ in 0..1000 {
            drop(stop.waiter());
        }
        let held = stop.waiting.lock().unwrap().wakers.len();
        assert!(held <= Waiting::FIRST_PRUNE + 3, "{held} entries");
        stop.stop();
        for task in waiting {
            tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .expect("woken by the stop")
                .unwrap();
        }
        // A connection that starts waiting after the stop finds it at once.
        tokio::time::timeout(Duration::from_secs(5), stop.waiter())
            .await
            .expect("already stopped");
    }
}
