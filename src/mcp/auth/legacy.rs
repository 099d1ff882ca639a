//! Authorization-server discovery as the 2025-03-26 revision of MCP had it: no protected-resource metadata, and the
//! MCP server's own origin is the authorization server, its metadata at `/.well-known/oauth-authorization-server`
//! there. Such metadata may name an issuer with a path (`https://host/oauth`), which the strict RFC 8414 check of
//! later revisions refuses. It is taken here only when the server publishes no protected-resource metadata and the
//! issuer is on the server's own origin: the same party in both cases, so nothing is trusted that the server could
//! not already claim.

use std::time::Duration;

use rmcp::transport::auth::AuthorizationMetadata;

/// How long one metadata request may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The metadata at the root of `url`'s origin, when the server publishes no protected-resource metadata and the
/// metadata's issuer (if it names one) is on that origin.
pub(crate) async fn metadata(url: &str) -> Option<AuthorizationMetadata> {
    let server = reqwest::Url::parse(url).ok()?;
    let http = crate::client::http_client().ok()?;
    let at = |path: &str| {
        let mut address = server.clone();
        address.set_query(None);
        address.set_fragment(None);
        address.set_path(path);
        address
    };
    let resource_path = server.path().trim_end_matches('/');
    for prm in [
        at(&format!("/.well-known/oauth-protected-resource{resource_path}")),
        at("/.well-known/oauth-protected-resource"),
    ] {
        if get(&http, prm).await.is_some() {
            return None;
        }
    }
    let body = get(&http, at("/.well-known/oauth-authorization-server")).await?;
    let metadata: AuthorizationMetadata = serde_json::from_slice(&body).ok()?;
    match &metadata.issuer {
        Some(issuer) if !same_origin(issuer, &server) => None,
        _ => Some(metadata),
    }
}

/// The body of a 200 answer to a GET of `url`.
async fn get(http: &reqwest::Client, url: reqwest::Url) -> Option<bytes::Bytes> {
    let response = http.get(url).timeout(FETCH_TIMEOUT).send().await.ok()?;
    if response.status() != reqwest::StatusCode::OK {
        return None;
    }
    response.bytes().await.ok()
}

/// Whether `issuer` is a URL on the origin (scheme, host, port) of `server`.
fn same_origin(issuer: &str, server: &reqwest::Url) -> bool {
    reqwest::Url::parse(issuer).is_ok_and(|i| i.origin() == server.origin())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_issuer_on_the_servers_origin_counts() {
        let server = reqwest::Url::parse("http://localhost:8080/mcp").unwrap();
        assert!(same_origin("http://localhost:8080/oauth", &server));
        assert!(same_origin("http://localhost:8080", &server));
        assert!(!same_origin("http://localhost:9090/oauth", &server));
        assert!(!same_origin("https://localhost:8080/oauth", &server));
        assert!(!same_origin("https://evil.example/oauth", &server));
        assert!(!same_origin("not a url", &server));
    }
}
