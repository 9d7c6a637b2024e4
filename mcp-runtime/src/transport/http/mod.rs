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
use self::client::Connection;
mod deadline;
mod guard;
mod health;
mod legacy;
mod modern;
mod post;
mod serve;
mod shared;
mod stream;
#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub use self::unix::UnixSocket;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use self::body::{CONTROL_LARGEST, CONTROL_TOTAL};
use self::guard::{Seen, accepts, check_host, header_version, is_stateless_era, session_header};
use self::post::{handle_post, pump};
use self::stream::{Bounds, EventStream, Presence, parse_event_id};
use crate::context::Principal;
use crate::protocol::{ErrorObject, Outgoing, RequestId, encode_error};
use crate::server::{
    Budget, Charge, Client, Clients, Core, FastMap, HostPolicy, HttpOptions, Kind, McpService,
    Notifier, Opener, Outbox, Overflow, Session, Sink, Window, channel_within, share_of,
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
        store: Arc<dyn crate::server::store::SharedStore>,
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
    saved: Mutex<Option<Box<crate::server::store::SessionRecord>>>,
    /// The version of the stored record last applied to `session` (0: none, or uncached).
    applied: AtomicU64,
    /// When this replica last wrote the record (its expiry refreshed).
    written: Mutex<Option<Instant>>,
    /// With a shared store: where its POST streams are copied (store, events kept, expiry).
    mirror: Option<(Arc<dyn crate::server::store::SharedStore>, usize, Duration)>,
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
    /// How many sessions have been taken out of `sessions` (only ever through
    /// [`forget`](Self::forget)): a connection's remembered session is good while it stands.
    sessions_removed: AtomicU64,
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
    /// `/metrics`' text, rendered once for every scrape that comes meanwhile.
    #[cfg(feature = "prometheus")]
    metrics_text: crate::telemetry::SharedRender,
    /// Set when a shutdown starts, for the readiness probe.
    draining: Arc<std::sync::atomic::AtomicBool>,
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
            #[cfg(feature = "prometheus")]
            metrics_text: Default::default(),
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
            sessions_removed: AtomicU64::new(0),
            legacy: Mutex::new(HashMap::new()),
            draining: Arc::default(),
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

    /// A POST's queue for what its requests send, as [`channel`](Self::channel) makes it: the
    /// one `peer`'s last POST answered through when it left one for the same client, else a new
    /// one.
    fn post_channel(
        &self,
        client: Option<&Arc<Client>>,
        peer: Option<&client::Peer>,
    ) -> (Sink, Outbox) {
        let spare = peer.and_then(|peer| {
            peer.spare_replies
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
        });
        match spare {
            // The same client's share, by identity (`None`: no share for either).
            Some((sink, outbox)) if outbox.client().map(Arc::as_ptr) == client.map(Arc::as_ptr) => {
                (sink, outbox)
            }
            _ => self.channel(client),
        }
    }

    /// Leaves a POST's queue, answered, with its connection for the next POST, when no sink
    /// of it is held any more and nothing is in it: then nothing can tell it from a new one.
    /// Otherwise it is dropped, and what still holds a sink sees its stream gone, as before.
    fn keep_channel(peer: Option<&client::Peer>, outbox: Outbox) {
        if let Some(peer) = peer
            && let Some(sink) = outbox.reopen()
        {
            *peer.spare_replies.lock().unwrap_or_else(|e| e.into_inner()) = Some((sink, outbox));
        }
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
                    runtime.spawn(pump(None, outbox, Arc::clone(stream), HashSet::new(), None));
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

    /// [`session`](Self::session) when no shared store has to be asked: `None` when one does.
    /// A connection (`peer`) remembers the session its last request named: most clients send
    /// every request of a session on one connection, and the next is then given it again
    /// without a lookup in the map every connection shares, while no session has been removed.
    fn session_here(
        &self,
        headers: &Seen<'_>,
        principal: Option<&Principal>,
        peer: Option<&client::Peer>,
        request: Option<&RequestId>,
    ) -> Option<Result<Arc<HttpSession>, Response>> {
        if self.core.shared().is_some() {
            return None;
        }
        let removed = self.sessions_removed.load(Ordering::Acquire);
        if let Some(peer) = peer
            && let Some(session) = remembered(peer, removed, headers, principal)
        {
            session.touch();
            return Some(Ok(session));
        }
        let found = self
            .local_session(headers, principal, request)
            .and_then(|named| named.here_or_unknown(request));
        if let (Some(peer), Ok(session)) = (peer, &found) {
            *peer.last_session.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((removed, Arc::downgrade(session)));
        }
        Some(found)
    }

    /// Takes the session `id` out of `sessions` (locked by the caller), counted so that no
    /// connection is given it again.
    fn forget(
        &self,
        sessions: &mut FastMap<String, Arc<HttpSession>>,
        id: &str,
    ) -> Option<Arc<HttpSession>> {
        let removed = sessions.remove(id);
        if removed.is_some() {
            self.sessions_removed.fetch_add(1, Ordering::AcqRel);
        }
        removed
    }

    /// The session a request names, as this replica knows it.
    fn local_session<'h>(
        &self,
        headers: &Seen<'h>,
        principal: Option<&Principal>,
        request: Option<&RequestId>,
    ) -> Result<Named<'h>, Response> {
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
        Ok(Named {
            id,
            owner,
            here: session,
        })
    }

    /// The session a request names in `Mcp-Session-Id`, or the refusal answering `request`
    /// (the id of the request in the body, when there is one): 400 without the header, 404 for
    /// a session unknown, ended or another principal's, 503 when the shared store fails.
    async fn session(
        &self,
        headers: &Seen<'_>,
        principal: Option<&Principal>,
        client: Option<&Arc<Client>>,
        request: Option<&RequestId>,
    ) -> Result<Arc<HttpSession>, Response> {
        let named = self.local_session(headers, principal, request)?;
        let Some(store) = self.core.shared() else {
            return named.here_or_unknown(request);
        };
        let Named {
            id,
            owner,
            here: session,
        } = named;
        let unknown = || unknown_session(request);
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
                self.forget(
                    &mut self.sessions.lock().unwrap_or_else(|e| e.into_inner()),
                    id,
                );
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
        let to_log = |store: &Arc<dyn crate::server::store::SharedStore>| Drain::Store {
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
                .filter_map(|id| self.forget(&mut sessions, &id))
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
#[cold]
fn error_response(status: StatusCode, message: &str) -> Response {
    error_response_to(None, status, message)
}

/// A refusal as an HTTP response whose JSON-RPC error answers `id` (`null` when `None`): for what
/// is refused once the body was read and its request's id is known. The code follows the status
/// (-32001 for 404, the session not found; -32000 otherwise).
#[cold]
fn error_response_to(id: Option<&RequestId>, status: StatusCode, message: &str) -> Response {
    let code = match status {
        StatusCode::NOT_FOUND => -32001,
        _ => -32000,
    };
    error_response_code(id, status, code, message)
}

/// A JSON-RPC error with its code, answering `id` (`null` when `None`), as an HTTP response.
#[cold]
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

/// The session a request names in `Mcp-Session-Id`, as one replica knows it.
struct Named<'h> {
    id: &'h str,
    /// The principal's binding key: a session is bound to the principal that opened it.
    owner: Option<String>,
    /// This replica's copy, if it has one the principal may use.
    here: Option<Arc<HttpSession>>,
}

impl Named<'_> {
    /// Without a shared store: this replica's copy, now touched, or 404.
    fn here_or_unknown(self, request: Option<&RequestId>) -> Result<Arc<HttpSession>, Response> {
        match self.here {
            Some(session) => {
                session.touch();
                Ok(session)
            }
            None => Err(unknown_session(request)),
        }
    }
}

