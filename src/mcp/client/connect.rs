//! Starting a session over each of the three transports: a stdio child process, streamable HTTP (with a stored OAuth
//! login when the config carries no credentials) and legacy HTTP+SSE. Each wraps its transport in `Observed` and runs
//! the MCP handshake.

use std::sync::{Arc, Mutex};

use reqwest::header::{AUTHORIZATION, HeaderValue};
use rmcp::RoleClient;
use rmcp::service::{RunningService, serve_client_with_ct};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio_util::sync::CancellationToken;

use super::{Handler, Observed, headers, init_error};
use crate::auth;
use crate::config::{HttpConfig, ServerConfig, StdioConfig};
use crate::oversize::{DroppedReplies, MAX_REPLY_BYTES};
use crate::stdio::ChildProcess;
use crate::tasks::{TaskOnly, TaskTap};
use crate::transport_sse::{SseTransport, UNAUTHORIZED};

/// A started session.
type Service = RunningService<RoleClient, Handler>;

/// Where a transport reports its end: the token fired when it ends, and why it broke when the server said so.
pub(super) struct Ends<'a> {
    pub(super) closed: &'a CancellationToken,
    pub(super) broken: &'a Arc<Mutex<Option<String>>>,
}

impl Ends<'_> {
    /// Wraps `inner` to report its end here.
    fn observe<T>(&self, inner: T) -> Observed<T> {
        Observed {
            inner,
            closed: self.closed.clone(),
            broken: Arc::clone(self.broken),
        }
    }
}

/// Spawns the server of `config` and runs the handshake on its stdin and stdout; the session and the child process.
pub(super) async fn stdio(
    name: &str,
    config: &StdioConfig,
    handler: Handler,
    ends: Ends<'_>,
    ct: CancellationToken,
    task_only: &TaskOnly,
    dropped: &Arc<DroppedReplies>,
) -> Result<(Service, ChildProcess), String> {
    let (child, stdout, stdin) = crate::stdio::spawn(name, config)?;
    let stdout = TaskTap::new(stdout, Arc::clone(task_only), Arc::clone(dropped));
    let transport = ends.observe(AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_REPLY_BYTES));
    match serve_client_with_ct(handler, transport, ct).await {
        Ok(service) => Ok((service, child)),
        Err(e) => {
            let exit = child.describe_exit().await;
            child.kill();
            Err(format!("{} (the server {exit})", init_error(&e)))
        }
    }
}

/// Runs the handshake over streamable HTTP with the configured headers, or a stored OAuth login when there are no
/// credentials in the config.
pub(super) async fn http(
    config: &ServerConfig,
    h: &HttpConfig,
    http: &reqwest::Client,
    handler: Handler,
    ends: Ends<'_>,
    ct: CancellationToken,
) -> Result<Service, String> {
    let mut transport_config =
        StreamableHttpClientTransportConfig::with_uri(h.url.as_str()).reinit_on_expired_session(true);
    let (headers, token) = headers(h)?;
    transport_config.custom_headers = headers.into_iter().filter_map(|(k, v)| Some((k?, v))).collect();
    if let Some(token) = token {
        transport_config = transport_config.auth_header(token);
    }
    // Credentials in the config win; a stored OAuth login is used only without them.
    let login = if auth::has_static_credentials(config) {
        None
    } else {
        auth::stored_login(&config.name, &h.url).await?
    };
    let had_login = login.is_some();
    let started = match login {
        // rmcp's AuthClient adds the bearer token to every request, refreshing it when it expires.
        Some(manager) => {
            let client = auth::StepUp::new(AuthClient::new(http.clone(), manager), config, &h.url);
            let transport = ends.observe(StreamableHttpClientTransport::with_client(client, transport_config));
            serve_client_with_ct(handler, transport, ct).await
        }
        None => {
            let transport = ends.observe(StreamableHttpClientTransport::with_client(
                http.clone(),
                transport_config,
            ));
            serve_client_with_ct(handler, transport, ct).await
        }
    };
    started.map_err(|e| {
        if e.is_authorization_required() {
            auth::unauthorized(config, had_login)
        } else {
            init_error(&e)
        }
    })
}

/// Runs the handshake over legacy HTTP+SSE, with the configured bearer token or else a stored login's.
pub(super) async fn sse(
    config: &ServerConfig,
    h: &HttpConfig,
    http: &reqwest::Client,
    handler: Handler,
    ends: Ends<'_>,
    ct: CancellationToken,
) -> Result<Service, String> {
    let (mut headers, token) = headers(h)?;
    let (login_token, had_login) = auth::sse_token(config, &h.url).await?;
    if let Some(token) = token.or(login_token) {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| "the bearer token is not a valid header value".to_string())?;
        headers.insert(AUTHORIZATION, value);
    }
    let inner = match SseTransport::connect(http.clone(), &h.url, headers).await {
        Ok(inner) => inner,
        Err(e) if e == UNAUTHORIZED => return Err(auth::unauthorized(config, had_login)),
        Err(e) => return Err(e),
    };
    serve_client_with_ct(handler, ends.observe(inner), ct)
        .await
        .map_err(|e| init_error(&e))
}
