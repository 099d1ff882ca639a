//! The token file of one remote server: `<data dir>/mcp-auth/<name>-<hash of name and URL>.json`, mode 0600 in a
//! 0700 directory, written whole through a temporary file and a rename so a crash never leaves half a file.
//!
//! The file holds what a later start needs without asking the network again: the authorization server's metadata,
//! the client registration (id, and the secret when the server issued one) and rmcp's `StoredCredentials` (tokens,
//! scopes, when they were received). `TokenFile` is rmcp's `CredentialStore` over it, so a refresh rmcp makes is
//! saved back at once; every token read or written is registered with `crate::secrets` so it is masked wherever text
//! leaves tern. Concurrent refreshes by two tern processes are serialised by an advisory lock on a sibling file.
//!
//! Nothing here logs a token, and `Debug` never shows one.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, AuthorizationMetadata, CredentialRefreshGuard, StoredCredentials};
use serde::{Deserialize, Serialize};

/// The directory under tern's data directory that holds the token files.
const DIR: &str = "mcp-auth";
/// How much of a server's name goes into its file name (the hash keeps names apart).
const NAME_CHARS: usize = 40;

/// What one token file holds.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct TokenRecord {
    /// The server's name and URL, checked on load: a file is only ever used for the server it was made for.
    pub server: String,
    pub url: String,
    pub metadata: AuthorizationMetadata,
    /// Issued by dynamic registration to a confidential client; public clients (the usual case) have none.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// `None` once the tokens were cleared but the registration is kept.
    #[serde(default)]
    pub credentials: Option<StoredCredentials>,
    /// A machine client's credentials (the client-credentials grant), which get it a new token when one expires.
    #[serde(default)]
    pub machine: Option<MachineClient>,
}

/// A machine client: its id and what authenticates it (a secret, or a private key that signs assertions), the scopes
/// and resource its tokens are asked for.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct MachineClient {
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub private_key_pem: Option<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
    pub resource: String,
}

impl std::fmt::Debug for MachineClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MachineClient")
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// The token file of the server `name` at `url` (which need not exist).
pub(crate) fn token_path(name: &str, url: &str) -> PathBuf {
    token_dir().join(file_name(name, url))
}

fn token_dir() -> PathBuf {
    tern_fs::places::data_dir().join(DIR)
}

/// `<name, made safe>-<16 hex digits>.json`: readable in a listing, distinct for every (name, URL) pair.
fn file_name(name: &str, url: &str) -> String {
    let safe: String = name
        .chars()
        .take(NAME_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}-{:016x}.json", fnv1a(format!("{name}\n{url}").as_bytes()))
}

/// FNV-1a, 64 bits: stable across Rust releases (the standard hasher is not promised to be), and collisions only
/// matter between a user's own servers.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Reads the record of `name` at `url`; `None` when there is none, or it was made for another server.
pub(crate) fn read(name: &str, url: &str) -> std::io::Result<Option<TokenRecord>> {
    let path = token_path(name, url);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let record: TokenRecord = serde_json::from_str(&text)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", path.display())))?;
    if record.server != name || record.url != url {
        return Ok(None);
    }
    mask_tokens(&record);
    Ok(Some(record))
}

/// Writes the record whole: a temporary file (0600) in the same directory (0700), then a rename over the old one.
pub(crate) fn write(record: &TokenRecord) -> std::io::Result<PathBuf> {
    mask_tokens(record);
    let dir = token_dir();
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
    // The directory may predate this code, or have been created by hand: it must not be readable by others.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    let path = dir.join(file_name(&record.server, &record.url));
    let text = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    let temp = dir.join(format!(".{}.{}.tmp", std::process::id(), fastrand::u64(..)));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&temp, &path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map(|()| path)
}

