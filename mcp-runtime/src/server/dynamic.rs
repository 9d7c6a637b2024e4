//! Changing what a running server serves: the builder's opt-ins, and how a [`Changes`] becomes
//! the next registry snapshot.
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

use std::collections::HashSet;
use std::sync::Arc;

use super::registry::{Catalogue, Disabled, Registry};
use super::{Core, Items, Server};
use crate::error::{DefinitionError, Error, Result};
use crate::handle::{Change, Changes, ListKind};

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
