//! The deprecated HTTP+SSE transport of 2024-11-05, for clients that speak nothing newer
//! (`Server::legacy_sse`; off by default).
//!
//! - **GET** on the SSE path (`/sse`) opens a session and its one event stream. The first event
//!   is `event: endpoint`, whose data is the URI the client POSTs its messages to: the messages
//!   path with the session's id, `/messages?sessionId=<id>`. Every message for the client (the
//!   responses, notifications and requests of the server) follows as an `event: message`;
//!   a `: keep-alive` comment goes out when nothing else has for a while.
//! - **POST** on the messages path carries one JSON-RPC message (or batch) and is answered
//!   `202 Accepted` with no result in it: the answers go out on the event stream. A missing
//!   `sessionId` is 400, an unknown or ended one 404; a body that is not JSON is 400 with the
//!   parse error.
//! - **The session** ends when its stream does: when the client closes the GET, when it stops
//!   reading and the stream's queue overflows, when it stays idle past the idle timeout (POSTs
//!   are what count), when it sends no `initialize` within the initialize timeout, and when the
//!   server shuts down. Its requests are cancelled then: their answers could go nowhere.
//! - The other routes' guards apply: the `Host`/`Origin` check, the message size limit, the
//!   in-flight window (a request that finds it full is answered on the stream with a -32000
//!   error), and `max_sessions`, which counts these sessions with the Streamable HTTP ones.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::body::read_post_body;
use super::client::Connection;
use super::guard::{Seen, check_host, check_json_content_type};
use super::stream::named_event;
use super::{HttpState, error_response, session_id};
use crate::context::Principal;
use crate::protocol::{
    ErrorObject, Incoming, Message, Outgoing, RequestId, encode_batch, encode_error,
};
use crate::server::{Charge, Outbox, Session, Sink, Window};

/// How long the stream may stay silent before a keep-alive comment goes out, so proxies and
/// clients with read timeouts keep the connection, and a client that went away is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One session of the legacy transport.
pub(super) struct LegacySession {
    session: Arc<Session>,
    /// Where its messages' answers go: the queue its event stream reads.
    sink: Sink,
    /// The requests running.
    window: Arc<Window>,
    /// When the client last POSTed.
    last_seen: Mutex<Instant>,
    /// When its stream opened: without `initialize` by the initialize timeout after this, it
    /// ends.
    created: Instant,
    /// Set to end its event stream (expiry).
    end: tokio::sync::watch::Sender<bool>,
    /// Who opened it (OAuth): only a token for the same principal may POST to it.
    owner: Option<String>,
    /// Its place in its client's share of sessions.
    _counted: Option<Charge>,
}

impl LegacySession {
    fn touch(&self) {
        *self.last_seen.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Whether it has been idle past `idle`, or uninitialized past `uninitialized`, at `now`.
    pub(super) fn expired(&self, now: Instant, idle: Duration, uninitialized: Duration) -> bool {
        let last = *self.last_seen.lock().unwrap_or_else(|e| e.into_inner());
        now.duration_since(last) > idle
            || (!self
                .session
                .initialized
                .load(std::sync::atomic::Ordering::Acquire)
                && now.duration_since(self.created) > uninitialized)
    }

    /// Ends its event stream.
    pub(super) fn end(&self) {
        self.end.send_replace(true);
    }

    /// Ends the protocol session: its requests are cancelled, its tasks released.
    pub(super) async fn shutdown(&self) {
        self.session
            .shutdown(self.created, Duration::ZERO, false)
            .await;
        self.session.release_tasks().await;
    }
}

/// Removes the session from the server and ends it, when its event stream is dropped however
/// it ended (closed by the client, overflowed, expired, shut down).
struct Ended {
    state: Arc<HttpState>,
    id: String,
}

impl Drop for Ended {
    fn drop(&mut self) {
        let removed = self
            .state
            .legacy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        if let Some(removed) = removed
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { removed.shutdown().await });
        }
    }
}

