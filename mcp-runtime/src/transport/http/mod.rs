//! Streamable HTTP (2025-03-26 to 2025-11-25): one endpoint, default `/mcp`, on axum.
//!
//! - **POST** carries one JSON-RPC message (or, on 2025-03-26, a batch). Notifications and the
//!   client's responses get 202 with no body. A request gets `application/json`, or an SSE stream
//!   when the client accepts one and the method runs user code (`tools/call`, `prompts/get`,
//!   `resources/read`) and the handler sends something before its result (progress, logs,
//!   server requests) or is still running after 100 ms; a quick silent handler's result is plain
//!   JSON even to a client that takes both. Each SSE
//!   stream opens with a priming event (an id, `retry`, empty data) on sessions at 2025-11-25.
//! - **Sessions**: `initialize` mints an `Mcp-Session-Id` (32 random bytes, hex); later requests
//!   without it get 400, with an unknown or ended one 404; DELETE ends a session; sessions idle
//!   longer than the configured time (30 minutes) end too.
//! - **GET** opens the standalone stream of server-initiated messages (one per session, 409 for a
//!   second), or, with `Last-Event-ID`, resumes the stream that id belongs to: the events it
//!   missed, then the live rest. Every event has an id; each stream's log is bounded.
//! - **`MCP-Protocol-Version`**: a value this server does not support is 400; a missing one means
//!   2025-03-26; a supported one that differs from the session's is accepted.
//! - **DNS rebinding**: by default `Host`, the host of an absolute-form request target, and
//!   `Origin` (when present; with its scheme, as origins are written) must name a loopback host
//!   (`localhost`, `127.0.0.1`, `[::1]`, any port), else 403. `serve_http` on a non-loopback
//!   address drops the check unless hosts were configured. Two `Host` or two `Mcp-Session-Id`
//!   headers are 400.
//! - **Limits**: a body over the message size limit is 413 (refused from `Content-Length` before
//!   it is read, else as soon as the bytes read pass the limit); a body is charged as it arrives
//!   and what parsing it builds before it is built ([`body`]); nesting deeper than the limit is
//!   a -32700 parse error; a session's requests run in a bounded window, and a request that finds
//!   it full gets a -32000 error at once. When the client disconnects from a POST answered with
//!   JSON, its requests are cancelled: their answers could never be delivered. (An SSE stream can
//!   be resumed, so its requests run on.)
//! - **Fair shares**: every bound the clients share (connections, request bytes, sessions, open
//!   streams, unread stream bytes, event logs, subscriptions) counts per client too, its
//!   principal or address ([`client`]), and one client holds at most its share; the accept loop
//!   ([`serve`]) counts connections per address. A fresh `initialize` that finds the sessions
//!   full ends the longest idle session of a client that holds more than the newcomer.
//! - **Stateless mode** (`Server::stateless_http`): no sessions; every POST is served on its own,
//!   GET and DELETE are 405. For deployments behind load balancers; no server-to-client requests.
//! - **The stateless era (2026-07-28)** shares the endpoint: a POST whose body is an enveloped
//!   request (or `server/discover`) is served by [`modern`], without a session; GET and DELETE
//!   with `MCP-Protocol-Version: 2026-07-28` are 405; a POST with that header but no envelope is
//!   400 + -32602.
//! - **The deprecated HTTP+SSE transport** (2024-11-05, `Server::legacy_sse`, off by default)
//!   is served by [`legacy`] on two routes of its own, `/sse` and `/messages`.

// Early returns of a ready `Response` read best as `Result<_, Response>`; the error path is
// the cold one, so its size does not matter.
#![allow(clippy::result_large_err)]

#[cfg(feature = "oauth")]
mod auth;
mod body;
mod card;
mod client;
mod deadline;
mod legacy;
mod modern;
mod serve;
mod shared;
mod stream;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use self::body::{CONTROL_LARGEST, CONTROL_TOTAL, read_post_body};
use self::stream::{Bounds, EventStream, parse_event_id};
use crate::context::Principal;
use crate::protocol::{
    ErrorObject, Incoming, Message, Method, Outgoing, ProtocolVersion, RequestId, Scanned,
    encode_batch, encode_error,
};
use crate::server::{
    Budget, Charge, Client, Clients, Core, FastMap, HostPolicy, HttpOptions, Kind, McpService,
    Notifier, Opener, Outbox, Overflow, Session, Sink, Transport, Window, channel_within,
    is_stateless, share_of,
};

/// The MCP headers, as names parsed once (a lookup by `&str` parses the name every time).
const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The part of `text` before the first `separator` (all of it when there is none): a media
/// type without its parameters, one item of a list.
fn before(text: &str, separator: u8) -> &str {
    match text.bytes().position(|b| b == separator) {
        Some(at) => text.get(..at).unwrap_or(text),
        None => text,
    }
}

/// How many finished POST streams a session keeps for clients that resume with `Last-Event-ID`.
/// Older finished ones are dropped, so a long session's memory stays bounded (every `tools/call`
/// answered over SSE opens a stream); streams still running are always kept.
const FINISHED_STREAMS_KEPT: usize = 64;

/// Where a session's notification queue drains to.
enum Drain {
    /// Its standalone (GET) stream.
    Standalone(Arc<EventStream>),
    /// Its standalone event log in the shared store.
    Store {
        store: Arc<dyn crate::server::shared::SharedStore>,
        session: String,
        keep: usize,
    },
}

/// One HTTP session: the protocol session and its SSE streams.
struct HttpSession {
    /// Its `Mcp-Session-Id`.
    id: String,
    session: Arc<Session>,
    /// With a shared store: the record as last read or written, and the sink of the
    /// session's notifications (its standalone stream is the store's event log). Boxed: some
    /// 220 bytes that a session without a store would hold for nothing.
    saved: Mutex<Option<Box<crate::server::shared::SessionRecord>>>,
    /// The version of the stored record last applied to `session` (0: none, or uncached).
    applied: AtomicU64,
    /// When this replica last wrote the record (its expiry refreshed).
    written: Mutex<Option<Instant>>,
    /// With a shared store: where its POST streams are copied (store, events kept, expiry).
    mirror: Option<(Arc<dyn crate::server::shared::SharedStore>, usize, Duration)>,
    /// With a shared store: where what its POSTs sent outside their replies goes, on its way
    /// to the store's event log.
    notifier: Option<Notifier>,
    /// Its POST streams by id, oldest first: empty, and so unallocated, until a response is
    /// a stream.
    streams: Mutex<BTreeMap<u64, Arc<EventStream>>>,
    /// The standalone (GET) stream, id 0.
    standalone: Arc<EventStream>,
    next_stream: AtomicU64,
    last_seen: Mutex<Instant>,
    /// When `initialize` opened it: a session not initialized by `initialize_timeout` after
    /// this ends.
    created: Instant,
    /// The requests running.
    window: Arc<Window>,
    /// What bounds each of its streams.
    bounds: Bounds,
    /// Its place in its client's share of sessions, given back when it is dropped.
    _counted: Option<Charge>,
    /// Who opened it (OAuth): only a token for the same principal may use it.
    owner: Option<String>,
}

