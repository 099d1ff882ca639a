//! OAuth for remote MCP servers (streamable HTTP and SSE), on rmcp's `auth` support: `tern mcp login NAME` runs the
//! browser flow once and stores the tokens; every later connection to that server sends them as
//! `Authorization: Bearer ...`, refreshing them (and saving the refreshed ones) when they expire.
//!
//! A server that answers 401 when tern has no usable login fails with a reason that starts "needs login:" and names
//! the command to run; such a server is not retried on its own (no loop against a server that will keep saying no),
//! only once a login was saved after the failure.
//!
//! A server that answers 403 `insufficient_scope` on a live connection gets a step-up: the browser login again, for
//! the scopes held plus those it asks for (`step_up`, bounded). Machine clients (client credentials) and enterprise
//! logins (cross-app access) log in without a browser (`machine`, `enterprise`).
//!
//! A server whose config already carries credentials (an `Authorization` header, `bearer_token_env_var`) keeps using
//! them: a stored login is only used when the config has none.
//!
//! Tokens live only in the token files (0600) and in memory; they are registered for masking the moment they are read
//! or written, and never logged, shown or written to a session.

mod callback;
mod challenge;
mod command;
mod endpoints;
mod enterprise;
mod jwt;
mod legacy;
mod login;
mod machine;
mod step_up;
mod store;

use std::time::{Instant, SystemTime};

use rmcp::transport::auth::{AuthError, AuthorizationManager, OAuthClientConfig};

pub use command::{AuthCommand, run_command};
pub use enterprise::Enterprise;
pub use login::{LoginError, LoginOptions, login};
pub(crate) use step_up::StepUp;
pub(crate) use store::token_path;

use super::config::{ServerConfig, Transport};
use super::{ServerStatus, TransportKind};

/// How every "needs login" reason starts.
use tern_protocol::mcp::NEEDS_LOGIN;

/// The failure reason of a server that wants a login: `had_login` says the stored one was refused or could not be
/// refreshed.
pub(crate) fn needs_login(name: &str, had_login: bool) -> String {
    let command = format!(
        "`tern mcp login {}`",
        shlex::try_quote(name).unwrap_or_else(|_| name.into())
    );
    if had_login {
        format!("{NEEDS_LOGIN}the stored login was refused or has expired; run {command}")
    } else {
        format!("{NEEDS_LOGIN}run {command}")
    }
}

/// Why a server answered 401: `needs_login`, unless its config brings credentials, which it then refused (logging in
/// would not help while they are configured).
pub(crate) fn unauthorized(server: &ServerConfig, had_login: bool) -> String {
    if has_static_credentials(server) {
        "the server refused the configured credentials (HTTP 401; the Authorization header or bearer_token_env_var)"
            .to_string()
    } else {
        needs_login(&server.name, had_login)
    }
}

pub(crate) use tern_protocol::mcp::is_needs_login;

/// The URL of a remote server; an error naming the server otherwise.
pub(crate) fn remote_url(server: &ServerConfig) -> Result<String, String> {
    match &server.transport {
        Transport::Http(h) | Transport::Sse(h) => Ok(h.url.clone()),
        Transport::Stdio(_) => Err(format!(
            "MCP server {:?} is a local (stdio) server; only remote (http or sse) servers log in",
            server.name
        )),
    }
}

/// Whether the server's config brings its own credentials, which then take precedence over a stored login.
pub(crate) fn has_static_credentials(server: &ServerConfig) -> bool {
    match &server.transport {
        Transport::Http(h) | Transport::Sse(h) => {
            h.bearer_token_env.is_some() || h.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        }
        Transport::Stdio(_) => false,
    }
}

/// An authorization manager holding the server's stored login, ready to hand out (and refresh) its access token; `None`
/// when there is no login for this server and URL. Reads only the token file: no network.
pub(crate) async fn stored_login(name: &str, url: &str) -> Result<Option<AuthorizationManager>, String> {
    let record = store::read(name, url)
        .map_err(|e| format!("cannot read the stored login ({e}); run `tern mcp logout {name}` and log in again"))?;
    let Some(record) = record else { return Ok(None) };
    // A machine client's token is replaced before it expires (it has no refresh token).
    let record = machine::renewed(record)
        .await
        .map_err(|e| format!("cannot renew the machine client's token: {e}"))?;
    let Some(credentials) = &record.credentials else {
        return Ok(None);
    };
    let client_id = credentials.client_id.clone();
    // A login saved before endpoints were checked may name one tern would no longer send a refresh token to.
    endpoints::check_metadata(&record.metadata)
        .map_err(|e| format!("cannot use the stored login: {e}; run `tern mcp logout {name}` and log in again"))?;
    tern_http::install_crypto();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("cannot use the stored login: {e}"))?;
    manager.set_metadata(record.metadata.clone());
    manager.set_credential_store(
        store::TokenFile::new(name, url, record.metadata.clone(), record.client_secret.clone())
            .with_machine(record.machine.clone()),
    );
    let ready = manager
        .initialize_from_store()
        .await
        .map_err(|e| format!("cannot use the stored login: {e}"))?;
    if !ready {
        return Ok(None);
    }
    if let Some(secret) = &record.client_secret {
        manager
            .configure_client(OAuthClientConfig::new(client_id, url).with_client_secret(secret.clone()))
            .map_err(|e| format!("cannot use the stored login: {e}"))?;
    }
    Ok(Some(manager))
}

