//! One client's session in the handshake era: what was negotiated, which requests are in flight,
//! and the way back to the client.
//!
//! A transport hands every message it reads to [`Session::receive`] together with the sink its
//! replies go to; requests run concurrently, each on its own task, so a slow tool never holds up
//! a `ping`.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

#[cfg(feature = "http")]
use super::Opener;
use super::link::Link;
use super::link::Transport;
use super::observe::{Arrival, Observer};
use super::{Client, Core, ENTRY_OVERHEAD};
use super::{Notifier, Sink};
use crate::context::BoxFuture;
use crate::context::{CancelFlag, ClientInfo, ClientRequestError, Peer, Root};
use crate::protocol::{
    ErrorObject, Incoming, InitializeParams, InvalidMessage, LoggingLevel, Message, Method,
    Outgoing, ProtocolVersion, Request, RequestId, canonical_notification, echo, encode_batch,
    encode_error, encode_notification, encode_request, encode_response, negotiate_version,
};

type Pending = oneshot::Sender<Result<Value, ErrorObject>>;

/// A request's way back to its client: its own stream, and the session for what outlives it.
pub(crate) struct RequestPeer {
    pub(crate) session: Arc<Session>,
    pub(crate) sink: Sink,
}

impl Peer for RequestPeer {
    fn send(&self, message: Outgoing) {
        // The client may be gone; a message for a closed transport is dropped.
        let _ = self.sink.send(message);
    }

    fn log_level(&self) -> Option<LoggingLevel> {
        Some(LoggingLevel::from_index(
            self.session.log_level.load(Ordering::Relaxed),
        ))
    }

    fn missing_capability(&self, name: &'static str, _: Value) -> BoxFuture<ClientRequestError> {
        Box::pin(std::future::ready(ClientRequestError::Unsupported(name)))
    }

    fn request(
        &self,
        _key: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        let session = Arc::clone(&self.session);
        let sink = self.sink.clone();
        Box::pin(async move { session.request_client(method, params, &sink).await })
    }

    fn cached_roots(&self) -> Option<Vec<Root>> {
        self.session
            .roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn cache_roots(&self, roots: Vec<Root>) {
        *self.session.roots.lock().unwrap_or_else(|e| e.into_inner()) = Some(roots);
    }
}

/// What `initialize` settled.
pub(crate) struct Negotiated {
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Arc<ClientInfo>,
}

use super::window::Slot;

/// The requests running, by id.
type InFlight = super::FastMap<RequestId, Running>;

/// A request that is running: how to stop it, and its place in the session's in-flight window, given
/// back as soon as the entry goes (when the request ends, or the client cancels it).
struct Running {
    /// Its task (a request is registered only when it has to wait, and then it has one).
    task: AbortHandle,
    cancel: Arc<CancelFlag>,
    /// What it asked for, to say what a shutdown abandoned.
    method: Option<Method>,
    _slot: Option<Slot>,
}

impl Running {
    fn stop(self) {
        self.cancel.cancel();
        self.task.abort();
    }
}

/// Whether a session's connection ended, and the channel its listens wait on for that. The
/// channel is made for the first listen: most sessions never have one, and a watch channel
/// is some 350 bytes.
#[derive(Default)]
struct Closing {
    ended: bool,
    listens: Option<tokio::sync::watch::Sender<bool>>,
}

impl Closing {
    /// Marks the connection ended, telling its listens; whether it had ended already.
    fn end(&mut self) -> bool {
        if let Some(listens) = &self.listens {
            listens.send_replace(true);
        }
        std::mem::replace(&mut self.ended, true)
    }

