//! A POST to the endpoint, as named steps: [`check`] the request (its `Host`, content type
//! and `Accept`, and who sent it), [`read`] its body within the client's share of the request
//! budget, [`route`] it by era (the stateless era to [`modern`](super::modern), the handshake
//! era to its session), and [`answer`] it there, as JSON or on an SSE stream.

use std::collections::HashSet;
use std::future::{Future, Ready};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::body::{Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use serde_json::Value;

use super::body::read_post_body;
use super::client::{Connection, Peer};
use super::guard::{
    Seen, accepts, check_host_remembering, check_json_content_type, header_version,
};
use super::stream::EventStream;
use super::{
    HttpSession, HttpState, MCP_SESSION_ID, error_response, json_response, modern,
    refused_response, reply_response, session_id, shared, sse_response,
};
use crate::context::Principal;
use crate::protocol::{
    ErrorObject, Incoming, Message, Method, Outgoing, ProtocolVersion, RequestId, Scanned,
    encode_batch, encode_error,
};
use crate::server::{
    Charge, Client, FastMap, Kind, Notifier, Outbox, Session, Transport, Window, is_stateless,
};

/// What a POST body holds, and what serving it depends on.
struct Post {
    incoming: Incoming,
    /// One message with a stateless envelope (or `server/discover`): the 2026-07-28 path.
    stateless: bool,
    /// One message with an id whose method is `initialize` (a notification of that name opens
    /// nothing).
    initialize: bool,
    /// The ids of the requests among the messages.
    ids: Ids,
    /// A method that runs user code and may stream: `tools/call`, `prompts/get`,
    /// `resources/read`.
    runs_user_code: bool,
}

impl Post {
    /// What a refusal answers: the request's id (a batch, a notification or an unreadable id:
    /// `null`).
    fn answering(&self) -> Option<RequestId> {
        match &self.incoming {
            Incoming::Single(_) => self.ids.as_slice().first().cloned(),
            Incoming::Batch(_) => None,
        }
    }

    /// Reads a scanned body: one valid message straight from its bytes; anything else (a batch,
    /// an invalid message) from its JSON value, where the members of an invalid message still
    /// decide where it goes.
    fn read(body: &Scanned<'_>) -> Result<Self, ErrorObject> {
        let runs_user_code =
            |method: &str| Method::parse(method).is_some_and(Method::runs_user_code);
        if let Incoming::Single(Ok(message)) = body.parse()? {
            let (method, params, id) = match &message {
                Message::Request(r) => (Some(r.method.as_ref()), Some(&r.params), Some(&r.id)),
                Message::Notification(n) => (Some(n.method.as_ref()), Some(&n.params), None),
                Message::Response(_) => (None, None, None),
            };
            let stateless = matches!((method, params), (Some(m), Some(p))
                if is_stateless(m, p));
            return Ok(Self {
                stateless,
                initialize: id.is_some() && method == Some("initialize"),
                ids: Ids::One(id.cloned()),
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
            ids: Ids::Many(
                messages
                    .iter()
                    .filter(|m| m.get("method").is_some())
                    .filter_map(|m| m.get("id").and_then(RequestId::from_json))
                    .collect(),
            ),
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

/// The ids of a POST's requests: one message's (the common case) held without an allocation.
enum Ids {
    One(Option<RequestId>),
    Many(Vec<RequestId>),
}

impl Ids {
    fn as_slice(&self) -> &[RequestId] {
        match self {
            Self::One(id) => id.as_slice(),
            Self::Many(ids) => ids,
        }
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

/// A POST to the endpoint, in four steps: [`check`] the request, [`read`] its body, [`route`] it
/// by era, and (handshake era) [`answer`] it in its session.
pub(super) async fn handle_post(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    serve_post(state, request, None).await
}

/// [`handle_post`] for a request `serve_http` hands over without the router (the endpoint's
/// POSTs, when no layer guards the endpoint): its connection given directly, not looked up in
/// its extensions, which the router would have filled.
///
/// Only reading the body waits here; the steps after it answer at once when they can (most
/// requests) and box the rest of their work when they cannot. A POST's future is moved as it
/// starts, and an `async` step would make it as large as every step nested in it; an
/// `async fn` would also hold its arguments twice (as its own and as its body's).
pub(super) fn serve_post<B: HttpBody<Data = Bytes> + Send>(
    state: Arc<HttpState>,
    request: axum::http::Request<B>,
    peer: Option<Arc<Peer>>,
) -> impl Future<Output = Response> + Send {
    // The request's own headers, not the copy a `HeaderMap` extractor would make.
    let (parts, body) = request.into_parts();
    async move {
        let state = &state;
        let headers = Seen::of(&parts.headers);
        let connection = peer
            .as_deref()
            .map_or_else(|| Connection::of(&parts.extensions), Connection::Peer);
        let from = match check(state, &parts, &headers, connection) {
            Ok(from) => from,
            Err(response) => return response,
        };
        let (post, charge) = match read(state, body, &from).await {
            Ok(read) => read,
            Err(response) => return response,
        };
        let peer = peer.as_deref();
        route(state, &headers, post, charge, from, peer).await
    }
}

/// What a step after the body comes to: its response at once, or the rest of its work.
type Step<'a> = Either<Ready<Response>, Pin<Box<dyn Future<Output = Response> + Send + 'a>>>;

/// A step's response, at once.
fn done<'a>(response: Response) -> Step<'a> {
    Either::Left(std::future::ready(response))
}

/// The rest of a step's work, boxed: it waits, and most requests never come here.
fn later<'a>(work: impl Future<Output = Response> + Send + 'a) -> Step<'a> {
    Either::Right(Box::pin(work))
}

/// Who sent a POST and what it takes back, as [`check`] found them.
struct From {
    principal: Option<Arc<Principal>>,
    /// Whose shares it counts toward.
    client: Option<Arc<Client>>,
    peer: Option<SocketAddr>,
    accepts_json: bool,
    accepts_sse: bool,
}

/// Step 1, the request: its `Host` and `Origin` (DNS rebinding), its content type and what it
/// accepts; then who sent it.
fn check(
    state: &HttpState,
    parts: &Parts,
    headers: &Seen<'_>,
    connection: Connection<'_>,
) -> Result<From, Response> {
    let remembered = match connection {
        Connection::Peer(peer) => Some(&peer.host),
        Connection::Info(_) => None,
    };
    check_host_remembering(state.options(), headers, &parts.uri, remembered)?;
    check_json_content_type(headers)?;
    let (accepts_json, accepts_sse) = accepts(headers);
    if !accepts_json && !accepts_sse {
        return Err(error_response(
            StatusCode::NOT_ACCEPTABLE,
            "`Accept` must list `application/json` or `text/event-stream`",
        ));
    }
    let principal = parts.extensions.get::<Arc<Principal>>().cloned();
    let client = state.client_of(connection, &parts.headers, principal.as_deref());
    let peer = state.peer_of(connection, &parts.headers);
    Ok(From {
        principal,
        client,
        peer,
        accepts_json,
        accepts_sse,
    })
}

/// Step 2, the body: charged to the client's share of the request budget as it arrives, then
/// what parsing it builds, and that stays charged until it is answered. On the budget's reserve
/// only what holds nothing once handled goes on.
async fn read<B: HttpBody<Data = Bytes>>(
    state: &HttpState,
    body: B,
    from: &From,
) -> Result<(Post, Charge), Response> {
    let body = read_post_body(state, body, from.client.as_ref()).await?;
    let max_depth = state.core.options.max_nesting_depth;
    let (post, charge) = body.parse((state, from.client.as_ref()), max_depth, Post::read)?;
    if charge.on_reserve() && !holds_nothing(&post.incoming, post.stateless) {
        return Err(charge.refusal());
    }
    Ok((post, charge.into_charge()))
}

/// Step 3, by era: scopes first (a 403 drives the client's step-up), then one enveloped request
/// (or `server/discover`) is served on its own by the stateless era; the rest is the handshake
/// era's.
fn route<'a>(
    state: &'a Arc<HttpState>,
    headers: &'a Seen<'_>,
    post: Post,
    charge: Charge,
    from: From,
    peer: Option<&Peer>,
) -> Step<'a> {
    #[cfg(feature = "oauth")]
    if let Some(auth) = &state.auth
        && let Err(response) =
            auth.check_scopes(&state.core, from.principal.as_deref(), &post.incoming)
    {
        return done(response);
    }
    if post.stateless
        && let Incoming::Single(message) = post.incoming
    {
        let caller = modern::Caller {
            principal: from.principal,
            client: from.client,
            peer: from.peer,
            charge,
        };
        let accepts_sse = from.accepts_sse;
        return stateless_later(state, headers, message, accepts_sse, caller);
    }
    handshake_era(state, headers, post, charge, from, peer)
}

/// A stateless request's handling, boxed. (Not inlined, for the reason [`accept_later`]
/// gives.)
#[inline(never)]
fn stateless_later<'a>(
    state: &'a Arc<HttpState>,
    headers: &'a Seen<'_>,
    message: Result<Message, Box<crate::protocol::jsonrpc::InvalidMessage>>,
    accepts_sse: bool,
    caller: modern::Caller,
) -> Step<'a> {
    later(modern::handle(
        state,
        headers.all(),
        message,
        accepts_sse,
        caller,
    ))
}

/// The handshake era: `initialize` opens a session; anything else goes to the session its
/// `Mcp-Session-Id` names (or, sessionless, to one of its own). A refusal answers the request's
/// id (a batch, a notification or an unreadable id: `null`).
fn handshake_era<'a>(
    state: &'a Arc<HttpState>,
    headers: &'a Seen<'_>,
    post: Post,
    charge: Charge,
    from: From,
    peer: Option<&Peer>,
) -> Step<'a> {
    let answering = post.answering();
    let version = match header_version(headers, answering.as_ref()) {
        Ok(version) => version,
        Err(response) => return done(response),
    };
    // `initialize` within a live session goes to that session, which refuses it.
    if post.initialize && (state.options().stateless || !headers.has_session()) {
        let caller = (from.principal, from.client, from.peer);
        return initialize_later(state, post.incoming, caller, answering);
    }
    let Some(found) = session_here(state, headers, &from, peer, version, answering.as_ref()) else {
        return shared_later(state, headers, post, charge, from, answering);
    };
    match found {
        Ok((session, http_session)) => {
            in_session(state, post, charge, from, session, http_session, peer)
        }
        Err(response) => done(response),
    }
}

