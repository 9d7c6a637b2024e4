//! Building a server and serving it.
//!
//! [`Server`] collects what to serve (every `#[tool]` in the binary, or an explicit selection)
//! and how; [`Server::build`] validates it into a [`Service`], where the dispatch table, the
//! schemas and the capabilities are fixed once. Transports then open sessions on the service.

mod dispatch;
mod registry;
mod session;

use std::any::TypeId;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::__private::ToolEntry;
use crate::error::{DefinitionError, Error, Result};
use crate::protocol::{Icon, Implementation, ListChangedCapability, ServerCapabilities};
use crate::schema::SchemaStyle;
use crate::tool::ToolDef;

use self::registry::ToolRegistry;
pub(crate) use self::session::Session;

/// Limits and behaviours a server can tune. Every field has a documented default.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// How tool schemas are written. Default: [`SchemaStyle::Portable`].
    pub(crate) schema_style: SchemaStyle,
    /// The largest message accepted, in bytes. Default: 16 MiB.
    pub(crate) max_message_size: usize,
    /// How long in-flight requests may run on after the client hangs up. Default: 5 s.
    pub(crate) shutdown_grace: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            schema_style: SchemaStyle::Portable,
            max_message_size: 16 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

enum Selection {
    /// Everything registered with `#[tool]` in the binary.
    All,
    /// Only what the builder named.
    Explicit(Vec<(TypeId, &'static str)>),
}

/// An MCP server being set up: what it serves, what it says about itself, and its limits.
///
/// `Server::new` serves every `#[tool]` linked into the binary; `Server::builder` serves only
/// what is named with [`Server::tool`].
///
/// ```no_run
/// use mcp_runtime::prelude::*;
///
/// /// Add two integers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// #[tokio::main]
/// async fn main() -> mcp_runtime::Result<()> {
///     Server::new("demo", env!("CARGO_PKG_VERSION")).serve_stdio().await
/// }
/// ```
///
/// # The inventory trap
///
/// Registration happens at link time. A library crate whose items the binary never names is
/// not linked, and its tools silently go missing; name it once with `use my_tools as _;`.
pub struct Server {
    name: Option<String>,
    version: Option<String>,
    title: Option<String>,
    description: Option<String>,
    website_url: Option<String>,
    icons: Vec<Icon>,
    instructions: Option<String>,
    selection: Selection,
    extra_tools: Vec<ToolDef>,
    options: Options,
}

impl Server {
    /// A server called `name` at `version` that serves every `#[tool]` in the binary.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let mut server = Self::empty(Selection::All);
        server.name = Some(name.into());
        server.version = Some(version.into());
        server
    }

    /// A server that serves only what is added to it with [`Server::tool`].
    ///
    /// Without [`Server::name`] and [`Server::version`], `serverInfo` is the name and version of
    /// the crate the selected tools were written in (never this runtime's own).
    pub fn builder() -> Self {
        Self::empty(Selection::Explicit(Vec::new()))
    }

    fn empty(selection: Selection) -> Self {
        Self {
            name: None,
            version: None,
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
            instructions: None,
            selection,
            extra_tools: Vec::new(),
            options: Options::default(),
        }
    }

    /// Sets `serverInfo.name`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets `serverInfo.version`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets `serverInfo.title`, a display name (sent from 2025-06-18).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets `serverInfo.description` (sent from 2025-11-25).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets `serverInfo.websiteUrl` (sent from 2025-11-25).
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Adds an icon to `serverInfo` (sent from 2025-11-25).
    pub fn icon(mut self, icon: impl Into<Icon>) -> Self {
        self.icons.push(icon.into());
        self
    }

    /// Sets the `instructions` clients may add to the model's system prompt.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Serves the `#[tool]` function `tool`. On a server from [`Server::new`], which serves
    /// everything already, this changes nothing.
    ///
    /// Naming a function that is not a `#[tool]` makes [`Server::build`] fail.
    pub fn tool<F: 'static>(mut self, tool: F) -> Self {
        let _ = tool;
        if let Selection::Explicit(selected) = &mut self.selection {
            selected.push((TypeId::of::<F>(), std::any::type_name::<F>()));
        }
        self
    }

    /// Serves a tool defined at run time, for example with [`ToolBuilder`](crate::tool::ToolBuilder).
    pub fn tool_def(mut self, tool: ToolDef) -> Self {
        self.extra_tools.push(tool);
        self
    }