    /// What a listen waits on: `true` once the connection ends (at once if it has).
    fn subscribe(&mut self) -> tokio::sync::watch::Receiver<bool> {
        let ended = self.ended;
        self.listens
            .get_or_insert_with(|| tokio::sync::watch::channel(ended).0)
            .subscribe()
    }
}

pub(crate) struct Session {
    pub(crate) core: Arc<Core>,
    pub(crate) negotiated: OnceLock<Negotiated>,
    pub(crate) initialized: AtomicBool,
    in_flight: Mutex<InFlight>,
    /// Where messages that answer no request go: list changes, resource updates. Over HTTP
    /// its queue is made on the first one (see [`Notifier`]).
    notifier: Notifier,
    /// The URIs this session subscribed to with `resources/subscribe`.
    pub(crate) subscriptions: Mutex<HashSet<String>>,
    /// The least severe log level the client wants (`logging/setLevel`); `info` until it says.
    pub(crate) log_level: AtomicU8,
    /// Requests this server sent the client, waiting for their answers.
    pending: Mutex<HashMap<RequestId, Pending>>,
    next_request_id: AtomicI64,
    /// The client's roots, until it says they changed.
    roots: Mutex<Option<Vec<Root>>>,
    /// Set when the connection ends: its open listens finish.
    closing: Mutex<Closing>,
    /// The session's name in request spans, set by the transport: the `Mcp-Session-Id`, or
    /// `stdio-N`.
    pub(crate) trace_name: OnceLock<String>,
    /// The transport it is served on.
    transport: Transport,
    /// The client that opened it (HTTP), whose shares its holdings count toward.
    pub(crate) client: Option<Arc<Client>>,
}

impl Session {
    /// A new session on `transport` whose unsolicited messages go to `notifier`, registered
    /// with the server so announcements reach it; what it holds counts toward `client`'s shares.
    pub(crate) fn new(
        core: Arc<Core>,
        transport: Transport,
        notifier: Notifier,
        client: Option<Arc<Client>>,
    ) -> Arc<Self> {
        let session = Arc::new(Self {
            core: Arc::clone(&core),
            negotiated: OnceLock::new(),
            initialized: AtomicBool::new(false),
            in_flight: Mutex::new(InFlight::default()),
            notifier,
            subscriptions: Mutex::new(HashSet::new()),
            log_level: AtomicU8::new(LoggingLevel::Info.index()),
            pending: Mutex::new(HashMap::new()),
            next_request_id: AtomicI64::new(first_request_id(&core)),
            roots: Mutex::new(None),
            closing: Mutex::new(Closing::default()),
            trace_name: OnceLock::new(),
            transport,
            client,
        });
        core.register_session(&session);
        session
    }

    /// The session as dispatch sees it.
    fn link(self: &Arc<Self>) -> Arc<dyn Link> {
        Arc::clone(self) as Arc<dyn Link>
    }

    /// `initialize` and `ping`: answered in order, without a task of their own.
    pub(crate) fn answer_handshake(&self, request: &Request) -> Vec<u8> {
        match request.method.as_ref() {
            "ping" => encode_response(&request.id, &json!({})),
            _ => match self.initialize(request) {
                Ok(result) => encode_response(&request.id, &result),
                Err(error) => encode_error(Some(&request.id), &error),
            },
        }
    }

    /// `initialize` or `ping` in a span, measured (with `Server::telemetry`).
    fn observed_handshake(
        &self,
        observer: &Arc<dyn Observer>,
        request: &Request,
        sink: &Sink,
    ) -> Vec<u8> {
        let registry = self.core.registry();
        let arrival = Arrival {
            request,
            version: self.version(),
            session: self.trace_name.get().map(String::as_str),
            transport: Link::transport(self),
            peer: sink.peer(),
            registry: &registry,
        };
        let (span, mut observation) = Arc::clone(observer).start(&arrival);
        let bytes = span.in_scope(|| self.answer_handshake(request));
        if let Some(version) = self.version() {
            observation.settled(version);
        }
        observation.finish(&super::exchange::status_of(&bytes));
        bytes
    }

    /// Settles the revision and the client, once: a second `initialize` is refused.
    fn initialize(&self, request: &Request) -> Result<Value, ErrorObject> {
        if self.negotiated.get().is_some() {
            return Err(ErrorObject::invalid_request(
                "the session is already initialized",
            ));
        }
        let params: InitializeParams = serde_json::from_value(Value::Object(
            request.params.clone().into_map(),
        ))
        .map_err(|e| {
            ErrorObject::invalid_params(format!(
                "invalid `initialize` params: {}",
                echo(&e.to_string())
            ))
        })?;
        let version = negotiate_version(&params.protocol_version);
        let client = Arc::new(ClientInfo {
            implementation: params.client_info,
            capabilities: params.capabilities,
        });
        self.negotiated
            .set(Negotiated { version, client })
            .map_err(|_| ErrorObject::invalid_request("the session is already initialized"))?;
        let core = &self.core;
        let mut result = Map::new();
        result.insert("protocolVersion".into(), Value::from(version.as_str()));
        result.insert(
            "capabilities".into(),
            core.capabilities.for_version(version),
        );
        result.insert("serverInfo".into(), core.info.for_version(version));
        if let Some(instructions) = &core.instructions {
            result.insert("instructions".into(), Value::from(instructions.as_str()));
        }
        Ok(Value::Object(result))
    }

