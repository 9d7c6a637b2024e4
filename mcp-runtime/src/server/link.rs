//! The connection as the dispatch sees it: a narrow trait the handshake-era session implements,
//! so the dispatch never names the session and the request path can carry it; and the
//! [`Transport`] a connection is on, which the layers and the telemetry read.

use std::sync::Arc;

use serde_json::Value;

use super::{Core, Sink};
use crate::context::{ClientInfo, Peer};
use crate::protocol::{ErrorObject, ProtocolVersion, Request};

/// What dispatch needs of the connection a handshake-era request came on: what `initialize`
/// settled, the handshake's own methods (answered by the connection, which owns that state),
/// and the way back to the client. Dispatch never sees more of it than this.
pub(crate) trait Link: Send + Sync {
    /// The server the connection serves.
    fn core(&self) -> &Arc<Core>;
    /// The connection's name in request spans, once the transport gave it one.
    fn trace_name(&self) -> Option<&str>;
    /// The revision and client `initialize` settled; `None` before it is answered.
    fn negotiated(&self) -> Option<(ProtocolVersion, Arc<ClientInfo>)>;
    /// Whether the client said `notifications/initialized`.
    fn initialized(&self) -> bool;
    /// `initialize` and `ping`, answered in order.
    fn answer_handshake(&self, request: &Request) -> Vec<u8>;
    /// `logging/setLevel`.
    fn set_log_level(&self, request: &Request) -> Result<Value, ErrorObject>;
    /// `resources/subscribe` and `resources/unsubscribe`.
    fn set_subscription(&self, request: &Request) -> Result<Value, ErrorObject>;
    /// A handler's way back to its client: replies on `sink`, the rest through the connection.
    fn peer(self: Arc<Self>, sink: Sink) -> Arc<dyn Peer>;
    /// Turns `true` when the connection ends.
    fn closing(&self) -> tokio::sync::watch::Receiver<bool>;
    /// The transport the connection is on.
    fn transport(&self) -> Transport;
}

/// The transport a request came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin and stdout (or another byte stream, as
    /// [`McpService::serve_connection`](crate::McpService::serve_connection) serves).
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
    /// The deprecated HTTP+SSE transport of 2024-11-05 (`Server::legacy_sse`).
    LegacySse,
}

impl Transport {
    /// `network.transport` as OpenTelemetry names it: `pipe` for stdio, `tcp` for HTTP.
    pub fn network_transport(self) -> &'static str {
        match self {
            Self::Stdio => "pipe",
            Self::StreamableHttp | Self::LegacySse => "tcp",
        }
    }
}
