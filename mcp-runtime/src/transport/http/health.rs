//! The liveness and readiness probes (`Server::health_paths`): `GET /healthz` and
//! `GET /readyz` by default, for Kubernetes probes, HAProxy's `option httpchk` and load
//! balancers' target health.
//!
//! - **Liveness** is 200 `{"status":"ok"}` whenever the process answers at all.
//! - **Readiness** is 200 `{"status":"ready"}`, or 503 with the reason
//!   (`{"status":"unavailable","reason":"shutting down"}`) from the moment a graceful shutdown
//!   starts (so the balancer stops sending new work while requests in flight finish;
//!   `Server::drain_delay` keeps the listener open that long first, so it can tell), and
//!   while the shared store (`Server::redis`) does not answer a `PING` within
//!   [`STORE_TIMEOUT`]. The store's answer is kept for [`STORE_CHECK_PERIOD`], and one probe
//!   checks at a time (the others wait for its answer), so a storm of probes costs Redis one
//!   `PING` a second. A gateway's upstreams do not make it unready: an upstream that is down
//!   answers its own items with errors while the server's other items serve.
//!
//! Probes are outside the OAuth token layer and the `Host`/`Origin` check (an orchestrator
//! probes by address), hold nothing of any client's share, and answer
//! `Cache-Control: no-store`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;

use crate::server::Core;

/// How long the readiness probe waits for the shared store's `PING`.
const STORE_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the store's answer to one `PING` stands for the probes that follow.
const STORE_CHECK_PERIOD: Duration = Duration::from_secs(1);

/// What the readiness probe reads.
struct Probe {
    core: Arc<Core>,
    /// Set when `serve_http`'s shutdown starts.
    draining: Arc<AtomicBool>,
    /// When the store was last checked and whether it answered; locked across the check so
    /// concurrent probes share one `PING`.
    store: tokio::sync::Mutex<Option<(Instant, bool)>>,
}

/// The probes' routes at `health` and `ready` (either may be off).
pub(super) fn routes(
    core: &Arc<Core>,
    draining: &Arc<AtomicBool>,
    health: Option<&str>,
    ready: Option<&str>,
) -> Router {
    let mut router = Router::new();
    if let Some(path) = health {
        router = router.route(path, get(liveness));
    }
    if let Some(path) = ready {
        let probe = Arc::new(Probe {
            core: Arc::clone(core),
            draining: Arc::clone(draining),
            store: tokio::sync::Mutex::new(None),
        });
        router = router.route(path, get(readiness).with_state(probe));
    }
    router
}

async fn liveness() -> Response {
    status(StatusCode::OK, r#"{"status":"ok"}"#)
}

async fn readiness(State(probe): State<Arc<Probe>>) -> Response {
    match probe.unready_because().await {
        None => status(StatusCode::OK, r#"{"status":"ready"}"#),
        Some(reason) => status(
            StatusCode::SERVICE_UNAVAILABLE,
            match reason {
                Unready::ShuttingDown => r#"{"status":"unavailable","reason":"shutting down"}"#,
                Unready::Store => {
                    r#"{"status":"unavailable","reason":"the shared store does not answer"}"#
                }
            },
        ),
    }
}

/// Why a replica should get no traffic.
enum Unready {
    ShuttingDown,
    Store,
}

impl Probe {
    async fn unready_because(&self) -> Option<Unready> {
        // Draining (`serve_http`), or closed (`close_subscriptions` on a mounted router).
        if self.draining.load(Ordering::Relaxed) || *self.core.watch_closing().borrow() {
            return Some(Unready::ShuttingDown);
        }
        let store = self.core.shared()?;
        let mut checked = self.store.lock().await;
        let fresh = match *checked {
            Some((at, answered)) if at.elapsed() < STORE_CHECK_PERIOD => answered,
            _ => {
                let answered = matches!(
                    tokio::time::timeout(STORE_TIMEOUT, store.ping()).await,
                    Ok(Ok(()))
                );
                if !answered {
                    tracing::warn!("readiness: the shared store did not answer a PING");
                }
                *checked = Some((Instant::now(), answered));
                answered
            }
        };
        (!fresh).then_some(Unready::Store)
    }
}

/// Waits out `Server::drain_delay` once a shutdown started: the listener stays open, the
/// readiness probe says 503, so balancers stop sending before the port closes.
pub(super) async fn drain(draining: &AtomicBool, delay: Duration) {
    draining.store(true, Ordering::Relaxed);
    if !delay.is_zero() {
        tracing::info!("shutting down: readiness is 503; accepting for {delay:?} more");
        tokio::time::sleep(delay).await;
    }
}

fn status(code: StatusCode, body: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