/// GET on the SSE path: a new session, and its event stream.
pub(super) async fn handle_sse(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let options = state.options();
    if let Err(response) = check_host(options, &Seen::of(request.headers()), request.uri()) {
        return response;
    }
    let principal = request.extensions().get::<Arc<Principal>>();
    let client = state.client_of(
        Connection::of(request.extensions()),
        request.headers(),
        principal.map(Arc::as_ref),
    );
    // The session's stream, and the session, within its client's shares.
    let open = match state.open_stream(client.as_ref()) {
        Ok(open) => open,
        Err(response) => return response,
    };
    let counted = match state.count_session(client.as_ref(), None) {
        Ok(counted) => counted,
        Err(response) => return response,
    };
    let (sink, outbox) = state.channel(client.as_ref());
    let (end, ended) = tokio::sync::watch::channel(false);
    let id = session_id();
    {
        // In the order `initialize` takes them: Streamable HTTP's sessions, then these.
        let sessions = state.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let mut legacy = state.legacy.lock().unwrap_or_else(|e| e.into_inner());
        if sessions.len() + legacy.len() >= options.max_sessions {
            return state.retry_later(None, "too many sessions; try again later");
        }
        let session = Session::new(
            Arc::clone(&state.core),
            crate::server::Transport::LegacySse,
            sink.clone().into_queue().into(),
            client,
        );
        let _ = session.trace_name.set(id.clone());
        legacy.insert(
            id.clone(),
            Arc::new(LegacySession {
                session,
                sink,
                window: Window::new(state.core.options.max_in_flight),
                last_seen: Mutex::new(Instant::now()),
                created: Instant::now(),
                end,
                owner: principal.map(|p| p.binding_key()),
                _counted: counted,
            }),
        );
    }
    let endpoint = format!(
        "{}{}?sessionId={id}",
        nest_prefix(&request),
        options.legacy_messages_path
    );
    let first = named_event("endpoint", endpoint.as_bytes());
    let ended_guard = Ended {
        state: Arc::clone(&state),
        id,
    };
    let live = Live {
        outbox,
        ended,
        core: Arc::clone(&state.core),
        _guard: (ended_guard, open),
    };
    let rest = futures_util::stream::unfold(live, |mut live| async move {
        live.next()
            .await
            .map(|bytes| (Ok::<_, Infallible>(bytes), live))
    });
    let stream = futures_util::StreamExt::chain(
        futures_util::stream::once(async move { Ok::<_, Infallible>(first) }),
        rest,
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The prefix the router is nested under (`Router::nest`), empty when it is not: the part of
/// the path the client asked for that the route did not see.
fn nest_prefix(request: &Request) -> &str {
    let seen = request.uri().path();
    request
        .extensions()
        .get::<OriginalUri>()
        .and_then(|original| original.path().strip_suffix(seen))
        .unwrap_or("")
}

/// The live part of a session's event stream.
struct Live {
    outbox: Outbox,
    ended: tokio::sync::watch::Receiver<bool>,
    core: Arc<crate::server::Core>,
    /// Ends the session when the stream is dropped, and gives its place in its client's share
    /// of streams back.
    _guard: (Ended, Option<Charge>),
}

impl Live {
    /// The next bytes to write: a message, or a keep-alive comment after a silence; `None`
    /// ends the stream.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            let message = tokio::select! {
                biased;
                _ = self.ended.wait_for(|ended| *ended) => return None,
                () = self.core.closed(None) => return None,
                message = self.outbox.recv() => message?,
                () = tokio::time::sleep(KEEP_ALIVE) => {
                    return Some(Bytes::from_static(b": keep-alive\n\n"));
                }
            };
            // A request to end the response carrying it means nothing here: one stream only.
            if let Some(bytes) = message.into_bytes() {
                return Some(named_event("message", &bytes));
            }
        }
    }
}

