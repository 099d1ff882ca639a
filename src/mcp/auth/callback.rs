//! The redirect listener of `tern mcp login`: a one-shot HTTP/1.1 server on 127.0.0.1 (a port the OS picks) that
//! waits for the browser to come back from the authorization server with `?code=...&state=...`.
//!
//! Only a request to the callback path carrying the `state` this login sent is taken: anything else (a favicon, a
//! stray or forged request from another local process) is answered and ignored, so it can neither end nor hijack the
//! login. Requests are read with a small size limit and a short deadline each.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path the authorization server redirects to.
pub(crate) const CALLBACK_PATH: &str = "/callback";
/// The most of a request that is read: the request line and headers of a redirect are far smaller.
const MAX_REQUEST: usize = 16 * 1024;
/// How long one connection may take to send its request.
const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// What the authorization server sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The user allowed access.
    Code { code: String, issuer: Option<String> },
    /// The user (or the server) refused: `error` and `error_description` as sent.
    Refused { error: String, description: Option<String> },
}

/// A bound listener and the redirect URI that reaches it.
pub(crate) struct Callback {
    listener: TcpListener,
    pub redirect_uri: String,
}

impl Callback {
    /// Listens on `port`, or on one the OS picks.
    pub(crate) async fn bind(port: Option<u16>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// Serves until a callback carrying `state` arrives, and returns what it says. The caller bounds the wait.
    pub(crate) async fn wait(self, state: &str) -> std::io::Result<Outcome> {
        loop {
            let (stream, _) = self.listener.accept().await?;
            match tokio::time::timeout(REQUEST_DEADLINE, answer(stream, state)).await {
                Ok(Some(outcome)) => return Ok(outcome),
                Ok(None) | Err(_) => continue,
            }
        }
    }
}

/// Reads one request and answers it; the outcome when it was this login's callback.
async fn answer(mut stream: TcpStream, state: &str) -> Option<Outcome> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REQUEST {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let target = head.lines().next().and_then(request_target);
    let outcome = target.as_deref().and_then(|t| parse_callback(t, state));
    let (status, page) = match &outcome {
        Some(Outcome::Code { .. }) => (
            "200 OK",
            page("Login complete", "You can close this tab and return to tern."),
        ),
        Some(Outcome::Refused { error, .. }) => (
            "200 OK",
            page(
                "Login refused",
                &format!("The authorization server answered {}.", html_escape(error)),
            ),
        ),
        None => (
            "404 Not Found",
            page("Not found", "This address only receives tern's login."),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: \
         no-store\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    outcome
}

/// The target of `GET <target> HTTP/1.1`.
fn request_target(line: &str) -> Option<String> {
    let mut parts = line.split_whitespace();
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_string)
}

/// The outcome a request target carries, when it is the callback path with this login's `state`.
pub(crate) fn parse_callback(target: &str, state: &str) -> Option<Outcome> {
    let url = reqwest::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    if url.path() != CALLBACK_PATH {
        return None;
    }
    let param = |key: &str| url.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned());
    if param("state").as_deref() != Some(state) {
        return None;
    }
    if let Some(error) = param("error") {
        return Some(Outcome::Refused {
            error,
            description: param("error_description"),
        });
    }
    Some(Outcome::Code {
        code: param("code")?,
        issuer: param("iss"),
    })
}

/// The outcome of a redirect address the user pasted (from a browser on another machine, which could not reach this
/// listener), when it is this login's callback.
pub(crate) fn parse_pasted(line: &str, state: &str) -> Option<Outcome> {
    let url = reqwest::Url::parse(line.trim()).ok()?;
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    };
    parse_callback(&target, state)
}

fn page(title: &str, text: &str) -> String {
    format!("<!doctype html><title>tern: {title}</title><h1>{title}</h1><p>{text}</p>\n")
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_callback_with_this_state_counts() {
        assert_eq!(
            parse_callback("/callback?code=abc&state=s1", "s1"),
            Some(Outcome::Code {
                code: "abc".into(),
                issuer: None
            })
        );
        assert_eq!(parse_callback("/callback?code=abc&state=s2", "s1"), None);
        assert_eq!(parse_callback("/callback?code=abc", "s1"), None);
        assert_eq!(parse_callback("/favicon.ico", "s1"), None);
        assert_eq!(parse_callback("/callback?state=s1", "s1"), None);
        assert_eq!(
            parse_callback(
                "/callback?error=access_denied&error_description=no%20thanks&state=s1",
                "s1"
            ),
            Some(Outcome::Refused {
                error: "access_denied".into(),
                description: Some("no thanks".into())
            })
        );
        assert_eq!(
            parse_callback("/callback?code=c&state=s1&iss=https%3A%2F%2Fas.example", "s1"),
            Some(Outcome::Code {
                code: "c".into(),
                issuer: Some("https://as.example".into())
            })
        );
    }

    #[test]
    fn a_pasted_redirect_address_counts_when_it_is_this_logins() {
        assert_eq!(
            parse_pasted("  http://127.0.0.1:4321/callback?code=abc&state=s1\n", "s1"),
            Some(Outcome::Code {
                code: "abc".into(),
                issuer: None
            })
        );
        assert_eq!(
            parse_pasted("http://127.0.0.1:4321/callback?code=abc&state=s2", "s1"),
            None
        );
        assert_eq!(parse_pasted("abc", "s1"), None);
        assert_eq!(parse_pasted("", "s1"), None);
    }

    #[tokio::test]
    async fn serves_strays_and_returns_the_real_callback() {
        let callback = Callback::bind(None).await.unwrap();
        let base = callback.redirect_uri.trim_end_matches(CALLBACK_PATH).to_string();
        let waiting = tokio::spawn(callback.wait("st"));
        let get = |path: String| async move {
            let addr = path
                .trim_start_matches("http://")
                .split('/')
                .next()
                .unwrap()
                .to_string();
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let target = &path[path.find("/callback").or_else(|| path.find("/x")).unwrap()..];
            stream
                .write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut reply = String::new();
            stream.read_to_string(&mut reply).await.unwrap();
            reply
        };
        assert!(get(format!("{base}/x")).await.starts_with("HTTP/1.1 404"));
        assert!(
            get(format!("{base}/callback?code=1&state=wrong"))
                .await
                .starts_with("HTTP/1.1 404")
        );
        assert!(!waiting.is_finished());
        let reply = get(format!("{base}/callback?code=the-code&state=st")).await;
        assert!(
            reply.starts_with("HTTP/1.1 200") && reply.contains("Login complete"),
            "{reply}"
        );
        assert_eq!(
            waiting.await.unwrap().unwrap(),
            Outcome::Code {
                code: "the-code".into(),
                issuer: None
            }
        );
    }
}