    /// `logging/setLevel`: the least severe level the client wants from now on.
    pub(crate) fn set_log_level(&self, request: &Request) -> Result<Value, ErrorObject> {
        let level = match request.params.get("level") {
            Some(Value::String(level)) => level
                .parse::<LoggingLevel>()
                .map_err(ErrorObject::invalid_params)?,
            _ => {
                return Err(ErrorObject::invalid_params(
                    "`logging/setLevel` needs `level`, a string",
                ));
            }
        };
        self.log_level.store(level.index(), Ordering::Relaxed);
        Ok(json!({}))
    }

    /// `resources/subscribe` and `resources/unsubscribe`: which URIs' updates reach this session.
    pub(crate) fn set_subscription(&self, request: &Request) -> Result<Value, ErrorObject> {
        let Some(Value::String(uri)) = request.params.get("uri") else {
            return Err(ErrorObject::invalid_params(format!(
                "`{}` needs `uri`, a string",
                request.method
            )));
        };
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if request.method == "resources/subscribe" {
            let options = &self.core.options;
            check_subscription(uri, options.max_subscription_uri)?;
            if subscriptions.contains(uri) {
                return Ok(json!({}));
            }
            if subscriptions.len() >= options.max_subscriptions {
                return Err(ErrorObject::invalid_params(format!(
                    "too many subscriptions (at most {}): unsubscribe from one first",
                    options.max_subscriptions
                )));
            }
            if !self.hold_subscription(uri) {
                return Err(ErrorObject::invalid_params(
                    "the server holds as many subscriptions as it can for this client: \
                     unsubscribe from some, or try again later",
                ));
            }
            subscriptions.insert(uri.clone());
            drop(subscriptions);
            self.core.subscription_changed(uri, true);
        } else if subscriptions.remove(uri) {
            self.release_subscription(uri);
            drop(subscriptions);
            self.core.subscription_changed(uri, false);
        }
        Ok(json!({}))
    }

    /// Takes what a subscription to `uri` holds from the server's subscription total, within
    /// its client's share; whether it fit.
    pub(crate) fn hold_subscription(&self, uri: &str) -> bool {
        self.core
            .subscription_bytes
            .account(self.client.as_ref())
            .take(uri.len() + ENTRY_OVERHEAD)
    }

    /// Gives back what a subscription to `uri` held.
    pub(crate) fn release_subscription(&self, uri: &str) {
        self.core
            .subscription_bytes
            .account(self.client.as_ref())
            .give(uri.len() + ENTRY_OVERHEAD);
    }

    /// Sends an unsolicited message, once the client has said `notifications/initialized`
    /// (nothing but pings and logs may precede it).
    pub(crate) fn notify(&self, message: Vec<u8>) {
        if self.initialized.load(Ordering::Acquire) {
            let _ = self.notifier.send(Outgoing::Message(message));
        }
    }

    /// Sets how the transport makes the session's notification queue, on the first
    /// notification (HTTP, once the session is open and has a standalone stream).
    #[cfg(feature = "http")]
    pub(crate) fn notify_through(&self, opener: Opener) {
        self.notifier.open_with(opener);
    }

    /// The negotiated revision, once `initialize` has been answered.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.negotiated.get().map(|n| n.version)
    }

    /// A session for one stateless HTTP request: no handshake happened, so it is taken as done at
    /// `version`, with a client that declared nothing.
    #[cfg(feature = "http")]
    pub(crate) fn new_stateless(
        core: Arc<Core>,
        notifier: Sink,
        version: ProtocolVersion,
        client: Option<Arc<Client>>,
    ) -> Arc<Self> {
        let notifier = Notifier::from(notifier.into_queue());
        let session = Self::new(core, Transport::StreamableHttp, notifier, client);
        let client = Arc::new(ClientInfo {
            implementation: crate::protocol::Implementation::new("stateless-client", "0"),
            capabilities: crate::protocol::ClientCapabilities::default(),
        });
        let _ = session.negotiated.set(Negotiated { version, client });
        session.initialized.store(true, Ordering::Release);
        session
    }

