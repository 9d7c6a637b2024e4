//! How the client answers what the server asks (sampling, elicitation, roots) and hears what it
//! tells (notifications).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::types::Notification;
use crate::context::BoxFuture;
use crate::protocol::{ClientCapabilities, ErrorObject};

/// The user side of a client: answers the server's requests and receives its notifications.
///
/// In the handshake era the server's requests arrive as JSON-RPC requests; in 2026-07-28 as the
/// `inputRequests` of an `input_required` result, which the client answers through this same
/// handler and retries the request with (the caller sees only the final result). Either way
/// each answer is the result object the spec gives the method (a `CreateMessageResult`, an
/// `ElicitResult`, a `ListRootsResult`), or an error sent back as the JSON-RPC error.
///
/// The params and answers are JSON, as sent, so a gateway can relay them unchanged; build an
/// answer with the runtime's own types where they fit
/// ([`SamplingResult`](crate::context::SamplingResult), [`Root`](crate::context::Root)) and
/// `serde_json::to_value`.
///
/// Every method has a default: requests are refused with -32601, notifications ignored.
/// [`capabilities`](ClientHandler::capabilities) says what the client declares, so the server
/// sends only what the handler answers.
pub trait ClientHandler: Send + Sync + 'static {
    /// What the client declares (`sampling`, `elicitation`, `roots`), in `initialize` and in
    /// every 2026-07-28 request's envelope. None by default.
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }

    /// `sampling/createMessage`: a model completion.
    fn create_message(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        let _ = params;
        Box::pin(async { Err(ErrorObject::method_not_found("sampling/createMessage")) })
    }

    /// `elicitation/create`: the user's input, in a form or at a URL.
    fn elicit(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        let _ = params;
        Box::pin(async { Err(ErrorObject::method_not_found("elicitation/create")) })
    }

    /// `roots/list`: the client's roots.
    fn list_roots(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        let _ = params;
        Box::pin(async { Err(ErrorObject::method_not_found("roots/list")) })
    }

    /// Any other request from the server (`ping` is answered before it gets here).
    fn other_request(
        &self,
        method: String,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        let _ = params;
        Box::pin(async move { Err(ErrorObject::method_not_found(&method)) })
    }

    /// One input request of a 2026-07-28 `input_required` result, under `key`, the server's
    /// name for it (its answer goes back under the same key). By default it is answered as the
    /// request of its `method` would be ([`create_message`](Self::create_message), ...); a
    /// gateway keeps the key, to ask its own client under it. The input requests of one round
    /// are answered concurrently.
    fn input(
        &self,
        key: String,
        method: String,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        let _ = key;
        match method.as_str() {
            "sampling/createMessage" => self.create_message(params),
            "elicitation/create" => self.elicit(params),
            "roots/list" => self.list_roots(params),
            _ => self.other_request(method, params),
        }
    }

    /// A notification from the server. Notifications are delivered one at a time, in order,
    /// from a bounded queue: while this runs, later ones wait (see the client's limits table
    /// for what is dropped when the queue is full).
    fn on_notification(&self, notification: Notification) -> BoxFuture<()> {
        let _ = notification;
        Box::pin(async {})
    }
}

/// A shared handler answers as the handler it shares (one handler for several clients, or one
/// the caller keeps a handle on).
impl<T: ClientHandler + ?Sized> ClientHandler for Arc<T> {
    fn capabilities(&self) -> ClientCapabilities {
        (**self).capabilities()
    }

    fn create_message(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        (**self).create_message(params)
    }

    fn elicit(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        (**self).elicit(params)
    }

    fn list_roots(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        (**self).list_roots(params)
    }

    fn other_request(
        &self,
        method: String,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        (**self).other_request(method, params)
    }

    fn input(
        &self,
        key: String,
        method: String,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        (**self).input(key, method, params)
    }

    fn on_notification(&self, notification: Notification) -> BoxFuture<()> {
        (**self).on_notification(notification)
    }
}

/// The handler of a client built without one: declares nothing, refuses every request.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoHandler;

impl ClientHandler for NoHandler {}

type RequestFn =
    Arc<dyn Fn(String, Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> + Send + Sync>;
type NotificationFn = Arc<dyn Fn(Notification) -> BoxFuture<()> + Send + Sync>;

/// A [`ClientHandler`] made of closures, for a client that needs no type of its own:
///
/// ```
/// use mcp_runtime::client::{FnHandler, Notification};
/// use serde_json::json;
///
/// let handler = FnHandler::new()
///     .capabilities(json!({"sampling": {}}))
///     .on_request(|method, _params| async move {
///         match method.as_str() {
///             "sampling/createMessage" => Ok(json!({
///                 "role": "assistant",
///                 "content": {"type": "text", "text": "42"},
///                 "model": "stub",
///             })),
///             other => Err(mcp_runtime::protocol::ErrorObject::method_not_found(other)),
///         }
///     })
///     .on_notification(|notification| async move {
///         if let Notification::Log { data, .. } = notification {
///             eprintln!("server log: {data}");
///         }
///     });
/// # let _ = handler;
/// ```
#[derive(Clone, Default)]
pub struct FnHandler {
    capabilities: ClientCapabilities,
    on_request: Option<RequestFn>,
    on_notification: Option<NotificationFn>,
}

impl std::fmt::Debug for FnHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnHandler")
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl FnHandler {
    /// A handler that declares nothing and answers nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The capabilities to declare, as JSON (`{"sampling": {}, "elicitation": {}}`); anything
    /// that is not an object declares none.
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = match capabilities {
            Value::Object(map) => ClientCapabilities(map),
            _ => ClientCapabilities::default(),
        };
        self
    }

    /// Answers every request of the server (sampling, elicitation, roots, any other) with
    /// `f(method, params)`.
    pub fn on_request<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.on_request = Some(Arc::new(move |method, params| Box::pin(f(method, params))));
        self
    }

    /// Receives every notification with `f`.
    pub fn on_notification<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Notification) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.on_notification = Some(Arc::new(move |n| Box::pin(f(n))));
        self
    }

    fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        match &self.on_request {
            Some(f) => f(method.to_owned(), params),
            None => {
                let error = ErrorObject::method_not_found(method);
                Box::pin(async move { Err(error) })
            }
        }
    }
}

impl ClientHandler for FnHandler {
    fn capabilities(&self) -> ClientCapabilities {
        self.capabilities.clone()
    }

    fn create_message(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.request("sampling/createMessage", params)
    }

    fn elicit(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.request("elicitation/create", params)
    }

    fn list_roots(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.request("roots/list", params)
    }

    fn other_request(
        &self,
        method: String,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        self.request(&method, params)
    }

    fn on_notification(&self, notification: Notification) -> BoxFuture<()> {
        match &self.on_notification {
            Some(f) => f(notification),
            None => Box::pin(async {}),
        }
    }
}

/// Routes one request of the server to the handler method for it.
pub(crate) fn answer(
    handler: &dyn ClientHandler,
    method: &str,
    params: Map<String, Value>,
) -> BoxFuture<Result<Value, ErrorObject>> {
    match method {
        "ping" => Box::pin(async { Ok(Value::Object(Map::new())) }),
        "sampling/createMessage" => handler.create_message(params),
        "elicitation/create" => handler.elicit(params),
        "roots/list" => handler.list_roots(params),
        other => handler.other_request(other.to_owned(), params),
    }
}