impl HttpSession {
    fn touch(&self) {
        *self.last_seen.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn new_stream(&self) -> Arc<EventStream> {
        let id = self.next_stream.fetch_add(1, Ordering::Relaxed);
        let stream = Arc::new(EventStream::new(id, self.bounds.clone()));
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        // Pruned in batches (when twice the allowance is reached, the standalone stream
        // counted), so a POST costs O(1) on average.
        if streams.len() + 1 >= 2 * FINISHED_STREAMS_KEPT {
            let finished: Vec<u64> = streams
                .iter()
                .filter(|(_, s)| s.is_finished())
                .map(|(id, _)| *id)
                .collect();
            let excess = finished.len().saturating_sub(FINISHED_STREAMS_KEPT - 1);
            for id in &finished[..excess] {
                streams.remove(id);
            }
        }
        streams.insert(id, Arc::clone(&stream));
        if let Some((store, keep, ttl)) = &self.mirror {
            shared::mirror(
                Arc::clone(store),
                self.id.clone(),
                &stream,
                &self.bounds,
                (*keep, *ttl),
            );
        }
        stream
    }

    fn stream(&self, id: u64) -> Option<Arc<EventStream>> {
        if id == 0 {
            return Some(Arc::clone(&self.standalone));
        }
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
    }
}

pub(crate) struct HttpState {
    core: Arc<Core>,
    options: HttpOptions,
    sessions: Mutex<FastMap<String, Arc<HttpSession>>>,
    /// The sessions of the deprecated HTTP+SSE transport, by id. Locked after `sessions` when
    /// both are.
    legacy: Mutex<HashMap<String, Arc<legacy::LegacySession>>>,
    /// The bytes all event logs hold together.
    event_logs: Arc<Budget>,
    /// The bytes all streams hold unread together.
    unread: Arc<Budget>,
    /// The clients holding something, for their shares.
    clients: Clients,
    /// The reserve on which `ping`, `initialize`, notifications and responses get through when
    /// the request budget (or the client's share of it) is full.
    control: Arc<Budget>,
    /// Sessions by client (the total is `max_sessions`, checked with the legacy transport's).
    sessions_held: Arc<Budget>,
    /// Open SSE responses by client (connections bound them all together).
    streams: Arc<Budget>,
    /// The OAuth resource server, when tokens are required.
    #[cfg(feature = "oauth")]
    auth: Option<Arc<auth::Auth>>,
}

impl HttpState {
    fn new(core: Arc<Core>, options: HttpOptions) -> Arc<Self> {
        #[cfg(feature = "oauth")]
        let auth = options.auth.clone().map(auth::Auth::new);
        let percent = core.options.client_share;
        let shared = |total: usize, kind: Kind, floor: usize| {
            Budget::shared(total, kind, share_of(total, percent, floor))
        };
        let sessions = options
            .max_sessions_per_peer
            .unwrap_or_else(|| share_of(options.max_sessions, percent, 1));
        Arc::new(Self {
            #[cfg(feature = "oauth")]
            auth,
            // A session's whole log always fits in its client's share.
            event_logs: shared(
                options.total_log_bytes,
                Kind::EventLogs,
                options.session_log_bytes,
            ),
            // So do one stream's buffer and what may be queued past it.
            unread: shared(
                options.unread_total,
                Kind::Unread,
                core.options.stream_buffer.saturating_mul(2),
            ),
            control: shared(CONTROL_TOTAL, Kind::ControlBytes, CONTROL_LARGEST),
            sessions_held: Budget::shared(usize::MAX, Kind::Sessions, sessions),
            streams: Budget::shared(
                usize::MAX,
                Kind::Streams,
                share_of(options.max_connections, percent, 1),
            ),
            clients: Clients::default(),
            core,
            options,
            sessions: Mutex::new(FastMap::default()),
            legacy: Mutex::new(HashMap::new()),
        })
    }

    fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// A queue for one POST's replies, on their way to a response or an event stream. It draws
    /// on the server's unread total like every queue (a burst can outrun its reader), within
    /// its client's share, but its replies are never refused by the total (see `Sink::send`).
    pub(crate) fn channel(&self, client: Option<&Arc<Client>>) -> (Sink, Outbox) {
        channel_within(
            self.core.options.stream_buffer,
            Overflow::Close,
            Some(self.unread.account(client)),
        )
    }

    /// How a session's notifications are queued on their way to `drain`, made on the first
    /// one: past the queue's buffer or the server's total (or its client's share) they are
    /// dropped (logged once per burst), and the session goes on. Most sessions never get a
    /// notification, and never pay for the queue and its task.
    fn notifier(&self, client: Option<&Arc<Client>>, drain: Drain) -> Opener {
        let limit = self.core.options.stream_buffer;
        let account = self.unread.account(client);
        // The first notification may be sent from outside the runtime (a `ServerHandle` used
        // on a thread of its own): the task that drains the queue starts on this one.
        let runtime = tokio::runtime::Handle::current();
        Box::new(move || {
            let (sink, outbox) =
                channel_within(limit, Overflow::Backpressure, Some(account.clone()));
            match &drain {
                Drain::Standalone(stream) => {
                    runtime.spawn(pump(None, outbox, Arc::clone(stream), HashSet::new()));
                }
                Drain::Store {
                    store,
                    session,
                    keep,
                } => {
                    runtime.spawn(shared::pump_to_store(
                        outbox,
                        Arc::clone(store),
                        session.clone(),
                        *keep,
                    ));
                }
            }
            sink.into_queue()
        })
    }

    /// Counts a new session in its client's share of sessions; 503 past it, answering the
    /// `initialize` request `request`.
    fn count_session(
        &self,
        client: Option<&Arc<Client>>,
        request: Option<&RequestId>,
    ) -> Result<Option<Charge>, Response> {
        let Some(client) = client else {
            return Ok(None);
        };
        match self.sessions_held.account(Some(client)).charge(1) {
            Some(counted) => Ok(Some(counted)),
            None => {
                tracing::warn!(
                    client = ?client.key(),
                    share = self.sessions_held.share(),
                    "a client holds its share of sessions: its `initialize` gets 503"
                );
                Err(self.retry_later(
                    request,
                    "this client holds as many sessions as one client may: end one (DELETE) or \
                     try again later",
                ))
            }
        }
    }

    /// 503 with `Retry-After`, answering `request`: a slot held by a session that never
    /// initializes frees within the initialize timeout, so that is when trying again can first
    /// help.
    fn retry_later(&self, request: Option<&RequestId>, message: &str) -> Response {
        let mut response = error_response_to(request, StatusCode::SERVICE_UNAVAILABLE, message);
        let seconds = self.options.initialize_timeout.as_secs().max(1);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        response
    }

    /// One open stream in its client's share of streams; 503 (with `Retry-After`) past it.
    fn open_stream(&self, client: Option<&Arc<Client>>) -> Result<Option<Charge>, Response> {
        let Some(client) = client else {
            return Ok(None);
        };
        match self.streams.account(Some(client)).charge(1) {
            Some(open) => Ok(Some(open)),
            None => {
                tracing::warn!(
                    client = ?client.key(),
                    share = self.streams.share(),
                    "a client holds its share of open streams: another stream gets 503"
                );
                let mut response = error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "this client has as many streams open as one client may: close one first",
                );
                let headers = response.headers_mut();
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                // Its connection goes too: a client at its share of streams may be at its
                // share of connections, and an idle one would hold a place for nothing.
                headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
                Err(response)
            }
        }
    }

    /// The bounds of a new session's streams, with a log budget of its own, drawing on the
    /// server's totals within `client`'s shares.
    fn stream_bounds(&self, client: Option<&Arc<Client>>) -> Bounds {
        Bounds {
            events: self.options.event_buffer,
            live_bytes: self.core.options.stream_buffer,
            unread: self.unread.account(client),
            budgets: [
                Budget::new(self.options.session_log_bytes).account(None),
                self.event_logs.account(client),
            ],
        }
    }

    /// The session a request names in `Mcp-Session-Id`, or the refusal answering `request`
    /// (the id of the request in the body, when there is one): 400 without the header, 404 for
    /// a session unknown, ended or another principal's, 503 when the shared store fails.
    async fn session(
        &self,
        headers: &HeaderMap,
        principal: Option<&Principal>,
        client: Option<&Arc<Client>>,
        request: Option<&RequestId>,
    ) -> Result<Arc<HttpSession>, Response> {
        let id = session_header(headers, request)?;
        let owner = principal.map(Principal::binding_key);
        let session = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            // A session is bound to the principal that opened it: to anyone else it does not
            // exist.
            .filter(|s| s.owner.as_deref() == owner.as_deref());
        let unknown = || {
            error_response_to(
                request,
                StatusCode::NOT_FOUND,
                "unknown or ended session: send `initialize` again",
            )
        };
        let Some(store) = self.core.shared() else {
            return match session {
                Some(session) => {
                    session.touch();
                    Ok(session)
                }
                None => Err(unknown()),
            };
        };
        // Shared: the store's record is the truth; this replica's copy follows it.
        let session = match session {
            Some(session) => session,
            None => {
                let record = match store
                    .load_session(id)
                    .await
                    .and_then(|stored| stored.map(|stored| stored.parse()).transpose())
                {
                    // Bound to another principal: to this one it does not exist.
                    Ok(Some(record)) if record.owner != owner => return Err(unknown()),
                    Ok(Some(record)) => record,
                    Ok(None) => return Err(unknown()),
                    Err(error) => return Err(shared::store_failed(request, &error)),
                };
                let Some(session) = Session::restore(
                    Arc::clone(&self.core),
                    Notifier::later(),
                    id,
                    &record,
                    client.cloned(),
                ) else {
                    return Err(unknown());
                };
                let http_session = self.open_session(id.to_owned(), session, None, owner);
                let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
                Arc::clone(sessions.entry(id.to_owned()).or_insert(http_session))
            }
        };
        match shared::sync_in(store, &session).await {
            Ok(true) => {
                session.touch();
                Ok(session)
            }
            Ok(false) => {
                self.sessions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(id);
                Err(unknown())
            }
            Err(error) => Err(shared::store_failed(request, &error)),
        }
    }

