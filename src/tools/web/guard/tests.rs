use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use proptest::prelude::*;
use reqwest::Url;

use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn refused(policy: &HostPolicy, url: &str) -> Option<Blocked> {
    policy.check_url(&Url::parse(url).unwrap()).err()
}

#[test]
fn special_ranges_are_refused_and_public_addresses_pass() {
    for (addr, why) in [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "shared"),
        ("100.127.255.254", "shared"),
        ("169.254.1.1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("255.255.255.255", "broadcast"),
        ("224.0.0.1", "multicast"),
        ("192.0.2.7", "documentation"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.7", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fc00::1", "unique local"),
        ("fd12:3456::1", "unique local"),
        ("fe80::1", "link-local"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "documentation"),
        ("2001::1", "IETF"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::127.0.0.1", "loopback"),
        ("64:ff9b::a00:1", "private"),
        ("2002:c0a8:101::1", "private"),
        ("4000::1", "reserved"),
    ] {
        let found = special(ip(addr));
        assert!(found.is_some_and(|w| w.contains(why)), "{addr}: {found:?}");
    }
    for addr in [
        "93.184.215.14",
        "1.1.1.1",
        "172.32.0.1",
        "100.128.0.1",
        "2606:4700::1111",
        "64:ff9b::5db8:d70e",
    ] {
        assert_eq!(special(ip(addr)), None, "{addr}");
    }
}

#[test]
fn metadata_addresses_are_refused_even_for_an_allowed_name() {
    let policy = HostPolicy::new(&["metadata.internal".into(), "169.254.169.254".into()]);
    for addr in [
        "169.254.169.254",
        "::ffff:169.254.169.254",
        "fd00:ec2::254",
        "168.63.129.16",
        "100.100.100.200",
    ] {
        let verdict = policy.check_addr("metadata.internal", ip(addr));
        assert!(
            matches!(&verdict, Err(Blocked::Address { why, .. }) if why.contains("metadata")),
            "{addr}: {verdict:?}"
        );
    }
    // Only naming the very address lets it through.
    assert_eq!(policy.check_addr("169.254.169.254", ip("169.254.169.254")), Ok(()));
    assert!(refused(&HostPolicy::default(), "http://169.254.169.254/latest/meta-data/").is_some());
}

#[test]
fn urls_are_checked_for_scheme_credentials_and_literal_hosts() {
    let policy = HostPolicy::default();
    assert!(matches!(refused(&policy, "file:///etc/passwd"), Some(Blocked::Scheme(s)) if s == "file"));
    assert!(matches!(
        refused(&policy, "ftp://example.com/x"),
        Some(Blocked::Scheme(_))
    ));
    assert_eq!(
        refused(&policy, "https://user:pw@example.com/"),
        Some(Blocked::Credentials)
    );
    for url in [
        "http://127.0.0.1:8080/",
        "http://[::1]/",
        "http://[::ffff:7f00:1]/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://017700000001/",
        "http://10.0.0.1/",
        "http://0/",
    ] {
        assert!(
            matches!(refused(&policy, url), Some(Blocked::Address { .. })),
            "{url}: {:?}",
            refused(&policy, url)
        );
    }
    // Names are judged when they are resolved.
    assert_eq!(refused(&policy, "https://example.com/"), None);
    assert_eq!(refused(&policy, "https://93.184.215.14/"), None);
}

#[test]
fn allowed_hosts_match_exactly() {
    let policy = HostPolicy::new(&["LocalHost.".into(), "127.0.0.1".into(), "[::1]".into()]);
    assert_eq!(refused(&policy, "http://127.0.0.1:3000/"), None);
    assert_eq!(refused(&policy, "http://[::1]:3000/"), None);
    assert!(refused(&policy, "http://127.0.0.2/").is_some());
    assert_eq!(policy.check_addr("localhost", ip("127.0.0.1")), Ok(()));
    assert!(policy.check_addr("localhost.evil.example", ip("127.0.0.1")).is_err());
    assert!(policy.check_addr("evil-localhost", ip("127.0.0.1")).is_err());
}

fn resolver(allow: &[&str], table: &[(&str, &[&str])]) -> GuardedResolver {
    let table: HashMap<String, Vec<IpAddr>> = table
        .iter()
        .map(|(name, addrs)| (name.to_string(), addrs.iter().map(|a| ip(a)).collect()))
        .collect();
    GuardedResolver {
        policy: Arc::new(HostPolicy::new(
            &allow.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
        )),
        lookup: Lookup::Fixed(table),
    }
}

async fn resolve(resolver: &GuardedResolver, host: &str) -> Result<Vec<SocketAddr>, String> {
    let name: Name = host.parse().map_err(|_| "bad name".to_string())?;
    match resolver.resolve(name).await {
        Ok(addrs) => Ok(addrs.collect()),
        Err(e) => Err(e.to_string()),
    }
}

#[tokio::test]
async fn the_resolver_hands_on_only_checked_addresses() {
    let resolver = resolver(
        &["dev.local"],
        &[
            ("public.test", &["93.184.215.14"]),
            ("rebind.test", &["93.184.215.14", "10.0.0.7"]),
            ("dev.local", &["127.0.0.1"]),
            ("cloud.test", &["169.254.169.254"]),
        ],
    );
    assert_eq!(
        resolve(&resolver, "public.test").await,
        Ok(vec!["93.184.215.14:0".parse().unwrap()])
    );
    let err = resolve(&resolver, "rebind.test").await.unwrap_err();
    assert!(err.contains("10.0.0.7") && err.contains("private"), "{err}");
    assert_eq!(
        resolve(&resolver, "dev.local").await,
        Ok(vec!["127.0.0.1:0".parse().unwrap()])
    );
    assert!(resolve(&resolver, "cloud.test").await.unwrap_err().contains("metadata"));
    assert!(
        resolve(&resolver, "unknown.test")
            .await
            .unwrap_err()
            .contains("does not resolve")
    );
}

#[tokio::test]
async fn the_system_resolver_is_filtered_too() {
    let resolver = GuardedResolver {
        policy: Arc::new(HostPolicy::default()),
        lookup: Lookup::System,
    };
    let err = resolve(&resolver, "localhost").await.unwrap_err();
    assert!(err.contains("loopback") || err.contains("cannot resolve"), "{err}");
}

proptest! {
    /// Every IPv4 address written in a v6 form that carries it (mapped, compatible, NAT64, 6to4) gets the same
    /// verdict as the IPv4 address itself.
    #[test]
    fn embedded_ipv4_is_judged_as_ipv4(bits in any::<u32>()) {
        let v4 = Ipv4Addr::from(bits);
        let expected = special_v4(v4).is_some();
        let [a, b, c, d] = v4.octets();
        let hi = u16::from_be_bytes([a, b]);
        let lo = u16::from_be_bytes([c, d]);
        let forms = [
            v4.to_ipv6_mapped(),
            Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, hi, lo),
            Ipv6Addr::new(0x2002, hi, lo, 0, 0, 0, 0, 1),
        ];
        for form in forms {
            prop_assert_eq!(special(IpAddr::V6(form)).is_some(), expected, "{}", form);
        }
    }
}

proptest! {
    #![proptest_config(tern_testkit::fuzz_config(256))]

    /// A URL with an address for its host is refused exactly when the address is special, however the address is
    /// written (dotted, decimal, hex, bracketed IPv6).
    #[test]
    fn literal_hosts_are_judged_by_their_address(bits in any::<u32>(), v6 in any::<u128>(), form in 0usize..4) {
        let v4 = Ipv4Addr::from(bits);
        let host = match form {
            0 => v4.to_string(),
            1 => bits.to_string(),
            2 => format!("0x{bits:x}"),
            _ => format!("[{}]", v4.to_ipv6_mapped()),
        };
        let policy = HostPolicy::default();
        let url = Url::parse(&format!("http://{host}/x")).unwrap();
        prop_assert_eq!(policy.check_url(&url).is_err(), special_v4(v4).is_some() || is_metadata(IpAddr::V4(v4)));
        let v6 = Ipv6Addr::from(v6);
        let url = Url::parse(&format!("https://[{v6}]:8443/")).unwrap();
        prop_assert_eq!(policy.check_url(&url).is_err(), special(IpAddr::V6(v6)).is_some() || is_metadata(IpAddr::V6(v6)));
    }
}
