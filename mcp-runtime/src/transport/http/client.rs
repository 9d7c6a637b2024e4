//! Who a request comes from, for the fair shares (`server::share`): its OAuth principal, else
//! its address: the connection's, or, when the connection comes from a trusted proxy
//! (`Server::trusted_proxies`), the client its `Forwarded` or `X-Forwarded-For` header names.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::http::{Extensions, HeaderMap, HeaderName};

use super::HttpState;
use crate::context::Principal;
use crate::server::{Client, ClientKey, IpRange};
use crate::server::{Outbox, Sink};

const FORWARDED: HeaderName = HeaderName::from_static("forwarded");
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// How many hops of a forwarding header are read at most, from the nearest: a client behind
/// more trusted proxies than this is taken to be the last one read.
const MAX_HOPS: usize = 32;

/// The connection a request came on, as `serve_http` accepted it: handed to the endpoint's
/// POST handler directly, and put in the extensions of every request the router serves.
pub(crate) struct Peer {
    /// The client at the connection's address, which holds the connection.
    pub(crate) client: Arc<Client>,
    /// The connection's address.
    pub(crate) address: SocketAddr,
    /// Whether that address is a trusted proxy's.
    pub(crate) proxy: bool,
    /// The first `Host` value the connection's requests were allowed with (see
    /// `guard::check_host_remembering`).
    pub(crate) host: std::sync::OnceLock<Box<[u8]>>,
    /// The session the connection's last request named, and how many sessions the server had
    /// removed when it was found: the next request naming it is given it again, without a
    /// lookup, while none has been removed since (see `HttpState::session_here`). Weak: a
    /// connection does not keep an ended session alive.
    pub(super) last_session: std::sync::Mutex<Option<(u64, std::sync::Weak<super::HttpSession>)>>,
    /// The queue the connection's last POST answered through, kept for its next POST when
    /// nothing held on to it (see `HttpState::post_channel`).
    pub(super) spare_replies: std::sync::Mutex<Option<(Sink, Outbox)>>,
}

/// What a request says of the connection it came on.
#[derive(Clone, Copy)]
pub(crate) enum Connection<'a> {
    /// The connection as `serve_http` accepted it.
    Peer(&'a Peer),
    /// A router from `into_router`: the address axum's `ConnectInfo` gives, if the app serves
    /// it with connect info.
    Info(Option<SocketAddr>),
}

impl<'a> Connection<'a> {
    /// The connection a request's extensions name.
    pub(crate) fn of(extensions: &'a Extensions) -> Self {
        match extensions.get::<Arc<Peer>>() {
            Some(peer) => Self::Peer(peer),
            None => Self::Info(
                extensions
                    .get::<axum::extract::ConnectInfo<SocketAddr>>()
                    .map(|info| info.0),
            ),
        }
    }
}

impl HttpState {
    /// The client a request is from: the principal's, else its address's (`None` when a router
    /// from `into_router` gets neither a principal nor `ConnectInfo`: no share applies).
    pub(crate) fn client_of(
        &self,
        connection: Connection<'_>,
        headers: &HeaderMap,
        principal: Option<&Principal>,
    ) -> Option<Arc<Client>> {
        if let Some(principal) = principal {
            return Some(
                self.clients
                    .get(ClientKey::Principal(principal.binding_key().into())),
            );
        }
        let proxies = &self.options().trusted_proxies;
        let ip = match connection {
            Connection::Peer(peer) if !peer.proxy => return Some(Arc::clone(&peer.client)),
            Connection::Peer(peer) => {
                forwarded_client(headers, proxies).unwrap_or(peer.address.ip())
            }
            Connection::Info(address) => {
                let ip = address?.ip();
                match proxies.iter().any(|p| p.contains(ip)) {
                    true => forwarded_client(headers, proxies).unwrap_or(ip),
                    false => ip,
                }
            }
        };
        Some(self.clients.get(ClientKey::address(ip)))
    }