    /// A new HTTP session around `session`, its notifications flowing to its standalone stream
    /// (or, shared, to the store's event log) once it has one.
    fn open_session(
        &self,
        id: String,
        session: Arc<Session>,
        counted: Option<Charge>,
        owner: Option<String>,
    ) -> Arc<HttpSession> {
        let client = session.client.clone();
        let bounds = self.stream_bounds(client.as_ref());
        let standalone = Arc::new(EventStream::new(0, bounds.clone()));
        let store = self.core.shared().cloned();
        let to_log = |store: &Arc<dyn crate::server::shared::SharedStore>| Drain::Store {
            store: Arc::clone(store),
            session: id.clone(),
            keep: self.options.event_buffer,
        };
        session.notify_through(self.notifier(
            client.as_ref(),
            match &store {
                Some(store) => to_log(store),
                None => Drain::Standalone(Arc::clone(&standalone)),
            },
        ));
        let notifier = store.as_ref().map(|store| {
            let notifier = Notifier::later();
            notifier.open_with(self.notifier(client.as_ref(), to_log(store)));
            notifier
        });
        Arc::new(HttpSession {
            id,
            session,
            saved: Mutex::new(None),
            applied: AtomicU64::new(0),
            written: Mutex::new(None),
            mirror: store.as_ref().map(|store| {
                (
                    Arc::clone(store),
                    self.options.event_buffer,
                    self.options.session_idle,
                )
            }),
            notifier,
            streams: Mutex::new(BTreeMap::new()),
            standalone,
            next_stream: AtomicU64::new(match &store {
                // Replicas number a session's streams apart, so a stream id names one stream.
                Some(_) => shared::first_stream_id(),
                None => 1,
            }),
            last_seen: Mutex::new(Instant::now()),
            created: Instant::now(),
            window: Window::new(self.core.options.max_in_flight),
            bounds,
            _counted: counted,
            owner,
        })
    }

    /// Ends sessions idle for longer than the configured time, and sessions that never sent
    /// `notifications/initialized` within the initialize timeout.
    fn expire(&self) {
        let idle = self.options().session_idle;
        let uninitialized = self.options().initialize_timeout;
        let now = Instant::now();
        let expired: Vec<Arc<HttpSession>> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            let dead: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| {
                    now.duration_since(*s.last_seen.lock().unwrap_or_else(|e| e.into_inner()))
                        > idle
                        || (!s.session.initialized.load(Ordering::Acquire)
                            && now.duration_since(s.created) > uninitialized)
                })
                .map(|(id, _)| id.clone())
                .collect();
            dead.into_iter()
                .filter_map(|id| sessions.remove(&id))
                .collect()
        };
        // With sessions shared through Redis, another replica may still serve the session:
        // its tasks stay (bounded by its share) until their TTL or its DELETE.
        let release = self.core.shared().is_none();
        for session in expired {
            tokio::spawn(async move {
                session
                    .session
                    .shutdown(session.created, Duration::ZERO, false)
                    .await;
                if release {
                    session.session.release_tasks().await;
                }
            });
        }
        // A legacy session is gone at once, and its event stream told to end (a stream nobody
        // reads is not polled, so it cannot be left to remove the session).
        let legacy: Vec<Arc<legacy::LegacySession>> = {
            let mut legacy = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
            let dead: Vec<String> = legacy
                .iter()
                .filter(|(_, s)| s.expired(now, idle, uninitialized))
                .map(|(id, _)| id.clone())
                .collect();
            dead.into_iter()
                .filter_map(|id| legacy.remove(&id))
                .collect()
        };
        for session in legacy {
            session.end();
            tokio::spawn(async move { session.shutdown().await });
        }
    }
}

/// A refusal as an HTTP response whose JSON-RPC error has `"id": null`: for what is refused
/// before its body is read (or has no request in it: GET, DELETE).
fn error_response(status: StatusCode, message: &str) -> Response {
    error_response_to(None, status, message)
}

/// A refusal as an HTTP response whose JSON-RPC error answers `id` (`null` when `None`): for what
/// is refused once the body was read and its request's id is known. The code follows the status
/// (-32001 for 404, the session not found; -32000 otherwise).
fn error_response_to(id: Option<&RequestId>, status: StatusCode, message: &str) -> Response {
    let code = match status {
        StatusCode::NOT_FOUND => -32001,
        _ => -32000,
    };
    error_response_code(id, status, code, message)
}

/// A JSON-RPC error with its code, answering `id` (`null` when `None`), as an HTTP response.
fn error_response_code(
    id: Option<&RequestId>,
    status: StatusCode,
    code: i64,
    message: &str,
) -> Response {
    json_response(
        status,
        encode_error(id, &ErrorObject::new(code, message.to_owned())),
    )
}

/// A reply as a POST's whole answer: 200, or the status and `Retry-After` of a refusal (a rate
/// limit's 429, a shed request's 503).
pub(super) fn reply_response(reply: Outgoing) -> Response {
    let refusal = reply.refused();
    let bytes = reply.into_bytes().unwrap_or_default();
    match refusal {
        Some(refusal) => refused_response(refusal, bytes),
        None => json_response(StatusCode::OK, bytes),
    }
}

/// `bytes` with the status and `Retry-After` of `refusal`.
pub(super) fn refused_response(refusal: crate::protocol::Refusal, bytes: Vec<u8>) -> Response {
    let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::OK);
    let mut response = json_response(status, bytes);
    if let Some(seconds) = refusal.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

pub(super) fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    // Built as it goes out: axum's `(status, headers, Vec<u8>)` would first give the body an
    // `application/octet-stream` type, then replace it.
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An SSE response carrying what `receiver` gets; `open` (its place in its client's share of
/// streams) is held until the response ends or goes away.
fn sse_response(receiver: Outbox<Bytes>, open: Option<Charge>) -> Response {
    let stream =
        futures_util::stream::unfold((receiver, open), |(mut receiver, open)| async move {
            receiver
                .recv()
                .await
                .map(|bytes| (Ok::<_, Infallible>(bytes), (receiver, open)))
        });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The host part of an authority (`host`, `host:port`, `[v6]` or `[v6]:port`), brackets kept for
/// IPv6; `None` when it is malformed (an unclosed `[`, or anything after `]` but a port). The text
/// is the client's, so it is only ever split, never sliced by computed offsets.
fn host_name(value: &str) -> Option<&str> {
    let value = value.trim();
    if value.starts_with('[') {
        let (inside, after) = value.split_once(']')?;
        let port_ok = after.is_empty()
            || after
                .strip_prefix(':')
                .is_some_and(|port| port.chars().all(|c| c.is_ascii_digit()));
        // `inside` keeps its `[`, so the host with its brackets is `inside` and one `]`.
        return port_ok.then(|| value.get(..inside.len() + 1)).flatten();
    }
    let host = match value.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        Some(_) => return None,
        None => value,
    };
    (!host.is_empty()).then_some(host)
}

/// The DNS-rebinding check: `Host`, the host of an absolute-form request target
/// (`POST http://host/mcp`), and `Origin` when present must name an allowed host. A repeated
/// `Host` is 400 (which one would the check believe?); a malformed `Host` or `Origin`, an
/// `Origin` without a scheme (an origin is `scheme://host[:port]`), and `Origin: null` (an
/// opaque origin, such as a sandboxed page), are 403 unless the policy is [`HostPolicy::Any`].
fn check_host(
    options: &HttpOptions,
    headers: &HeaderMap,
    target: &axum::http::Uri,
) -> Result<(), Response> {
    let allowed = |host: &str| -> bool {
        match &options.hosts {
            HostPolicy::Any => true,
            HostPolicy::Loopback => ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host)),
            HostPolicy::Only(hosts) => hosts.iter().any(|h| h.eq_ignore_ascii_case(host)),
        }
    };
    // One lookup for both: the first `Host`, and whether there is another.
    let mut hosts = headers.get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            "more than one `Host` header",
        ));
    }
    if options.hosts == HostPolicy::Any {
        return Ok(());
    }
    let host = first.and_then(|v| v.to_str().ok()).and_then(host_name);
    if !host.is_some_and(allowed) {
        return Err(error_response(StatusCode::FORBIDDEN, "forbidden `Host`"));
    }
    if let Some(authority) = target.authority()
        && !host_name(authority.as_str()).is_some_and(allowed)
    {
        return Err(error_response(
            StatusCode::FORBIDDEN,
            "forbidden host in the request target",
        ));
    }
    for origin in headers.get_all(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let authority = match origin.split_once("://") {
            Some((scheme, rest)) if !scheme.is_empty() => rest,
            _ => "",
        };
        let authority = authority.split('/').next().unwrap_or("");
        if !host_name(authority).is_some_and(allowed) {
            return Err(error_response(StatusCode::FORBIDDEN, "forbidden `Origin`"));
        }
    }
    Ok(())
}

