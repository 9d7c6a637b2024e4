//! Transports: how messages reach a session and its replies reach the client.
//!
//! - stdio: newline-delimited JSON-RPC on stdin and stdout ([`Service::serve_stdio`]), or on any
//!   pair of byte streams ([`Service::serve_connection`]);
//! - Streamable HTTP on axum ([`Service::serve_http`], [`Service::into_router`]).
//!
//! [`Service::serve_stdio`]: crate::Service::serve_stdio
//! [`Service::serve_connection`]: crate::Service::serve_connection
//! [`Service::serve_http`]: crate::Service::serve_http
//! [`Service::into_router`]: crate::Service::into_router

pub(crate) mod http;
pub(crate) mod stdio;
pub(crate) mod window;
