//! Enterprise-managed authorization (cross-app access, SEP-990): `tern mcp login NAME --idp-token-endpoint URL
//! --idp-client-id ID --id-token-env VAR --client-id ID --client-secret-env VAR` logs in without a browser with the
//! ID token the enterprise's identity provider issued to the user. The ID token is exchanged at the identity provider
//! for an identity assertion grant for this server (RFC 8693 token exchange, an ID-JAG), and that grant at the
//! server's authorization server for an access token (RFC 7523 JWT bearer grant), the client authenticated with its
//! secret. The ID token and the grant are only sent to those two endpoints (https, or http to this machine) and are
//! never stored; the access token is saved like every other login's.

use std::path::PathBuf;

use super::LoginError;
use super::login::{LoginOptions, discover, preset_secret};
use super::machine::{now, token_request};
use super::store::{self, MachineClient, TokenRecord, token_path};
use crate::config::ServerConfig;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// The identity provider a login goes through, and where the user's ID token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enterprise {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// tern's client id at the identity provider.
    pub idp_client_id: String,
    /// The variable holding the user's ID token (never the token itself, which would show in `ps` and history).
    pub id_token_env: String,
}

/// Logs in to `server` at `url` through the identity provider of `enterprise`, and saves the access token.
pub(crate) async fn login(
    server: &ServerConfig,
    url: &str,
    options: &LoginOptions,
    enterprise: &Enterprise,
    challenge: Option<&str>,
) -> Result<PathBuf, LoginError> {
    let client_id = options
        .client_id
        .clone()
        .ok_or_else(|| LoginError::Start("an enterprise login needs --client-id".into()))?;
    let client_secret = preset_secret(options)?;
    let id_token = tern_secrets::var(&enterprise.id_token_env)
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            LoginError::Start(format!(
                "environment variable {} (the ID token) is not set",
                enterprise.id_token_env
            ))
        })?;
    tern_secrets::register(id_token.trim());
    super::endpoints::check("identity provider's token endpoint", &enterprise.idp_token_endpoint)
        .map_err(LoginError::Unsafe)?;
    let (manager, metadata, _) = discover(url, challenge, &|_| {}).await?;
    let issuer = metadata
        .issuer
        .clone()
        .ok_or_else(|| LoginError::Exchange("the authorization server's metadata names no issuer".into()))?;
    let scopes = if options.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        options.scopes.clone()
    };
    let scope = scopes.join(" ");
    let with_scope = |mut form: Vec<(&'static str, String)>| {
        if !scope.is_empty() {
            form.push(("scope", scope.clone()));
        }
        form
    };
    // The identity provider: the ID token for a grant naming this server's authorization server and resource.
    let idp = MachineClient {
        client_id: enterprise.idp_client_id.clone(),
        client_secret: None,
        private_key_pem: None,
        scopes: Vec::new(),
        resource: url.to_string(),
    };
    let exchange = with_scope(vec![
        ("grant_type", TOKEN_EXCHANGE.into()),
        ("requested_token_type", ID_JAG.into()),
        ("audience", issuer),
        ("resource", url.to_string()),
        ("subject_token", id_token.trim().to_string()),
        ("subject_token_type", ID_TOKEN.into()),
    ]);
    let (_, granted) = token_request(&metadata, &enterprise.idp_token_endpoint, Some(&idp), exchange)
        .await
        .map_err(|e| LoginError::Exchange(format!("the identity provider: {e}")))?;
    let grant = granted["access_token"]
        .as_str()
        .ok_or_else(|| LoginError::Exchange("the identity provider issued no grant".into()))?
        .to_string();
    // The authorization server: the grant for an access token, the client authenticated with its secret.
    let client = MachineClient {
        client_id: client_id.clone(),
        client_secret: client_secret.clone(),
        private_key_pem: None,
        scopes: scopes.clone(),
        resource: url.to_string(),
    };
    let bearer = with_scope(vec![("grant_type", JWT_BEARER.into()), ("assertion", grant)]);
    let (token, fields) = token_request(&metadata, &metadata.token_endpoint, Some(&client), bearer)
        .await
        .map_err(LoginError::Exchange)?;
    let granted_scopes = match fields["scope"].as_str() {
        Some(scope) => scope.split_whitespace().map(String::from).collect(),
        None => scopes,
    };
    let credentials =
        rmcp::transport::auth::StoredCredentials::new(client_id, Some(token), granted_scopes, Some(now()));
    let record = TokenRecord {
        server: server.name.clone(),
        url: url.to_string(),
        metadata,
        client_secret,
        credentials: Some(credentials),
        machine: None,
    };
    store::write(&record).map_err(|e| LoginError::Exchange(format!("cannot save the login: {e}")))?;
    Ok(token_path(&server.name, url))
}
