//! `tern mcp login NAME`: the OAuth 2.1 authorization-code flow with PKCE on rmcp's `AuthorizationManager`.
//!
//! Steps: ask the server once without a token (`challenge`: its `WWW-Authenticate` names its protected-resource
//! metadata and the scope it wants), discover the authorization server (that metadata, else protected-resource
//! metadata per RFC 9728 at the well-known addresses, then RFC 8414 / OpenID metadata, as rmcp does; a 2025-03-26
//! server's own metadata through `legacy`), pick the client (one registered by hand, else tern's client metadata
//! document as a URL client id where the server takes one, else dynamic client registration, RFC 7591, with a
//! loopback redirect URI on a port the OS picks), show the authorization URL and open it in the browser (`$BROWSER`,
//! else `xdg-open` when there is a display, `open` on macOS), wait for the redirect, exchange the code with the PKCE
//! verifier, and save the tokens in the server's token file (see `store.rs`). `LoginOptions` can also fix the scopes
//! and the redirect's port, or log in without a browser (`machine`, `enterprise`). A step-up (`step_up`) runs the
//! same flow again for more scope.
//!
//! The browser command is run without a shell, with the URL as its last argument (or in place of `%s`). Only an
//! `https` (or loopback `http`) URL is shown or opened, and every endpoint of the metadata must be one too, before
//! anything is sent to it (`endpoints`).

use std::path::PathBuf;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession,
};

use super::callback::{Callback, Outcome};
use super::store::{TokenFile, token_path};
use crate::config::ServerConfig;
use tern_http::error_chain;

/// The client name tern registers under (shown by the authorization server on its consent page).
const CLIENT_NAME: &str = "tern";

/// Why a login did not complete.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("{0}")]
    NotRemote(String),
    #[error("cannot find the authorization server of {url}: {message}")]
    Discovery { url: String, message: String },
    #[error("cannot register tern with the authorization server: {0}")]
    Registration(String),
    #[error("cannot start the login: {0}")]
    Start(String),
    #[error("cannot listen for the browser's redirect on 127.0.0.1: {0}")]
    Listen(std::io::Error),
    #[error("no answer from the browser within {} s; run the login again", .0.as_secs())]
    TimedOut(Duration),
    #[error("the authorization server refused the login: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused { error: String, description: Option<String> },
    #[error("cannot exchange the authorization code for tokens: {0}")]
    Exchange(String),
    /// An endpoint or the authorization URL is not https (or http to this machine): nothing was sent or opened.
    #[error("refusing to log in: {0}")]
    Unsafe(String),
}

/// How to log in, beyond the defaults (dynamic registration, the scopes the server asks for, any free port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginOptions {
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// A client registered with the authorization server beforehand, for servers without dynamic registration.
    pub client_id: Option<String>,
    /// The variable holding that client's secret (never the secret itself, which would show in `ps` and history).
    pub client_secret_env: Option<String>,
    /// The scopes to ask for instead of those the server advertises.
    pub scopes: Vec<String>,
    /// The loopback port of the redirect, for a client registered with a fixed redirect URI.
    pub callback_port: Option<u16>,
    /// tern's client metadata document (an https URL), used as the client id by authorization servers that take
    /// URL-based client ids (`client_id_metadata_document_supported`), instead of registering.
    pub client_metadata_url: Option<String>,
    /// Log in as a machine client (the client-credentials grant), without a browser.
    pub client_credentials: bool,
    /// The private key (a PEM file) that signs the client's assertions, for `client_credentials`.
    pub private_key_file: Option<PathBuf>,
    /// Log in through an enterprise identity provider with the user's ID token (cross-app access), without a browser.
    pub enterprise: Option<super::Enterprise>,
}

impl LoginOptions {
    /// The defaults: dynamic registration, the scopes the server asks for, any free port, `timeout` for the browser.
    pub fn browser(timeout: Duration) -> Self {
        Self {
            timeout,
            client_id: None,
            client_secret_env: None,
            scopes: Vec::new(),
            callback_port: None,
            client_metadata_url: None,
            client_credentials: false,
            private_key_file: None,
            enterprise: None,
        }
    }
}

/// The client a login uses when it is not registered anew: its id and secret.
pub(crate) type Preset = (String, Option<String>);

