//! Changing what a running server serves: the builder's opt-ins, [`Changes`] and the
//! [`ServerHandle`] methods that make them, and how they become the next registry snapshot.
//!
//! [`Core`] holds the current snapshot as `RwLock<Arc<Registry>>`. A request clones the `Arc`
//! once, when it starts, and works on that snapshot to the end; a change edits a copy of the
//! current snapshot's definitions, validates the result as [`Server::build`] would, and swaps
//! the new `Arc` in. The read lock is held only for the clone (an atomic increment), and
//! changes are serialized by their own mutex so a slow validation never blocks a request. A
//! plain `RwLock` does this without another dependency; `arc-swap` would save the lock word's
//! cache-line traffic on reads, which a request, costing a parse and a handler, does not miss.
//!
//! The policy on capabilities, cursors and subscriptions is documented on
//! [`ServerHandle`](crate::ServerHandle), where users read it.

use std::any::Any;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use super::registry::{Catalogue, Disabled, Registry};
use super::{Core, Items, Server};
use crate::error::{DefinitionError, Error, Result};
use crate::handle::{Broadcast as _, ListKind, ServerHandle};
use crate::prompt::PromptDef;
use crate::resource::ResourceDef;
use crate::tool::ToolDef;

/// The kinds the builder was told may be added while serving.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OptIn {
    pub(crate) tools: bool,
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
}

impl Server {
    /// Lets tools be added while serving, when the server starts with none: the `tools`
    /// capability (with `listChanged: true`) is advertised from the start.
    ///
    /// A server built with tools advertises them anyway and can add more without this.
    /// Without either, [`ServerHandle::add_tool`](crate::ServerHandle::add_tool) is refused:
    /// clients learn the capabilities once, at `initialize`, and would never look for tools.
    pub fn dynamic_tools(mut self) -> Self {
        self.dynamic.tools = true;
        self
    }

    /// Lets resources and templates be added while serving: `resources` (with `subscribe` and
    /// `listChanged`) and `completions` are advertised from the start, so a template added later
    /// may complete its variables.
    pub fn dynamic_resources(mut self) -> Self {
        self.dynamic.resources = true;
        self
    }

    /// Lets prompts be added while serving: `prompts` (with `listChanged`) and `completions`
    /// are advertised from the start, so a prompt added later may complete its arguments.
    pub fn dynamic_prompts(mut self) -> Self {
        self.dynamic.prompts = true;
        self
    }
}

