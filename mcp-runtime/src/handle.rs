//! A handle on a running server, for application code that changes what the server offers.
//!
//! The server implements the narrow [`Broadcast`] trait defined here; handlers reach it through
//! [`Context::server`](crate::Context::server) and application code through
//! [`McpService::handle`](crate::McpService::handle), without either importing the server.
//!
//! [`ServerHandle`] documents how changes to what a server serves meet requests in flight,
//! capabilities, cursors and subscriptions.

use std::fmt;
use std::sync::Arc;

use crate::error::{DefinitionError, Error, Result};
use crate::prompt::PromptDef;
use crate::resource::ResourceDef;
use crate::tool::ToolDef;

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Prompts,
}

impl ListKind {
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
pub(crate) trait Broadcast: Send + Sync {
    /// Sends `notifications/resources/updated` to every session subscribed to `uri`.
    fn resource_updated(&self, uri: &str);
    /// Sends `notifications/<kind>/list_changed` to every session that can receive it.
    fn list_changed(&self, kind: ListKind);
    /// Applies `changes` all at once, then sends one `list_changed` per list that changed.
    /// `Ok(false)` when nothing changed (enabling what is enabled).
    fn apply(&self, changes: Changes) -> Result<bool>;
}

/// One edit of a [`Changes`].
pub(crate) enum Change {
    AddTool(ToolDef),
    AddResource(ResourceDef),
    AddPrompt(PromptDef),
    /// Remove the item with this name (URI, URI template).
    Remove(ListKind, String),
    /// Enable (`true`) or disable (`false`) the item with this name (URI, URI template).
    Enable(ListKind, String, bool),
}

/// Several changes to what a server serves, applied together with [`ServerHandle::apply`]:
/// validated as a whole, all or nothing, and announced with one `list_changed` per list that
/// changed (however many items changed in it).
///
/// The changes apply in the order they were added: removing a tool and adding a new one with
/// the same name replaces it. Unlike the one-change methods of [`ServerHandle`], which answer
/// `false` for a name that is not there, a [`Changes`] naming an item that is not there is
/// refused.
///
/// ```
/// use mcp_runtime::Changes;
/// use mcp_runtime::tool::{CallToolResult, ToolBuilder};
///
/// # async fn run(service: mcp_runtime::McpService) -> mcp_runtime::Result<()> {
/// let v2 = ToolBuilder::new("search", |_call| {
///     Box::pin(async { CallToolResult::success(["no hits yet"]) })
/// })
/// .build();
/// let mut changes = Changes::new();
/// changes.remove_tool("search").add_tool(v2).disable_prompt("old_search_help");
/// service.handle().apply(changes)?;
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct Changes {
    pub(crate) edits: Vec<Change>,
}

impl Changes {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether no change was added.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Adds a tool. See [`ServerHandle::add_tool`].
    pub fn add_tool(&mut self, tool: ToolDef) -> &mut Self {
        self.edits.push(Change::AddTool(tool));
        self
    }

    /// Removes the tool called `name`.
    pub fn remove_tool(&mut self, name: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Remove(ListKind::Tools, name.into()));
        self
    }

    /// Enables the tool called `name` (nothing happens if it is enabled).
    pub fn enable_tool(&mut self, name: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Enable(ListKind::Tools, name.into(), true));
        self
    }

    /// Disables the tool called `name` (nothing happens if it is disabled).
    pub fn disable_tool(&mut self, name: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Enable(ListKind::Tools, name.into(), false));
        self
    }

    /// Adds a static resource or a resource template. See [`ServerHandle::add_resource`].
    pub fn add_resource(&mut self, resource: ResourceDef) -> &mut Self {
        self.edits.push(Change::AddResource(resource));
        self
    }

    /// Removes the static resource at `uri`, or the template written `uri`.
    pub fn remove_resource(&mut self, uri: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Remove(ListKind::Resources, uri.into()));
        self
    }

    /// Enables the static resource at `uri`, or the template written `uri`.
    pub fn enable_resource(&mut self, uri: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Enable(ListKind::Resources, uri.into(), true));
        self
    }

    /// Disables the static resource at `uri`, or the template written `uri`.
    pub fn disable_resource(&mut self, uri: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Enable(ListKind::Resources, uri.into(), false));
        self
    }

    /// Adds a prompt. See [`ServerHandle::add_prompt`].
    pub fn add_prompt(&mut self, prompt: PromptDef) -> &mut Self {
        self.edits.push(Change::AddPrompt(prompt));
        self
    }

    /// Removes the prompt called `name`.
    pub fn remove_prompt(&mut self, name: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Remove(ListKind::Prompts, name.into()));
        self
    }

    /// Enables the prompt called `name`.
    pub fn enable_prompt(&mut self, name: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Enable(ListKind::Prompts, name.into(), true));
        self
    }

    /// Disables the prompt called `name`.
    pub fn disable_prompt(&mut self, name: impl Into<String>) -> &mut Self {
        self.edits
            .push(Change::Enable(ListKind::Prompts, name.into(), false));
        self
    }
}