/// A step-up's bounds: the scopes to ask for, and the authorization server the login is with (no other is used).
pub(crate) struct Again {
    pub scopes: Vec<String>,
    pub metadata: AuthorizationMetadata,
}

/// Logs in to `server` and saves its tokens; the token file's path. `tell` receives what the user must see (the URL
/// to open, whether the browser was started), one line at a time.
pub async fn login(
    server: &ServerConfig,
    options: &LoginOptions,
    tell: &(dyn Fn(&str) + Sync),
) -> Result<PathBuf, LoginError> {
    let url = super::remote_url(server).map_err(LoginError::NotRemote)?;
    let http = crate::client::http_client().map_err(LoginError::Start)?;
    // What the server says when asked without a token: where its metadata is, and the scope it wants.
    let challenge = super::challenge::probe(&http, &url).await;
    if options.client_credentials {
        return super::machine::login(server, &url, options, challenge.as_deref()).await;
    }
    if let Some(enterprise) = &options.enterprise {
        return super::enterprise::login(server, &url, options, enterprise, challenge.as_deref()).await;
    }
    let secret = preset_secret(options)?;
    let preset = options.client_id.clone().map(|id| (id, secret));
    authorize(server, &url, options, preset, challenge.as_deref(), None, tell).await
}

/// The browser flow for `server` at `url`: discovery (from the server's `challenge` when it gave one), the client
/// (`preset`, else a URL-based client id, else dynamic registration), the authorization URL opened in the browser, the
/// redirect, the code exchanged and the tokens saved. `again` is a step-up's: its scopes replace those discovery
/// selects (it asks for those it already has and those the server now wants), and the authorization server must be
/// the login's.
pub(crate) async fn authorize(
    server: &ServerConfig,
    url: &str,
    options: &LoginOptions,
    preset: Option<Preset>,
    challenge: Option<&str>,
    again: Option<&Again>,
    tell: &(dyn Fn(&str) + Sync),
) -> Result<PathBuf, LoginError> {
    let timeout = options.timeout;
    let (mut manager, metadata, guessed) = discover(url, challenge, tell).await?;
    if let Some(again) = again
        && (again.metadata.token_endpoint != metadata.token_endpoint
            || again.metadata.authorization_endpoint != metadata.authorization_endpoint)
    {
        return Err(LoginError::Unsafe(
            "the server now names another authorization server than the one its login is with".into(),
        ));
    }
    let callback = Callback::bind(options.callback_port)
        .await
        .map_err(LoginError::Listen)?;
    let scopes = match again {
        Some(again) => again.scopes.clone(),
        None if options.scopes.is_empty() => manager.select_initial_scopes(&[]).await,
        None => options.scopes.clone(),
    };
    let (client_id, client_secret) = match preset.or_else(|| url_client_id(options, &metadata)) {
        Some(preset) => preset,
        None => register(&mut manager, &callback.redirect_uri, &scopes, guessed).await?,
    };
    manager.set_credential_store(TokenFile::new(&server.name, url, metadata, client_secret.clone()));
    let mut request = AuthorizationRequest::new(callback.redirect_uri.clone())
        .with_scopes(scopes)
        .with_preregistered_client(client_id);
    if let Some(secret) = &client_secret {
        request = request.with_client_secret(secret.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| LoginError::Start(error_chain(&e)))?;
    let auth_url = session.get_authorization_url().to_string();
    let state = checked_state(&auth_url)?;
    tell(&format!(
        "To log in to MCP server {:?}, open this URL in a browser:\n\n  {auth_url}\n",
        server.name
    ));
    match open_browser(&auth_url) {
        Ok(how) => tell(&format!(
            "Opened it with {how}. Waiting for the browser (at most {} s)...",
            timeout.as_secs()
        )),
        Err(why) => tell(&format!(
            "{why}. Waiting for the browser (at most {} s)...",
            timeout.as_secs()
        )),
    }
    let (code, issuer) = wait_for_redirect(callback, &state, timeout, tell).await?;
    session
        .handle_callback_with_issuer(&code, &state, issuer.as_deref())
        .await
        .map_err(|e| LoginError::Exchange(error_chain(&e)))?;
    Ok(token_path(&server.name, url))
}

/// The URL-based client id (a client metadata document, SEP-991) of `options`, when the authorization server takes
/// one.
fn url_client_id(options: &LoginOptions, metadata: &AuthorizationMetadata) -> Option<Preset> {
    let url = options.client_metadata_url.as_ref()?;
    let supported = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    supported.then(|| (url.clone(), None))
}

/// The client secret named by `options.client_secret_env`, registered for scrubbing; an error when the variable is
/// unset or the secret comes without its client id.
pub(crate) fn preset_secret(options: &LoginOptions) -> Result<Option<String>, LoginError> {
    let preset_secret = match &options.client_secret_env {
        Some(var) => match tern_secrets::var(var).filter(|v| !v.trim().is_empty()) {
            Some(secret) => {
                tern_secrets::register(&secret);
                Some(secret.trim().to_string())
            }
            None => {
                return Err(LoginError::Start(format!(
                    "environment variable {var} (the client secret) is not set"
                )));
            }
        },
        None => None,
    };
    if preset_secret.is_some() && options.client_id.is_none() {
        return Err(LoginError::Start(
            "a client secret needs its client id (--client-id)".into(),
        ));
    }
    Ok(preset_secret)
}

/// Finds the authorization server of `url` (from the server's `challenge` first) and checks its endpoints; the
/// manager set up with its metadata, a copy of that metadata, and whether the endpoints were guessed (no metadata
/// published).
pub(crate) async fn discover(
    url: &str,
    challenge: Option<&str>,
    tell: &(dyn Fn(&str) + Sync),
) -> Result<(AuthorizationManager, AuthorizationMetadata, bool), LoginError> {
    let discovery = |e: AuthError| LoginError::Discovery {
        url: url.to_string(),
        message: error_chain(&e),
    };
    tern_http::install_crypto();
    let mut manager = AuthorizationManager::new(url).await.map_err(discovery)?;
    let (metadata, guessed) = match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => (resolution.metadata, !resolution.source.is_discovered()),
        // A server of the 2025-03-26 revision is its own authorization server, whose metadata may name another issuer.
        Err(e @ AuthError::AuthorizationServerMismatch { .. }) => match super::legacy::metadata(url).await {
            Some(metadata) => (metadata, false),
            None => return Err(discovery(e)),
        },
        Err(e) => return Err(discovery(e)),
    };
    if guessed {
        tell(&format!(
            "{url} publishes no OAuth metadata; trying the default endpoints (/authorize, /token, /register)"
        ));
    }
    // Before anything is sent to them: where the metadata points is the MCP server's word.
    super::endpoints::check_metadata(&metadata).map_err(LoginError::Unsafe)?;
    manager.set_metadata(metadata.clone());
    Ok((manager, metadata, guessed))
}