    /// Handles one message (or batch) from the client, as the transport parsed it. `slot` (a
    /// place in the session's in-flight window) is held until the work is done: released at
    /// once when it is answered on the spot, else when the request ends, however it ends.
    pub(crate) fn receive(self: &Arc<Self>, incoming: Incoming, sink: &Sink, slot: Option<Slot>) {
        if let Some(answer) = self.receive_answered(incoming, sink, slot) {
            let _ = sink.send(answer);
        }
    }

    /// [`receive`](Self::receive), except that the answer of a single request that is there
    /// once the request has been received (most are) is given back instead of sent on `sink`:
    /// the caller sends it (after anything the request sent on `sink` meanwhile) or answers
    /// with it directly when `sink` has nothing before it.
    pub(crate) fn receive_answered(
        self: &Arc<Self>,
        incoming: Incoming,
        sink: &Sink,
        slot: Option<Slot>,
    ) -> Option<Outgoing> {
        match incoming {
            Incoming::Batch(batch) => {
                self.receive_batch(batch, sink, slot);
                None
            }
            Incoming::Single(message) => self.receive_message(message, sink, slot),
        }
    }

    fn receive_message(
        self: &Arc<Self>,
        message: Result<Message, Box<InvalidMessage>>,
        sink: &Sink,
        slot: Option<Slot>,
    ) -> Option<Outgoing> {
        match message {
            Ok(Message::Request(request)) => self.start_request(request, sink, slot),
            Ok(Message::Notification(note)) => {
                self.handle_notification(&note.method, &note.params);
                None
            }
            Ok(Message::Response(response)) => {
                self.receive_response(response.id, response.outcome);
                None
            }
            Err(invalid) => Some(Outgoing::error(invalid.id.as_ref(), &invalid.error)),
        }
    }