/// Removes the record of `name` at `url`; whether there was one.
pub(crate) fn remove(name: &str, url: &str) -> std::io::Result<bool> {
    let path = token_path(name, url);
    let _ = std::fs::remove_file(lock_path(&path));
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Registers the tokens (and client secret) of a record for masking.
fn mask_tokens(record: &TokenRecord) {
    if let Some(secret) = &record.client_secret {
        tern_secrets::register(secret);
    }
    if let Some(machine) = &record.machine {
        if let Some(secret) = &machine.client_secret {
            tern_secrets::register(secret);
        }
        if let Some(pem) = &machine.private_key_pem {
            tern_secrets::register(pem);
            for line in pem.lines().filter(|l| l.len() >= 16 && !l.starts_with("-----")) {
                tern_secrets::register(line.trim());
            }
        }
    }
    let Some(credentials) = &record.credentials else {
        return;
    };
    // Through JSON rather than oauth2's accessors, so this module needs only rmcp's types.
    let Ok(serde_json::Value::Object(tokens)) = serde_json::to_value(&credentials.token_response) else {
        return;
    };
    for key in ["access_token", "refresh_token", "id_token"] {
        if let Some(serde_json::Value::String(value)) = tokens.get(key) {
            tern_secrets::register(value);
        }
    }
}

fn lock_path(path: &Path) -> PathBuf {
    path.with_extension("lock")
}

/// rmcp's credential store over one server's token file.
pub(crate) struct TokenFile {
    server: String,
    url: String,
    /// What is written besides the credentials.
    metadata: AuthorizationMetadata,
    client_secret: Option<String>,
    machine: Option<MachineClient>,
}

impl TokenFile {
    pub(crate) fn new(server: &str, url: &str, metadata: AuthorizationMetadata, client_secret: Option<String>) -> Self {
        Self {
            server: server.to_string(),
            url: url.to_string(),
            metadata,
            client_secret,
            machine: None,
        }
    }

    /// The store of a machine client's login, which keeps its credentials with the tokens.
    pub(crate) fn with_machine(mut self, machine: Option<MachineClient>) -> Self {
        self.machine = machine;
        self
    }

    fn store_error(&self, action: &str, error: &std::io::Error) -> AuthError {
        AuthError::CredentialStoreError(format!(
            "cannot {action} the login of MCP server {:?}: {error}",
            self.server
        ))
    }
}

#[async_trait::async_trait]
impl rmcp::transport::auth::CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match read(&self.server, &self.url) {
            Ok(record) => Ok(record.and_then(|r| r.credentials)),
            Err(e) => Err(self.store_error("read", &e)),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let record = TokenRecord {
            server: self.server.clone(),
            url: self.url.clone(),
            metadata: self.metadata.clone(),
            client_secret: self.client_secret.clone(),
            credentials: Some(credentials),
            machine: self.machine.clone(),
        };
        write(&record).map(|_| ()).map_err(|e| self.store_error("save", &e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        remove(&self.server, &self.url)
            .map(|_| ())
            .map_err(|e| self.store_error("remove", &e))
    }

    /// An exclusive `flock` on `<file>.lock`, held from before rmcp loads the tokens until after it saved the
    /// refreshed ones: a server that rotates refresh tokens would otherwise see the second process's stale one.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let path = lock_path(&token_path(&self.server, &self.url));
        let locked = tokio::task::spawn_blocking(move || -> std::io::Result<std::fs::File> {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&path)?;
            // Held as long as the file stays open: the guard owns it.
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
            Ok(file)
        })
        .await
        .map_err(|e| AuthError::CredentialStoreError(format!("cannot lock the token file: {e}")))?;
        match locked {
            // Closing the file (dropping the guard) releases the lock.
            Ok(file) => Ok(Some(CredentialRefreshGuard::new(file))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.store_error("lock", &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_keyed_by_name_and_url() {
        let a = file_name("github", "https://api.example.com/mcp");
        assert!(a.starts_with("github-") && a.ends_with(".json"), "{a}");
        assert_ne!(a, file_name("github", "https://other.example.com/mcp"));
        assert_ne!(a, file_name("gitlab", "https://api.example.com/mcp"));
        let odd = file_name("../../etc/passwd x", "u");
        assert!(!odd.contains('/') && !odd.contains(' '), "{odd}");
        assert_eq!(file_name(&"n".repeat(500), "u").len(), NAME_CHARS + 1 + 16 + 5);
    }

    #[test]
    fn the_hash_is_fnv1a() {
        // Published FNV-1a 64 test vectors: the file names of existing logins must never change.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