/// A client registered now (dynamic client registration) for `redirect_uri` and `scopes`: its id and secret.
async fn register(
    manager: &mut AuthorizationManager,
    redirect_uri: &str,
    scopes: &[String],
    guessed: bool,
) -> Result<Preset, LoginError> {
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    // Registering here rather than inside rmcp's session keeps the client secret (when one is issued) for refreshes.
    let registered = manager
        .register_client(CLIENT_NAME, redirect_uri, &scope_refs)
        .await
        .map(|client| (client.client_id, client.client_secret));
    registered.map_err(|e| {
        LoginError::Registration(if guessed {
            format!(
                "{e}; the server publishes no OAuth metadata, so it may not use OAuth at all (a token in its \
                 `headers` or `bearer_token_env_var` may be what it needs)"
            )
        } else {
            error_chain(&e)
        })
    })
}

/// Checks that the authorization URL may be shown and opened; the `state` it carries.
fn checked_state(auth_url: &str) -> Result<String, LoginError> {
    // Neither shown nor opened unless it is a web address: a `javascript:` or custom-scheme URL is the server's code.
    super::endpoints::check("authorization URL", auth_url).map_err(LoginError::Unsafe)?;
    reqwest::Url::parse(auth_url)
        .ok()
        .and_then(|u| u.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()))
        .ok_or_else(|| LoginError::Start("the authorization URL carries no state".into()))
}

