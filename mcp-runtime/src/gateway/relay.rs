//! What an upstream asks and tells, carried to the downstream client it belongs to: the
//! connection's own handler (for what names no call), and each call's (for what comes on
//! that call's stream, or in its `input_required` rounds).

use std::sync::{Arc, Weak};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::link::{Gateway, Link, call_ended};
use crate::client::{ClientHandler, Notification};
use crate::context::{BoxFuture, ClientRequestError, Context};
use crate::handle::Broadcast as _;
use crate::protocol::{ClientCapabilities, ErrorObject, LoggingLevel, error_codes};

/// What the gateway declares to every upstream: it relays sampling (with tools), form and URL
/// elicitation and roots, each to a downstream client that has the capability.
pub(super) fn relayed_capabilities() -> ClientCapabilities {
    let caps = json!({
        "sampling": {"tools": {}},
        "elicitation": {"form": {}, "url": {}},
        "roots": {},
    });
    match caps {
        Value::Object(caps) => ClientCapabilities(caps),
        _ => ClientCapabilities::default(),
    }
}

/// Asks `ctx`'s client what the upstream asked, giving up when the call ends first.
async fn relay(
    ctx: Context,
    ended: watch::Receiver<bool>,
    key: Option<String>,
    method: String,
    params: Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let asked = ctx.relay(key.as_deref(), &method, params);
    tokio::select! {
        answer = asked => answer.map_err(|error| refusal(&method, error)),
        () = call_ended(ended) => Err(ErrorObject::internal(format!(
            "the call `{method}` belonged to has ended"
        ))),
    }
}

/// A downstream client's failure to answer, as the upstream hears it.
fn refusal(method: &str, error: ClientRequestError) -> ErrorObject {
    match error {
        ClientRequestError::Rejected(error) => error,
        ClientRequestError::Unsupported(what) => ErrorObject::new(
            error_codes::METHOD_NOT_FOUND,
            format!("the client behind the gateway does not support {what} (`{method}`)"),
        ),
        other => ErrorObject::internal(format!("the client behind the gateway: {other}")),
    }
}

/// The handler of one upstream connection: what names no call.
pub(crate) struct UpstreamHandler {
    pub(crate) link: Weak<Link>,
    pub(crate) gateway: Weak<Gateway>,
}

impl UpstreamHandler {
    /// A request that names no call goes to the upstream's one call in flight.
    fn route(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        let method = method.to_owned();
        let Some(link) = self.link.upgrade() else {
            return Box::pin(async move { Err(ErrorObject::method_not_found(&method)) });
        };
        match link.sole_call(false) {
            Ok((ctx, ended)) => Box::pin(relay(ctx, ended, None, method, params)),
            Err(calls) => {
                let why = if calls == 0 {
                    "no call is in flight through the gateway, so no client can answer it"
                        .to_owned()
                } else {
                    format!(
                        "{calls} calls are in flight through the gateway, and nothing in the \
                         request says which it belongs to"
                    )
                };
                tracing::debug!(upstream = %link.label, %method, %why, "an upstream request refused");
                Box::pin(
                    async move { Err(ErrorObject::internal(format!("`{method}` refused: {why}"))) },
                )
            }
        }
    }
}

impl ClientHandler for UpstreamHandler {
    fn capabilities(&self) -> ClientCapabilities {
        relayed_capabilities()
    }

    fn create_message(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.route("sampling/createMessage", params)
    }

    fn elicit(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.route("elicitation/create", params)
    }

    fn list_roots(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        // Roots are each downstream client's, and this connection is shared by all of them: a
        // roots request that names no call (a handshake-era upstream asks once it connects,
        // and caches) cannot be given one client's roots.
        let _ = params;
        if let Some(link) = self.link.upgrade() {
            // Said again if the upstream ends: its stderr may quote the refusal.
            link.roots_refused
                .store(true, std::sync::atomic::Ordering::Release);
            tracing::debug!(upstream = %link.label, "an upstream `roots/list` of no call refused");
        }
        Box::pin(async {
            Err(ErrorObject::internal(
                "`roots/list` refused: the gateway relays roots only within a call (on its \
                 stream, or as its input request), since its upstream connection is shared by \
                 every client",
            ))
        })
    }