    /// JSON-RPC batches exist only in 2025-03-26 (and never carry `initialize`); the responses
    /// go back as one array, in the order the requests came.
    fn receive_batch(self: &Arc<Self>, batch: Vec<Value>, sink: &Sink, slot: Option<Slot>) {
        let allowed = self.version().is_some_and(ProtocolVersion::allows_batches);
        if !allowed || batch.is_empty() {
            let message = if batch.is_empty() {
                "an empty batch is not a valid request".to_owned()
            } else {
                let version = self
                    .version()
                    .map_or("(not initialized)".to_owned(), |v| v.to_string());
                format!("JSON-RPC batches are only accepted on protocol 2025-03-26, not {version}")
            };
            let _ = sink.send(Outgoing::error(
                None,
                &ErrorObject::invalid_request(message),
            ));
            return;
        }
        let session = Arc::clone(self);
        let sink = sink.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let mut replies = Vec::new();
            let link = session.link();
            for value in batch {
                // A batch's messages run one after another on one task: it gives way to other
                // requests between them, so a batch of heavy calls (each announcing to every
                // session, say) cannot hold a worker thread for the whole batch.
                tokio::task::yield_now().await;
                match Message::from_value(value) {
                    Ok(Message::Request(request)) if request.method == "initialize" => {
                        let error = ErrorObject::invalid_request(
                            "`initialize` must not be sent in a batch",
                        );
                        replies.push(encode_error(Some(&request.id), &error));
                    }
                    Ok(Message::Request(request)) => {
                        let cancel = Arc::new(CancelFlag::default());
                        let reply = super::dispatch::handle_request(
                            Arc::clone(&link),
                            request,
                            sink.clone(),
                            cancel,
                        )
                        .await;
                        replies.extend(reply.and_then(Outgoing::into_bytes));
                    }
                    Ok(Message::Notification(note)) => {
                        session.handle_notification(&note.method, &note.params);
                    }
                    Ok(Message::Response(response)) => {
                        session.receive_response(response.id, response.outcome);
                    }
                    Err(invalid) => replies.push(encode_error(invalid.id.as_ref(), &invalid.error)),
                }
            }
            if !replies.is_empty() {
                let _ = sink.send(Outgoing::Batch(encode_batch(&replies)));
            }
        });
    }

    /// Runs a request: its answer when it is there at once (see
    /// [`receive_answered`](Self::receive_answered)), else `None` and the request goes on in a
    /// task of its own, registered under its id so `notifications/cancelled` can stop it, which
    /// sends the answer on `sink`.
    fn start_request(
        self: &Arc<Self>,
        request: Request,
        sink: &Sink,
        slot: Option<Slot>,
    ) -> Option<Outgoing> {
        // `initialize` and `ping` are answered in order, right here: the handshake must be
        // settled before anything read after it is handled.
        if (request.method == "initialize" || request.method == "ping")
            && !super::stateless::is_stateless(&request.method, &request.params)
        {
            let bytes = match &self.core.telemetry {
                Some(observer) => self.observed_handshake(observer, &request, sink),
                None => self.answer_handshake(&request),
            };
            return Some(Outgoing::reply(request.id, bytes));
        }
        // A request whose id is still running is refused.
        if self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&request.id)
        {
            let error = ErrorObject::invalid_request(format!(
                "request id {} is already in use",
                request.id
            ));
            return Some(Outgoing::error(Some(&request.id), &error));
        }
        // Lists served from the registry's cache run no user code and never wait: answered
        // right here, without a task of their own.
        // With middleware a list may wait (for a concurrency limit, say): it runs as any other.
        let method = Method::parse(&request.method);
        if method.is_some_and(Method::answered_inline)
            && self.core.middleware.is_none()
            && !super::stateless::is_stateless(&request.method, &request.params)
        {
            return self.answer_inline(request, sink);
        }
        let id = request.id.clone();
        let cancel = Arc::new(CancelFlag::default());
        let flag = Arc::clone(&cancel);
        // The request's own future, boxed as it is: it owns what it needs.
        let mut task = Box::pin(super::dispatch::handle_request(
            self.link(),
            request,
            sink.clone(),
            cancel,
        ));
        // Most handlers finish without waiting for anything: run it once right here, and give
        // it a task of its own only when it has to wait. (The task polls it again at once, so
        // the no-op waker of this first poll is never relied on.)
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if let std::task::Poll::Ready(reply) = task.as_mut().poll(&mut cx) {
            return reply;
        }
        // It waits: registered under its id, so `notifications/cancelled` (or a duplicate id)
        // from a later message finds it. A request that finished at once was never registered:
        // a cancellation that came while it ran finds nothing to stop, as one that comes after
        // the answer does (the race the spec allows). The task is made with the map locked, so
        // that it finds its entry when it ends, however soon.
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let session = Arc::clone(self);
        let reply_to = sink.clone();
        let mine = Arc::clone(&flag);
        let key = id.clone();
        let handle = tokio::spawn(async move {
            let reply = task.await;
            // Removing the entry before sending means a cancellation that arrives now finds
            // nothing to cancel, and the response goes out. (A cancelled request's entry is gone
            // already, and a later request may reuse its id.)
            let mut in_flight = session.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if let Entry::Occupied(entry) = in_flight.entry(key)
                && Arc::ptr_eq(&entry.get().cancel, &mine)
            {
                entry.remove();
            }
            drop(in_flight);
            if let Some(reply) = reply {
                let _ = reply_to.send(reply);
            }
        })
        .abort_handle();
        match in_flight.entry(id) {
            Entry::Vacant(vacant) => {
                vacant.insert(Running {
                    task: handle,
                    cancel: flag,
                    method,
                    _slot: slot,
                });
            }
            // A message that reused the id while this one ran its first poll started a request
            // of its own, registered first: this one runs on, and can only be stopped with the
            // session.
            Entry::Occupied(entry) => {
                tracing::debug!(request_id = %entry.key(), "a request id was reused while its request started");
            }
        }
        None
    }

    /// A list served from the registry's cache, answered at once. (A function of its own, not
    /// inlined: the request's future is made in its frame, which a request that runs as a
    /// task then does not carry on its stack.)
    #[inline(never)]
    fn answer_inline(self: &Arc<Self>, request: Request, sink: &Sink) -> Option<Outgoing> {
        let id = request.id.clone();
        let cancel = Arc::new(CancelFlag::default());
        let reply = now_or_never(super::dispatch::handle_request(
            self.link(),
            request,
            sink.clone(),
            cancel,
        ));
        reply.unwrap_or_else(|| {
            tracing::error!(request_id = %id, "an inline request did not finish at once");
            Some(Outgoing::error(
                Some(&id),
                &ErrorObject::internal("internal error"),
            ))
        })
    }

    fn handle_notification(&self, method: &str, params: &crate::protocol::Params) {
        match canonical_notification(method) {
            "notifications/initialized" if self.negotiated.get().is_some() => {
                self.initialized.store(true, Ordering::Release);
            }
            "notifications/cancelled" => {
                if let Some(id) = params.get("requestId").and_then(RequestId::from_json) {
                    tracing::debug!(request_id = %id, "request cancelled by the client");
                    self.cancel(&id);
                }
            }
            "notifications/roots/list_changed" => {
                *self.roots.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
            // Unknown notifications are ignored, as JSON-RPC asks.
            _ => {}
        }
    }

    /// Stops the request `id`, if it is running, without an answer, and frees its slot.
    pub(crate) fn cancel(&self, id: &RequestId) {
        let entry = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        if let Some(entry) = entry {
            entry.stop();
        }
    }

    /// Waits for in-flight requests (and, with `tasks`, the session's running tasks) to
    /// finish, up to `grace`, then stops the requests still running: returns them, as
    /// `method (id N)`. `opened` is when the transport opened it (which the transport keeps
    /// anyway, so a session does not), for `mcp.server.session.duration`.
    pub(crate) async fn shutdown(
        &self,
        opened: Instant,
        grace: Duration,
        tasks: bool,
    ) -> Vec<String> {
        let ended = self.closing.lock().unwrap_or_else(|e| e.into_inner()).end();
        if let (false, Some(observer), Some(negotiated)) =
            (ended, &self.core.telemetry, self.negotiated.get())
        {
            observer.session_ended(Some(negotiated.version), self.transport, opened.elapsed());
        }
        let deadline = tokio::time::Instant::now() + grace;
        let mut tasks_checked: Option<tokio::time::Instant> = None;
        while tokio::time::Instant::now() < deadline {
            let empty = self
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty();
            if empty && !tasks {
                break;
            }
            // The store is asked every 50 ms at most (it may be Redis).
            if empty && tasks_checked.is_none_or(|at| at.elapsed() >= Duration::from_millis(50)) {
                if self.running_tasks().await.is_empty() {
                    break;
                }
                tasks_checked = Some(tokio::time::Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let running: Vec<(RequestId, Running)> = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .collect();
        let stopped = running
            .into_iter()
            .map(|(id, entry)| {
                let method = entry.method.map_or("a request", Method::name);
                entry.stop();
                format!("{method} (id {id})")
            })
            .collect();
        // Whoever waits for the client's answers hears that it is gone.
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        stopped
    }

    /// The ids of the session's tasks still running.
    async fn running_tasks(&self) -> Vec<String> {
        #[cfg(feature = "tasks")]
        if let Some(name) = self.trace_name.get() {
            return self.core.tasks.running(name).await;
        }
        Vec::new()
    }

    /// The session ended for good: its tasks are forgotten, and those still running stop.
    /// Returns the ids of those that were running. (Tasks owned by an authenticated principal
    /// are the principal's, not the session's: they stay.)
    pub(crate) async fn release_tasks(&self) -> Vec<String> {
        let running = self.running_tasks().await;
        #[cfg(feature = "tasks")]
        if let Some(name) = self.trace_name.get() {
            let released = self.core.tasks.release(name).await;
            if released > 0 {
                tracing::debug!(
                    session = %self.trace_name.get().map_or("", String::as_str),
                    released,
                    "the session ended: its tasks were released"
                );
            }
        }
        running
    }

    /// Routes the client's answer to the request of ours it answers.
    fn receive_response(&self, id: RequestId, outcome: Result<Value, ErrorObject>) {
        if self.settle_answer(&id, outcome.clone()) {
            return;
        }
        // Another replica may be the one waiting for it.
        if let (Some(store), Some(session)) = (self.core.shared(), self.trace_name.get()) {
            let message = match outcome {
                Ok(result) => json!({ "result": result }),
                Err(error) => json!({ "error": error }),
            };
            let fanout = crate::server::store::Fanout::Answer {
                session: session.clone(),
                id,
                message,
            };
            let store = Arc::clone(store);
            tokio::spawn(async move {
                if let Err(error) = store.publish(fanout).await {
                    tracing::error!(%error, "an answer could not reach the replica waiting for it");
                }
            });
            return;
        }
        tracing::debug!(%id, "ignoring a response to no outstanding request");
    }

    /// Gives an answer to the request of ours waiting here for it; false when none waits.
    pub(crate) fn settle_answer(
        &self,
        id: &RequestId,
        outcome: Result<Value, ErrorObject>,
    ) -> bool {
        let waiter = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(outcome);
                true
            }
            None => false,
        }
    }

    /// What another replica needs to serve this session; `None` before `initialize`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn record(&self) -> Option<crate::server::store::SessionRecord> {
        let negotiated = self.negotiated.get()?;
        let mut subscriptions: Vec<String> = self
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        subscriptions.sort();
        Some(crate::server::store::SessionRecord {
            version: negotiated.version.as_str().to_owned(),
            client: serde_json::to_value(&negotiated.client.implementation).unwrap_or_default(),
            capabilities: serde_json::to_value(&negotiated.client.capabilities).unwrap_or_default(),
            initialized: self.initialized.load(Ordering::Acquire),
            log_level: self.log_level.load(Ordering::Relaxed),
            subscriptions,
            owner: None,
        })
    }

    /// Whether what a request can change in this session (initialization, log level,
    /// subscriptions) is as `record` has it: if so, [`record`](Self::record) would build the
    /// same record, so there is nothing to share.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn matches_record(&self, record: &crate::server::store::SessionRecord) -> bool {
        if self.initialized.load(Ordering::Acquire) != record.initialized
            || self.log_level.load(Ordering::Relaxed) != record.log_level
        {
            return false;
        }
        let subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        // The record's list is sorted and without repeats, so equal lengths and every one
        // present means the same set.
        subscriptions.len() == record.subscriptions.len()
            && record
                .subscriptions
                .iter()
                .all(|uri| subscriptions.contains(uri))
    }

    /// A session another replica opened, rebuilt here from its record.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn restore(
        core: Arc<Core>,
        notifier: Notifier,
        id: &str,
        record: &crate::server::store::SessionRecord,
        client: Option<Arc<Client>>,
    ) -> Option<Arc<Self>> {
        let version = ProtocolVersion::parse(&record.version)?;
        let info = Arc::new(ClientInfo {
            implementation: serde_json::from_value(record.client.clone()).ok()?,
            capabilities: serde_json::from_value(record.capabilities.clone()).ok()?,
        });
        let session = Self::new(core, Transport::StreamableHttp, notifier, client);
        let _ = session.negotiated.set(Negotiated {
            version,
            client: info,
        });
        session
            .initialized
            .store(record.initialized, Ordering::Release);
        session.log_level.store(record.log_level, Ordering::Relaxed);
        {
            let mut subscriptions = session
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            for uri in &record.subscriptions {
                if session.hold_subscription(uri) {
                    subscriptions.insert(uri.clone());
                }
            }
        }
        let _ = session.trace_name.set(id.to_owned());
        Some(session)
    }

    /// Sends a request to the client on `sink` and waits for the answer, up to the server's
    /// request timeout; a request that times out is cancelled with `notifications/cancelled`.
    pub(crate) async fn request_client(
        &self,
        method: &'static str,
        params: Value,
        sink: &Sink,
    ) -> Result<Value, ClientRequestError> {
        let id = RequestId::Number(self.next_request_id.fetch_add(1, Ordering::Relaxed));
        // With telemetry, the request runs in a `CLIENT` span, whose context the client
        // continues from `params._meta`.
        let span = match &self.core.telemetry {
            Some(observer) => observer.client_span(method, &id, self.trace_name.get()),
            None => tracing::Span::none(),
        };
        #[cfg(feature = "otel")]
        let params = {
            let mut params = params;
            if !span.is_disabled()
                && let Value::Object(members) = &mut params
                && let Value::Object(meta) = members
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()))
                && let Some(observer) = &self.core.telemetry
            {
                observer.carry_trace(&span, meta);
            }
            params
        };
        let outcome = tracing::Instrument::instrument(
            self.request_client_as(id, method, params, sink),
            span.clone(),
        )
        .await;
        if let Err(error) = &outcome
            && let Some(observer) = &self.core.telemetry
        {
            observer.client_failed(&span, error);
        }
        outcome
    }

    async fn request_client_as(
        &self,
        id: RequestId,
        method: &'static str,
        params: Value,
        sink: &Sink,
    ) -> Result<Value, ClientRequestError> {
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), tx);
        if sink
            .send(Outgoing::Message(encode_request(
                &id,
                method,
                Some(&params),
            )))
            .is_err()
        {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            return Err(ClientRequestError::Closed);
        }
        let timeout = self.core.options.request_timeout;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(ClientRequestError::Rejected(error)),
            Ok(Err(_)) => Err(ClientRequestError::Closed),
            Err(_) => {
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                let params = json!({"requestId": id, "reason": "timed out"});
                let _ = sink.send(Outgoing::Message(encode_notification(
                    "notifications/cancelled",
                    Some(&params),
                )));
                Err(ClientRequestError::Timeout(timeout))
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Its subscriptions give their bytes back to the server's total and its client's share.
        let subscriptions = self
            .subscriptions
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        let held: usize = subscriptions
            .iter()
            .map(|uri| uri.len() + ENTRY_OVERHEAD)
            .sum();
        self.core
            .subscription_bytes
            .account(self.client.as_ref())
            .give(held);
        for uri in subscriptions.iter() {
            self.core.subscription_changed(uri, false);
        }
    }
}