/// The session `peer`'s last request named, when this request names it too (by the same bytes)
/// as the same principal, and no session has been removed since it was found (`removed`, the
/// count now): it is still in the map, as the lookup would find it.
fn remembered(
    peer: &client::Peer,
    removed: u64,
    headers: &Seen<'_>,
    principal: Option<&Principal>,
) -> Option<Arc<HttpSession>> {
    let named = headers.session_bytes()?;
    let session = match &*peer.last_session.lock().unwrap_or_else(|e| e.into_inner()) {
        Some((at, session)) if *at == removed => session.upgrade()?,
        _ => return None,
    };
    let owner = principal.map(Principal::binding_key);
    (named == session.id.as_bytes() && session.owner == owner).then_some(session)
}

/// 404 for a session unknown, ended or another principal's, answering `request`.
fn unknown_session(request: Option<&RequestId>) -> Response {
    error_response_to(
        request,
        StatusCode::NOT_FOUND,
        "unknown or ended session: send `initialize` again",
    )
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
fn sse_response(
    (receiver, presence): (Outbox<Bytes>, Option<Presence>),
    open: Option<Charge>,
) -> Response {
    // The stream's presence and its place in the client's share go with the response.
    let held = (open, presence);
    let stream =
        futures_util::stream::unfold((receiver, held), |(mut receiver, held)| async move {
            receiver
                .recv()
                .await
                .map(|bytes| (Ok::<_, Infallible>(bytes), (receiver, held)))
        });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

#[cfg(all(feature = "fuzzing", feature = "oauth"))]
pub use self::auth::fuzz_dpop;
#[cfg(feature = "fuzzing")]
pub use self::guard::fuzz_guard;

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

async fn handle_get(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let headers = Seen::of(&parts.headers);
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
    let client = state.client_of(
        Connection::of(&parts.extensions),
        headers.all(),
        principal.map(Arc::as_ref),
    );
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
    let last = headers
        .all()
        .get(&LAST_EVENT_ID)
        .and_then(|v| v.to_str().ok());
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
        let (live, presence) = stream.attach(Some(sequence));
        return sse_response((live, Some(presence)), open);
    }
    if session.standalone.is_attached() {
        return error_response(
            StatusCode::CONFLICT,
            "this session already has its standalone stream open",
        );
    }
    let (live, presence) = session.standalone.attach(None);
    sse_response((live, Some(presence)), open)
}

async fn handle_delete(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let headers = Seen::of(&parts.headers);
    let principal = parts.extensions.get::<Arc<Principal>>();
    if let Err(response) = check_host(state.options(), &headers, &parts.uri) {
        return response;
    }
    if state.options().stateless || is_stateless_era(&headers) {
        return modern::method_not_allowed();
    }
    let client = state.client_of(
        Connection::of(&parts.extensions),
        headers.all(),
        principal.map(Arc::as_ref),
    );
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
    state.forget(
        &mut state.sessions.lock().unwrap_or_else(|e| e.into_inner()),
        &session.id,
    );
    session
        .session
        .shutdown(session.created, Duration::ZERO, false)
        .await;
    // The session is over on every replica: what it held goes (running tasks stop).
    session.session.release_tasks().await;
    StatusCode::OK.into_response()
}

/// Whether `MCP_RUNTIME_TRANSPORT=stdio` asks the HTTP entry points to serve stdio.
fn stdio_instead() -> bool {
    std::env::var_os("MCP_RUNTIME_TRANSPORT").is_some_and(|v| v == "stdio")
}

/// The Streamable HTTP entry points: axum's `serve(listener, router)` shape, on the built server.
impl McpService {
    /// Serves Streamable HTTP on `addr` until Ctrl-C (SIGINT) or SIGTERM, then lets requests in
    /// flight finish. Bind `127.0.0.1` for a local server: on a non-loopback address the
    /// DNS-rebinding check is off unless
    /// [`Server::allowed_hosts`](crate::Server::allowed_hosts) was set.
    ///
    /// With the environment variable `MCP_RUNTIME_TRANSPORT=stdio` it serves stdin and stdout
    /// instead ([`serve_stdio`](Self::serve_stdio)) and binds nothing: how `cargo mcp dev` and
    /// `cargo mcp inspect` run a server that serves HTTP as a child process.
    pub async fn serve_http(&self, addr: impl tokio::net::ToSocketAddrs) -> crate::Result<()> {
        if stdio_instead() {
            return self.serve_stdio().await;
        }
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener, shutdown_signal()).await
    }

    /// Serves Streamable HTTP on a bound listener until `shutdown` completes. A server that
    /// proxies upstreams first waits until it is [`ready`](Self::ready). With
    /// `MCP_RUNTIME_TRANSPORT=stdio`, serves stdin and stdout instead, as
    /// [`serve_http`](Self::serve_http) does.
    pub async fn serve_http_on(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> crate::Result<()> {
        if stdio_instead() {
            drop(listener);
            return self.serve_stdio().await;
        }
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
        // Upstreams proxied: their first connections before the first request (said in the log
        // when they take time, so the wait for the next line is not a mystery).
        self.ready_logged(&format!("listening on http://{local}{path}"))
            .await;
        let core = Arc::clone(&self.core);
        let drain_delay = state.options.deploy.drain_delay;
        // The line a user waits for: where to point a client.
        tracing::info!("listening on http://{local}{path}");
        let draining = Arc::clone(&state.draining);
        let shutdown = async move {
            shutdown.await;
            // The readiness probe says 503 from here.
            health::drain(&draining, drain_delay).await;
            // Open listen streams end with their final result, so the server can drain.
            core.close();
        };
        // The endpoint's POSTs skip the router unless a layer guards the endpoint.
        #[cfg(feature = "oauth")]
        let guarded = state.auth.is_some();
        #[cfg(not(feature = "oauth"))]
        let guarded = false;
        let endpoint = (!guarded).then(|| serve::Endpoint {
            path: state.options.path.clone(),
            state: Arc::clone(&state),
        });
        serve::serve(router, endpoint, &state.clients, listener, shutdown, limits).await?;
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
    let metrics = crate::telemetry::metrics_of(&state.core)
        .is_some()
        .then(|| {
            Router::new()
                .route("/metrics", get(handle_metrics))
                .with_state(Arc::clone(&state))
        });
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
    // The probes and the application's routes: outside OAuth too (`Server::build` refused
    // any that would collide).
    let deploy = &state.options.deploy;
    router = router.merge(health::routes(
        &state.core,
        &state.draining,
        deploy.health_path.as_deref(),
        deploy.ready_path.as_deref(),
    ));
    for (path, route) in &deploy.routes {
        router = router.route(path, route.clone());
    }
    (router, state)
}

/// How much of the metrics text one write takes: the connection asks for the next piece only
/// once its buffer has room, so the answer's charge lasts as long as it is being sent.
#[cfg(feature = "prometheus")]
const METRICS_PIECE: usize = 64 * 1024;

/// `GET /metrics`: the text every scrape shares (rendered at most once a second), charged while
/// it is sent to the client's share of the unread-bytes budget (`stream_buffer_total`), as an
/// SSE stream's unread bytes are; 503 with `Retry-After` when the share has no room, so that a
/// client pipelining scrapes it never reads holds at most its share, and the others are
/// served.
#[cfg(feature = "prometheus")]
async fn handle_metrics(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let Some(metrics) = crate::telemetry::metrics_of(&state.core) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let text = state.metrics_text.text(metrics).await;
    let client = state.client_of(
        Connection::of(request.extensions()),
        request.headers(),
        None,
    );
    let Some(charge) = state.unread.account(client.as_ref()).charge(text.len()) else {
        tracing::warn!(
            client = ?client.as_ref().map(|c| c.key()),
            bytes = text.len(),
            "a client holds its share of unread bytes: a `/metrics` scrape gets 503"
        );
        let mut response = error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "this client has as many unread bytes as one client may: read them first",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    };
    // The shared text in pieces (no copy), the charge held until the last is taken.
    let pieces =
        futures_util::stream::unfold((text, Some(charge)), |(mut text, charge)| async move {
            if text.is_empty() {
                return None;
            }
            let piece = text.split_to(text.len().min(METRICS_PIECE));
            Some((Ok::<_, Infallible>(piece), (text, charge)))
        });
    Response::builder()
        .status(StatusCode::OK)
        .header(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )
        .body(Body::from_stream(pieces))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Whether binding `addr` makes a local server, for the default DNS-rebinding policy.
pub(crate) fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
