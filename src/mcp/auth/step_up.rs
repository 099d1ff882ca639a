//! Step-up authorization on a live connection: a server that answers a request with 403 and
//! `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` wants a token with more scope (MCP
//! authorization, scope challenge handling). `StepUp` wraps the connection's OAuth client; on such an answer it runs
//! the browser login again for the scopes the login holds plus those the server asked for, and sends the request once
//! more with the new token.
//!
//! It never loops: it steps up only when the server asks for a scope the login does not hold already (a server that
//! refuses a token that has what it asked for will not be satisfied by another), never twice for the same scopes, at
//! most `MAX_STEP_UPS` times per connection, only for a browser login (the user's own), and only where a browser can
//! be opened. Otherwise the 403 is the request's answer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;
use tokio::sync::Mutex;

use super::login::{Again, LoginOptions, authorize, can_open_browser};
use super::store;
use crate::config::ServerConfig;

/// The most step-ups one connection makes.
const MAX_STEP_UPS: usize = 2;
/// How long a step-up waits for the browser.
const BROWSER_WAIT: Duration = Duration::from_secs(300);

type Inner = AuthClient<reqwest::Client>;
type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// The connection's OAuth client, stepping up on `insufficient_scope`.
#[derive(Clone)]
pub(crate) struct StepUp {
    inner: Inner,
    server: Arc<ServerConfig>,
    url: Arc<str>,
    /// The scope sets already asked for on this connection (also serialises step-ups).
    asked: Arc<Mutex<Vec<Vec<String>>>>,
}

impl StepUp {
    pub(crate) fn new(inner: Inner, server: &ServerConfig, url: &str) -> Self {
        Self {
            inner,
            server: Arc::new(server.clone()),
            url: url.into(),
            asked: Arc::default(),
        }
    }

    /// Runs the step-up the server's `challenge` asks for; whether there is a new token to retry with.
    async fn step_up(&self, challenge: &str) -> bool {
        let Ok(base) = reqwest::Url::parse(&self.url) else {
            return false;
        };
        let params = WWWAuthenticateParams::parse(challenge, &base);
        if !params.is_insufficient_scope() {
            return false;
        }
        let Some(wanted) = params.scope else { return false };
        let Ok(Some(record)) = store::read(&self.server.name, &self.url) else {
            return false;
        };
        let Some(credentials) = record.credentials.filter(|_| record.machine.is_none()) else {
            return false;
        };
        let held = &credentials.granted_scopes;
        let Some(scopes) = wider(held, &wanted) else {
            tracing::warn!(server = %self.server.name, scope = %wanted, "the server refuses a token that holds the scope it asks for");
            return false;
        };
        let mut asked = self.asked.lock().await;
        if asked.len() >= MAX_STEP_UPS || asked.contains(&scopes) || !can_open_browser() {
            return false;
        }
        asked.push(scopes.clone());
        let preset = Some((credentials.client_id.clone(), record.client_secret.clone()));
        let name = self.server.name.clone();
        let tell = move |line: &str| tracing::warn!(server = %name, "step-up authorization: {line}");
        let options = LoginOptions::browser(BROWSER_WAIT);
        let again = Again {
            scopes,
            metadata: record.metadata,
        };
        match authorize(
            &self.server,
            &self.url,
            &options,
            preset,
            Some(challenge),
            Some(&again),
            &tell,
        )
        .await
        {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(server = %self.server.name, "step-up authorization failed: {e}");
                false
            }
        }
    }

    /// Sends with `send`, and once more after a step-up when the server wants more scope.
    async fn with_step_up<F, Fut>(&self, send: F) -> PostResult
    where
        F: Fn() -> Fut,
        Fut: Future<Output = PostResult>,
    {
        match send().await {
            Err(StreamableHttpError::InsufficientScope(e)) => {
                if self.step_up(&e.www_authenticate_header).await {
                    send().await
                } else {
                    Err(StreamableHttpError::InsufficientScope(e))
                }
            }
            other => other,
        }
    }
}

/// The scopes `held` plus those in `wanted` (space-separated), when `wanted` names one not held.
fn wider(held: &[String], wanted: &str) -> Option<Vec<String>> {
    let mut scopes = held.to_vec();
    for scope in wanted.split_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_string());
        }
    }
    (scopes.len() > held.len()).then_some(scopes)
}

impl StreamableHttpClient for StepUp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        self.with_step_up(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostResult {
        self.with_step_up(|| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_up_asks_for_more_than_is_held_or_not_at_all() {
        let held = vec!["mcp:basic".to_string()];
        assert_eq!(
            wider(&held, "mcp:basic mcp:write"),
            Some(vec!["mcp:basic".to_string(), "mcp:write".to_string()])
        );
        assert_eq!(wider(&held, "mcp:basic"), None);
        assert_eq!(wider(&[], ""), None);
    }
}