impl fmt::Debug for Changes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for edit in &self.edits {
            match edit {
                Change::AddTool(tool) => list.entry(&format_args!("add tool `{}`", tool.name())),
                Change::AddResource(resource) => {
                    list.entry(&format_args!("add resource `{}`", resource.uri()))
                }
                Change::AddPrompt(prompt) => {
                    list.entry(&format_args!("add prompt `{}`", prompt.name()))
                }
                Change::Remove(kind, name) => {
                    list.entry(&format_args!("remove {} `{name}`", kind.item()))
                }
                Change::Enable(kind, name, on) => {
                    let verb = if *on { "enable" } else { "disable" };
                    list.entry(&format_args!("{verb} {} `{name}`", kind.item()))
                }
            };
        }
        list.finish()
    }
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
///   nobody is notified. Several changes made as one [`Changes`] apply together and send one
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

    /// Applies `changes` together (see [`Changes`]), then sends one `list_changed` per list
    /// that changed. Fails with every problem found, and then nothing changes.
    pub fn apply(&self, changes: Changes) -> Result<()> {
        self.inner.apply(changes).map(drop)
    }

    /// Applies one change: whether anything changed, `false` for a name that is not there.
    fn apply_one(&self, change: Change) -> bool {
        match self.inner.apply(Changes {
            edits: vec![change],
        }) {
            Ok(changed) => changed,
            Err(Error::Definition(errors))
                if errors
                    .iter()
                    .all(|e| matches!(e, DefinitionError::Unknown { .. })) =>
            {
                false
            }
            Err(error) => {
                // Removing, enabling and disabling cannot make a valid server invalid.
                tracing::error!(%error, "a change to the server failed");
                false
            }
        }
    }

    /// Serves `tool` from now on and sends `notifications/tools/list_changed`.
    ///
    /// Refused, with nothing changed, when a tool (enabled or disabled) already has its name,
    /// when the definition is invalid, or when the server does not advertise tools (it was built
    /// with none and without [`Server::dynamic_tools`](crate::Server::dynamic_tools)).
    pub fn add_tool(&self, tool: ToolDef) -> Result<()> {
        self.apply(Changes {
            edits: vec![Change::AddTool(tool)],
        })
    }

    /// Stops serving the tool called `name` and sends `notifications/tools/list_changed`; calls
    /// to it already running finish. Returns whether there was such a tool (enabled or not).
    pub fn remove_tool(&self, name: impl Into<String>) -> bool {
        self.apply_one(Change::Remove(ListKind::Tools, name.into()))
    }

    /// Shows the disabled tool called `name` again, with `notifications/tools/list_changed`.
    /// Returns whether it was disabled.
    pub fn enable_tool(&self, name: impl Into<String>) -> bool {
        self.apply_one(Change::Enable(ListKind::Tools, name.into(), true))
    }

    /// Hides the tool called `name`: out of `tools/list`, and calling it is the unknown-tool
    /// error, until [`enable_tool`](Self::enable_tool). Sends
    /// `notifications/tools/list_changed`. Returns whether it was enabled.
    pub fn disable_tool(&self, name: impl Into<String>) -> bool {
        self.apply_one(Change::Enable(ListKind::Tools, name.into(), false))
    }

    /// Serves `resource` from now on, a static resource (in `resources/list`) or a template (in
    /// `resources/templates/list`), and sends `notifications/resources/list_changed`.
    ///
    /// Refused, with nothing changed, when a resource has its URI, a template matches exactly
    /// the same URIs, the definition is invalid, or the server does not advertise resources (or,
    /// for a template whose variables complete, `completions`).
    pub fn add_resource(&self, resource: ResourceDef) -> Result<()> {
        self.apply(Changes {
            edits: vec![Change::AddResource(resource)],
        })
    }

    /// Stops serving the static resource at `uri`, or the template written `uri` (the URI
    /// template exactly as registered, `notes://{id}`), and sends
    /// `notifications/resources/list_changed`. Returns whether there was one.
    pub fn remove_resource(&self, uri: impl Into<String>) -> bool {
        self.apply_one(Change::Remove(ListKind::Resources, uri.into()))
    }

    /// Shows the disabled resource or template `uri` again. Returns whether it was disabled.
    pub fn enable_resource(&self, uri: impl Into<String>) -> bool {
        self.apply_one(Change::Enable(ListKind::Resources, uri.into(), true))
    }

    /// Hides the resource or template `uri`: out of its list, and reading it (or a URI only it
    /// matches) is "resource not found", until enabled again. Returns whether it was enabled.
    pub fn disable_resource(&self, uri: impl Into<String>) -> bool {
        self.apply_one(Change::Enable(ListKind::Resources, uri.into(), false))
    }

    /// Serves `prompt` from now on and sends `notifications/prompts/list_changed`.
    ///
    /// Refused, with nothing changed, when a prompt has its name, the definition is invalid, or
    /// the server does not advertise prompts (or, for a prompt whose arguments complete,
    /// `completions`).
    pub fn add_prompt(&self, prompt: PromptDef) -> Result<()> {
        self.apply(Changes {
            edits: vec![Change::AddPrompt(prompt)],
        })
    }

    /// Stops serving the prompt called `name` and sends `notifications/prompts/list_changed`.
    /// Returns whether there was one.
    pub fn remove_prompt(&self, name: impl Into<String>) -> bool {
        self.apply_one(Change::Remove(ListKind::Prompts, name.into()))
    }

    /// Shows the disabled prompt called `name` again. Returns whether it was disabled.
    pub fn enable_prompt(&self, name: impl Into<String>) -> bool {
        self.apply_one(Change::Enable(ListKind::Prompts, name.into(), true))
    }

    /// Hides the prompt called `name`: out of `prompts/list`, and `prompts/get` of it is the
    /// unknown-prompt error, until enabled again. Returns whether it was enabled.
    pub fn disable_prompt(&self, name: impl Into<String>) -> bool {
        self.apply_one(Change::Enable(ListKind::Prompts, name.into(), false))
    }
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle").finish_non_exhaustive()
    }
}