/// `initialize` outside a session, boxed. (Not inlined, for the reason [`accept_later`]
/// gives.)
#[inline(never)]
fn initialize_later(
    state: &Arc<HttpState>,
    incoming: Incoming,
    caller: (
        Option<Arc<Principal>>,
        Option<Arc<Client>>,
        Option<SocketAddr>,
    ),
    answering: Option<RequestId>,
) -> Step<'_> {
    later(async move { initialize_session(state, incoming, caller, answering.as_ref()).await })
}

/// A request whose session the shared store knows, boxed: the session is read from the store,
/// then the request goes on as in this replica's own. (Not inlined, for the reason
/// [`accept_later`] gives.)
#[inline(never)]
fn shared_later<'a>(
    state: &'a Arc<HttpState>,
    headers: &'a Seen<'_>,
    post: Post,
    charge: Charge,
    from: From,
    answering: Option<RequestId>,
) -> Step<'a> {
    later(async move {
        let principal = from.principal.as_deref();
        let client = from.client.as_ref();
        let found = state
            .session(headers, principal, client, answering.as_ref())
            .await;
        match found {
            Ok(http_session) => {
                let session = Arc::clone(&http_session.session);
                in_session(state, post, charge, from, session, Some(http_session), None).await
            }
            Err(response) => response,
        }
    })
}

