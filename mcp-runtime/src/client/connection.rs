//! The engine under every transport: ids, the requests in flight and their answers, progress
//! routed to its request, the server's requests answered by the handler, notifications queued
//! for it, cancellation when a call is dropped, and the end of the connection.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::AbortHandle;

use super::error::ClientError;
use super::handler::{ClientHandler, answer};
use super::types::{Notification, Progress};
use crate::protocol::{
    ErrorObject, Incoming, Message, ProtocolVersion, RequestId, SUBSCRIPTION_ID_KEY, encode_error,
    encode_notification, encode_request, encode_response, parse,
};

/// A future a transport returns, borrowing it.
pub(crate) type SendFuture<'a> = Pin<Box<dyn Future<Output = Result<(), ClientError>> + Send + 'a>>;

/// One message for the server.
pub(crate) enum Outbound {
    /// A request of ours, with what HTTP puts in headers.
    Request {
        /// Its id.
        id: RequestId,
        /// The encoded message.
        bytes: Vec<u8>,
        /// Headers for this request only (2026-07-28: `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
        headers: Vec<(String, String)>,
    },
    /// A notification, or our answer to a request of the server.
    Message(Vec<u8>),
}

/// How bytes reach the server and come back.
pub(crate) trait Transport: Send + Sync + 'static {
    /// Sends one message. Where answers come back on the request itself (HTTP), a request's
    /// send returns once its answer was read and handed to [`Core::receive`]; dropping it ends
    /// the exchange.
    fn send(&self, message: Outbound) -> SendFuture<'_>;

    /// Whether a request's answer has arrived once [`send`](Transport::send) returns.
    fn answers_in_send(&self) -> bool;

    /// Tells the server a request is given up (`notifications/cancelled`, already encoded),
    /// without waiting: the call that was dropped cannot wait. 2026-07-28 HTTP sends nothing:
    /// closing the request's stream, which dropping its send did, is the cancellation.
    fn cancel(&self, notification: Vec<u8>, stateless: bool);

    /// The revision agreed (or being probed), for transports that put it in headers; `None`
    /// before one is.
    fn set_protocol_version(&self, version: Option<ProtocolVersion>) {
        let _ = version;
    }

    /// The handshake is done: HTTP opens its standalone stream.
    fn opened(&self) {}

    /// Ends the connection in order (HTTP: DELETE the session; stdio: close the child's stdin
    /// and wait a moment for it to exit).
    fn close(&self) -> SendFuture<'_>;

    /// The child process's stderr, when it is captured: its last lines.
    fn stderr_tail(&self) -> Option<String> {
        None
    }
}

/// The client's bounds (the limits table of [`crate::client`]).
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub(crate) max_message_size: usize,
    pub(crate) max_depth: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) max_server_requests: usize,
    pub(crate) notification_queue: usize,
    pub(crate) notification_queue_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_size: 16 * 1024 * 1024,
            max_depth: 128,
            max_in_flight: 256,
            max_server_requests: 64,
            notification_queue: 1024,
            notification_queue_bytes: 16 * 1024 * 1024,
        }
    }
}

pub(crate) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;
/// What waits in the notification queue: a notification (its size, and the handler of the
/// request whose stream it came on, if that request brought one), or a mark that tells who
/// waits for it that everything queued before it was handled.
enum Queued {
    Notification(Notification, usize, Option<Arc<dyn ClientHandler>>),
    Mark(oneshot::Sender<()>),
}
type Answer = Result<Value, ErrorObject>;

/// How one request is sent: its id (a fresh one if `None`), HTTP headers, progress callback,
/// own handler, and timeout.
pub(crate) struct Call {
    pub(crate) id: Option<RequestId>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) handler: Option<Arc<dyn ClientHandler>>,
    pub(crate) timeout: Duration,
}

impl Call {
    /// A request with nothing but a timeout.
    pub(crate) fn new(timeout: Duration) -> Self {
        Self {
            id: None,
            headers: Vec::new(),
            progress: None,
            handler: None,
            timeout,
        }
    }
}

