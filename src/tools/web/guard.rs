//! The SSRF guard of `web_fetch`: which addresses a fetch may connect to, and the resolver that makes the connection
//! go to an address that was checked.
//!
//! By allowlist: an address is fetched only when it is an ordinary public unicast address (IPv4 outside every
//! special-purpose range, IPv6 inside global unicast 2000::/3 and outside its special blocks; the IPv4 inside mapped,
//! compatible, NAT64 and 6to4 forms is judged as IPv4). Loopback, private, shared (CGNAT), link-local, unspecified,
//! broadcast, multicast, documentation, benchmarking and reserved ranges, and the cloud metadata addresses, are
//! refused unless the user's `[web] allow_hosts` names the host. Even then a metadata address is refused unless the
//! entry is that very address: a name the user trusts must not lead to the cloud's credentials.
//!
//! The resolver is the one place names become addresses for the fetch client, so the address checked is the address
//! connected to (no second lookup a DNS rebinding could answer differently). Hosts written as IP literals never
//! reach a resolver: `check_url` judges them, before the first request and on every redirect.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Cloud metadata services: link-local and ULA ones are refused by range anyway; these are named so that even an
/// allowed host cannot reach them, and for the public Azure one, which no range covers.
const METADATA: &[IpAddr] = &[
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V4(Ipv4Addr::new(168, 63, 129, 16)),
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// Why a fetch was refused. The text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Blocked {
    #[error("only http and https URLs can be fetched, not {0}:")]
    Scheme(String),
    #[error("the URL has no host")]
    NoHost,
    #[error("URLs with a user name or password are not fetched")]
    Credentials,
    #[error(
        "{host} is {why} ({addr}); web_fetch only reaches public addresses unless [web] allow_hosts names the host"
    )]
    Address {
        host: String,
        addr: IpAddr,
        why: &'static str,
    },
    #[error("{host} does not resolve to any address")]
    NoAddress { host: String },
    #[error("cannot resolve {host}: {message}")]
    Lookup { host: String, message: String },
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
}

/// What the guard allows: the public internet, and the hosts the user named.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    allow_hosts: Vec<String>,
}

impl HostPolicy {
    pub(crate) fn new(allow_hosts: &[String]) -> Self {
        Self {
            allow_hosts: allow_hosts.iter().map(|h| normalise_host(h)).collect(),
        }
    }

    /// Whether the user's `allow_hosts` names this host (as written in the URL, or as an address literal).
    pub(crate) fn allows_host(&self, host: &str) -> bool {
        let host = normalise_host(host);
        self.allow_hosts.contains(&host)
    }

    /// Judges one address `host` resolved to (or is): `Ok` when a fetch may connect to it.
    pub(crate) fn check_addr(&self, host: &str, addr: IpAddr) -> Result<(), Blocked> {
        let refuse = |why| {
            Err(Blocked::Address {
                host: host.to_string(),
                addr,
                why,
            })
        };
        if is_metadata(addr) {
            // Only an `allow_hosts` entry that is this very address lets a metadata address through.
            return if host_is_literal(host, addr) && self.allows_host(host) {
                Ok(())
            } else {
                refuse("a cloud metadata address")
            };
        }
        if self.allows_host(host) {
            return Ok(());
        }
        match special(addr) {
            Some(why) => refuse(why),
            None => Ok(()),
        }
    }

    /// Judges a URL before it is requested (the first one and every redirect target): scheme, credentials, and a
    /// host written as an address. Names are judged by the resolver when the connection is made.
    pub(crate) fn check_url(&self, url: &Url) -> Result<(), Blocked> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(Blocked::Scheme(other.to_string())),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Blocked::Credentials);
        }
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(Blocked::NoHost);
        };
        let host = normalise_host(host);
        match host.parse::<IpAddr>() {
            Ok(addr) => self.check_addr(&host, addr),
            Err(_) => Ok(()),
        }
    }
}

fn is_metadata(addr: IpAddr) -> bool {
    let addr = canonical(addr);
    METADATA.iter().any(|m| canonical(*m) == addr)
}

/// Whether `host` is the address itself, as written in a URL or in `allow_hosts`.
fn host_is_literal(host: &str, addr: IpAddr) -> bool {
    normalise_host(host)
        .parse::<IpAddr>()
        .is_ok_and(|h| canonical(h) == canonical(addr))
}

/// Lower case, no trailing dot, no brackets around an IPv6 literal: the form hosts are compared in.
fn normalise_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(inner) => inner.to_string(),
        None => host,
    }
}