/// A handshake-era request's session, and the HTTP session around it (none when sessionless).
type InSession = (Arc<Session>, Option<Arc<HttpSession>>);

/// The session a handshake-era request goes to, when it is found without the shared store: the
/// one its `Mcp-Session-Id` names, or, on a sessionless server, a new one for this request
/// alone. `None` when the shared store has to be asked.
fn session_here(
    state: &HttpState,
    headers: &Seen<'_>,
    from: &From,
    peer: Option<&Peer>,
    version: Option<ProtocolVersion>,
    answering: Option<&RequestId>,
) -> Option<Result<InSession, Response>> {
    if state.options().stateless {
        let (notifier, _) = state.channel(from.client.as_ref());
        let version = version.unwrap_or(ProtocolVersion::V2025_03_26);
        let core = Arc::clone(&state.core);
        let session = Session::new_stateless(core, notifier, version, from.client.clone());
        return Some(Ok((session, None)));
    }
    let principal = from.principal.as_deref();
    let found = state.session_here(headers, principal, peer, answering)?;
    Some(found.map(|http_session| (Arc::clone(&http_session.session), Some(http_session))))
}

/// A handshake-era POST in its session: notifications and responses are accepted; requests
/// are answered.
fn in_session<'a>(
    state: &'a Arc<HttpState>,
    post: Post,
    charge: Charge,
    from: From,
    session: Arc<Session>,
    http_session: Option<Arc<HttpSession>>,
    peer: Option<&Peer>,
) -> Step<'a> {
    if post.ids.as_slice().is_empty() {
        return accept_later(state, post.incoming, from, session, http_session);
    }
    answer(state, post, charge, from, session, http_session, peer)
}

