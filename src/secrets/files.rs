//! Files that hold secrets: the user's credential stores in HOME (`~/.ssh`, `~/.aws`, `~/.netrc` ...), and the files
//! of the workspace that hold secrets (`.env`, `*.pem`, `*.key`, private SSH keys, and any file holding a known key).
//!
//! The stores are hidden from commands (the sandbox covers them) and refused by the file tools (`PathPolicy`). The
//! workspace's secret files are found by one walk per session, on a thread of its own so the session does not wait
//! for it: it ignores `.gitignore` (such files are usually ignored) and is waited for only when the first sandboxed
//! command starts, which then cannot see them.
//!
//! This module decides what is secret; it never reads a value out, and never says more about a file than its path.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

/// Credential stores in HOME hidden by default (`[sandbox] unhide` takes one back, `[sandbox] hide` adds more).
#[rustfmt::skip]
pub(crate) const HOME_STORES: &[&str] = &[
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
    ".netrc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub", ".config/glab-cli",
    ".npmrc", ".yarnrc.yml", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
    ".m2/settings.xml", ".gradle/gradle.properties", ".pgpass", ".my.cnf", ".vault-token",
    ".terraform.d/credentials.tfrc.json", ".password-store", ".local/share/keyrings", ".config/op",
    ".mozilla", ".config/google-chrome", ".config/chromium", ".bash_history", ".zsh_history", ".env",
    // Other coding agents' logins and keys: Claude Code's (`primaryApiKey` in ~/.claude.json), codex's, Gemini CLI's,
    // opencode's.
    ".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".gemini/oauth_creds.json",
    ".local/share/opencode/auth.json",
];

/// Examples and templates of `.env` files: meant to be read and committed.
const ENV_EXAMPLES: &[&str] = &[
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    ".env.defaults",
];

/// Private SSH key file names (their `.pub` halves are public).
const SSH_KEYS: &[&str] = &[
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
];

/// Why a file's name says it holds secrets, or `None`.
pub fn secret_name(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    if name == ".env" || (name.starts_with(".env.") && !ENV_EXAMPLES.contains(&name)) {
        return Some("a .env file");
    }
    if SSH_KEYS.contains(&name) {
        return Some("a private SSH key");
    }
    if [".netrc", ".git-credentials", ".pgpass"].contains(&name) {
        return Some("a credentials file");
    }
    let extension = Path::new(name).extension().and_then(|e| e.to_str())?;
    match extension {
        "pem" => Some("a PEM file (keys and certificates)"),
        "key" => Some("a key file"),
        "p12" | "pfx" => Some("a key bundle"),
        _ => None,
    }
}

/// `~/x` and `x` (relative to HOME) as a path under `home`; an absolute path as it is.
fn under_home(home: &Path, entry: &Path) -> PathBuf {
    match entry.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) if entry.is_relative() => home.join(entry),
        Err(_) => entry.to_path_buf(),
    }
}

/// The credential stores to hide: the defaults under `home` but those in `unhide`, and `hide`. Each is resolved
/// through symlinks when it exists (what the kernel and `PathPolicy` compare), and kept as written when it does not
/// (so a store created later is still refused by the file tools).
pub fn home_stores(home: Option<&Path>, hide: &[PathBuf], unhide: &[PathBuf]) -> Vec<PathBuf> {
    let Some(home) = home else {
        return hide.iter().filter(|p| p.is_absolute()).cloned().collect();
    };
    let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let unhidden: Vec<PathBuf> = unhide.iter().map(|p| under_home(&home, p)).collect();
    let defaults = HOME_STORES
        .iter()
        .map(|rel| home.join(rel))
        .filter(|path| !unhidden.contains(path));
    let extra = hide.iter().map(|p| under_home(&home, p));
    let mut stores: Vec<PathBuf> = Vec::new();
    for path in defaults.chain(extra) {
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        if !stores.contains(&path) {
            stores.push(path);
        }
    }
    stores
}

/// The workspace's secret files, as found by a walk started in the background.
#[derive(Clone)]
pub struct WorkspaceSecrets {
    found: Arc<(Mutex<Option<Vec<PathBuf>>>, Condvar)>,
}

impl std::fmt::Debug for WorkspaceSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WorkspaceSecrets")
    }
}

/// Two handles are equal when they share one walk (a policy compared with its clone).
impl PartialEq for WorkspaceSecrets {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.found, &other.found)
    }
}

impl Eq for WorkspaceSecrets {}

/// No walk: nothing found.
impl Default for WorkspaceSecrets {
    fn default() -> Self {
        Self::none()
    }
}

impl WorkspaceSecrets {
    /// No walk: nothing is hidden (`[sandbox] hide_workspace_secrets = false`, and policies built by hand).
    pub fn none() -> Self {
        let none = Self::pending();
        none.set(Vec::new());
        none
    }