/// The IPv4 address inside an IPv6 form that carries one (mapped, compatible, NAT64, 6to4); the address otherwise.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible; :: and ::1 are judged as IPv6).
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        [0, 0, 0, 0, 0, 0, hi, _] if hi != 0 => Some(low),
        // NAT64: 64:ff9b::/96 and the local-use 64:ff9b:1::/48.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] | [0x64, 0xff9b, 1, ..] => Some(low),
        // 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
        [0x2002, a, b, ..] => Some(Ipv4Addr::new((a >> 8) as u8, a as u8, (b >> 8) as u8, b as u8)),
        _ => None,
    }
}

/// Why an address is not an ordinary public one, or `None` when it is.
pub(crate) fn special(addr: IpAddr) -> Option<&'static str> {
    match addr {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => special_v4(v4),
            None => special_v6(v6),
        },
    }
}

fn special_v4(v4: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = v4.octets();
    let why = match (a, b, c) {
        (0, ..) => "an unspecified or \"this network\" address",
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => "a private address",
        (100, 64..=127, _) => "a shared (carrier-grade NAT) address",
        (127, ..) => "a loopback address",
        (169, 254, _) => "a link-local address",
        (192, 0, 0) => "an IETF protocol address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (192, 88, 99) => "a 6to4 relay address",
        (198, 18..=19, _) => "a benchmarking address",
        (224..=239, ..) => "a multicast address",
        (240..=255, ..) => "a reserved or broadcast address",
        _ => return None,
    };
    Some(why)
}

fn special_v6(v6: Ipv6Addr) -> Option<&'static str> {
    let s = v6.segments();
    let why = if v6.is_unspecified() {
        "the unspecified address"
    } else if v6.is_loopback() {
        "a loopback address"
    } else if s[0] & 0xfe00 == 0xfc00 {
        "a unique local (private) address"
    } else if s[0] & 0xffc0 == 0xfe80 {
        "a link-local address"
    } else if s[0] & 0xff00 == 0xff00 {
        "a multicast address"
    } else if s[0] & 0xe000 != 0x2000 {
        // Only 2000::/3 is global unicast; everything else is reserved or special.
        "a reserved address"
    } else if (s[0] == 0x2001 && s[1] == 0x0db8) || s[0] & 0xfff0 == 0x3ff0 {
        "a documentation address"
    } else if s[0] == 0x2001 && s[1] < 0x0200 {
        // 2001::/23: Teredo, benchmarking, ORCHID and other IETF protocol assignments.
        "an IETF protocol address"
    } else {
        return None;
    };
    Some(why)
}

/// How names become addresses: the system resolver, or (in tests) a fixed table, which is still filtered.
#[derive(Clone, Debug, Default)]
pub enum Lookup {
    #[default]
    System,
    Fixed(HashMap<String, Vec<IpAddr>>),
}

/// The fetch client's resolver: looks the name up once and hands the connector only the addresses the policy
/// allows, so the connection goes to a checked address.
pub(super) struct GuardedResolver {
    pub(super) policy: Arc<HostPolicy>,
    pub(super) lookup: Lookup,
}

impl GuardedResolver {
    async fn resolve_checked(
        policy: Arc<HostPolicy>,
        lookup: Lookup,
        host: String,
    ) -> Result<Vec<SocketAddr>, Blocked> {
        let addrs: Vec<IpAddr> = match lookup {
            Lookup::Fixed(table) => table.get(&normalise_host(&host)).cloned().unwrap_or_default(),
            Lookup::System => tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| Blocked::Lookup {
                    host: host.clone(),
                    message: e.to_string(),
                })?
                .map(|a| a.ip())
                .collect(),
        };
        if addrs.is_empty() {
            return Err(Blocked::NoAddress { host });
        }
        // Every address must pass: a name that also resolves to a private address is refused whole, rather than
        // trusting the connector's order.
        for addr in &addrs {
            policy.check_addr(&host, *addr)?;
        }
        Ok(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect())
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        let lookup = self.lookup.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = Self::resolve_checked(policy, lookup, host).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The `Blocked` reason somewhere in an error's chain (the resolver's and the redirect policy's errors arrive wrapped
/// by the HTTP client).
pub(crate) fn blocked_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Blocked> {
    let mut current: Option<&'a (dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(blocked) = e.downcast_ref::<Blocked>() {
            return Some(blocked);
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests;
