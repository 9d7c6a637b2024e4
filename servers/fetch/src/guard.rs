//! Which addresses a fetch may reach: public ones only, unless `--allow-private-ips`.
//!
//! The check sits where the connection is made: the client resolves every host name through
//! [`GuardedResolver`], which refuses a name if any one of its addresses is not public and
//! otherwise hands the connector exactly the addresses it checked, so a name cannot resolve to
//! a public address for the check and to a private one for the connection (DNS rebinding).
//! Every redirect hop goes through the same resolver. A URL whose host is an address literal
//! never reaches a resolver, so [`check_literal`] checks it before each request. Behind a
//! proxy the proxy resolves the target, so the target's addresses are looked up and checked
//! here first, as the original does (which is all that can be done from this side).

use std::collections::HashSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A request refused because its host is, or resolves to, an address that is not public.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// The host as the URL names it (an address literal without brackets).
    pub(crate) host: String,
    /// The first address of it that is not public.
    pub(crate) address: IpAddr,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} resolves to {}", self.host, self.address)
    }
}

impl std::error::Error for Refused {}

impl Refused {
    /// The message the original gives, naming the request's URL.
    pub(crate) fn message(&self, url: &Url) -> String {
        format!(
            "Refused to fetch {url}: {} resolves to {}, which is not a public address. Start the \
             server with --allow-private-ips to allow private, loopback and link-local addresses.",
            self.host, self.address
        )
    }
}

/// Resolves host names with the system resolver and refuses any name with an address that is
/// not public. The proxies' own host names are exempt: the user configured them.
#[derive(Debug, Clone, Default)]
pub(crate) struct GuardedResolver {
    exempt: Arc<HashSet<String>>,
}

impl GuardedResolver {
    /// A resolver that lets these host names (the proxies') resolve to any address.
    pub(crate) fn exempting(hosts: impl IntoIterator<Item = String>) -> Self {
        Self {
            exempt: Arc::new(hosts.into_iter().collect()),
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let exempt = Arc::clone(&self.exempt);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !exempt.contains(&host)
                && let Some(bad) = addresses.iter().find(|a| !is_public(a.ip()))
            {
                let refused = Refused {
                    host,
                    address: bad.ip(),
                };
                return Err(Box::new(refused) as Box<dyn std::error::Error + Send + Sync>);
            }
            let addrs: Addrs = Box::new(addresses.into_iter());
            Ok(addrs)
        })
    }
}

/// Refuses a URL whose host is an address literal that is not public.
pub(crate) fn check_literal(url: &Url) -> Result<(), Refused> {
    let address = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        _ => return Ok(()),
    };
    if is_public(address) {
        return Ok(());
    }
    Err(Refused {
        host: address.to_string(),
        address,
    })
}

/// Looks up a URL's host name here and refuses it if any of its addresses is not public: for a
/// request that a proxy will resolve. A name that does not resolve here passes (only the proxy
/// may know it), as in the original.
pub(crate) async fn check_by_lookup(url: &Url) -> Result<(), Refused> {
    check_literal(url)?;
    let Some(url::Host::Domain(host)) = url.host() else {
        return Ok(());
    };
    let Ok(addresses) = tokio::net::lookup_host((host, 0)).await else {
        return Ok(());
    };
    for address in addresses {
        if !is_public(address.ip()) {
            return Err(Refused {
                host: host.to_owned(),
                address: address.ip(),
            });
        }
    }
    Ok(())
}

/// Whether `address` is a globally routable unicast address. Refused: loopback, RFC 1918,
/// link-local (with most cloud metadata endpoints), shared address space, unique local IPv6,
/// multicast, unspecified, documentation and the other IANA special-purpose ranges. An
/// IPv4-mapped or well-known NAT64 address is judged by the IPv4 address it carries.
pub(crate) fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let bits = u128::from(v6);
            if in_v6(bits, NAT64_WELL_KNOWN) {
                // The low 32 bits: this cannot truncate anything that matters.
                #[allow(clippy::cast_possible_truncation)]
                return is_public_v4(Ipv4Addr::from(bits as u32));
            }
            is_public_v6(v6)
        }
    }
}

/// An IPv4 network: the address and the prefix length.
type V4Net = (u32, u8);
/// An IPv6 network: the address and the prefix length.
type V6Net = (u128, u8);

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> V4Net {
    (u32::from_be_bytes([a, b, c, d]), prefix)
}

/// The special-purpose IPv4 ranges that are not public destinations (the original's list,
/// with multicast and the limited broadcast address, which it refuses through `is_global`).
const NON_PUBLIC_V4: &[V4Net] = &[
    v4(0, 0, 0, 0, 8),
    v4(10, 0, 0, 0, 8),
    v4(100, 64, 0, 0, 10),
    v4(127, 0, 0, 0, 8),
    v4(169, 254, 0, 0, 16),
    v4(172, 16, 0, 0, 12),
    v4(192, 0, 0, 0, 24),
    v4(192, 0, 2, 0, 24),
    v4(192, 88, 99, 0, 24),
    v4(192, 168, 0, 0, 16),
    v4(198, 18, 0, 0, 15),
    v4(198, 51, 100, 0, 24),
    v4(203, 0, 113, 0, 24),
    v4(224, 0, 0, 0, 4),
    v4(240, 0, 0, 0, 4),
];

