//! Transports: how messages reach a session and its replies reach the client.
//!
//! - stdio: newline-delimited JSON-RPC on stdin and stdout ([`McpService::serve_stdio`]), or on any
//!   pair of byte streams ([`McpService::serve_connection`]);
//! - Streamable HTTP on axum ([`McpService::serve_http`], [`McpService::into_router`]).
//!
//! [`McpService::serve_stdio`]: crate::McpService::serve_stdio
//! [`McpService::serve_connection`]: crate::McpService::serve_connection
//! [`McpService::serve_http`]: crate::McpService::serve_http
//! [`McpService::into_router`]: crate::McpService::into_router
//!
//! # Where it sits
//!
//! The top of the runtime: the `serve_*` entry points. It may import the server, the capabilities
//! around it (`shared`, `telemetry`, `tasks`, `middleware`), the items, `context`, `trace` and
//! `protocol`; nothing but the gateway and `lib.rs` imports it.

#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod stdio;