/// [`accepted`], boxed. (Made in a function of its own, not inlined: a future is built on the
/// stack before it is boxed, and the frame of the path most POSTs take, which calls this
/// one, is then the smaller by its size.)
#[inline(never)]
fn accept_later<'a>(
    state: &'a Arc<HttpState>,
    incoming: Incoming,
    from: From,
    session: Arc<Session>,
    http_session: Option<Arc<HttpSession>>,
) -> Step<'a> {
    later(async move { accepted(state, incoming, &session, http_session.as_deref(), from).await })
}

/// Notifications and responses: accepted, no body. Anything else without a readable id (an
/// invalid message) is refused with 400 and its error, once whatever handles it is done.
async fn accepted(
    state: &HttpState,
    incoming: Incoming,
    session: &Arc<Session>,
    http_session: Option<&HttpSession>,
    from: From,
) -> Response {
    let (sink, mut replies) = state.channel(from.client.as_ref());
    let sink = sink.with_principal(from.principal).with_peer(from.peer);
    session.receive(incoming, &sink, None);
    drop(sink);
    let mut errors = Vec::new();
    while let Some(reply) = replies.recv().await {
        errors.extend(reply.into_bytes());
    }
    share_back(state, http_session).await;
    match errors.len() {
        0 => StatusCode::ACCEPTED.into_response(),
        _ => json_response(StatusCode::BAD_REQUEST, errors.swap_remove(0)),
    }
}