/// The `Mcp-Session-Id` of a request: 400 (answering `request`) when it has none, or more than
/// one (which would the server believe?).
fn session_header<'h>(
    headers: &'h HeaderMap,
    request: Option<&RequestId>,
) -> Result<&'h str, Response> {
    let mut ids = headers.get_all(&MCP_SESSION_ID).iter();
    let first = ids.next().and_then(|v| v.to_str().ok());
    if ids.next().is_some() {
        return Err(error_response_to(
            request,
            StatusCode::BAD_REQUEST,
            "more than one `Mcp-Session-Id` header",
        ));
    }
    first.ok_or_else(|| {
        error_response_to(
            request,
            StatusCode::BAD_REQUEST,
            "the `Mcp-Session-Id` header is missing: send `initialize` first",
        )
    })
}

/// What the client's `Accept` header allows, read as a list.
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return (true, false);
    };
    let mut json = false;
    let mut sse = false;
    // Read as bytes: the text is ASCII (`to_str` checked it), so trimming ASCII whitespace is
    // `str::trim`, and splitting on a byte skips `str`'s pattern machinery.
    for item in accept.as_bytes().split(|&b| b == b',') {
        let media = item
            .split(|&b| b == b';')
            .next()
            .unwrap_or(item)
            .trim_ascii();
        let is = |name: &str| media.eq_ignore_ascii_case(name.as_bytes());
        if is("application/json") || is("*/*") || is("application/*") {
            json = true;
        } else if is("text/event-stream") {
            sse = true;
        }
    }
    (json, sse)
}

/// The `MCP-Protocol-Version` of a handshake-era request: absent, or a revision this server
/// supports (else 400). `2026-07-28` without an envelope is 400 + -32602. A refusal answers
/// `request`, the id of the request in the body (a GET has none).
fn header_version(
    headers: &HeaderMap,
    request: Option<&RequestId>,
) -> Result<Option<ProtocolVersion>, Response> {
    match headers.get(&MCP_PROTOCOL_VERSION) {
        None => Ok(None),
        Some(value) => match value.to_str().ok().and_then(ProtocolVersion::parse) {
            Some(version) if version.has_handshake() => Ok(Some(version)),
            Some(_) => Err(json_response(
                StatusCode::BAD_REQUEST,
                encode_error(
                    request,
                    &ErrorObject::invalid_params(
                        "a 2026-07-28 request needs the `_meta` envelope \
                         (`io.modelcontextprotocol/protocolVersion`)",
                    ),
                ),
            )),
            None => Err(error_response_to(
                request,
                StatusCode::BAD_REQUEST,
                "unsupported `MCP-Protocol-Version`",
            )),
        },
    }
}

#[cfg(all(feature = "fuzzing", feature = "oauth"))]
pub use self::auth::fuzz_dpop;

/// The header guard alone, for the `http_headers` fuzz target: `headers` (name, raw value;
/// values HTTP cannot carry are skipped, as hyper would refuse them) through the `Host`/`Origin`
/// check under each host policy, `Accept`, `MCP-Protocol-Version`, `Content-Type` (415 when not
/// JSON) and the
/// session header's text. The statuses the checks answer (200 when they pass); never a panic.
#[cfg(feature = "fuzzing")]
pub fn fuzz_guard(headers: &[(&str, &[u8])]) -> Vec<u16> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_bytes(value),
        ) {
            map.append(name, value);
        }
    }
    let status =
        |result: Result<(), Response>| result.map_or_else(|r| r.status().as_u16(), |()| 200);
    let mut out = Vec::new();
    for hosts in [
        HostPolicy::Loopback,
        HostPolicy::Any,
        HostPolicy::Only(vec!["example.com".to_owned()]),
    ] {
        let options = HttpOptions {
            hosts,
            ..HttpOptions::default()
        };
        out.push(status(check_host(
            &options,
            &map,
            &axum::http::Uri::from_static("/mcp"),
        )));
    }
    let _ = accepts(&map);
    out.push(status(header_version(&map, None).map(|_| ())));
    let _ = is_stateless_era(&map);
    out.push(status(check_json_content_type(&map)));
    let _ = map
        .get(&MCP_SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::len);
    out
}

/// Whether a GET or DELETE is on the stateless path, which has neither.
fn is_stateless_era(headers: &HeaderMap) -> bool {
    headers
        .get(&MCP_PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| !v.has_handshake())
}

fn session_id() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: fall back to something unique, never a fixed value.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes[..16].copy_from_slice(&nanos.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a POST body holds, and what serving it depends on.
struct Post {
    incoming: Incoming,
    /// One message with a stateless envelope (or `server/discover`): the 2026-07-28 path.
    stateless: bool,
    /// One message with an id whose method is `initialize` (a notification of that name opens
    /// nothing).
    initialize: bool,
    /// The ids of the requests among the messages.
    ids: Vec<RequestId>,
    /// A method that runs user code and may stream: `tools/call`, `prompts/get`,
    /// `resources/read`.
    runs_user_code: bool,
}

impl Post {
    /// Reads a scanned body: one valid message straight from its bytes; anything else (a batch,
    /// an invalid message) from its JSON value, where the members of an invalid message still
    /// decide where it goes.
    fn read(body: &Scanned<'_>) -> Result<Self, ErrorObject> {
        let runs_user_code =
            |method: &str| Method::parse(method).is_some_and(Method::runs_user_code);
        if let Incoming::Single(Ok(message)) = body.parse()? {
            let (method, params, id) = match &message {
                Message::Request(r) => (Some(r.method.as_str()), Some(&r.params), Some(&r.id)),
                Message::Notification(n) => (Some(n.method.as_str()), Some(&n.params), None),
                Message::Response(_) => (None, None, None),
            };
            let stateless = matches!((method, params), (Some(m), Some(p))
                if is_stateless(m, p));
            return Ok(Self {
                stateless,
                initialize: id.is_some() && method == Some("initialize"),
                ids: id.cloned().into_iter().collect(),
                runs_user_code: method.is_some_and(runs_user_code),
                incoming: Incoming::Single(Ok(message)),
            });
        }
        let value = body.decode()?;
        let messages: Vec<&Value> = match &value {
            Value::Array(items) => items.iter().collect(),
            single => vec![single],
        };
        fn method(message: &Value) -> Option<&str> {
            message.get("method").and_then(Value::as_str)
        }
        let stateless = match &value {
            Value::Object(message) => method(&value).is_some_and(|m| {
                let empty = serde_json::Map::new();
                let params = message.get("params").and_then(Value::as_object);
                is_stateless(m, params.unwrap_or(&empty))
            }),
            _ => false,
        };
        Ok(Self {
            stateless,
            initialize: match messages.as_slice() {
                [only] => method(only) == Some("initialize") && only.get("id").is_some(),
                _ => false,
            },
            ids: messages
                .iter()
                .filter(|m| m.get("method").is_some())
                .filter_map(|m| m.get("id").and_then(RequestId::from_json))
                .collect(),
            runs_user_code: messages
                .iter()
                .any(|m| method(m).is_some_and(runs_user_code)),
            incoming: match value {
                Value::Array(items) => Incoming::Batch(items),
                single => Incoming::Single(Message::from_value(single)),
            },
        })
    }
}

/// What a message for the client means to a POST waiting for the answers to `pending`.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// The response to one of them.
    One(RequestId),
    /// The answer to them all: a batch's array, or an error whose id could not be read.
    All,
    /// Something on the way (a notification, a request to the client), or an answer to some
    /// other POST's request.
    Not,
}

