//! How `#[tool]`, `#[resource]` and `#[prompt]` register free functions: each expansion submits
//! one [`Entry`] to `inventory`, and the server builder collects them. The types live here, not in
//! `__private`, so the runtime's own modules name them by their place; `__private` re-exports them
//! under the paths the macros emit.
//!
//! It may import the items (`tool`, `prompt`, `resource`); the server imports it.

use std::any::TypeId;

use crate::prompt::PromptDef;
use crate::resource::ResourceDef;
use crate::tool::ToolDef;

/// What a macro registered: which kind of item, and how to build its definition (schemas
/// included; called once per server build).
pub enum Item {
    /// A `#[tool]`.
    Tool(fn() -> ToolDef),
    /// A `#[resource]`.
    Resource(fn() -> ResourceDef),
    /// A `#[prompt]`.
    Prompt(fn() -> PromptDef),
}

impl Item {
    /// The kind's name as the protocol says it (`tool`, `resource`, `prompt`), for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Tool(_) => "tool",
            Self::Resource(_) => "resource",
            Self::Prompt(_) => "prompt",
        }
    }
}

/// One free function with `#[tool]`, `#[resource]` or `#[prompt]`, registered through
/// `inventory`.
pub struct Entry {
    /// What was registered.
    pub item: Item,
    /// The `TypeId` of the function item, so `Server::builder().tool(f)` can find it.
    pub type_id: fn() -> TypeId,
    /// The crate the item was written in, for the default `serverInfo`.
    pub crate_name: &'static str,
    /// That crate's version.
    pub crate_version: &'static str,
}

inventory::collect!(Entry);