/// Waits, at most `timeout`, for the browser's redirect to `callback` or its address pasted on stdin; the
/// authorization code and the issuer it came with.
async fn wait_for_redirect(
    callback: Callback,
    state: &str,
    timeout: Duration,
    tell: &(dyn Fn(&str) + Sync),
) -> Result<(String, Option<String>), LoginError> {
    let mut pasted = pasted_lines(tell);
    let waiting = async {
        let callback = callback.wait(state);
        tokio::pin!(callback);
        loop {
            tokio::select! {
                outcome = &mut callback => return outcome,
                Some(line) = pasted.recv() => match super::callback::parse_pasted(&line, state) {
                    Some(outcome) => return Ok(outcome),
                    None => tell("That is not the address this login's redirect ended on; still waiting..."),
                },
            }
        }
    };
    let outcome = match tokio::time::timeout(timeout, waiting).await {
        Ok(outcome) => outcome.map_err(LoginError::Listen)?,
        Err(_) => return Err(LoginError::TimedOut(timeout)),
    };
    match outcome {
        Outcome::Code { code, issuer } => Ok((code, issuer)),
        Outcome::Refused { error, description } => Err(LoginError::Refused { error, description }),
    }
}

/// Lines typed on a terminal stdin, for a login whose browser runs on another machine (over SSH the redirect to this
/// machine's 127.0.0.1 fails, but the address it ended on can be pasted). Nothing when stdin is not a terminal.
fn pasted_lines(tell: &(dyn Fn(&str) + Sync)) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        tell("If the browser runs on another machine, paste the address it ended on here and press Enter.");
        // A blocked read cannot be cancelled; the thread ends with the process, right after the login.
        std::thread::spawn(move || {
            for line in std::io::stdin().lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
    }
    rx
}

/// Whether a browser can be started here (`$BROWSER`, or a display to open one on).
pub(crate) fn can_open_browser() -> bool {
    let browser = std::env::var("BROWSER").ok();
    browser_command("https://example.invalid/", browser.as_deref(), has_display()).is_ok()
}

fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()))
}

/// Starts the browser on `url`; how, or why not.
fn open_browser(url: &str) -> Result<String, String> {
    let browser = std::env::var("BROWSER").ok();
    let (program, args) = browser_command(url, browser.as_deref(), has_display())?;
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match command.spawn() {
        Ok(mut child) => {
            // Reaped in the background; a browser launcher that stays running is left alone.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            Ok(program)
        }
        Err(e) => Err(format!("Could not start {program}: {e}")),
    }
}

/// The command that opens `url`: `$BROWSER` (with `%s` replaced by the URL, else the URL appended), else the
/// platform's opener when there is a display.
fn browser_command(url: &str, browser: Option<&str>, display: bool) -> Result<(String, Vec<String>), String> {
    if let Some(browser) = browser.filter(|b| !b.trim().is_empty()) {
        let mut words = shlex::split(browser).ok_or_else(|| format!("Cannot parse $BROWSER ({browser:?})"))?;
        if words.is_empty() {
            return Err("$BROWSER is empty".into());
        }
        let program = words.remove(0);
        let mut replaced = false;
        for word in &mut words {
            if word.contains("%s") {
                *word = word.replace("%s", url);
                replaced = true;
            }
        }
        if !replaced {
            words.push(url.to_string());
        }
        return Ok((program, words));
    }
    if cfg!(target_os = "macos") {
        return Ok(("open".into(), vec![url.into()]));
    }
    if display {
        Ok(("xdg-open".into(), vec![url.into()]))
    } else {
        Err("No display to open a browser on (and $BROWSER is not set)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_command_comes_from_browser_then_the_display() {
        let url = "http://as.example/authorize?a=1&b=2";
        assert_eq!(
            browser_command(url, Some("firefox --new-tab"), false),
            Ok(("firefox".into(), vec!["--new-tab".into(), url.into()]))
        );
        assert_eq!(
            browser_command(url, Some("'/opt/my browser' --url=%s --x"), false),
            Ok(("/opt/my browser".into(), vec![format!("--url={url}"), "--x".into()]))
        );
        if !cfg!(target_os = "macos") {
            assert_eq!(
                browser_command(url, None, true),
                Ok(("xdg-open".into(), vec![url.into()]))
            );
            assert_eq!(
                browser_command(url, Some("  "), true),
                Ok(("xdg-open".into(), vec![url.into()]))
            );
            assert!(browser_command(url, None, false).is_err());
        }
        assert!(browser_command(url, Some("'unclosed"), true).is_err());
    }
}