impl Answer {
    fn of(message: &Outgoing, pending: &HashSet<RequestId>) -> Self {
        match (message.reply_to(), message) {
            (Some(id), _) if pending.contains(id) => Self::One(id.clone()),
            (_, Outgoing::Reply { id: None, .. } | Outgoing::Batch(_)) => Self::All,
            _ => Self::Not,
        }
    }

    /// Marks what this answers as answered; whether it answered anything.
    fn settle(self, pending: &mut HashSet<RequestId>) -> bool {
        match self {
            Self::One(id) => pending.remove(&id),
            Self::All => {
                pending.clear();
                true
            }
            Self::Not => false,
        }
    }
}

async fn handle_post(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    // The request's own headers, not the copy a `HeaderMap` extractor would make.
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let principal = parts.extensions.get::<Arc<Principal>>().cloned();
    let options = state.options();
    if let Err(response) = check_host(options, &headers, &parts.uri) {
        return response;
    }
    if let Err(response) = check_json_content_type(&headers) {
        return response;
    }
    let (accepts_json, accepts_sse) = accepts(&headers);
    if !accepts_json && !accepts_sse {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            "`Accept` must list `application/json` or `text/event-stream`",
        );
    }
    let client = state.client_of(&parts.extensions, &headers, principal.as_deref());
    let peer = state.peer_of(&parts.extensions, &headers);
    let limits = &state.core.options;
    // The body is charged to the client's share of the request budget as it arrives, then what
    // parsing it builds, and that stays charged until it is answered.
    let body = match read_post_body(&state, &headers, body, client.as_ref()).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let from = (&*state, client.as_ref());
    let (post, charge) = match body.parse(from, limits.max_nesting_depth, Post::read) {
        Ok(parsed) => parsed,
        Err(response) => return response,
    };
    let Post {
        incoming,
        stateless,
        initialize,
        ids,
        runs_user_code,
    } = post;
    if charge.on_reserve() && !holds_nothing(&incoming, stateless) {
        return charge.refusal();
    }
    // What a refusal from here on answers: the request's id (a batch, a notification or an
    // unreadable id: `null`).
    let answering = match &incoming {
        Incoming::Single(_) => ids.first().cloned(),
        Incoming::Batch(_) => None,
    };
    let answering = answering.as_ref();
    // Scopes are checked before anything runs: a 403 drives the client's step-up.
    #[cfg(feature = "oauth")]
    if let Some(auth) = &state.auth
        && let Err(response) = auth.check_scopes(&state.core, principal.as_deref(), &incoming)
    {
        return response;
    }
    // The stateless era: one enveloped request (or `server/discover`), served on its own.
    if stateless && let Incoming::Single(message) = incoming {
        let caller = modern::Caller {
            principal,
            client,
            peer,
            charge: charge.into_charge(),
        };
        return modern::handle(&state, &headers, message, accepts_sse, caller).await;
    }
    let charge = charge.into_charge();
    let version = match header_version(&headers, answering) {
        Ok(version) => version,
        Err(response) => return response,
    };
    // `initialize` within a live session goes to that session, which refuses it.
    let is_initialize = initialize && (options.stateless || !headers.contains_key(&MCP_SESSION_ID));
    let batch = matches!(incoming, Incoming::Batch(_));

    // `initialize` opens a session (or, stateless, is answered on its own).
    if is_initialize {
        return initialize_session(&state, incoming, (principal, client, peer), answering).await;
    }

    let (session, http_session) = if options.stateless {
        let (notifier, _) = state.channel(client.as_ref());
        let version = version.unwrap_or(ProtocolVersion::V2025_03_26);
        (
            Session::new_stateless(Arc::clone(&state.core), notifier, version, client.clone()),
            None,
        )
    } else {
        match state
            .session(&headers, principal.as_deref(), client.as_ref(), answering)
            .await
        {
            Ok(http_session) => (Arc::clone(&http_session.session), Some(http_session)),
            Err(response) => return response,
        }
    };

    // Notifications and responses: accepted, no body. Anything else without a readable id (an
    // invalid message) is refused with 400 and its error, once whatever handles it is done.
    if ids.is_empty() {
        let (sink, mut replies) = state.channel(client.as_ref());
        let sink = sink.with_principal(principal.clone()).with_peer(peer);
        session.receive(incoming, &sink, None);
        drop(sink);
        let mut errors = Vec::new();
        while let Some(reply) = replies.recv().await {
            errors.extend(reply.into_bytes());
        }
        share_back(&state, http_session.as_deref()).await;
        return match errors.len() {
            0 => StatusCode::ACCEPTED.into_response(),
            _ => json_response(StatusCode::BAD_REQUEST, errors.swap_remove(0)),
        };
    }

    let wants_sse = accepts_sse && (runs_user_code || !accepts_json);
    // A client that takes only a stream needs room for one before anything runs; one that
    // takes both gets JSON when it has none.
    let mut open = None;
    if wants_sse && !accepts_json {
        match state.open_stream(client.as_ref()) {
            Ok(charged) => open = Some(charged),
            Err(response) => return response,
        }
    }

    // A request that runs takes a slot of the session's window, a batch one for all; the
    // session holds it until the request ends.
    let slots = Window::slots_needed(&incoming);
    let mut slot = match &http_session {
        Some(http_session) if slots > 0 => match http_session.window.enter(slots) {
            Ok(running) => Some(running),
            Err(error) => return window_full(&ids, batch, &error),
        },
        _ => None,
    };
    // A request that runs holds its bytes' charge with its slot, until it ends.
    let _held = match &mut slot {
        Some(slot) => {
            slot.hold(charge);
            None
        }
        None => Some(charge),
    };

    let (sink, replies) = state.channel(client.as_ref());
    let sink = sink.with_principal(principal).with_peer(peer);
    session.receive(incoming, &sink, slot);
    share_back(&state, http_session.as_deref()).await;
    let mut replies = replies;

    // Most requests are answered while they are received: a single one whose answer is
    // already there goes back as JSON, with no stream and no waiting.
    let mut first = replies.try_recv();
    if !batch
        && let Some(id) = first.as_ref().and_then(Outgoing::reply_to)
        && ids.first() == Some(id)
        && let Some(reply) = first.take()
    {
        return reply_response(reply);
    }
    let pending: HashSet<RequestId> = ids.into_iter().collect();

    // A client that takes both gets plain JSON when the result is the first thing the handler
    // sends; a stream only when something comes before it (progress, a log, a request to the
    // client, a stream close) or the handler stays silent for a while.
    if first.is_none() && wants_sse && accepts_json && !batch {
        let mut waiting = Unanswered {
            session: Arc::clone(&session),
            ids: pending.clone(),
        };
        match tokio::time::timeout(LAZY_SSE_WINDOW, replies.recv()).await {
            Ok(Some(reply)) if Answer::of(&reply, &pending) != Answer::Not => {
                waiting.ids.clear();
                return reply_response(reply);
            }
            Ok(reply) => first = reply,
            Err(_) => {}
        }
        // The stream takes over: its requests run on even if this response goes away.
        waiting.ids.clear();
    }

    if wants_sse && open.is_none() {
        // No room for another stream of this client's: the answers come as JSON.
        open = state.open_stream(client.as_ref()).ok();
    }
    if let Some(open) = open {
        let stream = match &http_session {
            Some(http_session) => http_session.new_stream(),
            None => Arc::new(EventStream::new(1, state.stream_bounds(client.as_ref()))),
        };
        let live = stream.attach(None);
        if session
            .version()
            .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
            && http_session.is_some()
        {
            stream.prime(options.retry_ms);
        }
        tokio::spawn(pump(first, replies, stream, pending));
        return sse_response(live, open);
    }
    let mut unanswered = Unanswered {
        session,
        ids: pending,
    };
    json_replies(
        first,
        replies,
        &mut unanswered.ids,
        batch,
        http_session.as_deref(),
    )
    .await
}

