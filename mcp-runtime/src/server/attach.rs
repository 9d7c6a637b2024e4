//! What a layer above the server builds into it: the gateway's proxied upstreams
//! (`Server::proxy`, in `gateway/`). The server knows them only through the two narrow traits
//! here, as the context knows the server through `Peer`: checked beside the server's own items
//! when it is built, started once it exists, told when a client subscribes to a resource.

use std::any::Any;
use std::sync::Arc;

use tokio::sync::watch;

use super::{Core, Items, Server};
use crate::error::DefinitionError;

/// Something built into a server from above it, before the server is built.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) trait Attachment: Any + Send + Sync {
    /// Adds to `errors` what is wrong with it beside the server's own `items` (names it
    /// reserves that an item takes, say).
    fn check(&self, items: &Items, errors: &mut Vec<DefinitionError>);

    /// Starts it on the built server (inside a tokio runtime: `check` refused otherwise).
    /// Returns it running, and a flag that turns `true` once the server may serve (its first
    /// connections made or failed): the transports wait for it.
    fn start(self: Box<Self>, core: &Arc<Core>) -> (Arc<dyn Attached>, watch::Receiver<bool>);

    /// What it will add to what the server serves, in words for the start-up line ("the
    /// items of 2 proxied upstreams, ...").
    fn to_come(&self) -> String;

    /// For [`Server::attachment_mut`]: the attachment as `Any`.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// An attachment, running beside the server.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) trait Attached: Any + Send + Sync {
    /// A session or listen subscribed to `uri` (`true`), or one of them gave it up (`false`;
    /// others may still hold it: see [`Core::is_subscribed`]).
    fn subscription_changed(&self, uri: &str, subscribed: bool);

    /// What the server waits for before it serves, in words for the log ("the first
    /// connections of 2 upstreams (`time`, `docs`), at most 30 s"); `None` when nothing.
    fn waiting_for(&self) -> Option<String>;

    /// The attachment as `Any`, for the layer that made it.
    fn as_any(&self) -> &dyn Any;
}

#[cfg_attr(not(feature = "client"), allow(dead_code))]
impl Server {
    /// The attachment of type `T`, made (empty) on first use. A server has one attachment: the
    /// first type asked for keeps the place, and asking for another type replaces it.
    pub(crate) fn attachment_mut<T: Attachment + Default>(&mut self) -> &mut T {
        let present = self
            .attachment
            .as_mut()
            .is_some_and(|a| a.as_any_mut().downcast_mut::<T>().is_some());
        if !present {
            self.attachment = Some(Box::<T>::default());
        }
        match self
            .attachment
            .as_mut()
            .and_then(|a| a.as_any_mut().downcast_mut::<T>())
        {
            Some(attachment) => attachment,
            None => unreachable!("the attachment was just made a `T`"),
        }
    }

    /// Takes `namespace` for `by` (`Server::mount`, `Server::proxy`); a problem for `build`
    /// when another mount or proxy has it. The empty namespace (a proxy's items under their
    /// own names) is never exclusive.
    pub(crate) fn claim_namespace(&mut self, namespace: &str, by: &'static str) {
        if namespace.is_empty() {
            return;
        }
        if let Some((_, first)) = self.namespaces.iter().find(|(n, _)| n == namespace) {
            self.pending_errors.push(DefinitionError::Duplicate {
                kind: "namespace",
                name: namespace.to_owned(),
                first: format!("`{first}`"),
                second: format!("`{by}`"),
            });
            return;
        }
        self.namespaces.push((namespace.to_owned(), by));
    }

    /// Reports `error` when the server is built.
    pub(crate) fn defer_error(&mut self, error: DefinitionError) {
        self.pending_errors.push(error);
    }

    /// Advertises the tasks extension even when no tool is task-capable at build: tools that
    /// may run as tasks come later (a proxied upstream's).
    #[cfg(feature = "tasks")]
    pub(crate) fn advertise_tasks(&mut self) {
        self.options.tasks.advertise = true;
    }
}

impl Core {
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    /// Whether any session or `subscriptions/listen` here holds a subscription to `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.live_sessions().iter().any(|session| {
            session
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(uri)
        }) || self.listeners.watches(uri)
    }

    /// Turns `true` when the server shuts down, and fails once the server is gone: what an
    /// attachment's tasks end with.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn watch_closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Tells the attachment that `uri` was subscribed to, or given up by one holder.
    pub(crate) fn subscription_changed(&self, uri: &str, subscribed: bool) {
        if let Some(attached) = self.attached.get() {
            attached.subscription_changed(uri, subscribed);
        }
    }
}

impl super::McpService {
    /// Waits until the server is ready to be served: at once, unless it proxies upstream
    /// servers (`Server::proxy`), whose first connections it waits for (each made, or failed,
    /// within its connect timeout). `serve_stdio`, `serve_connection` and `serve_http` wait
    /// for this themselves; a server mounted with [`into_router`](Self::into_router) can call
    /// it before it starts taking requests, so its first `tools/list` already shows the
    /// upstreams' tools.
    pub async fn ready(&self) {
        if let Some(ready) = self.core.ready.get() {
            let mut ready = ready.clone();
            // An error means the attachment is gone: nothing more to wait for.
            let _ = ready.wait_for(|ready| *ready).await;
        }
    }

    /// [`ready`](Self::ready), saying first in the log what it waits for before `then` (the
    /// transport's next step: "listening on http://127.0.0.1:8000/mcp"), when it waits at all.
    pub(crate) async fn ready_logged(&self, then: &str) {
        let Some(ready) = self.core.ready.get() else {
            return;
        };
        if !*ready.borrow()
            && let Some(what) = self.core.attached.get().and_then(|a| a.waiting_for())
        {
            tracing::info!("waiting for {what} before {then}");
        }
        self.ready().await;
    }
}