    fn pending() -> Self {
        Self {
            found: Arc::new((Mutex::new(None), Condvar::new())),
        }
    }

    /// Starts the walk of `root` on a thread of its own. Should the thread not start, the walk runs here.
    pub fn find(root: &Path) -> Self {
        let secrets = Self::pending();
        let handle = secrets.clone();
        let walk_root = root.to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("tern-secret-files".into())
            .spawn(move || handle.set(walk(&walk_root)));
        if spawned.is_err() {
            secrets.set(walk(root));
        }
        secrets
    }

    fn set(&self, files: Vec<PathBuf>) {
        let (lock, ready) = &*self.found;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(files);
        ready.notify_all();
    }

    /// The files found, waiting for the walk to end.
    pub fn wait(&self) -> Vec<PathBuf> {
        let (lock, ready) = &*self.found;
        let mut found = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(files) = found.as_ref() {
                return files.clone();
            }
            found = ready.wait(found).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Directories the walk does not read files in (their names are still checked): VCS metadata, and build output and
/// dependencies, which are large and hold no secret of the user's own.
const NOT_READ_IN: &[&str] = &[".git", "target", "node_modules", ".venv", "vendor"];
/// Files larger than this are checked by name only.
const MAX_READ_BYTES: u64 = 256 * 1024;
/// A walk stops after this many entries: a home directory opened as a workspace is not read whole.
const MAX_ENTRIES: usize = 200_000;

/// Every file under `root` whose name says secret, or (when small, and outside build output) that holds a known key.
/// `.gitignore` is not honoured, symlinks are not followed, `.git` is not entered.
pub(crate) fn walk(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let check_contents = crate::any_registered();
    for entry in walker.take(MAX_ENTRIES).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if secret_name(path).is_some() {
            found.push(path.to_path_buf());
            continue;
        }
        let in_build_output = path
            .strip_prefix(root)
            .unwrap_or(path)
            .components()
            .any(|c| NOT_READ_IN.iter().any(|d| c.as_os_str() == *d));
        if !check_contents || in_build_output || entry.metadata().ok().is_none_or(|m| m.len() > MAX_READ_BYTES) {
            continue;
        }
        if std::fs::File::open(path).is_ok_and(|file| crate::holds_key(&file).unwrap_or(false)) {
            found.push(path.to_path_buf());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            ".env",
            ".env.local",
            ".env.production",
            "server.pem",
            "tls.key",
            "id_rsa",
            "id_ed25519",
            "deep/dir/.netrc",
            "cert.p12",
        ] {
            assert!(secret_name(Path::new(name)).is_some(), "{name}");
        }
        for name in [
            ".env.example",
            ".env.sample",
            ".env.template",
            "id_rsa.pub",
            "env.rs",
            "keyboard.rs",
            "README.md",
            ".envrc",
            "monkey",
        ] {
            assert_eq!(secret_name(Path::new(name)), None, "{name}");
        }
    }

    #[test]
    fn home_stores_follow_hide_and_unhide() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        let real = std::fs::canonicalize(home.path()).unwrap();
        let stores = home_stores(
            Some(home.path()),
            &[PathBuf::from("~/.secret-notes"), PathBuf::from("/opt/vault")],
            &[PathBuf::from("~/.npmrc")],
        );
        assert!(stores.contains(&real.join(".ssh")));
        assert!(
            stores.contains(&real.join(".aws")),
            "missing stores are kept as written"
        );
        assert!(stores.contains(&real.join(".secret-notes")));
        assert!(stores.contains(&PathBuf::from("/opt/vault")));
        // Another coding agent's login is a credential like any other.
        for other in [".claude/.credentials.json", ".claude.json", ".codex/auth.json"] {
            assert!(stores.contains(&real.join(other)), "{other}");
        }
        assert!(!stores.contains(&real.join(".npmrc")));
    }

    #[test]
    fn the_walk_finds_ignored_secret_files_but_not_examples() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join(".gitignore"), ".env\nsecrets/\n").unwrap();
        std::fs::write(ws.path().join(".env"), "A=1").unwrap();
        std::fs::write(ws.path().join(".env.example"), "A=").unwrap();
        std::fs::create_dir(ws.path().join("secrets")).unwrap();
        std::fs::write(ws.path().join("secrets/tls.key"), "k").unwrap();
        std::fs::write(ws.path().join("main.rs"), "fn main() {}").unwrap();
        let found = WorkspaceSecrets::find(ws.path()).wait();
        assert!(found.contains(&ws.path().join(".env")), "{found:?}");
        assert!(found.contains(&ws.path().join("secrets/tls.key")), "{found:?}");
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(WorkspaceSecrets::none().wait(), Vec::<PathBuf>::new());
    }
}