/// Globally reachable assignments inside the ranges above (anycast services).
const PUBLIC_V4: &[V4Net] = &[v4(192, 0, 0, 9, 32), v4(192, 0, 0, 10, 32)];

const fn v6(segments: [u16; 8], prefix: u8) -> V6Net {
    let mut bits = 0_u128;
    let mut i = 0;
    while i < 8 {
        bits = (bits << 16) | segments[i] as u128;
        i += 1;
    }
    (bits, prefix)
}

/// The well-known NAT64 prefix (RFC 6052): a gateway forwards an address in it to the IPv4
/// address in its low 32 bits.
const NAT64_WELL_KNOWN: V6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);

/// The special-purpose IPv6 ranges that are not public destinations (the original's list, with
/// multicast, the deprecated IPv4-compatible and site-local ranges and 3fff::/20, the second
/// documentation prefix, refused as well).
const NON_PUBLIC_V6: &[V6Net] = &[
    v6([0, 0, 0, 0, 0, 0, 0, 0], 96),
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
    v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
    v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
];

/// Globally reachable assignments inside the ranges above.
const PUBLIC_V6: &[V6Net] = &[
    v6([0x2001, 1, 0, 0, 0, 0, 0, 1], 128),
    v6([0x2001, 1, 0, 0, 0, 0, 0, 2], 128),
    v6([0x2001, 3, 0, 0, 0, 0, 0, 0], 32),
    v6([0x2001, 4, 0x112, 0, 0, 0, 0, 0], 48),
    v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28),
    v6([0x2001, 0x30, 0, 0, 0, 0, 0, 0], 28),
];

fn in_v4(address: u32, (network, prefix): V4Net) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    address & mask == network & mask
}

fn in_v6(address: u128, (network, prefix): V6Net) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    address & mask == network & mask
}

fn is_public_v4(address: Ipv4Addr) -> bool {
    let bits = u32::from(address);
    PUBLIC_V4.iter().any(|net| in_v4(bits, *net))
        || !NON_PUBLIC_V4.iter().any(|net| in_v4(bits, *net))
}

fn is_public_v6(address: Ipv6Addr) -> bool {
    let bits = u128::from(address);
    PUBLIC_V6.iter().any(|net| in_v6(bits, *net))
        || !NON_PUBLIC_V6.iter().any(|net| in_v6(bits, *net))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(text: &str) -> bool {
        is_public(text.parse().expect("an address"))
    }

    #[test]
    fn private_loopback_link_local_and_special_ranges_are_refused() {
        for address in [
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "192.0.2.1",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "::127.0.0.1",
        ] {
            assert!(!public(address), "{address} passed");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "172.32.0.1",
            "192.0.0.9",
            "2606:4700:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::808:808",
            "2001:4:112::1",
        ] {
            assert!(public(address), "{address} refused");
        }
    }

    #[test]
    fn literal_hosts_in_every_spelling_the_url_parser_accepts() {
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://127.1/",
            "http://0x7f.0.0.1/",
            "http://[::1]:8080/",
            "http://[::ffff:127.0.0.1]/",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let url = Url::parse(url).expect("a URL");
            assert!(check_literal(&url).is_err(), "{url} passed");
        }
        let refused = check_literal(&Url::parse("http://[::1]:8080/x").expect("a URL"));
        assert_eq!(
            refused
                .err()
                .map(|r| r.message(&Url::parse("http://[::1]:8080/x").expect("a URL"))),
            Some(
                "Refused to fetch http://[::1]:8080/x: ::1 resolves to ::1, which is not a public \
                 address. Start the server with --allow-private-ips to allow private, loopback \
                 and link-local addresses."
                    .to_owned()
            )
        );
        assert!(check_literal(&Url::parse("http://8.8.8.8/").expect("a URL")).is_ok());
        assert!(check_literal(&Url::parse("http://example.com/").expect("a URL")).is_ok());
    }

    #[tokio::test]
    async fn the_resolver_refuses_a_name_with_a_private_address() {
        let resolver = GuardedResolver::default();
        let name: Name = "localhost".parse().expect("a name");
        let error = match resolver.resolve(name).await {
            Ok(addresses) => panic!("resolved to {:?}", addresses.collect::<Vec<_>>()),
            Err(error) => error,
        };
        let refused = error.downcast_ref::<Refused>().expect("a refusal");
        assert_eq!(refused.host, "localhost");
        assert!(refused.address.is_loopback());

        // An exempt name (a proxy's) resolves as it is.
        let resolver = GuardedResolver::exempting(["localhost".to_owned()]);
        let name: Name = "localhost".parse().expect("a name");
        let addresses: Vec<SocketAddr> = match resolver.resolve(name).await {
            Ok(addresses) => addresses.collect(),
            Err(error) => panic!("{error}"),
        };
        assert!(addresses.iter().all(|a| a.ip().is_loopback()));
    }
}
