//! A handle on a running server, for application code that changes what the server offers.
//!
//! The server implements the narrow [`Broadcast`] trait defined here; handlers reach it through
//! [`Context::server`](crate::Context::server) and application code through
//! [`Service::handle`](crate::Service::handle), without either importing the server.

use std::fmt;
use std::sync::Arc;

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Prompts,
}

/// What a server does with announcements.
pub(crate) trait Broadcast: Send + Sync {
    /// Sends `notifications/resources/updated` to every session subscribed to `uri`.
    fn resource_updated(&self, uri: &str);
    /// Sends `notifications/<kind>/list_changed` to every session that can receive it.
    fn list_changed(&self, kind: ListKind);
}

/// Announces changes to the clients of a running server. Cheap to clone.
///
/// ```no_run
/// # async fn run(service: mcp_runtime::Service) {
/// let handle = service.handle();
/// // ... a file changed on disk:
/// handle.resource_updated("files:///notes.txt");
/// # }
/// ```
#[derive(Clone)]
pub struct ServerHandle {
    inner: Arc<dyn Broadcast>,
}

impl ServerHandle {
    pub(crate) fn new(inner: Arc<dyn Broadcast>) -> Self {
        Self { inner }
    }

    /// Tells every session subscribed to `uri` (`resources/subscribe`) that it changed, with
    /// `notifications/resources/updated`. Sessions that did not subscribe hear nothing.
    pub fn resource_updated(&self, uri: impl AsRef<str>) {
        self.inner.resource_updated(uri.as_ref());
    }

    /// Sends `notifications/resources/list_changed` to every initialized session.
    pub fn resources_list_changed(&self) {
        self.inner.list_changed(ListKind::Resources);
    }

    /// Sends `notifications/tools/list_changed` to every initialized session.
    pub fn tools_list_changed(&self) {
        self.inner.list_changed(ListKind::Tools);
    }

    /// Sends `notifications/prompts/list_changed` to every initialized session.
    pub fn prompts_list_changed(&self) {
        self.inner.list_changed(ListKind::Prompts);
    }
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle").finish_non_exhaustive()
    }
}