/// For the legacy SSE transport (tern's own, without rmcp's `AuthClient`): the access token of the server's stored
/// login, fetched (and refreshed if due) once per connection, and whether there is a login at all.
pub(crate) async fn sse_token(server: &ServerConfig, url: &str) -> Result<(Option<String>, bool), String> {
    if has_static_credentials(server) {
        return Ok((None, false));
    }
    let Some(manager) = stored_login(&server.name, url).await? else {
        return Ok((None, false));
    };
    match manager.get_access_token().await {
        Ok(token) => Ok((Some(token), true)),
        // Expired and not refreshable: connect without it and let the server's 401 say "needs login".
        Err(AuthError::AuthorizationRequired) => Ok((None, true)),
        Err(e) => Err(format!("cannot use the stored login: {e}")),
    }
}

/// Forgets the login of `server`; whether there was one.
pub(crate) fn logout(server: &ServerConfig) -> Result<bool, String> {
    let url = remote_url(server)?;
    store::remove(&server.name, &url)
        .map_err(|e| format!("cannot remove {}: {e}", token_path(&server.name, &url).display()))
}

/// Whether a login for `server` was saved after `since` (so a server that needed one is worth trying again).
pub(crate) fn login_saved_since(server: &ServerConfig, since: Instant) -> bool {
    let Ok(url) = remote_url(server) else { return false };
    let Some(since) = SystemTime::now().checked_sub(since.elapsed()) else {
        return false;
    };
    std::fs::metadata(token_path(&server.name, &url))
        .and_then(|m| m.modified())
        .is_ok_and(|modified| modified >= since)
}

/// Whether a remote server has a stored login, for `tern mcp list`; `None` for local servers.
pub(crate) fn logged_in(status: &ServerStatus) -> Option<bool> {
    if status.transport == TransportKind::Stdio {
        return None;
    }
    Some(
        store::read(&status.name, &status.target)
            .ok()
            .flatten()
            .is_some_and(|r| r.credentials.is_some()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_command_and_is_recognised() {
        assert_eq!(needs_login("github", false), "needs login: run `tern mcp login github`");
        assert_eq!(
            needs_login("my server", false),
            "needs login: run `tern mcp login 'my server'`"
        );
        assert!(is_needs_login(&needs_login("x", true)));
        assert!(needs_login("x", true).contains("refused or has expired"));
        assert!(!is_needs_login("the connection to the server closed"));
    }

    #[test]
    fn a_401_with_configured_credentials_does_not_ask_for_a_login() {
        let server = |headers: Vec<(String, String)>, bearer: Option<&str>| ServerConfig {
            name: "remote".into(),
            transport: Transport::Http(crate::HttpConfig {
                url: "https://mcp.example/mcp".into(),
                headers,
                bearer_token_env: bearer.map(String::from),
            }),
            enabled: true,
            tool_timeout: std::time::Duration::from_secs(30),
            startup_timeout: std::time::Duration::from_secs(10),
            filter: Default::default(),
            source: "config.toml".into(),
            problem: None,
        };
        assert_eq!(
            unauthorized(&server(Vec::new(), None), false),
            needs_login("remote", false)
        );
        assert_eq!(
            unauthorized(&server(Vec::new(), None), true),
            needs_login("remote", true)
        );
        for configured in [
            server(vec![("authorization".into(), "Bearer abcdefghij".into())], None),
            server(Vec::new(), Some("REMOTE_TOKEN")),
        ] {
            assert!(has_static_credentials(&configured));
            let reason = unauthorized(&configured, false);
            assert!(
                !is_needs_login(&reason) && reason.contains("configured credentials"),
                "{reason}"
            );
        }
    }

    #[test]
    fn a_server_needing_login_shows_the_command_in_mcp_views() {
        let status = ServerStatus {
            name: "linear".into(),
            transport: TransportKind::Http,
            target: "https://mcp.linear.example/mcp".into(),
            source: "config.toml".into(),
            state: crate::ServerState::Failed {
                reason: needs_login("linear", false),
            },
            tools: Vec::new(),
            server_info: None,
            instructions: None,
            pid: None,
            skipped: false,
            startup_timeout: std::time::Duration::from_secs(10),
            problems: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            switched: None,
        };
        // What `/mcp` in the TUI shows (and `tern mcp list`, which adds the login line for servers that have one).
        assert_eq!(
            tern_protocol::mcp::report::render_statuses(std::slice::from_ref(&status)),
            "linear  (http: https://mcp.linear.example/mcp)\n  from:   config.toml\n  status: needs login: run `tern \
             mcp login linear`\n"
        );
        // The headless run's stderr and the TUI's notice.
        let failure = crate::report::ServerWatch::default().failures(&[status]);
        assert_eq!(
            failure[0].line(),
            "MCP server \"linear\" failed to start: needs login: run `tern mcp login linear`"
        );
    }
}
