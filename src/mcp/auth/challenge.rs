//! The server's own word on how to authorize: before a login, one unauthenticated request to the MCP server, whose
//! 401 (or 403) carries `WWW-Authenticate` with the `resource_metadata` URL of its protected-resource metadata (which
//! may be published nowhere else) and the `scope` it wants (MCP authorization, 2025-06-18 and 2025-11-25). The
//! request is an `initialize`, what a session would send first; a server that answers it without a challenge gives
//! none, and discovery then probes the well-known addresses as before. Nothing here sends credentials.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, WWW_AUTHENTICATE};

/// How long the probe may take; discovery goes on without a challenge after that.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The `WWW-Authenticate` value of the server's answer to an unauthenticated `initialize` at `url`, when it refused
/// with 401 or 403; `None` when it did not (or could not be reached: discovery reports that better).
pub(crate) async fn probe(http: &reqwest::Client, url: &str) -> Option<String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tern", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let request = http
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .timeout(PROBE_TIMEOUT);
    let response = request.send().await.ok()?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return header(response.headers());
    }
    // The server opened a session for the probe: end it rather than leave it to time out.
    if let Some(session) = response.headers().get("mcp-session-id").cloned() {
        let _ = http
            .delete(url)
            .header("mcp-session-id", session)
            .timeout(PROBE_TIMEOUT)
            .send()
            .await;
    }
    None
}

/// The first `WWW-Authenticate` value that is a Bearer challenge (or the only one).
fn header(headers: &HeaderMap) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    values
        .iter()
        .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
        .or(values.first())
        .map(|v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn the_bearer_challenge_is_taken() {
        let mut headers = HeaderMap::new();
        headers.append(WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"x\""));
        headers.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer scope=\"mcp:basic\", resource_metadata=\"https://a/b\""),
        );
        assert_eq!(
            header(&headers).as_deref(),
            Some("Bearer scope=\"mcp:basic\", resource_metadata=\"https://a/b\"")
        );
        assert_eq!(header(&HeaderMap::new()), None);
    }
}
