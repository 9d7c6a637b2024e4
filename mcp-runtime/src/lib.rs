//! Write [Model Context Protocol](https://modelcontextprotocol.io) servers in Rust by annotating
//! plain functions.
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//!
//! /// Add two integers.
//! #[tool(read_only, idempotent)]
//! async fn add(
//!     /// First addend.
//!     a: i64,
//!     /// Second addend.
//!     b: i64,
//! ) -> i64 {
//!     a + b
//! }
//!
//! #[tokio::main]
//! async fn main() -> mcp_runtime::Result<()> {
//!     Server::new("demo", env!("CARGO_PKG_VERSION")).serve_stdio().await
//! }
//! ```
//!
//! What the signature says becomes the tool on the wire:
//!
//! - the function's name is the tool's `name` (checked at compile time: 1 to 64 characters of
//!   `A-Z a-z 0-9 _ - .`), `name = "..."` overrides it;
//! - `///` on the function is the `description`, `///` on a parameter the description of its
//!   property in `inputSchema`;
//! - every parameter whose type implements `Deserialize` and `JsonSchema` is an argument;
//!   `Option<T>` and `#[arg(default = expr)]` arguments are not `required`;
//!   `#[arg(rename = "..")]` sets the wire name and `#[arg(example = ..)]` adds `examples`;
//! - a parameter whose type implements [`FromContext`](context::FromContext), such as
//!   [`Context`], is injected and never in the schema;
//! - `Args(x): Args<T>` takes the whole arguments object as one `T`;
//! - a return type that implements `Serialize` and `JsonSchema` gives the tool an `outputSchema`
//!   and each result a `structuredContent` (objects as they are, anything else wrapped as
//!   `{"result": ...}`) plus the same JSON as text; `String` and content blocks
//!   ([`Content`], [`Image`], [`Audio`], [`ResourceLink`], [`EmbeddedResource`],
//!   `Vec<Content>`, [`CallToolResult`]) are sent as they are;
//! - `Result<T, E>` reports `Err(e)` as a tool error: `isError: true` with `e`'s message, for the
//!   model to read and correct itself;
//! - `title = ".."`, `read_only`, `destructive`, `idempotent`, `open_world` (each `= false` to
//!   say the opposite explicitly), `icons = [..]` and `meta = ..` fill in the rest of the `Tool`.
//!
//! Arguments that do not match (missing, wrong type, unknown enum value, unknown name) come back
//! as a tool error that names the argument and what was expected. A tool that panics becomes a
//! tool error too; the server keeps serving and no backtrace reaches the client.
//!
//! # Resources, prompts, completion, servers with state
//!
//! `#[resource("scheme://{var}")]` makes a static resource or an RFC 6570 template (see
//! [`mod@resource`]); `#[prompt]` a prompt whose arguments parse with `FromStr` (see [`mod@prompt`]);
//! `#[arg(complete = f)]` completes a prompt argument or template variable (see [`completion`]).
//! `#[server]` on an impl block makes its `#[tool]`, `#[resource]` and `#[prompt]` methods one
//! server sharing `&self` ([`McpServer::into_server`], [`Server::with`]).
//!
//! # Context
//!
//! A [`Context`] parameter logs to the client, reports progress, notices cancellation, and asks
//! the client for model completions, form input (`#[derive(Elicit)]`) and roots: see [`context`].
//!
//! # Changing what a server serves
//!
//! [`ServerHandle`] ([`Service::handle`], [`Context::server`]) adds, removes, enables and
//! disables tools, resources and prompts while the server runs, and tells connected clients
//! with `notifications/*/list_changed`; requests in flight keep the snapshot they started with.
//! A server that starts without tools (resources, prompts) and adds them later says so with
//! [`Server::dynamic_tools`] (`dynamic_resources`, `dynamic_prompts`).
//!
//! # Transports
//!
//! stdio ([`Server::serve_stdio`]) and Streamable HTTP ([`Server::serve_http`],
//! [`Service::into_router`]).
//!
//! # Protocol revisions
//!
//! One program serves every revision from 2024-11-05 to 2026-07-28, both eras at once, on every
//! transport. `initialize` opens a handshake session, and what goes on the wire is shaped by the
//! revision it negotiated (no `structuredContent`, `outputSchema` or `title` before 2025-06-18,
//! no `icons` before 2025-11-25). A request carrying the 2026-07-28 `_meta` envelope is served on
//! its own, statelessly: `server/discover`, `resultType` and cache hints ([`CacheHint`]) on
//! results, `subscriptions/listen`, and the handler's questions to the client
//! ([`Context::elicit`] and friends, unchanged) turned into `input_required` results with a
//! signed `requestState` (see [`context`]). See [`ProtocolVersion`].
//!
//! # Testing
//!
//! [`testing::Client`] drives a server in-process, exactly as a client on stdio would.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[doc(hidden)]
pub mod __private;
pub mod completion;
pub mod context;
mod error;
mod handle;
pub mod prompt;
pub mod protocol;
pub mod resource;
pub mod schema;
mod server;
pub mod testing;
pub mod tool;
mod transport;

pub use crate::context::{Context, Elicit};
pub use crate::error::{DefinitionError, Error, Result, is_valid_tool_name};
pub use crate::handle::{Changes, ServerHandle};
pub use crate::prompt::{GetPromptResult, PromptMessage};
pub use crate::protocol::{
    Annotations, Audio, Content, EmbeddedResource, Icon, Image, ProtocolVersion, ResourceContents,
    ResourceLink, Role,
};
pub use crate::resource::{Blob, ResourceError, ResourceInfo};
pub use crate::schema::SchemaStyle;
pub use crate::server::{
    CacheHint, CacheScope, Cacheable, Items, McpServer, Server, ServerDefaults, Service,
};
pub use crate::tool::{Args, CallToolResult, IntoCallToolResult, ToolError};

#[cfg(feature = "macros")]
pub use mcp_macros::{Elicit, prompt, resource, server, tool};

/// Everything a server module needs, in one import.
pub mod prelude {
    pub use crate::completion::CompletionContext;
    pub use crate::context::{ClientRequestError, Elicit, Elicitation, SamplingRequest};
    pub use crate::context::{Context, FromContext};
    pub use crate::prompt::{GetPromptResult, PromptMessage};
    pub use crate::protocol::{
        Audio, Content, EmbeddedResource, Icon, Image, ProtocolVersion, ResourceContents,
        ResourceLink,
    };
    pub use crate::resource::{Blob, ResourceError, ResourceInfo};
    pub use crate::tool::{Args, CallToolResult, ToolError};
    pub use crate::{McpServer, Server, ServerHandle, Service};
    #[cfg(feature = "macros")]
    pub use mcp_macros::{Elicit, prompt, resource, server, tool};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}
