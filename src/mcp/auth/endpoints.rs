//! Which addresses a login may use: the authorization server's endpoints (from metadata the MCP server points to, so
//! from whoever runs that server) and the authorization URL tern opens in the browser. Only `https`, or `http` to
//! this machine (`127.0.0.1` and the rest of 127/8, `[::1]`, `localhost`), passes. A `javascript:` or `file:` URL,
//! a custom scheme some program has registered, or plain `http` to another host is refused before any request is
//! sent or any browser is started. This module only judges addresses; it opens and fetches nothing.

use std::net::IpAddr;

/// Whether `url` is `https`, or `http` to a loopback host; the error says which rule it broke, in words for the
/// user (`what` names the address: "authorization endpoint").
pub(crate) fn check(what: &str, url: &str) -> Result<(), String> {
    let refused = |why: &str| {
        format!(
            "the {what} {:?} {why}; only https (or http to this machine) is used",
            shown(url)
        )
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| refused("is not a valid URL"))?;
    match parsed.scheme() {
        "https" if parsed.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        "https" => Err(refused("names no host")),
        "http" if parsed.host_str().is_some_and(is_loopback) => Ok(()),
        "http" => Err(refused("is plain http to another machine")),
        scheme => Err(refused(&format!("has the scheme `{}:`", shown(scheme)))),
    }
}

/// A host as the URL parser normalised it (`2130706433` is already `127.0.0.1`; IPv6 in brackets).
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// At most 200 characters of a URL from a server, for a message.
fn shown(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Checks every endpoint of an authorization server's metadata that tern would send anything to, or open.
pub(crate) fn check_metadata(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> Result<(), String> {
    check("authorization endpoint", &metadata.authorization_endpoint)?;
    check("token endpoint", &metadata.token_endpoint)?;
    if let Some(register) = &metadata.registration_endpoint {
        check("registration endpoint", register)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_and_loopback_http_pass() {
        for url in [
            "https://auth.example.com/authorize?x=1",
            "http://127.0.0.1:8080/authorize",
            "http://127.1.2.3/authorize",
            "http://[::1]:9/authorize",
            "http://localhost/authorize",
            "HTTP://LOCALHOST/authorize",
            "http://2130706433/authorize",
        ] {
            assert_eq!(check("authorization endpoint", url), Ok(()), "{url}");
        }
    }

    #[test]
    fn other_schemes_and_remote_http_are_refused() {
        for (url, says) in [
            ("javascript:alert(1)", "scheme `javascript:`"),
            ("file:///etc/passwd", "scheme `file:`"),
            ("vscode://open?x", "scheme `vscode:`"),
            ("data:text/html,<script>", "scheme `data:`"),
            ("http://auth.example.com/authorize", "plain http to another machine"),
            ("http://localhost.evil.com/authorize", "plain http to another machine"),
            ("http://127.0.0.1.nip.io/authorize", "plain http to another machine"),
            ("not a url", "not a valid URL"),
        ] {
            let err = check("authorization endpoint", url).unwrap_err();
            assert!(
                err.contains(says) && err.contains("authorization endpoint"),
                "{url}: {err}"
            );
        }
    }
}
