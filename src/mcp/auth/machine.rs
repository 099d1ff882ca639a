//! Machine clients: `tern mcp login NAME --client-credentials` logs in without a browser, with the OAuth
//! client-credentials grant (OAuth 2.1 §4.2; the MCP extension SEP-1046). The client authenticates at the token
//! endpoint with its secret (HTTP Basic, or in the body when the server takes only that) or with an assertion signed
//! by its private key (`private_key_jwt`). Its credentials are kept in the login's token file, like every other
//! token, so a later start gets a new token when the last one expired; they are registered for masking the moment
//! they are read, and never logged, shown or written anywhere else.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use rmcp::transport::auth::{AuthorizationMetadata, OAuthTokenResponse, StoredCredentials};

use super::LoginError;
use super::login::{LoginOptions, discover, preset_secret};
use super::store::{self, MachineClient, TokenRecord, token_path};
use crate::config::ServerConfig;

/// How long a token request may take.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
/// A token that expires sooner than this is replaced before it is used.
const RENEW_MARGIN_SECS: u64 = 60;

/// Logs in to `server` at `url` as the machine client of `options`, and saves its token and credentials.
pub(crate) async fn login(
    server: &ServerConfig,
    url: &str,
    options: &LoginOptions,
    challenge: Option<&str>,
) -> Result<PathBuf, LoginError> {
    let client_id = options
        .client_id
        .clone()
        .ok_or_else(|| LoginError::Start("--client-credentials needs --client-id".into()))?;
    let client_secret = preset_secret(options)?;
    let private_key_pem = match &options.private_key_file {
        Some(path) => {
            let pem = std::fs::read_to_string(path)
                .map_err(|e| LoginError::Start(format!("cannot read {}: {e}", path.display())))?;
            tern_secrets::register(&pem);
            Some(pem)
        }
        None => None,
    };
    if client_secret.is_none() && private_key_pem.is_none() {
        return Err(LoginError::Start(
            "--client-credentials needs the client's secret (--client-secret-env) or key (--private-key-file)".into(),
        ));
    }
    let (manager, metadata, _) = discover(url, challenge, &|_| {}).await?;
    let scopes = if options.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        options.scopes.clone()
    };
    let machine = MachineClient {
        client_id,
        client_secret,
        private_key_pem,
        scopes,
        resource: url.to_string(),
    };
    let credentials = request_token(&metadata, &machine).await.map_err(LoginError::Exchange)?;
    let record = TokenRecord {
        server: server.name.clone(),
        url: url.to_string(),
        metadata,
        client_secret: None,
        credentials: Some(credentials),
        machine: Some(machine),
    };
    store::write(&record).map_err(|e| LoginError::Exchange(format!("cannot save the login: {e}")))?;
    Ok(token_path(&server.name, url))
}

/// The record with a new token when it is a machine client's whose token expires within the margin (saved at once);
/// the record as it was otherwise.
pub(crate) async fn renewed(record: TokenRecord) -> Result<TokenRecord, String> {
    let Some(machine) = &record.machine else {
        return Ok(record);
    };
    if !expiring(record.credentials.as_ref()) {
        return Ok(record);
    }
    let credentials = request_token(&record.metadata, machine).await?;
    let record = TokenRecord {
        credentials: Some(credentials),
        ..record
    };
    store::write(&record).map_err(|e| format!("cannot save the new token: {e}"))?;
    Ok(record)
}