/// Refuses a subscription URI longer than `max` bytes.
/// The id of a session's first request to its client: 1, or with replicas sharing sessions a
/// random start, so two replicas serving one session never send the same id.
fn first_request_id(core: &Core) -> i64 {
    if core.shared().is_none() {
        return 1;
    }
    let mut bytes = [0u8; 4];
    let _ = getrandom::fill(&mut bytes);
    1 + (i64::from(u32::from_le_bytes(bytes)) << 16)
}

pub(crate) fn check_subscription(uri: &str, max: usize) -> Result<(), ErrorObject> {
    if uri.len() > max {
        return Err(ErrorObject::invalid_params(format!(
            "the URI is {} bytes long; subscriptions take URIs of at most {max} bytes",
            uri.len()
        )));
    }
    Ok(())
}

impl Link for Session {
    fn core(&self) -> &Arc<Core> {
        &self.core
    }

    fn trace_name(&self) -> Option<&str> {
        self.trace_name.get().map(String::as_str)
    }

    fn negotiated(&self) -> Option<(ProtocolVersion, Arc<ClientInfo>)> {
        self.negotiated
            .get()
            .map(|n| (n.version, Arc::clone(&n.client)))
    }

    fn initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    fn answer_handshake(&self, request: &Request) -> Vec<u8> {
        Session::answer_handshake(self, request)
    }