/// Whether a message holds nothing once handled, so it may go on when the request budget is
/// full: `ping`, `initialize`, notifications, responses, `server/discover`.
fn holds_nothing(incoming: &Incoming, stateless: bool) -> bool {
    match incoming {
        Incoming::Single(Ok(Message::Request(request))) if stateless => {
            request.method == "server/discover"
        }
        _ => !stateless && Window::slots_needed(incoming) == 0,
    }
}

/// `initialize` outside a session: a new session (or, stateless, the answer alone). A refusal
/// answers `answering`, the request's id.
async fn initialize_session(
    state: &Arc<HttpState>,
    incoming: Incoming,
    (principal, client, peer): (
        Option<Arc<Principal>>,
        Option<Arc<Client>>,
        Option<SocketAddr>,
    ),
    answering: Option<&RequestId>,
) -> Response {
    let options = state.options();
    let (sink, mut replies) = state.channel(client.as_ref());
    let sink = sink.with_principal(principal.clone()).with_peer(peer);
    // Its notifications flow once it is open (none is sent before `notifications/initialized`).
    let session = Session::new(
        Arc::clone(&state.core),
        Transport::StreamableHttp,
        Notifier::later(),
        client.clone(),
    );
    session.receive(incoming, &sink, None);
    // Answered on the spot; nothing else will ever come.
    drop(sink);
    let Some(reply) = replies.recv().await.and_then(Outgoing::into_bytes) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut response = json_response(StatusCode::OK, reply);
    if session.version().is_none() || options.stateless {
        return response;
    }
    // With replicas, the limit is on the sessions of all of them.
    let elsewhere = match state.core.shared() {
        Some(store) => match store.count_sessions().await {
            Ok(count) => count,
            Err(error) => return shared::store_failed(answering, &error),
        },
        None => 0,
    };
    let counted = match state.count_session(client.as_ref(), answering) {
        Ok(counted) => counted,
        Err(response) => return response,
    };
    let (http_session, evicted) = {
        let mut sessions = state.sessions.lock().unwrap_or_else(|e| e.into_inner());
        // The legacy transport's sessions count too (locked after these, as it does).
        let legacy = state.legacy.lock().unwrap_or_else(|e| e.into_inner()).len();
        let mut evicted = None;
        if sessions.len().max(elsewhere) + legacy >= options.max_sessions {
            // Full: the newcomer takes the place of an idle session of a client that holds
            // more than it does, if there is one (only among this process's sessions).
            evicted = (state.core.shared().is_none())
                .then(|| evict_for(&mut sessions, client.as_deref()))
                .flatten();
            if evicted.is_none() {
                return state.retry_later(answering, "too many sessions; try again later");
            }
        }
        let id = session_id();
        let _ = session.trace_name.set(id.clone());
        let http_session = state.open_session(
            id.clone(),
            session,
            counted,
            principal.as_deref().map(Principal::binding_key),
        );
        sessions.insert(id, Arc::clone(&http_session));
        (http_session, evicted)
    };
    if let Some(evicted) = evicted {
        tracing::info!(
            client = ?evicted.session.client.as_ref().map(|c| c.key()),
            "the sessions are full: a newcomer's `initialize` ended the longest idle session of \
             the client holding the most"
        );
        tokio::spawn(async move {
            evicted
                .session
                .shutdown(evicted.created, Duration::ZERO, false)
                .await;
            evicted.session.release_tasks().await;
        });
    }
    if let Some(store) = state.core.shared()
        && let Err(error) = shared::sync_out(state, store, &http_session).await
    {
        state
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&http_session.id);
        return shared::store_failed(answering, &error);
    }
    if let Ok(value) = HeaderValue::from_str(&http_session.id) {
        response.headers_mut().insert(MCP_SESSION_ID, value);
    }
    response
}

/// Takes out of `sessions` the session a newcomer (of `client`) may end to make room: the
/// longest idle one (one not yet initialized first) of the client holding the most sessions,
/// when that client holds more than the newcomer's does. One pass, reading each session's
/// client's count; `None` when no client holds more.
fn evict_for(
    sessions: &mut FastMap<String, Arc<HttpSession>>,
    client: Option<&Client>,
) -> Option<Arc<HttpSession>> {
    let mine = client.map_or(0, |c| c.holds(Kind::Sessions));
    let mut victim: Option<(usize, bool, Instant, &String)> = None;
    for (id, http_session) in sessions.iter() {
        let Some(owner) = &http_session.session.client else {
            continue;
        };
        // The newcomer's own count already has its new session in it.
        let holds = owner.holds(Kind::Sessions);
        if holds <= mine {
            continue;
        }
        let initialized = http_session.session.initialized.load(Ordering::Acquire);
        let seen = *http_session
            .last_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Most sessions held first; then not initialized; then idle longest.
        let better = victim.is_none_or(|(h, i, s, _)| {
            (holds, !initialized, std::cmp::Reverse(seen)) > (h, !i, std::cmp::Reverse(s))
        });
        if better {
            victim = Some((holds, initialized, seen, id));
        }
    }
    let id = victim?.3.clone();
    sessions.remove(&id)
}

/// 415 unless the request's `Content-Type` is `application/json` (parameters allowed).
fn check_json_content_type(headers: &HeaderMap) -> Result<(), Response> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = before(content_type, b';').trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "`Content-Type` must be `application/json`",
        ))
    }
}

/// The answer to a POST whose requests find the session's window full.
fn window_full(ids: &[RequestId], batch: bool, error: &ErrorObject) -> Response {
    let mut errors: Vec<Vec<u8>> = ids.iter().map(|id| encode_error(Some(id), error)).collect();
    let body = if batch {
        encode_batch(&errors)
    } else {
        errors.pop().unwrap_or_default()
    };
    json_response(StatusCode::OK, body)
}

/// The requests of a POST answered with JSON, until they are. Their answers can only ever go
/// out on that response, so when the client goes away first they are cancelled, which stops
/// their handlers and frees their slots.
struct Unanswered {
    session: Arc<Session>,
    ids: HashSet<RequestId>,
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        for id in self.ids.drain() {
            tracing::debug!(request_id = %id, "the client disconnected before the answer");
            self.session.cancel(&id);
        }
    }
}

/// How long a request's POST waits for the handler's first message before answering with an SSE
/// stream rather than plain JSON. Short, so that a handler that takes longer gets a stream with a
/// priming event, which a client that loses the connection can resume.
const LAZY_SSE_WINDOW: Duration = Duration::from_millis(100);

/// With a shared store, writes what a request changed in its session (log level, subscriptions,
/// initialization) back to the store. A failure is logged: the request already ran.
async fn share_back(state: &HttpState, http_session: Option<&HttpSession>) {
    if let (Some(store), Some(http_session)) = (state.core.shared(), http_session)
        && let Err(error) = shared::sync_out(state, store, http_session).await
    {
        tracing::error!(%error, "the shared store failed: a session change was not shared");
    }
}

/// Moves a request's replies into its SSE stream until every request of the POST is answered.
async fn pump(
    mut first: Option<Outgoing>,
    mut replies: Outbox,
    stream: Arc<EventStream>,
    mut pending: HashSet<RequestId>,
) {
    let finite = !pending.is_empty();
    loop {
        let reply = match first.take() {
            Some(reply) => reply,
            None => match replies.recv().await {
                Some(reply) => reply,
                None => return,
            },
        };
        Answer::of(&reply, &pending).settle(&mut pending);
        let Some(bytes) = reply.into_bytes() else {
            stream.disconnect();
            continue;
        };
        let last = finite && pending.is_empty();
        stream.push(&bytes, last);
        if last {
            return;
        }
    }
}