/// The shared state of one connection.
pub(crate) struct Core {
    pub(crate) limits: Limits,
    handler: Arc<dyn ClientHandler>,
    transport: OnceLock<Arc<dyn Transport>>,
    next_id: AtomicI64,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
    progress: Mutex<HashMap<String, ProgressFn>>,
    server_requests: Mutex<HashMap<RequestId, AbortHandle>>,
    in_flight: Semaphore,
    notifications: mpsc::Sender<Queued>,
    /// Notifications queued, and handled, so far: equal when nothing waits in the queue.
    queued: AtomicU64,
    handled: Arc<AtomicU64>,
    /// The handlers of requests that brought their own, by request id.
    call_handlers: Mutex<HashMap<RequestId, Arc<dyn ClientHandler>>>,
    queued_bytes: Arc<AtomicUsize>,
    dropped_notifications: AtomicU64,
    dropping: AtomicBool,
    closed: Mutex<Option<String>>,
    /// Turns `true` when the connection ends.
    ended: tokio::sync::watch::Sender<bool>,
    stateless: AtomicBool,
    acks: Mutex<HashMap<RequestId, oneshot::Sender<Map<String, Value>>>>,
}

impl Core {
    /// A connection whose notifications go to `handler`, one at a time, from a bounded queue.
    pub(crate) fn new(handler: Arc<dyn ClientHandler>, limits: Limits) -> Arc<Self> {
        let (notifications, mut queue) = mpsc::channel::<Queued>(limits.notification_queue.max(1));
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        let consumer = Arc::clone(&handler);
        let bytes = Arc::clone(&queued_bytes);
        let handled = Arc::new(AtomicU64::new(0));
        let handled_count = Arc::clone(&handled);
        tokio::spawn(async move {
            while let Some(queued) = queue.recv().await {
                let (notification, size, handler) = match queued {
                    Queued::Notification(notification, size, handler) => {
                        (notification, size, handler)
                    }
                    Queued::Mark(done) => {
                        let _ = done.send(());
                        continue;
                    }
                };
                bytes.fetch_sub(size, Ordering::Relaxed);
                match handler {
                    Some(handler) => handler.on_notification(notification).await,
                    None => consumer.on_notification(notification).await,
                }
                handled_count.fetch_add(1, Ordering::Release);
            }
        });
        Arc::new(Self {
            in_flight: Semaphore::new(limits.max_in_flight.max(1)),
            limits,
            handler,
            transport: OnceLock::new(),
            next_id: AtomicI64::new(1),
            pending: Mutex::default(),
            progress: Mutex::default(),
            server_requests: Mutex::default(),
            notifications,
            queued: AtomicU64::new(0),
            handled,
            call_handlers: Mutex::default(),
            queued_bytes,
            dropped_notifications: AtomicU64::new(0),
            dropping: AtomicBool::new(false),
            closed: Mutex::new(None),
            ended: tokio::sync::watch::channel(false).0,
            stateless: AtomicBool::new(false),
            acks: Mutex::default(),
        })
    }

    pub(crate) fn set_transport(&self, transport: Arc<dyn Transport>) {
        let _ = self.transport.set(transport);
    }

    pub(crate) fn transport(&self) -> Result<&Arc<dyn Transport>, ClientError> {
        self.transport
            .get()
            .ok_or_else(|| ClientError::Closed("no transport".into()))
    }

    pub(crate) fn handler(&self) -> &Arc<dyn ClientHandler> {
        &self.handler
    }

    pub(crate) fn set_stateless(&self, stateless: bool) {
        self.stateless.store(stateless, Ordering::Relaxed);
    }