    /// How tool schemas are written; [`SchemaStyle::Portable`] by default.
    pub fn schema_style(mut self, style: SchemaStyle) -> Self {
        self.options.schema_style = style;
        self
    }

    /// The largest message accepted, in bytes (16 MiB by default). A longer line or body gets an
    /// error and is skipped; the connection stays up.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.options.max_message_size = bytes;
        self
    }

    /// How long requests still running when the client hangs up may take to finish (5 s by
    /// default) before they are stopped.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.options.shutdown_grace = grace;
        self
    }

    /// Validates the definition and fixes everything that does not change per request: the
    /// dispatch table, the schemas, the capabilities.
    ///
    /// Fails with every problem found: duplicate or invalid names (with both source locations),
    /// a function named with [`Server::tool`] that is not a `#[tool]`.
    pub fn build(self) -> Result<Service> {
        let mut errors = Vec::new();
        let registered: Vec<&ToolEntry> = inventory::iter::<ToolEntry>.into_iter().collect();
        let selected: Vec<&ToolEntry> = match &self.selection {
            Selection::All => registered.clone(),
            Selection::Explicit(wanted) => {
                let mut out = Vec::new();
                for (type_id, type_name) in wanted {
                    match registered.iter().find(|e| (e.type_id)() == *type_id) {
                        Some(entry)
                            if !out.iter().any(|e: &&ToolEntry| (e.type_id)() == *type_id) =>
                        {
                            out.push(*entry);
                        }
                        Some(_) => {}
                        None => errors.push(DefinitionError::NotATool((*type_name).to_owned())),
                    }
                }
                out
            }
        };
        let (default_name, default_version) = default_identity(&selected);
        let mut tools: Vec<ToolDef> = selected.iter().map(|e| (e.build)()).collect();
        tools.extend(self.extra_tools);
        let tools = match ToolRegistry::new(tools, self.options.schema_style) {
            Ok(tools) => Some(tools),
            Err(mut problems) => {
                errors.append(&mut problems);
                None
            }
        };
        let Some(tools) = tools.filter(|_| errors.is_empty()) else {
            return Err(Error::Definition(errors));
        };
        let mut info = Implementation::new(
            self.name.unwrap_or(default_name),
            self.version.unwrap_or(default_version),
        );
        info.title = self.title;
        info.description = self.description;
        info.website_url = self.website_url;
        info.icons = (!self.icons.is_empty()).then_some(self.icons);
        let capabilities = ServerCapabilities {
            tools: (!tools.is_empty()).then_some(ListChangedCapability { list_changed: true }),
            ..ServerCapabilities::default()
        };
        Ok(Service {
            core: Arc::new(Core {
                info,
                instructions: self.instructions,
                tools,
                capabilities,
                options: self.options,
            }),
        })
    }

    /// Builds the server and serves it on stdin and stdout until stdin closes.
    pub async fn serve_stdio(self) -> Result<()> {
        self.build()?.serve_stdio().await
    }
}

/// The crate the served tools come from; the executable's name when there is no single one.
fn default_identity(entries: &[&ToolEntry]) -> (String, String) {
    if let Some(first) = entries.first()
        && entries.iter().all(|e| e.crate_name == first.crate_name)
    {
        return (first.crate_name.to_owned(), first.crate_version.to_owned());
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "mcp-server".to_owned());
    (exe, "0.0.0".to_owned())
}

/// What a built server shares across all its sessions.
pub(crate) struct Core {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: ToolRegistry,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) options: Options,
}

/// A validated server, ready to serve: cheap to clone, and every clone serves the same tools.
#[derive(Clone)]
pub struct Service {
    pub(crate) core: Arc<Core>,
}

impl Service {
    /// The `serverInfo` this server reports.
    pub fn info(&self) -> &Implementation {
        &self.core.info
    }

    /// The capabilities this server advertises.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.core.capabilities
    }

    /// Serves one session on stdin and stdout (newline-delimited JSON-RPC) until stdin closes.
    /// Logs belong on stderr: stdout carries protocol messages only.
    pub async fn serve_stdio(&self) -> Result<()> {
        self.serve_connection(tokio::io::stdin(), tokio::io::stdout())
            .await
    }

    /// Serves one session over any byte stream pair with stdio framing: one JSON-RPC message
    /// per line. Returns when `reader` reaches its end.
    pub async fn serve_connection<R, W>(&self, reader: R, writer: W) -> Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        crate::transport::stdio::serve(Arc::clone(&self.core), reader, writer).await
    }
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("info", &self.core.info)
            .finish_non_exhaustive()
    }
}