/// Whether the stored token is missing or expires within the margin.
fn expiring(credentials: Option<&StoredCredentials>) -> bool {
    let Some(credentials) = credentials else { return true };
    let Some(token) = &credentials.token_response else {
        return true;
    };
    let lifetime = serde_json::to_value(token).ok().and_then(|t| t["expires_in"].as_u64());
    let (Some(lifetime), Some(received)) = (lifetime, credentials.token_received_at) else {
        return false;
    };
    let expires = received.saturating_add(lifetime);
    now().saturating_add(RENEW_MARGIN_SECS) >= expires
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Asks the token endpoint of `metadata` for a token with the client-credentials grant.
async fn request_token(metadata: &AuthorizationMetadata, machine: &MachineClient) -> Result<StoredCredentials, String> {
    let mut form: Vec<(&str, String)> = vec![
        ("grant_type", "client_credentials".into()),
        ("resource", machine.resource.clone()),
    ];
    if !machine.scopes.is_empty() {
        form.push(("scope", machine.scopes.join(" ")));
    }
    let (token, fields) = token_request(metadata, &metadata.token_endpoint, Some(machine), form).await?;
    let granted = match fields["scope"].as_str() {
        Some(scope) => scope.split_whitespace().map(String::from).collect(),
        None => machine.scopes.clone(),
    };
    Ok(StoredCredentials::new(
        machine.client_id.clone(),
        Some(token),
        granted,
        Some(now()),
    ))
}

/// Posts `form` to the token `endpoint` (of the authorization server of `metadata`), the client authenticated as
/// `client` says (its key, else its secret as the server takes it; `None`: a public client, named in `form`); the
/// token and the answer's fields. The access token is registered for masking before anything else sees it.
pub(crate) async fn token_request(
    metadata: &AuthorizationMetadata,
    endpoint: &str,
    client: Option<&MachineClient>,
    mut form: Vec<(&str, String)>,
) -> Result<(OAuthTokenResponse, serde_json::Value), String> {
    let http = crate::client::http_client()?;
    let mut request = http.post(endpoint).timeout(TOKEN_TIMEOUT);
    if let Some(machine) = client {
        match (&machine.private_key_pem, &machine.client_secret) {
            (Some(pem), _) => {
                let audience = metadata.issuer.as_deref().unwrap_or(&metadata.token_endpoint);
                let assertion = super::jwt::assertion(pem, &machine.client_id, audience)?;
                form.push(("client_id", machine.client_id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                ));
                form.push(("client_assertion", assertion));
            }
            (None, Some(secret)) if secret_in_body(metadata) => {
                form.push(("client_id", machine.client_id.clone()));
                form.push(("client_secret", secret.clone()));
            }
            (None, Some(secret)) => {
                request = request.header(reqwest::header::AUTHORIZATION, basic(&machine.client_id, secret));
            }
            (None, None) => form.push(("client_id", machine.client_id.clone())),
        }
    }
    let body: Vec<String> = form
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    let response = request
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body.join("&"))
        .send()
        .await
        .map_err(|e| format!("the token request failed: {}", tern_http::error_chain(&e)))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| format!("the token response could not be read: {}", tern_http::error_chain(&e)))?;
    if !status.is_success() {
        return Err(refusal(status, &body));
    }
    let fields: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    if let Some(access) = fields["access_token"].as_str() {
        tern_secrets::register(access);
    }
    let token: OAuthTokenResponse =
        serde_json::from_slice(&body).map_err(|e| format!("the token response is not a token: {e}"))?;
    Ok((token, fields))
}

/// Whether the server takes the secret only in the body (`client_secret_post`); HTTP Basic is the default otherwise
/// (RFC 8414: `client_secret_basic` when the server lists nothing).
fn secret_in_body(metadata: &AuthorizationMetadata) -> bool {
    let methods: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array)
        .map(|m| m.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    !methods.is_empty() && !methods.contains(&"client_secret_basic") && methods.contains(&"client_secret_post")
}

/// `Basic base64(id:secret)`, each form-encoded first (RFC 6749 §2.3.1).
fn basic(id: &str, secret: &str) -> String {
    let pair = format!("{}:{}", encode(id), encode(secret));
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
}

/// `application/x-www-form-urlencoded` encoding: unreserved bytes as they are, space as `+`, the rest as `%XX`.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => (b as char).to_string(),
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The server's refusal in words: its `error` and `error_description`, else the status.
fn refusal(status: reqwest::StatusCode, body: &[u8]) -> String {
    let parsed: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    match parsed["error"].as_str() {
        Some(error) => {
            let description = parsed["error_description"]
                .as_str()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            let text = format!("the authorization server refused the client: {error}{description}");
            tern_secrets::mask(&text).into_owned()
        }
        None => format!("the authorization server answered HTTP {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_renewed_when_it_is_missing_or_about_to_expire() {
        let stored = |lifetime: u64, age: u64| {
            let token: OAuthTokenResponse = serde_json::from_value(
                serde_json::json!({"access_token": "a", "token_type": "Bearer", "expires_in": lifetime}),
            )
            .unwrap();
            StoredCredentials::new("c".into(), Some(token), Vec::new(), Some(now() - age))
        };
        assert!(expiring(None));
        assert!(!expiring(Some(&stored(3600, 0))));
        assert!(expiring(Some(&stored(3600, 3590))));
        assert!(expiring(Some(&stored(30, 0))));
        assert!(expiring(Some(&StoredCredentials::new(
            "c".into(),
            None,
            Vec::new(),
            None
        ))));
    }

    #[test]
    fn basic_credentials_are_form_encoded_then_base64() {
        assert_eq!(basic("client", "secret"), "Basic Y2xpZW50OnNlY3JldA==");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic("a:b", "s p").trim_start_matches("Basic "))
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "a%3Ab:s+p");
    }

    #[test]
    fn the_secret_goes_in_the_body_only_where_basic_is_not_taken() {
        let metadata = |methods: serde_json::Value| {
            let mut m = AuthorizationMetadata::default();
            m.additional_fields
                .insert("token_endpoint_auth_methods_supported".into(), methods);
            m
        };
        assert!(!secret_in_body(&AuthorizationMetadata::default()));
        assert!(!secret_in_body(&metadata(serde_json::json!(["client_secret_basic"]))));
        assert!(!secret_in_body(&metadata(serde_json::json!([
            "client_secret_post",
            "client_secret_basic"
        ]))));
        assert!(secret_in_body(&metadata(serde_json::json!(["client_secret_post"]))));
    }
}