    fn on_notification(&self, notification: Notification) -> BoxFuture<()> {
        if let Some(link) = self.link.upgrade() {
            notified(&link, &self.gateway, None, notification);
        }
        Box::pin(async {})
    }
}

/// The handler of one call: what comes on its stream and in its `input_required` rounds.
pub(crate) struct CallRelay {
    pub(crate) ctx: Context,
    pub(crate) ended: watch::Receiver<bool>,
    pub(crate) link: Weak<Link>,
    pub(crate) gateway: Weak<Gateway>,
}

impl CallRelay {
    fn ask(
        &self,
        key: Option<String>,
        method: &str,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        Box::pin(relay(
            self.ctx.clone(),
            self.ended.clone(),
            key,
            method.to_owned(),
            params,
        ))
    }
}

impl ClientHandler for CallRelay {
    fn capabilities(&self) -> ClientCapabilities {
        relayed_capabilities()
    }

    fn create_message(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.ask(None, "sampling/createMessage", params)
    }

    fn elicit(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.ask(None, "elicitation/create", params)
    }

    fn list_roots(&self, params: Map<String, Value>) -> BoxFuture<Result<Value, ErrorObject>> {
        self.ask(None, "roots/list", params)
    }

    fn input(
        &self,
        key: String,
        method: String,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        // The upstream's key is kept: a 2026-07-28 client sees the question under it.
        self.ask(Some(key), &method, params)
    }

    fn on_notification(&self, notification: Notification) -> BoxFuture<()> {
        if let Some(link) = self.link.upgrade() {
            notified(&link, &self.gateway, Some(&self.ctx), notification);
        }
        Box::pin(async {})
    }
}

/// What the upstream told: on a call's stream (`call`) or on no call's.
fn notified(
    link: &Arc<Link>,
    gateway: &Weak<Gateway>,
    call: Option<&Context>,
    notification: Notification,
) {
    match notification {
        Notification::ToolsListChanged => link.list_changed(true, false, false),
        Notification::PromptsListChanged => link.list_changed(false, true, false),
        Notification::ResourcesListChanged => link.list_changed(false, false, true),
        Notification::ResourceUpdated { uri } => {
            let Some(gateway) = gateway.upgrade() else {
                return;
            };
            // Only for what this upstream serves here: an upstream speaks for its own.
            let owned = gateway
                .owner_of(&uri)
                .is_some_and(|owner| Arc::ptr_eq(&owner, link));
            if owned && let Some(core) = gateway.core.upgrade() {
                core.resource_updated(&uri);
            }
        }
        Notification::Log {
            level,
            logger,
            data,
        } => {
            let logger = match (link.namespace.as_str(), logger) {
                ("", logger) => logger,
                (namespace, None) => Some(namespace.to_owned()),
                (namespace, Some(logger)) => Some(format!("{namespace}/{logger}")),
            };
            let target = match call {
                Some(ctx) => Some(ctx.clone()),
                None => link.sole_call(true).ok().map(|(ctx, _)| ctx),
            };
            match target {
                Some(ctx) => ctx.log_now(level, logger.as_deref(), data),
                None => log_here(link, level, logger.as_deref(), &data),
            }
        }
        other => {
            tracing::debug!(upstream = %link.label, notification = ?other, "an upstream notification not relayed");
        }
    }
}

/// An upstream log message that belongs to no call: the gateway's own log, at `debug`.
fn log_here(link: &Link, level: LoggingLevel, logger: Option<&str>, data: &Value) {
    tracing::debug!(
        upstream = %link.label,
        level = level.as_str(),
        logger = logger.unwrap_or(""),
        %data,
        "an upstream log message of no call"
    );
}