    /// The client's address as middleware and telemetry see it
    /// ([`McpRequest::peer_addr`](crate::middleware::McpRequest::peer_addr)): the connection's,
    /// or, when the connection comes from a trusted proxy, the client its forwarding header
    /// names, with port 0 (those headers seldom carry one); `None` when a router from
    /// `into_router` gets no `ConnectInfo`.
    pub(crate) fn peer_of(
        &self,
        connection: Connection<'_>,
        headers: &HeaderMap,
    ) -> Option<SocketAddr> {
        let proxies = &self.options().trusted_proxies;
        let (address, proxy) = match connection {
            Connection::Peer(peer) => (peer.address, peer.proxy),
            Connection::Info(address) => {
                let address = address?;
                (address, proxies.iter().any(|p| p.contains(address.ip())))
            }
        };
        match proxy.then(|| forwarded_client(headers, proxies)).flatten() {
            Some(client) => Some(SocketAddr::new(client, 0)),
            None => Some(address),
        }
    }
}

/// The client a trusted proxy's headers name: walking the hops back from the nearest, the first
/// address that is not itself a trusted proxy. `Forwarded` when the request has one, else
/// `X-Forwarded-For`; `None` when the hop reached has no readable address (`unknown`, an
/// obfuscated name, garbage), or there are no hops.
pub(crate) fn forwarded_client(headers: &HeaderMap, proxies: &[IpRange]) -> Option<IpAddr> {
    let forwarded = headers.contains_key(&FORWARDED);
    let name = if forwarded {
        &FORWARDED
    } else {
        &X_FORWARDED_FOR
    };
    // Hops in order, across repeated headers; read from the end.
    let values: Vec<&str> = headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap_or(""))
        .collect();
    let hops = values.iter().rev().flat_map(|value| value.rsplit(','));
    for hop in hops.take(MAX_HOPS) {
        let address = if forwarded {
            forwarded_for(hop)?
        } else {
            node_address(hop.trim())?
        };
        if !proxies.iter().any(|p| p.contains(address)) {
            return Some(address);
        }
    }
    None
}

/// The address of one `Forwarded` element's `for=` pair.
fn forwarded_for(element: &str) -> Option<IpAddr> {
    let value = element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("for")
            .then_some(value.trim())
    })?;
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    node_address(value)
}

/// An address as a node is written: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`,
/// `[2001:db8::1]:4711`, or a bare IPv6 address (`X-Forwarded-For`).
fn node_address(node: &str) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        let (inside, _) = rest.split_once(']')?;
        return inside.parse().ok();
    }
    if let Ok(ip) = node.parse() {
        return Some(ip);
    }
    let (host, port) = node.rsplit_once(':')?;
    port.bytes().all(|b| b.is_ascii_digit()).then_some(())?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn ranges(list: &[&str]) -> Vec<IpRange> {
        list.iter().map(|r| IpRange::parse(r).unwrap()).collect()
    }

    #[test]
    fn the_client_is_the_last_hop_that_is_not_a_trusted_proxy() {
        let proxies = ranges(&["10.0.0.0/8"]);
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        // A client that sends its own header cannot hide behind what it claims.
        let spoofed = headers(&[("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2")]);
        assert_eq!(forwarded_client(&spoofed, &proxies), ip("203.0.113.9"));
        let two_headers = headers(&[
            ("x-forwarded-for", "1.1.1.1"),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(forwarded_client(&two_headers, &proxies), ip("203.0.113.9"));
        // `Forwarded` wins over `X-Forwarded-For`, with quoted IPv6 and ports.
        let both = headers(&[
            ("x-forwarded-for", "198.51.100.1"),
            (
                "forwarded",
                r#"for=192.0.2.60;proto=http, for="[2001:db8::1]:4711";by=10.0.0.1, for=10.9.9.9"#,
            ),
        ]);
        assert_eq!(forwarded_client(&both, &proxies), ip("2001:db8::1"));
        // The hop reached names no address: the proxy's own stands.
        let hidden = headers(&[("forwarded", "for=192.0.2.1, for=_hidden")]);
        assert_eq!(forwarded_client(&hidden, &proxies), None);
        let garbage = headers(&[("x-forwarded-for", "not an address")]);
        assert_eq!(forwarded_client(&garbage, &proxies), None);
        assert_eq!(forwarded_client(&HeaderMap::new(), &proxies), None);
        let port = headers(&[("x-forwarded-for", "192.0.2.7:5000")]);
        assert_eq!(forwarded_client(&port, &proxies), ip("192.0.2.7"));
    }
}
