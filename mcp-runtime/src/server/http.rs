//! The Streamable HTTP settings of a server: configuration the builder collects and the HTTP
//! transport reads. They live with the server, not the transport, so the builder's setters do
//! not reach into `transport/`.

use std::time::Duration;

/// Which `Host` (and `Origin`) values the endpoint accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostPolicy {
    /// Loopback names on any port: the default, against DNS rebinding.
    Loopback,
    /// These host names (any port).
    Only(Vec<String>),
    /// No check (a public server behind its own front door).
    Any,
}

/// The Streamable HTTP settings of a server.
#[derive(Debug, Clone)]
pub(crate) struct HttpOptions {
    pub(crate) path: String,
    pub(crate) hosts: HostPolicy,
    pub(crate) hosts_configured: bool,
    pub(crate) session_idle: Duration,
    /// How long a session may stay without `notifications/initialized`.
    pub(crate) initialize_timeout: Duration,
    /// The most connections open at once.
    pub(crate) max_connections: usize,
    /// How long a client may take to send a request's headers.
    pub(crate) header_read_timeout: Duration,
    /// How long a client may take to send a request's body.
    pub(crate) body_read_timeout: Duration,
    pub(crate) max_sessions: usize,
    /// The most sessions one client address may hold; `None`: no cap of its own.
    pub(crate) max_sessions_per_peer: Option<usize>,
    pub(crate) event_buffer: usize,
    /// The bytes all HTTP streams may hold unread together.
    pub(crate) unread_total: usize,
    /// The bytes the event logs of one session may hold together.
    pub(crate) session_log_bytes: usize,
    /// The bytes the event logs of all sessions may hold together.
    pub(crate) total_log_bytes: usize,
    pub(crate) stateless: bool,
    pub(crate) retry_ms: u64,
    /// Whether the deprecated HTTP+SSE transport (2024-11-05) is served too.
    pub(crate) legacy_sse: bool,
    /// Its event-stream path (GET).
    pub(crate) legacy_sse_path: String,
    /// Its messages path (POST).
    pub(crate) legacy_messages_path: String,
    /// The OAuth resource-server settings, when tokens are required.
    #[cfg(feature = "oauth")]
    pub(crate) auth: Option<std::sync::Arc<super::auth::OAuth>>,
    /// The Server Card served at `<path>/server-card`, and its AI Catalog.
    pub(crate) server_card: Option<super::ServerCard>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            hosts: HostPolicy::Loopback,
            hosts_configured: false,
            session_idle: Duration::from_secs(30 * 60),
            initialize_timeout: Duration::from_secs(10),
            max_connections: 512,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_sessions: 10_000,
            max_sessions_per_peer: None,
            event_buffer: 1_000,
            unread_total: 128 * 1024 * 1024,
            session_log_bytes: 1024 * 1024,
            total_log_bytes: 128 * 1024 * 1024,
            stateless: false,
            retry_ms: 1_000,
            legacy_sse: false,
            legacy_sse_path: "/sse".to_owned(),
            legacy_messages_path: "/messages".to_owned(),
            #[cfg(feature = "oauth")]
            auth: None,
            server_card: None,
        }
    }
}
