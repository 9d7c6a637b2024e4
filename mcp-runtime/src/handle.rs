//! A handle on a running server, for handlers and application code that announce or change
//! what the server offers.
//!
//! The server implements the narrow [`Broadcast`] trait defined here; handlers reach it through
//! [`Context::server`](crate::Context::server) and application code through
//! [`McpService::handle`](crate::McpService::handle), without either importing the server.
//! This module sits beside the context, below the items: the methods that add or change tools,
//! resources and prompts take item types, so they are written where the server is
//! (`server/dynamic.rs`), as more inherent methods of [`ServerHandle`].
//!
//! [`ServerHandle`] documents how changes to what a server serves meet requests in flight,
//! capabilities, cursors and subscriptions.
//!
//! # Where it sits
//!
//! Beside `context`: it may import `protocol` and `error`; the server implements its `Broadcast`,
//! and never the other way.

use std::fmt;
use std::sync::Arc;

use crate::protocol::LoggingLevel;

use std::any::Any;

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Prompts,
}

impl ListKind {
    /// The kind whose [`item`](Self::item) is `name`.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        [Self::Tools, Self::Resources, Self::Prompts]
            .into_iter()
            .find(|kind| kind.item() == name)
    }

    /// What one item of the list is called in messages: "tool", "resource", "prompt".
    pub(crate) fn item(self) -> &'static str {
        match self {
            Self::Tools => "tool",
            Self::Resources => "resource",
            Self::Prompts => "prompt",
        }
    }
}

/// What a server does with announcements and changes.
///
/// `Any` lets the server's own code find itself behind a [`ServerHandle`] to apply changes.
pub(crate) trait Broadcast: Any + Send + Sync {
    /// Sends `notifications/resources/updated` to every session subscribed to `uri`.
    fn resource_updated(&self, uri: &str);
    /// Sends `notifications/<kind>/list_changed` to every session that can receive it.
    fn list_changed(&self, kind: ListKind);
    /// Sends `notifications/message` to every session whose level admits `level`.
    fn log(&self, level: LoggingLevel, logger: Option<&str>, data: &serde_json::Value);
}

/// Announces changes to the clients of a running server, and changes what it serves. Cheap to
/// clone; every clone acts on the same server.
///
/// ```no_run
/// # async fn run(service: mcp_runtime::McpService) {
/// let handle = service.handle();
/// // ... a file changed on disk:
/// handle.resource_updated("files:///notes.txt");
/// # }
/// ```
///
/// Adding a tool while serving (the server opted in with
/// [`Server::dynamic_tools`](crate::Server::dynamic_tools), since it starts with none):
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::tool::ToolDef;
///
/// /// Add two integers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// # fn main() -> mcp_runtime::Result<()> {
/// let service = Server::builder().dynamic_tools().build()?;
/// service.handle().add_tool(ToolDef::of(add)?)?;
/// assert!(service.handle().disable_tool("add"));
/// assert!(service.handle().remove_tool("add"));
/// # Ok(())
/// # }
/// ```
///
/// # Changing what a server serves
///
/// A handle adds, removes, enables and disables tools, resources (static ones and templates)
/// and prompts while the server runs, and tells every connected client with the matching
/// `notifications/{tools,resources,prompts}/list_changed`.
///
/// - **Snapshots.** What a server serves is one immutable snapshot. A change builds the next
///   snapshot, validated like a server being built, swaps it in whole, and only then notifies:
///   a client that lists after the notification sees the change. A request works on the
///   snapshot it took when it started, so a `tools/list` or a tool call already running when a
///   change lands completes exactly as it began.
/// - **All or nothing.** A change that would make the server invalid (a duplicate name, an
///   ambiguous template, a definition with problems, a name that is not there) is refused with
///   [`Error::Definition`](crate::Error::Definition) listing every problem; nothing changes and
///   nobody is notified. Several changes made as one [`Changes`](crate::Changes) apply together and send one
///   notification per list they changed.
/// - **Disabled items** are hidden, not gone: out of their list, and calling one is the same
///   error as calling an unknown one (`tools/call` → -32602 `unknown tool`), until it is enabled
///   again. Their names stay taken, so a disabled tool's name cannot be reused by `add_tool`.
/// - **Capabilities are fixed at `initialize`.** A server advertises `tools`, `resources` and
///   `prompts` (each with `listChanged: true`) when it was built with items of that kind, or when
///   it opted in with [`Server::dynamic_tools`](crate::Server::dynamic_tools),
///   [`dynamic_resources`](crate::Server::dynamic_resources) or
///   [`dynamic_prompts`](crate::Server::dynamic_prompts). Adding an item of a kind the server
///   does not advertise is refused with
///   [`DefinitionError::NotAdvertised`](crate::DefinitionError::NotAdvertised), and so is adding
///   a prompt or template that completes its arguments to a server that advertised no
///   `completions`. A kind that was advertised stays advertised when its last item goes:
///   its list is then empty.
/// - **Cursors, completion, subscriptions.** A `nextCursor` from an older snapshot still works;
///   one that points past the end of the now shorter list gets an empty last page. A completion
///   request for a prompt or template that is gone is -32602, as for one that never existed.
///   Resource subscriptions are by URI and outlive changes: subscribers of a URI that is removed
///   and added again keep hearing `notifications/resources/updated` for it.
///
/// A `#[tool]`, `#[resource]` or `#[prompt]` function's definition comes from
/// [`ToolDef::of`](crate::tool::ToolDef::of) (and `ResourceDef::of`, `PromptDef::of`); a
/// closure's from [`ToolBuilder`](crate::tool::ToolBuilder),
/// [`ResourceBuilder`](crate::resource::ResourceBuilder) or
/// [`PromptBuilder`](crate::prompt::PromptBuilder).
#[derive(Clone)]
pub struct ServerHandle {
    pub(crate) inner: Arc<dyn Broadcast>,
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
    ///
    /// The methods that change resources send it themselves; this is for a list that changes
    /// by itself, such as the instances a template's `list` returns.
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

    /// Sends `notifications/message` at `level` (from `logger`, when given) to every
    /// initialized session of this process whose level admits it (`logging/setLevel`; `info`
    /// until the client sets one): news that belongs to no request, such as a reload that
    /// failed. A 2026-07-28 client has no session and hears logs only within its own requests
    /// (the spec allows no other), so it gets none of these; neither do the sessions of other
    /// replicas.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    /// use mcp_runtime::protocol::LoggingLevel;
    ///
    /// # fn main() -> mcp_runtime::Result<()> {
    /// let service = Server::builder().build()?;
    /// service.handle().log(
    ///     LoggingLevel::Error,
    ///     Some("reload"),
    ///     serde_json::json!("the new configuration does not parse; the old one stays"),
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: serde_json::Value) {
        self.inner.log(level, logger, &data);
    }
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle").finish_non_exhaustive()
    }
}