/// The session a POST names in its `sessionId` query parameter.
fn session_of(state: &HttpState, request: &Parts) -> Result<Arc<LegacySession>, Response> {
    let id = request
        .uri
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="));
    let Some(id) = id else {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            "the `sessionId` query parameter is missing: open the SSE stream first",
        ));
    };
    let session = state
        .legacy
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(id)
        .cloned();
    let gone = || {
        error_response(
            StatusCode::NOT_FOUND,
            "unknown or ended session: open the SSE stream again",
        )
    };
    let principal = request.extensions.get::<Arc<Principal>>();
    // Bound to the principal that opened it: to anyone else it does not exist.
    let session = session
        .filter(|s| s.owner == principal.map(|p| p.binding_key()))
        .ok_or_else(gone)?;
    // Its stream overflowed (the client stopped reading it) or went away: nothing it is sent
    // could be delivered, so it is over, whether or not its response has noticed yet.
    if session.sink.is_closed() {
        state
            .legacy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        session.end();
        tokio::spawn(async move { session.shutdown().await });
        return Err(gone());
    }
    Ok(session)
}

/// The ids of the requests among `incoming`.
fn request_ids(incoming: &Incoming) -> Vec<RequestId> {
    match incoming {
        Incoming::Single(Ok(Message::Request(request))) => vec![request.id.clone()],
        Incoming::Single(_) => Vec::new(),
        Incoming::Batch(items) => items
            .iter()
            .filter(|m| m.get("method").is_some())
            .filter_map(|m| m.get("id").and_then(RequestId::from_json))
            .collect(),
    }
}

/// POST on the messages path: one message (or batch) for a session, whose answers go out on
/// its event stream.
pub(super) async fn handle_message(
    State(state): State<Arc<HttpState>>,
    request: Request,
) -> Response {
    let options = state.options();
    let (parts, body) = request.into_parts();
    let headers = Seen::of(&parts.headers);
    if let Err(response) = check_host(options, &headers, &parts.uri) {
        return response;
    }
    let session = match session_of(&state, &parts) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let principal = parts.extensions.get::<Arc<Principal>>().cloned();
    if let Err(response) = check_json_content_type(&headers) {
        return response;
    }
    let limits = &state.core.options;
    let client = state.client_of(
        Connection::of(&parts.extensions),
        &parts.headers,
        principal.as_deref(),
    );
    let peer = state.peer_of(Connection::of(&parts.extensions), &parts.headers);
    let body = match read_post_body(&state, body, client.as_ref()).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let from = (&*state, client.as_ref());
    let (incoming, held) =
        match body.parse(from, limits.max_nesting_depth, |scanned| scanned.parse()) {
            Ok(parsed) => parsed,
            Err(response) => return response,
        };
    if held.on_reserve() && Window::slots_needed(&incoming) > 0 {
        return held.refusal();
    }
    let charge = held.into_charge();
    #[cfg(feature = "oauth")]
    if let Some(auth) = &state.auth
        && let Err(response) = auth.check_scopes(&state.core, principal.as_deref(), &incoming)
    {
        return response;
    }
    session.touch();
    let needed = Window::slots_needed(&incoming);
    let slot = if needed > 0 {
        match session.window.enter(needed) {
            Ok(mut slot) => {
                // The request's bytes stay charged to the server's total while it runs.
                slot.hold(charge);
                Some(slot)
            }
            Err(error) => {
                window_full(&session.sink, &incoming, &error);
                return accepted();
            }
        }
    } else {
        None
    };
    // Answered on the session's stream, for this POST's principal (its scopes may have grown).
    let sink = session
        .sink
        .clone()
        .with_principal(principal)
        .with_peer(peer);
    session.session.receive(incoming, &sink, slot);
    accepted()
}

