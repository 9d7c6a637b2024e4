//! What a handler can know about the request it serves, and ask of the client.
//!
//! A handler receives context by naming it as a parameter: a [`Context`] for everything, or a
//! smaller extractor ([`RequestId`], [`ProtocolVersion`], [`Meta`], [`ClientInfo`]) when that
//! reads better. Any type implementing [`FromContext`] can be a context parameter; it is injected
//! and never appears in a tool's `inputSchema`.
//!
//! The context reaches its session only through a narrow `Peer` handle defined here, never by
//! importing the server, so the dependency runs one way: server → primitives → context.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::handle::ServerHandle;
use crate::protocol::{ClientCapabilities, Implementation, ProtocolVersion, RequestId};

/// The way back to the client that sent a request: what the context may ask of the session.
pub(crate) trait Peer: Send + Sync {
    /// Queues one encoded JSON-RPC message for the client.
    #[allow(dead_code)]
    fn send(&self, message: Vec<u8>);
}

/// What the client said about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientInfo {
    /// `clientInfo`: name and version.
    pub implementation: Implementation,
    /// The capabilities it declared.
    pub capabilities: ClientCapabilities,
}

/// A request's `params._meta`, as the client sent it (empty when there was none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta(pub Map<String, Value>);

impl Meta {
    /// The `progressToken`, when the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.0
            .get("progressToken")
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
    }
}

pub(crate) struct RequestInfo {
    pub(crate) id: RequestId,
    pub(crate) meta: Meta,
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Arc<ClientInfo>,
    #[allow(dead_code)]
    pub(crate) peer: Arc<dyn Peer>,
    pub(crate) server: ServerHandle,
}

/// Everything a handler may know about the request it serves.
///
/// Cheap to clone; take it by value as a parameter:
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Which protocol revision is this session on?
/// #[tool]
/// async fn which_revision(ctx: Context) -> String {
///     ctx.protocol_version().to_string()
/// }
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<RequestInfo>,
}

impl Context {
    pub(crate) fn new(info: RequestInfo) -> Self {
        Self {
            inner: Arc::new(info),
        }
    }

    /// The id of the request being served.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> &Meta {
        &self.inner.meta
    }

    /// The protocol revision this request is served under.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// Who the client is and what it can do.
    pub fn client(&self) -> &ClientInfo {
        &self.inner.client
    }

    /// The server, to announce changes: a resource updated, a list changed.
    pub fn server(&self) -> &ServerHandle {
        &self.inner.server
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.id)
            .field("protocol_version", &self.inner.version)
            .finish_non_exhaustive()
    }
}

/// Why a context parameter could not be provided. It becomes a tool error naming the parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ContextError(pub String);

/// A type a handler can receive as a context parameter: injected from the request, never part of
/// the input schema.
///
/// Implement it for your own types to inject them (a database pool from a global, the caller's
/// identity from `_meta`):
///
/// ```
/// use mcp_runtime::context::{Context, ContextError, FromContext};
///
/// struct TraceId(Option<String>);
///
/// impl FromContext for TraceId {
///     fn from_context(ctx: &Context) -> Result<Self, ContextError> {
///         let id = ctx.meta().0.get("traceparent").and_then(|v| v.as_str()).map(str::to_owned);
///         Ok(TraceId(id))
///     }
/// }
/// ```
pub trait FromContext: Sized {
    /// Extracts the value from the request's context.
    fn from_context(ctx: &Context) -> Result<Self, ContextError>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.clone())
    }
}

impl FromContext for RequestId {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.id.clone())
    }
}

impl FromContext for ProtocolVersion {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.version)
    }
}

impl FromContext for Meta {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.meta.clone())
    }
}

impl FromContext for ServerHandle {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.inner.server.clone())
    }
}

impl FromContext for ClientInfo {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok((*ctx.inner.client).clone())
    }
}