/// Collects the responses of a POST answered with JSON; anything else the handlers sent on the
/// way goes to the session's standalone stream.
async fn json_replies(
    mut first: Option<Outgoing>,
    mut replies: Outbox,
    pending: &mut HashSet<RequestId>,
    batch: bool,
    http_session: Option<&HttpSession>,
) -> Response {
    let mut answered = Vec::new();
    // A lone request's refusal (429, 503) is the response's status.
    let mut refusal = None;
    while !pending.is_empty() {
        let reply = match first.take() {
            Some(reply) => reply,
            None => match replies.recv().await {
                Some(reply) => reply,
                None => break,
            },
        };
        let answers = Answer::of(&reply, pending).settle(pending);
        let refused = reply.refused();
        let Some(bytes) = reply.into_bytes() else {
            continue;
        };
        if answers {
            refusal = refused;
            answered.push(bytes);
        } else if let Some(http_session) = http_session {
            shared::to_standalone(http_session, bytes);
        }
    }
    // Answers that can no longer come (their queue ended) are errors, never an empty body.
    if !pending.is_empty() {
        tracing::error!(
            lost = pending.len(),
            "a POST's answers were lost before its response"
        );
        let error = ErrorObject::internal("the answer was lost; send the request again");
        answered.extend(pending.drain().map(|id| encode_error(Some(&id), &error)));
    }
    if batch && answered.len() > 1 {
        return json_response(StatusCode::OK, encode_batch(&answered));
    }
    let body = answered.into_iter().next().unwrap_or_default();
    match refusal {
        Some(refusal) if !batch => refused_response(refusal, body),
        _ => json_response(StatusCode::OK, body),
    }
}

async fn handle_get(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let headers = parts.headers;
    let principal = parts.extensions.get::<Arc<Principal>>();
    if let Err(response) = check_host(state.options(), &headers, &parts.uri) {
        return response;
    }
    if state.options().stateless || is_stateless_era(&headers) {
        return modern::method_not_allowed();
    }
    if !accepts(&headers).1 {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            "`Accept` must list `text/event-stream`",
        );
    }
    if let Err(response) = header_version(&headers, None) {
        return response;
    }
    let client = state.client_of(&parts.extensions, &headers, principal.map(Arc::as_ref));
    let session = match state
        .session(&headers, principal.map(Arc::as_ref), client.as_ref(), None)
        .await
    {
        Ok(session) => session,
        Err(response) => return response,
    };
    // Every GET is a stream, within its client's share of them.
    let open = match state.open_stream(client.as_ref()) {
        Ok(open) => open,
        Err(response) => return response,
    };
    let last = headers.get(&LAST_EVENT_ID).and_then(|v| v.to_str().ok());
    let last = match last.map(parse_event_id) {
        Some(None) => {
            return error_response(StatusCode::BAD_REQUEST, "malformed `Last-Event-ID`");
        }
        Some(Some(last)) => Some(last),
        None => None,
    };
    // Shared: the standalone stream is the store's log, on whichever replica the GET lands.
    if let Some(store) = state.core.shared()
        && last.is_none_or(|(stream, _)| stream == 0)
    {
        let after = match last {
            Some((_, sequence)) => sequence,
            // A new GET gets what comes from now on.
            None => match store.events_after(&session.id, 0).await {
                Ok(events) => events.last().map_or(0, |(sequence, _)| *sequence),
                Err(error) => return shared::store_failed(None, &error),
            },
        };
        let follow = shared::Follow {
            session: &session,
            stream: 0,
            after,
            open,
        };
        return shared::follow(&state, store, follow).await;
    }
    if let Some((stream, sequence)) = last {
        let Some(stream) = session.stream(stream) else {
            // Shared: a POST's stream another replica serves resumes from the store's copy.
            if let Some(store) = state.core.shared() {
                let follow = shared::Follow {
                    session: &session,
                    stream,
                    after: sequence,
                    open,
                };
                return shared::follow(&state, store, follow).await;
            }
            return error_response(StatusCode::NOT_FOUND, "no stream for that `Last-Event-ID`");
        };
        return sse_response(stream.attach(Some(sequence)), open);
    }
    if session.standalone.is_attached() {
        return error_response(
            StatusCode::CONFLICT,
            "this session already has its standalone stream open",
        );
    }
    sse_response(session.standalone.attach(None), open)
}

async fn handle_delete(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let headers = parts.headers;
    let principal = parts.extensions.get::<Arc<Principal>>();
    if let Err(response) = check_host(state.options(), &headers, &parts.uri) {
        return response;
    }
    if state.options().stateless || is_stateless_era(&headers) {
        return modern::method_not_allowed();
    }
    let client = state.client_of(&parts.extensions, &headers, principal.map(Arc::as_ref));
    let session = match state
        .session(&headers, principal.map(Arc::as_ref), client.as_ref(), None)
        .await
    {
        Ok(session) => session,
        Err(response) => return response,
    };
    if let Some(store) = state.core.shared()
        && let Err(error) = store.remove_session(&session.id).await
    {
        return shared::store_failed(None, &error);
    }
    state
        .sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&session.id);
    session
        .session
        .shutdown(session.created, Duration::ZERO, false)
        .await;
    // The session is over on every replica: what it held goes (running tasks stop).
    session.session.release_tasks().await;
    StatusCode::OK.into_response()
}

/// The Streamable HTTP entry points: axum's `serve(listener, router)` shape, on the built server.
impl McpService {
    /// Serves Streamable HTTP on `addr` until Ctrl-C (SIGINT) or SIGTERM, then lets requests in
    /// flight finish. Bind `127.0.0.1` for a local server: on a non-loopback address the
    /// DNS-rebinding check is off unless
    /// [`Server::allowed_hosts`](crate::Server::allowed_hosts) was set.
    pub async fn serve_http(&self, addr: impl tokio::net::ToSocketAddrs) -> crate::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener, shutdown_signal()).await
    }

    /// Serves Streamable HTTP on a bound listener until `shutdown` completes. A server that
    /// proxies upstreams first waits until it is [`ready`](Self::ready).
    pub async fn serve_http_on(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> crate::Result<()> {
        let local = listener.local_addr()?;
        #[cfg(feature = "redis")]
        self.core.connect_shared().await?;
        let mut options = self.core.options.http.clone();
        if !options.hosts_configured && !is_loopback(&local) {
            options.hosts = HostPolicy::Any;
        }
        let limits = serve::Limits {
            max_connections: options.max_connections,
            client_share: self.core.options.client_share,
            header_read_timeout: options.header_read_timeout,
            grace: self.core.options.shutdown_grace,
            trusted_proxies: options.trusted_proxies.clone(),
        };
        let path = options.path.clone();
        let (router, state) = router(Arc::clone(&self.core), options);
        // Upstreams proxied: their first connections before the first request.
        self.ready().await;
        let core = Arc::clone(&self.core);
        // The line a user waits for: where to point a client.
        tracing::info!("listening on http://{local}{path}");
        let shutdown = async move {
            shutdown.await;
            // Open listen streams end with their final result, so the server can drain.
            core.close();
        };
        serve::serve(router, &state.clients, listener, shutdown, limits).await?;
        Ok(())
    }

    /// Connects the Redis store set with `Server::redis` (the `redis` feature); `serve_http`
    /// does it by itself, a router from [`into_router`](Self::into_router) needs it called
    /// first. An error when Redis cannot be reached.
    #[cfg(feature = "redis")]
    pub async fn connect_redis(&self) -> crate::Result<()> {
        self.core.connect_shared().await
    }

    /// The Streamable HTTP endpoint as an axum [`Router`](axum::Router), to mount in an existing
    /// app (`app.merge(service.into_router())` or `nest`).
    pub fn into_router(&self) -> axum::Router {
        router(Arc::clone(&self.core), self.core.options.http.clone()).0
    }
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    let signal = tokio::select! {
        () = ctrl_c => "Ctrl-C (SIGINT)",
        () = terminate => "SIGTERM",
    };
    tracing::info!("{signal} received: shutting down");
}

