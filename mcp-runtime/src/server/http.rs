//! The Streamable HTTP settings of a server: configuration the builder collects and the HTTP
//! transport reads. They live with the server, not the transport, so the builder's setters do
//! not reach into `transport/`.

use std::net::IpAddr;
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

/// A range of addresses, `address/prefix` (a lone address is all of its bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IpRange {
    network: IpAddr,
    prefix: u8,
}

impl IpRange {
    /// Reads `10.0.0.0/8`, `2001:db8::/32`, `127.0.0.1` or `::1`; `None` for anything else (a
    /// prefix longer than the address, bits set past the prefix, a host name).
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (address, prefix) = match text.trim().split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text.trim(), None),
        };
        let network: IpAddr = address.parse().ok()?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) if !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()) => {
                prefix.parse::<u8>().ok().filter(|p| *p <= bits)?
            }
            Some(_) => return None,
            None => bits,
        };
        let range = Self { network, prefix };
        // `10.0.0.1/8` is almost certainly a typo for a range or an address.
        (range.masked(network) == network).then_some(range)
    }

    fn masked(&self, ip: IpAddr) -> IpAddr {
        match ip {
            IpAddr::V4(v4) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V4((u32::from(v4) & mask).into())
            }
            IpAddr::V6(v6) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V6((u128::from(v6) & mask).into())
            }
        }
    }

    /// Whether `ip` is in the range (an IPv4-mapped IPv6 address as its IPv4 address).
    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            IpAddr::V4(_) => ip,
        };
        ip.is_ipv4() == self.network.is_ipv4() && self.masked(ip) == self.network
    }
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
    /// The most sessions one client may hold; `None`: its share of `max_sessions`.
    pub(crate) max_sessions_per_peer: Option<usize>,
    /// The proxies whose `Forwarded` / `X-Forwarded-For` name the client. Default: none.
    pub(crate) trusted_proxies: Vec<IpRange>,
    pub(crate) event_buffer: usize,
    /// The bytes all HTTP streams may hold unread together.
    pub(crate) unread_total: usize,
    /// The bytes the event logs of one session may hold together.
    pub(crate) session_log_bytes: usize,
    /// The bytes the event logs of all sessions may hold together.
    pub(crate) total_log_bytes: usize,
    pub(crate) stateless: bool,
    pub(crate) retry_ms: u64,
    /// How long a POST's event stream's requests run on once its response is gone, waiting for
    /// the client to resume it.
    pub(crate) resume_grace: Duration,
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
    /// The probes, their routes, every reply as JSON, the routes of the application: see
    /// `server/routes.rs`.
    pub(crate) deploy: super::routes::DeployOptions,
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
            trusted_proxies: Vec::new(),
            event_buffer: 1_000,
            unread_total: 128 * 1024 * 1024,
            session_log_bytes: 1024 * 1024,
            total_log_bytes: 128 * 1024 * 1024,
            stateless: false,
            retry_ms: 1_000,
            resume_grace: Duration::from_secs(10),
            legacy_sse: false,
            legacy_sse_path: "/sse".to_owned(),
            legacy_messages_path: "/messages".to_owned(),
            #[cfg(feature = "oauth")]
            auth: None,
            server_card: None,
            deploy: super::routes::DeployOptions::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_and_matched() {
        let range = IpRange::parse("10.1.0.0/16").unwrap();
        assert!(range.contains("10.1.200.3".parse().unwrap()));
        assert!(!range.contains("10.2.0.1".parse().unwrap()));
        assert!(range.contains("::ffff:10.1.0.9".parse().unwrap()));
        let one = IpRange::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6 = IpRange::parse("2001:db8::/32").unwrap();
        assert!(v6.contains("2001:db8:ffff::1".parse().unwrap()));
        assert!(!v6.contains("10.1.0.9".parse().unwrap()));
        assert!(
            IpRange::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        for bad in [
            "10.0.0.1/8",
            "10.0.0.0/33",
            "10.0.0.0/",
            "proxy.local",
            "10.0.0.0/+8",
            "",
        ] {
            assert_eq!(IpRange::parse(bad), None, "{bad}");
        }
    }
}