/// Step 4, requests in their session: answered as JSON or on an SSE stream (see the module
/// docs), each running in a slot of the session's window. A single request whose answer is
/// there once it has been received (most are) is answered at once.
fn answer<'a>(
    state: &'a Arc<HttpState>,
    post: Post,
    charge: Charge,
    from: From,
    session: Arc<Session>,
    http_session: Option<Arc<HttpSession>>,
    peer: Option<&Peer>,
) -> Step<'a> {
    let options = state.options();
    let json_only = options.deploy.json_response;
    if json_only && !from.accepts_json {
        return done(error_response(
            StatusCode::NOT_ACCEPTABLE,
            "this server answers with `application/json`: `Accept` must list it",
        ));
    }
    let accepts_json = from.accepts_json;
    let wants_sse = !json_only && from.accepts_sse && (post.runs_user_code || !accepts_json);
    // A client that takes only a stream needs room for one before anything runs; one that
    // takes both gets JSON when it has none.
    let mut open = None;
    if wants_sse && !accepts_json {
        match state.open_stream(from.client.as_ref()) {
            Ok(charged) => open = Some(charged),
            Err(response) => return done(response),
        }
    }
    let Post { incoming, ids, .. } = post;
    let batch = matches!(incoming, Incoming::Batch(_));
    // A request that runs takes a slot of the session's window, a batch one for all; the
    // session holds it, and with it the request's bytes' charge, until the request ends.
    let slots = Window::slots_needed(&incoming);
    let mut slot = match &http_session {
        Some(http_session) if slots > 0 => match http_session.window.enter(slots) {
            Ok(running) => Some(running),
            Err(error) => return done(window_full(ids.as_slice(), batch, &error)),
        },
        _ => None,
    };
    let held = match &mut slot {
        Some(slot) => {
            slot.hold(charge);
            None
        }
        None => Some(charge),
    };
    let (sink, mut replies) = state.post_channel(from.client.as_ref(), peer);
    let sink = sink.with_principal(from.principal).with_peer(from.peer);
    let shares = state.core.shared().is_some() && http_session.is_some();
    // Most requests are answered while they are received: a single one whose answer is
    // already there goes back as JSON, with no stream and no waiting (with a shared store,
    // once what it changed in its session is shared, so its answer is queued meanwhile).
    let mut first = None;
    if shares {
        session.receive(incoming, &sink, slot);
    } else {
        let answer = session.receive_answered(incoming, &sink, slot);
        first = replies.try_recv();
        // The answer comes after anything the request sent before it.
        match (answer, &first) {
            (Some(answer), None) => first = Some(answer),
            (Some(answer), Some(_)) => {
                let _ = sink.send(answer);
            }
            (None, _) => {}
        }
        if let Some(response) = answered(&mut first, batch, &ids) {
            drop(sink);
            HttpState::keep_channel(peer, replies);
            return done(response);
        }
    }
    wait_for_answers(Answering {
        state,
        sink,
        held,
        shares,
        first,
        replies,
        ids,
        session,
        http_session,
        open,
        client: from.client,
        wants_sse,
        accepts_json,
        batch,
    })
}

/// What a POST whose answers are not all in holds while it waits for them.
struct Answering<'a> {
    state: &'a Arc<HttpState>,
    sink: super::Sink,
    held: Option<Charge>,
    shares: bool,
    first: Option<Outgoing>,
    replies: Outbox<Outgoing>,
    ids: Ids,
    session: Arc<Session>,
    http_session: Option<Arc<HttpSession>>,
    /// The stream's place in the client's share, taken before anything ran (see [`answer`]).
    open: Option<Option<Charge>>,
    client: Option<Arc<Client>>,
    wants_sse: bool,
    accepts_json: bool,
    batch: bool,
}