/// The endpoint as an axum router, at the configured path, and the state it serves.
pub(crate) fn router(core: Arc<Core>, options: HttpOptions) -> (Router, Arc<HttpState>) {
    let path = options.path.clone();
    let card = options
        .server_card
        .as_ref()
        .and_then(|card| card::routes(&core, card, &path));
    // Often enough for the shorter of the two timeouts a session can expire by.
    let idle = options.session_idle.min(options.initialize_timeout);
    let state = HttpState::new(core, options);
    // Expire idle sessions; the task ends with the router.
    let weak = Arc::downgrade(&state);
    tokio::spawn(async move {
        let period = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
        loop {
            tokio::time::sleep(period).await;
            match weak.upgrade() {
                Some(state) => state.expire(),
                None => return,
            }
        }
    });
    let mut router = Router::new().route(
        &path,
        post(handle_post).get(handle_get).delete(handle_delete),
    );
    if state.options.legacy_sse {
        router = router
            .route(&state.options.legacy_sse_path, get(legacy::handle_sse))
            .route(
                &state.options.legacy_messages_path,
                post(legacy::handle_message),
            );
    }
    #[cfg(feature = "oauth")]
    let auth = state.auth.clone();
    #[cfg(feature = "prometheus")]
    let metrics = state
        .core
        .telemetry
        .as_ref()
        .is_some_and(|t| t.metrics.is_some())
        .then(|| crate::server::telemetry::metrics_router(Arc::clone(&state.core)));
    let mut router = router.with_state(Arc::clone(&state));
    #[cfg(feature = "oauth")]
    if let Some(auth) = auth {
        // Every MCP route needs a token; the metadata routes, added after, do not.
        router = router.route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&auth),
            auth::require_token,
        ));
        let mut metadata = Router::new().route(auth::WELL_KNOWN, get(auth::metadata));
        if auth.metadata_path != auth::WELL_KNOWN {
            metadata = metadata.route(&auth.metadata_path, get(auth::metadata));
        }
        router = router.merge(metadata.with_state(auth));
    }
    // Public like the OAuth metadata: merged after the token layer.
    if let Some(card) = card {
        router = router.merge(card);
    }
    // Metrics are for the operator's scraper: outside OAuth, as the metadata is.
    #[cfg(feature = "prometheus")]
    if let Some(metrics) = metrics {
        router = router.merge(metrics);
    }
    (router, state)
}

/// Whether binding `addr` makes a local server, for the default DNS-rebinding policy.
pub(crate) fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An origin-form request target, as most requests have.
    fn path() -> axum::http::Uri {
        axum::http::Uri::from_static("/mcp")
    }

    #[test]
    fn accept_is_read_as_a_list_of_media_types() {
        let read = |value: &'static [u8]| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, HeaderValue::from_bytes(value).unwrap());
            accepts(&headers)
        };
        assert_eq!(accepts(&HeaderMap::new()), (true, false));
        assert_eq!(read(b"application/json, text/event-stream"), (true, true));
        assert_eq!(
            read(b"\t Application/JSON ;q=0.9 ,TEXT/event-stream;x=1"),
            (true, true)
        );
        assert_eq!(read(b"*/*"), (true, false));
        assert_eq!(read(b"application/*;q=1"), (true, false));
        assert_eq!(read(b"text/event-stream"), (false, true));
        assert_eq!(read(b"text/html, application/jsonx, ,;"), (false, false));
        assert_eq!(read(b""), (false, false));
        // Not visible ASCII: read as no `Accept` at all, as before.
        assert_eq!(read(b"text/event-stream, \xe9"), (true, false));
    }

    #[test]
    fn a_json_response_has_its_status_type_and_body() {
        let response = json_response(StatusCode::ACCEPTED, b"{}".to_vec());
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        let types: Vec<_> = response
            .headers()
            .get_all(header::CONTENT_TYPE)
            .iter()
            .collect();
        assert_eq!(types, ["application/json"]);
        assert_eq!(response.headers().len(), 1);
        assert_eq!(
            axum::body::HttpBody::size_hint(response.body()).exact(),
            Some(2)
        );
    }

    #[test]
    fn hosts_are_compared_without_ports() {
        assert_eq!(host_name("127.0.0.1:3000"), Some("127.0.0.1"));
        assert_eq!(host_name("localhost"), Some("localhost"));
        assert_eq!(host_name("[::1]:80"), Some("[::1]"));
        assert_eq!(host_name("[::1]"), Some("[::1]"));
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("evil.example.com"));
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_err());
        headers.insert(header::HOST, HeaderValue::from_static("localhost:8080"));
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_ok());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example.com"),
        );
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_err());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_ok());
    }

    #[test]
    fn malformed_hosts_and_origins_are_refused_without_panicking() {
        for bad in [
            "[", "[::1", "[::1]x", "[::1]:8x", "", ":80", "a:b", "\u{e9}:[", "[\u{e9}",
        ] {
            assert_eq!(host_name(bad), None, "{bad:?}");
        }
        let status =
            |headers: &HeaderMap| match check_host(&HttpOptions::default(), headers, &path()) {
                Ok(()) => StatusCode::OK,
                Err(response) => response.status(),
            };
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("["));
        assert_eq!(status(&headers), StatusCode::FORBIDDEN);
        headers.insert(header::HOST, HeaderValue::from_static("localhost"));
        for origin in ["http://[", "null", "http://", "http://[::1"] {
            headers.insert(header::ORIGIN, HeaderValue::from_static(origin));
            assert_eq!(status(&headers), StatusCode::FORBIDDEN, "{origin}");
        }
        headers.remove(header::ORIGIN);
        headers.append(header::HOST, HeaderValue::from_static("evil.example.com"));
        assert_eq!(status(&headers), StatusCode::BAD_REQUEST);
        // `Origin: null` is only let through when any host is.
        let any = HttpOptions {
            hosts: HostPolicy::Any,
            ..HttpOptions::default()
        };
        let mut headers = HeaderMap::new();
        headers.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(check_host(&any, &headers, &path()).is_ok());
    }

    #[test]
    fn an_origin_needs_a_scheme_and_an_absolute_target_an_allowed_host() {
        let options = HttpOptions::default();
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("localhost"));
        for origin in ["localhost", "localhost:3000", "://localhost", "127.0.0.1"] {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
            let refused = check_host(&options, &headers, &path()).unwrap_err();
            assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{origin}");
        }
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://localhost:3000"),
        );
        assert!(check_host(&options, &headers, &path()).is_ok());
        headers.remove(header::ORIGIN);
        // `POST http://evil.example/mcp` with `Host: localhost`: the target's host counts too.
        let evil = axum::http::Uri::from_static("http://evil.example/mcp");
        let refused = check_host(&options, &headers, &evil).unwrap_err();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        let local = axum::http::Uri::from_static("http://127.0.0.1:8000/mcp");
        assert!(check_host(&options, &headers, &local).is_ok());
    }

    #[test]
    fn two_session_ids_are_refused() {
        let mut headers = HeaderMap::new();
        assert_eq!(
            session_header(&headers, None).unwrap_err().status(),
            StatusCode::BAD_REQUEST
        );
        headers.append(&MCP_SESSION_ID, HeaderValue::from_static("a"));
        assert_eq!(session_header(&headers, None).ok(), Some("a"));
        headers.append(&MCP_SESSION_ID, HeaderValue::from_static("b"));
        assert_eq!(
            session_header(&headers, None).unwrap_err().status(),
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn a_post_is_answered_by_its_own_replies_only() {
        use crate::protocol::encode_batch;
        let mine = RequestId::Number(7);
        let pending = HashSet::from([mine.clone()]);
        let reply = |id: RequestId| Outgoing::reply(id, b"{}".to_vec());
        assert_eq!(
            Answer::of(&reply(mine.clone()), &pending),
            Answer::One(mine.clone())
        );
        // A refusal (429, 503) answers its request as any reply does.
        let refusal = crate::protocol::Refusal {
            status: 429,
            retry_after: Some(1),
        };
        let refused = |id: RequestId| Outgoing::refusal(id, b"{}".to_vec(), Some(refusal));
        assert_eq!(
            Answer::of(&refused(mine.clone()), &pending),
            Answer::One(mine)
        );
        // Another POST's request with the same id as a string is not this one.
        let other = RequestId::String("7".into());
        assert_eq!(Answer::of(&reply(other.clone()), &pending), Answer::Not);
        assert_eq!(Answer::of(&refused(other), &pending), Answer::Not);
        let error = ErrorObject::invalid_request("no");
        assert_eq!(
            Answer::of(&Outgoing::error(None, &error), &pending),
            Answer::All
        );
        let batch = Outgoing::Batch(encode_batch::<Vec<u8>>(&[]));
        assert_eq!(Answer::of(&batch, &pending), Answer::All);
        let note = Outgoing::Message(b"{}".to_vec());
        assert_eq!(Answer::of(&note, &pending), Answer::Not);
        assert_eq!(Answer::of(&Outgoing::CloseStream, &pending), Answer::Not);
        let mut pending = pending;
        assert!(Answer::All.settle(&mut pending));
        assert!(pending.is_empty());
    }

    #[test]
    fn accept_is_a_list() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream, application/json;q=0.9"),
        );
        assert_eq!(accepts(&headers), (true, true));
        headers.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
        assert_eq!(accepts(&headers), (false, false));
    }
}