    fn set_log_level(&self, request: &Request) -> Result<Value, ErrorObject> {
        Session::set_log_level(self, request)
    }

    fn set_subscription(&self, request: &Request) -> Result<Value, ErrorObject> {
        Session::set_subscription(self, request)
    }

    fn peer(self: Arc<Self>, sink: Sink) -> Arc<dyn Peer> {
        Arc::new(RequestPeer {
            session: self,
            sink,
        })
    }

    fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .subscribe()
    }

    fn transport(&self) -> Transport {
        self.transport
    }
}

/// The output of `future` if it is ready on its first poll (an inline request's answer).
fn now_or_never<F: std::future::Future>(future: F) -> Option<F::Output> {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(future).poll(&mut context) {
        std::task::Poll::Ready(output) => Some(output),
        std::task::Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::Closing;

    #[tokio::test]
    async fn a_listen_hears_the_end_whether_it_began_before_or_after_it() {
        // A session without listens never makes the channel.
        let mut quiet = Closing::default();
        assert!(!quiet.end());
        assert!(quiet.listens.is_none());

        let mut closing = Closing::default();
        let mut before = closing.subscribe();
        assert!(!*before.borrow());
        assert!(!closing.end());
        assert!(closing.end(), "a second end is told from the first");
        let heard = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            before.wait_for(|ended| *ended),
        )
        .await;
        assert!(matches!(heard, Ok(Ok(_))));
        let after = closing.subscribe();
        assert!(*after.borrow());
    }
}