/// The rest of [`answer`] when the answers are not all in, boxed. (Not inlined, for the
/// reason [`accept_later`] gives: this future is the larger.)
#[inline(never)]
fn wait_for_answers(waiting: Answering<'_>) -> Step<'_> {
    let Answering {
        state,
        sink,
        held,
        shares,
        mut first,
        mut replies,
        ids,
        session,
        http_session,
        open,
        client,
        wants_sse,
        accepts_json,
        batch,
    } = waiting;
    later(async move {
        // Both last until the answers are in.
        let (_sink, _held) = (sink, held);
        if shares {
            share_back(state, http_session.as_deref()).await;
            first = replies.try_recv();
            if let Some(response) = answered(&mut first, batch, &ids) {
                return response;
            }
        }
        let pending: HashSet<RequestId> = match ids {
            Ids::One(id) => id.into_iter().collect(),
            Ids::Many(ids) => ids.into_iter().collect(),
        };
        let waited = Waited {
            first,
            replies,
            pending,
            session,
            http_session,
        };
        if wants_sse && accepts_json && !batch {
            return lazy_stream(state, waited, open, client.as_ref()).await;
        }
        reply(state, waited, wants_sse, open, batch, client.as_ref()).await
    })
}

/// The response of a single request, when `first`, what its POST received first, is its answer.
fn answered(first: &mut Option<Outgoing>, batch: bool, ids: &Ids) -> Option<Response> {
    let id = first.as_ref().and_then(Outgoing::reply_to)?;
    if batch || ids.as_slice().first() != Some(id) {
        return None;
    }
    first.take().map(reply_response)
}

/// What a POST's requests have sent so far, and what waits for their answers.
struct Waited {
    first: Option<Outgoing>,
    replies: Outbox,
    pending: HashSet<RequestId>,
    session: Arc<Session>,
    http_session: Option<Arc<HttpSession>>,
}

/// A client that takes both gets plain JSON when the result is the first thing the handler
/// sends; a stream only when something comes before it (progress, a log, a request to the
/// client, a stream close) or the handler stays silent for a while.
async fn lazy_stream(
    state: &Arc<HttpState>,
    mut waited: Waited,
    open: Option<Option<Charge>>,
    client: Option<&Arc<Client>>,
) -> Response {
    if waited.first.is_none() {
        let mut waiting = Unanswered {
            session: Arc::clone(&waited.session),
            ids: waited.pending.clone(),
        };
        match tokio::time::timeout(LAZY_SSE_WINDOW, waited.replies.recv()).await {
            Ok(Some(reply)) if Answer::of(&reply, &waited.pending) != Answer::Not => {
                waiting.ids.clear();
                return reply_response(reply);
            }
            Ok(reply) => waited.first = reply,
            Err(_) => {}
        }
        // The stream takes over: its requests run on even if this response goes away.
        waiting.ids.clear();
    }
    reply(state, waited, true, open, false, client).await
}

/// The answers: on an SSE stream when the client wants one and there is room for it, else as
/// JSON once they are all there.
async fn reply(
    state: &Arc<HttpState>,
    waited: Waited,
    wants_sse: bool,
    mut open: Option<Option<Charge>>,
    batch: bool,
    client: Option<&Arc<Client>>,
) -> Response {
    if wants_sse && open.is_none() {
        // No room for another stream of this client's: the answers come as JSON.
        open = state.open_stream(client).ok();
    }
    let Waited {
        first,
        replies,
        pending,
        session,
        http_session,
    } = waited;
    let Some(open) = open else {
        let mut unanswered = Unanswered {
            session,
            ids: pending,
        };
        let http_session = http_session.as_deref();
        return json_replies(first, replies, &mut unanswered.ids, batch, http_session).await;
    };
    let options = state.options();
    let stream = match &http_session {
        Some(http_session) => http_session.new_stream(),
        None => Arc::new(EventStream::new(1, state.stream_bounds(client))),
    };
    let (live, presence) = stream.attach(None);
    if session
        .version()
        .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
        && http_session.is_some()
    {
        stream.prime(options.retry_ms);
    }
    // Once its response is gone the stream's requests wait for a resume, then stop: at once
    // without a session (nothing can resume it); never with replicas (another may carry it
    // from the shared store).
    let abandon = match (&http_session, state.core.shared()) {
        (_, Some(_)) => None,
        (Some(_), None) => Some(options.resume_grace),
        (None, None) => Some(Duration::ZERO),
    };
    let abandon = abandon.map(|grace| Abandon {
        session: Arc::clone(&session),
        grace,
    });
    tokio::spawn(pump(first, replies, stream, pending, abandon));
    sse_response((live, Some(presence)), open)
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
    let principal = principal.as_deref();
    let http_session = match admit(state, session, client.as_ref(), principal, answering).await {
        Ok(http_session) => http_session,
        Err(response) => return response,
    };
    if let Some(store) = state.core.shared()
        && let Err(error) = shared::sync_out(state, store, &http_session).await
    {
        state.forget(
            &mut state.sessions.lock().unwrap_or_else(|e| e.into_inner()),
            &http_session.id,
        );
        return shared::store_failed(answering, &error);
    }
    if let Ok(value) = HeaderValue::from_str(&http_session.id) {
        response.headers_mut().insert(MCP_SESSION_ID, value);
    }
    response
}

/// A place for a new session among the server's (all replicas' with a shared store). When they
/// are full, the newcomer takes the place of an idle session of a client that holds more than
/// its own does, if there is one; else the answer is to retry later.
async fn admit(
    state: &Arc<HttpState>,
    session: Arc<Session>,
    client: Option<&Arc<Client>>,
    principal: Option<&Principal>,
    answering: Option<&RequestId>,
) -> Result<Arc<HttpSession>, Response> {
    let options = state.options();
    // With replicas, the limit is on the sessions of all of them.
    let elsewhere = match state.core.shared() {
        Some(store) => match store.count_sessions().await {
            Ok(count) => count,
            Err(error) => return Err(shared::store_failed(answering, &error)),
        },
        None => 0,
    };
    let counted = state.count_session(client, answering)?;
    let (http_session, evicted) = {
        let mut sessions = state.sessions.lock().unwrap_or_else(|e| e.into_inner());
        // The legacy transport's sessions count too (locked after these, as it does).
        let legacy = state.legacy.lock().unwrap_or_else(|e| e.into_inner()).len();
        let mut evicted = None;
        if sessions.len().max(elsewhere) + legacy >= options.max_sessions {
            // Full: the newcomer takes the place of an idle session of a client that holds
            // more than it does, if there is one (only among this process's sessions).
            evicted = (state.core.shared().is_none())
                .then(|| evict_for(state, &mut sessions, client.map(|c| &**c)))
                .flatten();
            if evicted.is_none() {
                return Err(state.retry_later(answering, "too many sessions; try again later"));
            }
        }
        let id = session_id();
        let _ = session.trace_name.set(id.clone());
        let http_session = state.open_session(
            id.clone(),
            session,
            counted,
            principal.map(Principal::binding_key),
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
    Ok(http_session)
}

/// Takes out of `sessions` the session a newcomer (of `client`) may end to make room: the
/// longest idle one (one not yet initialized first) of the client holding the most sessions,
/// when that client holds more than the newcomer's does. One pass, reading each session's
/// client's count; `None` when no client holds more.
fn evict_for(
    state: &HttpState,
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
    state.forget(sessions, &id)
}

/// The answer to a POST whose requests find the session's window full.
#[cold]
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

/// What becomes of a POST's requests when no response carries their stream any more: after
/// `grace` without one (the client did not come back with `Last-Event-ID`), they are cancelled
/// in `session`, as `notifications/cancelled` would.
pub(super) struct Abandon {
    session: Arc<Session>,
    grace: Duration,
}

/// Moves a request's replies into its SSE stream until every request of the POST is answered,
/// or, once no response has carried the stream for the [`Abandon`] grace, cancels the requests
/// left.
pub(super) async fn pump(
    mut first: Option<Outgoing>,
    mut replies: Outbox,
    stream: Arc<EventStream>,
    mut pending: HashSet<RequestId>,
    abandon: Option<Abandon>,
) {
    let finite = !pending.is_empty();
    let mut presence = stream.presence();
    // When the requests are given up, if no response carries the stream by then.
    let mut deadline = None;
    loop {
        if let Some(abandon) = &abandon
            && presence.has_changed().is_ok()
        {
            let attached = *presence.borrow_and_update();
            deadline = match (attached, deadline) {
                (0, None) => Some(tokio::time::Instant::now() + abandon.grace),
                (0, kept) => kept,
                _ => None,
            };
        }
        let reply = match first.take() {
            Some(reply) => reply,
            None => {
                let gone = async {
                    match deadline {
                        Some(deadline) => tokio::time::sleep_until(deadline).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    reply = replies.recv() => match reply {
                        Some(reply) => reply,
                        None => return,
                    },
                    _ = presence.changed(), if abandon.is_some() => continue,
                    () = gone => {
                        if let Some(abandon) = &abandon {
                            for id in pending.drain() {
                                tracing::debug!(request_id = %id, "the client left the stream and did not resume it: the request is cancelled");
                                abandon.session.cancel(&id);
                            }
                        }
                        return;
                    }
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