impl Core {
    /// The registry as it is now: the snapshot a request works on from start to end.
    pub(crate) fn registry(&self) -> Arc<Registry> {
        Arc::clone(&self.registry.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Applies `changes` all at once, then sends one `list_changed` per list that changed.
    /// `Ok(false)` when nothing changed (enabling what is enabled).
    pub(crate) fn apply(&self, changes: Changes) -> Result<bool> {
        let changed = self.apply_changes(changes)?;
        // After the swap: a client that lists on hearing this sees the change.
        for &kind in &changed {
            self.list_changed(kind);
        }
        Ok(!changed.is_empty())
    }

    /// Applies `changes` to a copy of the current snapshot and swaps the result in. Returns
    /// the lists that changed, for the caller to announce once the swap is done.
    pub(crate) fn apply_changes(&self, changes: Changes) -> Result<Vec<ListKind>> {
        let _one_at_a_time = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.registry();
        let settings = current.settings();
        let Catalogue {
            mut items,
            mut disabled,
        } = current.catalogue();
        let mut errors = Vec::new();
        let mut changed = Vec::new();
        for edit in changes.edits {
            let kind = match edit {
                Change::AddTool(tool) => {
                    let what = || format!("tool `{}`", tool.name());
                    if !settings.served.tools {
                        errors.push(not_advertised(what(), "tools", ListKind::Tools));
                    }
                    items.tools.push(tool);
                    ListKind::Tools
                }
                Change::AddResource(resource) => {
                    let what = || format!("resource `{}`", resource.uri());
                    if !settings.served.resources {
                        errors.push(not_advertised(what(), "resources", ListKind::Resources));
                    } else if !resource.completers.is_empty() && !settings.served.completions {
                        errors.push(not_advertised(what(), "completions", ListKind::Resources));
                    }
                    items.resources.push(resource);
                    ListKind::Resources
                }
                Change::AddPrompt(prompt) => {
                    let what = || format!("prompt `{}`", prompt.name());
                    if !settings.served.prompts {
                        errors.push(not_advertised(what(), "prompts", ListKind::Prompts));
                    } else if !prompt.completers.is_empty() && !settings.served.completions {
                        errors.push(not_advertised(what(), "completions", ListKind::Prompts));
                    }
                    items.prompts.push(prompt);
                    ListKind::Prompts
                }
                Change::Remove(kind, name) => {
                    let before = count(&items, kind);
                    match kind {
                        ListKind::Tools => items.tools.retain(|t| t.name() != name),
                        ListKind::Resources => items.resources.retain(|r| r.uri() != name),
                        ListKind::Prompts => items.prompts.retain(|p| p.name() != name),
                    }
                    if count(&items, kind) == before {
                        errors.push(unknown(kind, name));
                        continue;
                    }
                    disabled_names(&mut disabled, kind).remove(&name);
                    kind
                }
                Change::Enable(kind, name, enable) => {
                    let exists = match kind {
                        ListKind::Tools => items.tools.iter().any(|t| t.name() == name),
                        ListKind::Resources => items.resources.iter().any(|r| r.uri() == name),
                        ListKind::Prompts => items.prompts.iter().any(|p| p.name() == name),
                    };
                    if !exists {
                        errors.push(unknown(kind, name));
                        continue;
                    }
                    let names = disabled_names(&mut disabled, kind);
                    let flipped = if enable {
                        names.remove(&name)
                    } else {
                        names.insert(name)
                    };
                    if !flipped {
                        continue;
                    }
                    kind
                }
            };
            if !changed.contains(&kind) {
                changed.push(kind);
            }
        }
        if errors.is_empty() && changed.is_empty() {
            return Ok(changed);
        }
        // Validated even after a bad edit, so the caller hears of every problem at once.
        let catalogue = Catalogue { items, disabled };
        let next = Registry::new(catalogue, settings, current.generation() + 1, &mut errors);
        if !errors.is_empty() {
            return Err(Error::Definition(errors));
        }
        *self.registry.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        Ok(changed)
    }
}

fn count(items: &Items, kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => items.tools.len(),
        ListKind::Resources => items.resources.len(),
        ListKind::Prompts => items.prompts.len(),
    }
}

fn disabled_names(disabled: &mut Disabled, kind: ListKind) -> &mut HashSet<String> {
    match kind {
        ListKind::Tools => &mut disabled.tools,
        ListKind::Resources => &mut disabled.resources,
        ListKind::Prompts => &mut disabled.prompts,
    }
}

fn unknown(kind: ListKind, name: String) -> DefinitionError {
    DefinitionError::Unknown {
        kind: kind.item(),
        name,
    }
}

fn not_advertised(what: String, capability: &'static str, kind: ListKind) -> DefinitionError {
    let fix = match kind {
        ListKind::Tools => "build the server with `Server::dynamic_tools()`",
        ListKind::Resources => "build the server with `Server::dynamic_resources()`",
        ListKind::Prompts => "build the server with `Server::dynamic_prompts()`",
    };
    DefinitionError::NotAdvertised {
        what,
        capability,
        fix,
    }
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

// The methods of `ServerHandle` that take items: written here, above the items, so the handle
// itself (`handle.rs`) stays beside the context.
impl ServerHandle {
    /// Applies `changes` together (see [`Changes`]), then sends one `list_changed` per list
    /// that changed. Fails with every problem found, and then nothing changes.
    pub fn apply(&self, changes: Changes) -> Result<()> {
        self.apply_changes(changes).map(drop)
    }

    /// The server behind this handle applies `changes` and announces what changed. Every
    /// handle is made by a server (`Core` is the only `Broadcast`), so the `None` arm is a
    /// handle that belongs to no server and changes nothing.
    fn apply_changes(&self, changes: Changes) -> Result<bool> {
        let any: &dyn Any = &*self.inner;
        match any.downcast_ref::<Core>() {
            Some(core) => core.apply(changes),
            None => Ok(false),
        }
    }

    /// Applies one change: whether anything changed, `false` for a name that is not there.
    fn apply_one(&self, change: Change) -> bool {
        match self.apply_changes(Changes {
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