    fn is_stateless(&self) -> bool {
        self.stateless.load(Ordering::Relaxed)
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Waits for the `notifications/subscriptions/acknowledged` of listen request `id`; its
    /// params.
    pub(crate) fn await_ack(&self, id: &RequestId) -> oneshot::Receiver<Map<String, Value>> {
        let (tx, rx) = oneshot::channel();
        let mut acks = lock(&self.acks);
        acks.retain(|_, waiter| !waiter.is_closed());
        acks.insert(id.clone(), tx);
        rx
    }

    /// Whether request `id` still waits for its answer.
    pub(crate) fn is_pending(&self, id: &RequestId) -> bool {
        lock(&self.pending).contains_key(id)
    }

    /// How many notifications were dropped because the queue was full.
    pub(crate) fn dropped_notifications(&self) -> u64 {
        self.dropped_notifications.load(Ordering::Relaxed)
    }

    /// Turns `true` when the connection ends.
    pub(crate) fn ended(&self) -> tokio::sync::watch::Receiver<bool> {
        self.ended.subscribe()
    }

    /// Completes once every notification received so far has been handled (waiting for room
    /// in the queue if it is full).
    pub(crate) async fn drained(&self) {
        // Nothing waiting (the usual case): no round trip through the queue.
        if self.handled.load(Ordering::Acquire) == self.queued.load(Ordering::Acquire) {
            return;
        }
        let (done, handled) = oneshot::channel();
        if self.notifications.send(Queued::Mark(done)).await.is_ok() {
            let _ = handled.await;
        }
    }

    /// Why the connection is closed, if it is.
    pub(crate) fn closed_reason(&self) -> Option<String> {
        lock(&self.closed).clone()
    }

    /// Ends the connection: every request in flight fails with `reason`, later ones at once.
    pub(crate) fn close(&self, reason: String) {
        {
            let mut closed = lock(&self.closed);
            if closed.is_none() {
                tracing::debug!(%reason, "MCP client connection closed");
                *closed = Some(reason);
            }
        }
        self.ended.send_replace(true);
        // Dropping the senders wakes every waiter, which then reads the reason.
        lock(&self.pending).clear();
        for (_, task) in lock(&self.server_requests).drain() {
            task.abort();
        }
    }

    fn closed_error(&self) -> ClientError {
        ClientError::Closed(
            self.closed_reason()
                .unwrap_or_else(|| "the connection ended".into()),
        )
    }

    /// Sends a notification.
    pub(crate) async fn notify(
        &self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(), ClientError> {
        if self.closed_reason().is_some() {
            return Err(self.closed_error());
        }
        let bytes = encode_notification(method, params);
        self.transport()?.send(Outbound::Message(bytes)).await
    }

    /// Sends one request and waits for its answer, at most `timeout`. Dropping the future (or
    /// the timeout) gives the request up and tells the server so.
    pub(crate) async fn call(
        self: &Arc<Self>,
        method: &str,
        mut params: Map<String, Value>,
        call: Call,
    ) -> Result<Value, ClientError> {
        let Call {
            id,
            headers,
            progress,
            handler,
            timeout,
        } = call;
        if self.closed_reason().is_some() {
            return Err(self.closed_error());
        }
        let transport = Arc::clone(self.transport()?);
        let _permit = self
            .in_flight
            .acquire()
            .await
            .map_err(|_| self.closed_error())?;
        let id = id.unwrap_or_else(|| self.next_id());
        let (tx, mut rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        let own_handler = handler.is_some();
        if let Some(handler) = handler {
            lock(&self.call_handlers).insert(id.clone(), handler);
        }
        let token = progress.map(|callback| {
            let token = Value::String(format!("{}-{id}", std::process::id()));
            let key = token.to_string();
            if let Value::Object(meta) = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()))
            {
                meta.insert("progressToken".into(), token);
            }
            lock(&self.progress).insert(key.clone(), callback);
            key
        });
        let mut guard = CallGuard {
            core: self,
            id: id.clone(),
            token,
            own_handler,
            armed: true,
        };
        let bytes = encode_request(&id, method, Some(&params));
        let exchange = async {
            transport
                .send(Outbound::Request {
                    id: id.clone(),
                    bytes,
                    headers,
                })
                .await?;
            if transport.answers_in_send() {
                match rx.try_recv() {
                    Ok(answer) => Ok(answer),
                    Err(oneshot::error::TryRecvError::Closed) => Err(self.closed_error()),
                    Err(oneshot::error::TryRecvError::Empty) => Err(ClientError::Transport(
                        "the server ended the response without answering the request".into(),
                    )),
                }
            } else {
                (&mut rx).await.map_err(|_| self.closed_error())
            }
        };
        let Ok(outcome) = tokio::time::timeout(timeout, exchange).await else {
            return Err(ClientError::Timeout {
                method: method.to_owned(),
                timeout,
            });
        };
        // Answered (or failed on our side, where the server may still be at it: a transport
        // error leaves the guard armed, so it hears of it).
        let answer = outcome?;
        guard.armed = false;
        answer.map_err(ClientError::Rpc)
    }

    /// Reads what came from the server: one message, or a batch.
    pub(crate) fn receive(self: &Arc<Self>, bytes: &[u8]) {
        self.receive_for(bytes, None);
    }

    /// Reads what came on the response stream of request `related` (HTTP): the server's
    /// requests and notifications there go to that request's own handler, if it has one.
    pub(crate) fn receive_for(self: &Arc<Self>, bytes: &[u8], related: Option<&RequestId>) {
        let handler = related.and_then(|id| lock(&self.call_handlers).get(id).cloned());
        match parse(bytes, self.limits.max_depth) {
            Ok(Incoming::Single(Ok(message))) => self.route(message, bytes.len(), handler),
            Ok(Incoming::Single(Err(invalid))) => {
                tracing::debug!(error = %invalid.error, "the server sent an invalid JSON-RPC message");
            }
            Ok(Incoming::Batch(items)) => {
                for item in items {
                    match Message::from_value(item) {
                        Ok(message) => self.route(message, 0, handler.clone()),
                        Err(invalid) => {
                            tracing::debug!(error = %invalid.error, "an invalid message in a batch from the server");
                        }
                    }
                }
            }
            Err(error) => tracing::debug!(%error, "the server sent something that is not JSON"),
        }
    }

    /// Fails the request a message over the size limit answered, when its id could be read.
    pub(crate) fn too_long(&self, id: Option<RequestId>, length: usize) {
        tracing::warn!(
            length,
            limit = self.limits.max_message_size,
            "the server sent a message over the client's size limit; skipped"
        );
        if let Some(id) = id
            && let Some(waiter) = lock(&self.pending).remove(&id)
        {
            let _ = waiter.send(Err(ErrorObject::internal(format!(
                "the answer ({length} bytes) is over the client's message size limit"
            ))));
        }
    }

    fn route(
        self: &Arc<Self>,
        message: Message,
        size: usize,
        handler: Option<Arc<dyn ClientHandler>>,
    ) {
        match message {
            Message::Response(response) => {
                let waiter = lock(&self.pending).remove(&response.id);
                match waiter {
                    Some(waiter) => {
                        let _ = waiter.send(response.outcome);
                    }
                    None => tracing::debug!(id = %response.id, "an answer to no request in flight"),
                }
            }
            Message::Request(request) => {
                self.serve_request(
                    request.id,
                    request.method.into_owned(),
                    request.params.into_map(),
                    handler,
                );
            }
            Message::Notification(notification) => {
                self.notification(
                    &notification.method,
                    notification.params.into_map(),
                    size,
                    handler,
                );
            }
        }
    }

    fn notification(
        &self,
        method: &str,
        params: Map<String, Value>,
        size: usize,
        handler: Option<Arc<dyn ClientHandler>>,
    ) {
        match method {
            "notifications/progress" => {
                let key = params.get("progressToken").map(Value::to_string);
                let callback = key.and_then(|key| lock(&self.progress).get(&key).cloned());
                if let (Some(callback), Some(progress)) = (callback, Progress::parse(&params)) {
                    callback(progress);
                    return;
                }
            }
            "notifications/subscriptions/acknowledged" => {
                let id = params
                    .get("_meta")
                    .and_then(|meta| meta.get(SUBSCRIPTION_ID_KEY))
                    .and_then(RequestId::from_json);
                if let Some(waiter) = id.and_then(|id| lock(&self.acks).remove(&id)) {
                    let _ = waiter.send(params.clone());
                }
            }
            "notifications/cancelled" => {
                // The server gave up a request it sent us: stop answering it.
                let id = params.get("requestId").and_then(RequestId::from_json);
                if let Some(task) = id.and_then(|id| lock(&self.server_requests).remove(&id)) {
                    task.abort();
                    return;
                }
            }
            _ => {}
        }
        self.enqueue(Notification::parse(method, params), size, handler);
    }

    fn enqueue(
        &self,
        notification: Notification,
        size: usize,
        handler: Option<Arc<dyn ClientHandler>>,
    ) {
        let size = size.max(64);
        let bytes = self.queued_bytes.fetch_add(size, Ordering::Relaxed) + size;
        let fits = bytes <= self.limits.notification_queue_bytes;
        if fits
            && self
                .notifications
                .try_send(Queued::Notification(notification, size, handler))
                .is_ok()
        {
            self.queued.fetch_add(1, Ordering::Release);
            self.dropping.store(false, Ordering::Relaxed);
            return;
        }
        self.queued_bytes.fetch_sub(size, Ordering::Relaxed);
        self.dropped_notifications.fetch_add(1, Ordering::Relaxed);
        if !self.dropping.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                limit = self.limits.notification_queue,
                bytes = self.limits.notification_queue_bytes,
                "the server's notifications come faster than the handler takes them; dropping the newest until the queue drains"
            );
        }
    }

    /// Answers a request of the server with the handler, in a task of its own (bounded).
    fn serve_request(
        self: &Arc<Self>,
        id: RequestId,
        method: String,
        params: Map<String, Value>,
        handler: Option<Arc<dyn ClientHandler>>,
    ) {
        let Ok(transport) = self.transport().cloned() else {
            return;
        };
        let mut requests = lock(&self.server_requests);
        requests.retain(|_, task| !task.is_finished());
        if requests.len() >= self.limits.max_server_requests {
            drop(requests);
            let error = ErrorObject::new(
                crate::protocol::error_codes::SERVER_ERROR,
                "too many requests from the server in flight",
            );
            let bytes = encode_error(Some(&id), &error);
            tokio::spawn(async move {
                let _ = transport.send(Outbound::Message(bytes)).await;
            });
            return;
        }
        let handler = handler.unwrap_or_else(|| Arc::clone(&self.handler));
        let answering = answer(handler.as_ref(), &method, params);
        let core = Arc::downgrade(self);
        let reply_id = id.clone();
        let task = tokio::spawn(async move {
            let outcome = answering.await;
            let bytes = match &outcome {
                Ok(result) => encode_response(&reply_id, result),
                Err(error) => encode_error(Some(&reply_id), error),
            };
            if let Some(core) = Weak::upgrade(&core) {
                lock(&core.server_requests).remove(&reply_id);
            }
            if let Err(error) = transport.send(Outbound::Message(bytes)).await {
                tracing::debug!(%error, method, "could not answer the server's request");
            }
        });
        requests.insert(id, task.abort_handle());
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        for (_, task) in lock(&self.server_requests).drain() {
            task.abort();
        }
    }
}

/// Forgets a request when its call ends, and tells the server when it ended unanswered.
struct CallGuard<'a> {
    core: &'a Core,
    id: RequestId,
    token: Option<String>,
    own_handler: bool,
    armed: bool,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        lock(&self.core.pending).remove(&self.id);
        if let Some(token) = &self.token {
            lock(&self.core.progress).remove(token);
        }
        if self.own_handler {
            lock(&self.core.call_handlers).remove(&self.id);
        }
        if self.armed
            && self.core.closed_reason().is_none()
            && let Some(transport) = self.core.transport.get()
        {
            let params = json!({"requestId": self.id, "reason": "the client gave up the request"});
            let bytes = encode_notification("notifications/cancelled", Some(&params));
            transport.cancel(bytes, self.core.is_stateless());
        }
    }
}

/// Locks a mutex, whether or not a panic poisoned it (nothing here is left half-done).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
