//! What can go wrong talking to an upstream server.

use std::time::Duration;

use crate::protocol::ErrorObject;

/// Why a request to the server produced no result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Rpc(ErrorObject),
    /// No answer arrived within the request's timeout; the request was cancelled.
    #[error("no answer to `{method}` within {timeout:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// The timeout that passed.
        timeout: Duration,
    },
    /// The connection is closed: the child process exited, the stream ended, or the client was
    /// closed. The text says which (a child's exit status, say).
    #[error("the connection to the server is closed: {0}")]
    Closed(String),
    /// The transport failed: the process could not be spawned, an HTTP request failed or was
    /// answered with an HTTP error.
    #[error("transport error: {0}")]
    Transport(String),
    /// The HTTP session is gone (the server answered 404 to a request carrying its
    /// `Mcp-Session-Id`): connect again.
    #[error("the server ended the session")]
    SessionExpired,
    /// The server's answer did not have the shape the spec gives it.
    #[error("unexpected answer: {0}")]
    Decode(String),
    /// The server speaks no protocol revision this client speaks.
    #[error("the server speaks no revision this client speaks: {0}")]
    UnsupportedVersion(String),
    /// The request is not part of the era the connection speaks (`ping` in 2026-07-28, say).
    #[error("`{0}` does not exist in the protocol revision this connection speaks")]
    NotInEra(String),
    /// A bound of the client was reached (list pages, `input_required` rounds, requests in
    /// flight): see the limits table of [`crate::client`].
    #[error("limit reached: {0}")]
    Limit(String),
}

impl ClientError {
    /// The JSON-RPC error, when the server sent one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Self::Rpc(error) => Some(error),
            _ => None,
        }
    }

    /// Whether the connection is gone, so that only a new connection can go on (what a
    /// gateway reconnects on).
    pub fn is_disconnect(&self) -> bool {
        matches!(self, Self::Closed(_) | Self::SessionExpired)
    }
}