/// The answer to every POST that got through: the rest happens on the event stream.
fn accepted() -> Response {
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

/// Answers, on the stream, the requests of a message that found the session's window full.
fn window_full(sink: &Sink, incoming: &Incoming, error: &ErrorObject) {
    let ids = request_ids(incoming);
    let mut errors: Vec<Vec<u8>> = ids.iter().map(|id| encode_error(Some(id), error)).collect();
    let message = match incoming {
        Incoming::Batch(_) => Outgoing::Batch(encode_batch(&errors)),
        Incoming::Single(_) => match (ids.first(), errors.pop()) {
            (Some(id), Some(bytes)) => Outgoing::reply(id.clone(), bytes),
            _ => return,
        },
    };
    let _ = sink.send(message);
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn events_are_named() {
        assert_eq!(
            named_event("endpoint", b"/messages?sessionId=ab"),
            Bytes::from_static(b"event: endpoint\ndata: /messages?sessionId=ab\n\n")
        );
    }

    #[test]
    fn the_endpoint_keeps_the_prefix_a_router_is_nested_under() {
        let request = |seen: &str, original: Option<&str>| {
            let mut request = Request::new(Body::empty());
            *request.uri_mut() = seen.parse().unwrap();
            if let Some(original) = original {
                request
                    .extensions_mut()
                    .insert(OriginalUri(original.parse().unwrap()));
            }
            request
        };
        assert_eq!(
            nest_prefix(&request("/sse", Some("/api/v1/sse"))),
            "/api/v1"
        );
        assert_eq!(nest_prefix(&request("/sse", Some("/sse"))), "");
        assert_eq!(nest_prefix(&request("/sse", None)), "");
        assert_eq!(nest_prefix(&request("/sse", Some("/elsewhere"))), "");
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_stream_keeps_alive_and_its_end_ends_the_session() {
        use futures_util::StreamExt as _;
        let service = crate::Server::new("t", "1")
            .legacy_sse(true)
            .build()
            .unwrap();
        let core = Arc::clone(&service.core);
        let state = HttpState::new(core, service.core.options.http.clone());
        let (response, _) = open(&state).await;
        let mut body = response.into_body().into_data_stream();
        let endpoint = body.next().await.unwrap().unwrap();
        assert!(endpoint.starts_with(b"event: endpoint\ndata: /messages?sessionId="));
        assert_eq!(state.legacy.lock().unwrap().len(), 1);
        // Nothing to say for a while: a comment, which clients skip, after `KEEP_ALIVE`.
        let start = tokio::time::Instant::now();
        let comment = body.next().await.unwrap().unwrap();
        assert_eq!(comment, Bytes::from_static(b": keep-alive\n\n"));
        assert_eq!(start.elapsed(), KEEP_ALIVE);
        // The client goes away: the body is dropped, and the session with it.
        drop(body);
        assert!(state.legacy.lock().unwrap().is_empty());
    }

    /// A GET of `/sse` on `state`: the response, and its session's id.
    async fn open(state: &Arc<HttpState>) -> (Response, String) {
        let mut request = Request::new(Body::empty());
        *request.uri_mut() = "/sse".parse().unwrap();
        request
            .headers_mut()
            .insert(header::HOST, HeaderValue::from_static("localhost"));
        let response = handle_sse(State(Arc::clone(state)), request).await;
        assert_eq!(response.status(), StatusCode::OK);
        let id = state.legacy.lock().unwrap().keys().next().unwrap().clone();
        (response, id)
    }

    #[tokio::test]
    async fn a_stream_nobody_reads_overflows_and_its_session_is_gone() {
        let service = crate::Server::new("t", "1")
            .legacy_sse(true)
            .stream_buffer(1024)
            .build()
            .unwrap();
        let state = HttpState::new(Arc::clone(&service.core), service.core.options.http.clone());
        // The response is held but never read.
        let (_response, id) = open(&state).await;
        let post = |body: &str| {
            let mut request = Request::new(Body::from(body.to_owned()));
            *request.method_mut() = axum::http::Method::POST;
            *request.uri_mut() = format!("/messages?sessionId={id}").parse().unwrap();
            let headers = request.headers_mut();
            headers.insert(header::HOST, HeaderValue::from_static("localhost"));
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            handle_message(State(Arc::clone(&state)), request)
        };
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        // Each answer is queued for the stream, until more than its buffer would be.
        let mut statuses = Vec::new();
        for _ in 0..200 {
            statuses.push(post(ping).await.status());
        }
        assert_eq!(statuses[0], StatusCode::ACCEPTED);
        assert_eq!(statuses.last(), Some(&StatusCode::NOT_FOUND));
        assert!(state.legacy.lock().unwrap().is_empty());
    }

    #[test]
    fn the_ids_of_a_batch_are_its_requests() {
        let batch = vec![
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            serde_json::json!({"jsonrpc": "2.0", "id": "x", "result": {}}),
        ];
        assert_eq!(
            request_ids(&Incoming::Batch(batch)),
            vec![RequestId::Number(1)]
        );
    }
}
