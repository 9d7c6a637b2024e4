//! Finding what `#[tool]`, `#[resource]` and `#[prompt]` registered through `inventory`, by
//! the `TypeId` of the function item: how `Server::builder().tool(f)` and [`ToolDef::of`] reach
//! a function's definition.

use std::any::TypeId;

use crate::error::DefinitionError;
use crate::prompt::PromptDef;
use crate::registration::{Entry, Item};
use crate::resource::ResourceDef;
use crate::tool::ToolDef;

/// The entry the macro registered for the function whose type is `type_id`, when it is an item
/// of `kind` ("tool", "resource", "prompt").
pub(crate) fn find(type_id: TypeId, kind: &str) -> Option<&'static Entry> {
    inventory::iter::<Entry>
        .into_iter()
        .find(|e| (e.type_id)() == type_id && e.item.kind() == kind)
}

fn not_an_item<F>(kind: &'static str) -> DefinitionError {
    DefinitionError::NotAnItem {
        kind,
        name: std::any::type_name::<F>().to_owned(),
    }
}

impl ToolDef {
    /// The definition `#[tool]` made of the function `tool`: to add it to a running server
    /// with [`ServerHandle::add_tool`](crate::ServerHandle::add_tool), or to a
    /// [`Server`](crate::Server) with [`Server::tool_def`](crate::Server::tool_def).
    ///
    /// Fails with [`DefinitionError::NotAnItem`] when `tool` is not a `#[tool]` function. (The
    /// tools of a `#[server]` impl block are reached through
    /// [`McpServer::items`](crate::McpServer::items) instead.)
    pub fn of<F: 'static>(tool: F) -> Result<Self, DefinitionError> {
        let _ = tool;
        match find(TypeId::of::<F>(), "tool").map(|e| &e.item) {
            Some(Item::Tool(build)) => Ok(build()),
            _ => Err(not_an_item::<F>("tool")),
        }
    }
}

impl ResourceDef {
    /// The definition `#[resource]` made of the function `resource`, a static resource or a
    /// template: see [`ToolDef::of`].
    pub fn of<F: 'static>(resource: F) -> Result<Self, DefinitionError> {
        let _ = resource;
        match find(TypeId::of::<F>(), "resource").map(|e| &e.item) {
            Some(Item::Resource(build)) => Ok(build()),
            _ => Err(not_an_item::<F>("resource")),
        }
    }
}

impl PromptDef {
    /// The definition `#[prompt]` made of the function `prompt`: see [`ToolDef::of`].
    pub fn of<F: 'static>(prompt: F) -> Result<Self, DefinitionError> {
        let _ = prompt;
        match find(TypeId::of::<F>(), "prompt").map(|e| &e.item) {
            Some(Item::Prompt(build)) => Ok(build()),
            _ => Err(not_an_item::<F>("prompt")),
        }
    }
}
