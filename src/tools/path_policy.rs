//! Which paths a tool may read and write.
//!
//! Paths from the model are resolved against the workspace root, component by component: every symlink on the way is
//! followed and `..` is taken after it, as the kernel does, also past components that do not exist yet (so neither a
//! dangling link nor `missing/../link` can smuggle a write outside). The result is
//! then checked against the allowed roots. Device files, FIFOs and sockets are refused: reading one would hang or never
//! end. Every refusal names the path as given and where it leads.
//!
//! Secrets stay home (see `tern_secrets::files`): the user's credential stores (`~/.ssh`, `~/.aws`, `~/.netrc` ...)
//! are refused like paths outside the workspace, for reads and writes alike, even when the workspace holds them (tern
//! opened in HOME). Files whose names say they hold secrets (`.env`, `*.pem`, `*.key`, private SSH keys) are refused
//! for reading unless the user said yes to this one call (the approval gate asks first: `secret_reason`); the whole
//! policy is the one place the file tools, grep and the read-only command list learn what they may read.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow before it is called a loop (Linux's own limit).
const MAX_SYMLINKS: usize = 40;

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("path is empty")]
    Empty,
    #[error("path '{path}' resolves to {resolved}, which is outside the workspace {root}")]
    OutsideWorkspace {
        path: String,
        resolved: PathBuf,
        root: PathBuf,
    },
    #[error("path '{path}' has a symlink loop (more than {MAX_SYMLINKS} links followed)")]
    SymlinkLoop { path: String },
    #[error("path '{path}' is a {kind}, not a regular file or directory; refusing to touch it")]
    SpecialFile { path: String, kind: &'static str },
    #[error("path '{path}' contains a NUL byte")]
    Nul { path: String },
    #[error("cannot resolve path '{path}': {source}")]
    Io { path: String, source: std::io::Error },
    #[error(
        "path '{path}' resolves to {resolved}, a credential store tern keeps from the model and from commands \
         (the user can allow it with `[sandbox] unhide`)"
    )]
    CredentialStore { path: String, resolved: PathBuf },
    #[error(
        "path '{path}' is {why}, which may hold secrets: the file tools read it only when the user says yes to \
         that call"
    )]
    SecretFile { path: String, why: &'static str },
}

/// What the workspace allows.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    root: PathBuf,
    /// Extra places writes may go (configured by the user).
    write_roots: Vec<PathBuf>,
    /// Extra places reads may go even when restricted (the session's tool-result store).
    read_roots: Vec<PathBuf>,
    /// When true, reads outside the workspace and the extra roots are refused too.
    restrict_reads: bool,
    /// Credential stores: refused for reading and writing wherever they are.
    stores: Vec<PathBuf>,
    /// Files that may hold secrets which the user let this one call read.
    secrets_allowed: Vec<PathBuf>,
}

impl PathPolicy {
    /// A policy for `root`. The root itself is resolved (symlinks followed) so that every later comparison is between
    /// real paths.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, PathError> {
        let root = root.as_ref();
        let root = std::fs::canonicalize(root).map_err(|source| PathError::Io {
            path: root.display().to_string(),
            source,
        })?;
        Ok(Self {
            root,
            write_roots: Vec::new(),
            read_roots: Vec::new(),
            restrict_reads: true,
            stores: Vec::new(),
            secrets_allowed: Vec::new(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directories besides the root that writes may go to.
    pub fn write_roots(&self) -> &[PathBuf] {
        &self.write_roots
    }

    /// Lets reads reach anywhere (tests of what a tool does with a path outside the workspace).
    #[cfg(test)]
    pub(crate) fn restrict_reads(mut self, restrict: bool) -> Self {
        self.restrict_reads = restrict;
        self
    }

    /// Allows writes (and reads) under `dir` too. A root that cannot be resolved is skipped.
    pub fn allow_write_root(mut self, dir: impl AsRef<Path>) -> Self {
        if let Ok(dir) = std::fs::canonicalize(dir.as_ref()) {
            self.write_roots.push(dir);
        }
        self
    }

    /// Allows reads under `dir` even when reads are restricted.
    pub fn allow_read_root(mut self, dir: impl AsRef<Path>) -> Self {
        if let Ok(dir) = std::fs::canonicalize(dir.as_ref()) {
            self.read_roots.push(dir);
        }
        self
    }

    /// Refuses reads and writes under these credential stores (see `tern_secrets::files::home_stores`).
    pub fn hide_stores(mut self, stores: Vec<PathBuf>) -> Self {
        self.stores = stores;
        self
    }

    /// Lets this policy read `resolved`, a file that may hold secrets (the user said yes to the call).
    pub fn allow_secret_file(mut self, resolved: PathBuf) -> Self {
        self.secrets_allowed.push(resolved);
        self
    }

    /// Why reading `resolved` needs the user's yes (its name says it holds secrets), or `None`.
    pub fn secret_reason(&self, resolved: &Path) -> Option<&'static str> {
        if self.secrets_allowed.iter().any(|allowed| allowed == resolved) {
            return None;
        }
        tern_secrets::files::secret_name(resolved)
    }

    /// The credential stores this policy refuses, for walks that must not enter them.
    pub(crate) fn stores(&self) -> &[PathBuf] {
        &self.stores
    }

    /// Whether `resolved` is in a credential store.
    pub(crate) fn in_store(&self, resolved: &Path) -> bool {
        self.stores.iter().any(|store| resolved.starts_with(store))
    }

    /// Resolves a file the user attaches to a message (`path` as typed, relative to the workspace): readable by
    /// `resolve_read`, and inside the workspace itself (reads are allowed in a few places besides it, such as the
    /// session's tool results; attachments come from the workspace only). The error is for the user.
    pub fn attachable(&self, path: &str) -> Result<PathBuf, String> {
        let resolved = self.resolve_read(path).map_err(|e| e.to_string())?;
        if !self.writable(&resolved) || !resolved.starts_with(self.root()) {
            return Err(format!("{path} is outside the workspace"));
        }
        Ok(resolved)
    }

    /// Resolves a path for reading: inside the allowed roots unless reads are unrestricted, not in a credential store,
    /// not a file that may hold secrets unless allowed, and not a special file.
    pub fn resolve_read(&self, path: &str) -> Result<PathBuf, PathError> {
        let resolved = self.resolve(path)?;
        if self.restrict_reads && !self.readable(&resolved) {
            return Err(self.outside(path, resolved));
        }
        self.refuse_store(path, &resolved)?;
        if let Some(why) = self.secret_reason(&resolved) {
            return Err(PathError::SecretFile {
                path: path.to_string(),
                why,
            });
        }
        refuse_special(path, &resolved)?;
        Ok(resolved)
    }

    /// Resolves a path for writing: inside the workspace or an extra write root, not in a credential store, and not a
    /// special file.
    pub fn resolve_write(&self, path: &str) -> Result<PathBuf, PathError> {
        let resolved = self.resolve(path)?;
        if !self.writable(&resolved) {
            return Err(self.outside(path, resolved));
        }
        self.refuse_store(path, &resolved)?;
        refuse_special(path, &resolved)?;
        Ok(resolved)
    }

    fn refuse_store(&self, path: &str, resolved: &Path) -> Result<(), PathError> {
        if self.in_store(resolved) {
            return Err(PathError::CredentialStore {
                path: path.to_string(),
                resolved: resolved.to_path_buf(),
            });
        }
        Ok(())
    }

    /// True when `resolved` (a path from `resolve`) may be written.
    pub fn writable(&self, resolved: &Path) -> bool {
        resolved.starts_with(&self.root) || self.write_roots.iter().any(|r| resolved.starts_with(r))
    }

    fn readable(&self, resolved: &Path) -> bool {
        self.writable(resolved) || self.read_roots.iter().any(|r| resolved.starts_with(r))
    }

    /// How to show a resolved path: relative to the workspace when inside it, absolute otherwise.
    pub fn display(&self, resolved: &Path) -> String {
        match resolved.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => resolved.to_string_lossy().into_owned(),
        }
    }

    fn outside(&self, path: &str, resolved: PathBuf) -> PathError {
        PathError::OutsideWorkspace {
            path: path.to_string(),
            resolved,
            root: self.root.clone(),
        }
    }

    /// Makes `path` absolute and follows every symlink in it, tolerating components that do not exist yet.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        if path.trim().is_empty() {
            return Err(PathError::Empty);
        }
        if path.contains('\0') {
            return Err(PathError::Nul { path: path.to_string() });
        }
        let expanded = expand_home(path);
        let absolute = if expanded.is_absolute() {
            expanded
        } else {
            self.root.join(expanded)
        };
        let mut links = 0;
        realpath(&absolute, &mut links).map_err(|e| match e {
            RealpathError::Loop => PathError::SymlinkLoop { path: path.to_string() },
            RealpathError::Io(source) => PathError::Io {
                path: path.to_string(),
                source,
            },
        })
    }
}

fn expand_home(path: &str) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = std::env::home_dir()
    {
        return home.join(rest);
    }
    PathBuf::from(path)
}

enum RealpathError {
    Loop,
    Io(std::io::Error),
}

/// `realpath(3)` that keeps going past missing components, and follows every symlink the OS would follow when the
/// missing directories are created (`create_dir_all` of the parent, then the file).
///
/// The walk keeps the resolved existing prefix and the missing components after it. A name is looked up in the
/// filesystem only while nothing is missing (under a missing directory nothing exists yet); a symlink's target is put
/// in front of the components still to walk, as the kernel does. `..` drops the last missing component when there is
/// one (a directory that will be created and left again), otherwise the last component of the real prefix, which is
/// what the kernel's `..` does after a symlink. So `missing/../link/x` leaves `missing` and then follows `link`:
/// folding `..` lexically instead would never look at `link` and would let a write escape through it.
fn realpath(path: &Path, links: &mut usize) -> Result<PathBuf, RealpathError> {
    let mut resolved = PathBuf::from("/");
    let mut missing: Vec<OsString> = Vec::new();
    // The components still to walk, next one last.
    let mut todo: Vec<OsString> = Vec::new();
    push_components(&mut todo, path, &mut resolved, &mut missing);
    while let Some(name) = todo.pop() {
        if name == ".." {
            if missing.pop().is_none() {
                resolved.pop();
            }
            continue;
        }
        if !missing.is_empty() {
            missing.push(name);
            continue;
        }
        let next = resolved.join(&name);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                *links += 1;
                if *links > MAX_SYMLINKS {
                    return Err(RealpathError::Loop);
                }
                let target = std::fs::read_link(&next).map_err(RealpathError::Io)?;
                push_components(&mut todo, &target, &mut resolved, &mut missing);
            }
            Ok(_) => resolved = next,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing.push(name),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(RealpathError::Loop),
            // Below a file: the OS will refuse the path; what it names is still worked out for the policy check.
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => missing.push(name),
            Err(e) => return Err(RealpathError::Io(e)),
        }
    }
    resolved.extend(missing);
    Ok(resolved)
}

/// Puts the components of `path` in front of `todo` (which holds them last-first). An absolute `path` restarts the walk
/// at `/`: everything resolved or missing so far is dropped, as for an absolute symlink target.
fn push_components(todo: &mut Vec<OsString>, path: &Path, resolved: &mut PathBuf, missing: &mut Vec<OsString>) {
    if path.is_absolute() {
        *resolved = PathBuf::from("/");
        missing.clear();
    }
    let names = path.components().filter_map(|c| match c {
        Component::Normal(name) => Some(name.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        Component::Prefix(_) | Component::RootDir | Component::CurDir => None,
    });
    let names: Vec<OsString> = names.collect();
    todo.extend(names.into_iter().rev());
}

fn refuse_special(path: &str, resolved: &Path) -> Result<(), PathError> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(resolved) else {
        return Ok(());
    };
    let ft = meta.file_type();
    let kind = if ft.is_char_device() {
        "character device"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_fifo() {
        "FIFO (named pipe)"
    } else if ft.is_socket() {
        "socket"
    } else {
        return Ok(());
    };
    Err(PathError::SpecialFile {
        path: path.to_string(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathPolicy) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let policy = PathPolicy::new(dir.path().join("ws")).unwrap();
        (dir, policy)
    }

    #[test]
    fn relative_paths_resolve_inside() {
        let (_d, p) = setup();
        let r = p.resolve_write("src/new/file.rs").unwrap();
        assert_eq!(r, p.root().join("src/new/file.rs"));
        assert_eq!(p.display(&r), "src/new/file.rs");
        assert_eq!(p.resolve_read(".").unwrap(), p.root());
    }

    #[test]
    fn dotdot_escape_is_refused_with_path_named() {
        let (_d, p) = setup();
        let err = p.resolve_write("../outside.txt").unwrap_err().to_string();
        assert!(
            err.contains("'../outside.txt'") && err.contains("outside the workspace"),
            "{err}"
        );
        assert!(p.resolve_read("a/../../x").is_err());
        assert!(p.resolve_read("a/../b").is_ok());
    }

    #[test]
    fn absolute_paths_checked() {
        let (_d, p) = setup();
        let inside = p.root().join("x.txt");
        assert!(p.resolve_write(inside.to_str().unwrap()).is_ok());
        assert!(p.resolve_write("/etc/passwd").is_err());
        assert!(p.resolve_read("/etc/passwd").is_err());
        let open = p.clone().restrict_reads(false);
        assert!(open.resolve_read("/etc/passwd").is_ok());
        assert!(open.resolve_write("/etc/passwd").is_err());
    }

    #[test]
    fn symlink_out_of_workspace_refused() {
        let (d, p) = setup();
        std::fs::write(d.path().join("secret"), "s").unwrap();
        symlink(d.path().join("secret"), p.root().join("link")).unwrap();
        symlink(d.path(), p.root().join("dirlink")).unwrap();
        assert!(p.resolve_read("link").is_err());
        assert!(p.resolve_write("dirlink/new.txt").is_err());
    }

    #[test]
    fn dangling_link_is_followed_for_writes() {
        let (d, p) = setup();
        symlink(d.path().join("nowhere"), p.root().join("dangling")).unwrap();
        let err = p.resolve_write("dangling").unwrap_err();
        assert!(matches!(err, PathError::OutsideWorkspace { .. }), "{err}");
        symlink(p.root().join("later.txt"), p.root().join("inner")).unwrap();
        assert_eq!(p.resolve_write("inner").unwrap(), p.root().join("later.txt"));
    }

    #[test]
    fn missing_component_then_dotdot_still_follows_the_link_after_it() {
        let (d, p) = setup();
        std::fs::create_dir(d.path().join("etc")).unwrap();
        symlink(d.path().join("etc"), p.root().join("out")).unwrap();
        symlink("../etc", p.root().join("rel")).unwrap();
        for path in [
            "missing/../out/passwd",
            "a/b/../../out/passwd",
            "missing/./../rel/passwd",
        ] {
            let err = p.resolve_write(path).unwrap_err();
            assert!(matches!(err, PathError::OutsideWorkspace { .. }), "{path}: {err}");
            assert_eq!(
                p.resolve(path).unwrap(),
                d.path().canonicalize().unwrap().join("etc/passwd")
            );
        }
        // `..` after a link is taken from where the link leads, as the kernel does.
        std::fs::create_dir_all(p.root().join("deep/er")).unwrap();
        symlink(p.root().join("deep/er"), p.root().join("to_er")).unwrap();
        assert_eq!(p.resolve("to_er/../x").unwrap(), p.root().join("deep/x"));
        assert_eq!(p.resolve("new/dir/../../x").unwrap(), p.root().join("x"));
    }

    #[test]
    fn symlink_loop_is_an_error() {
        let (_d, p) = setup();
        symlink(p.root().join("b"), p.root().join("a")).unwrap();
        symlink(p.root().join("a"), p.root().join("b")).unwrap();
        let err = p.resolve_read("a").unwrap_err();
        assert!(matches!(err, PathError::SymlinkLoop { .. }), "{err}");
    }

    #[test]
    fn devices_and_fifos_refused() {
        let (_d, p) = setup();
        let open = p.clone().restrict_reads(false);
        let err = open.resolve_read("/dev/zero").unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
        let fifo = p.root().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(p.resolve_read("fifo"), Err(PathError::SpecialFile { .. })));
    }

    #[test]
    fn empty_and_nul_refused() {
        let (_d, p) = setup();
        assert!(matches!(p.resolve_read(""), Err(PathError::Empty)));
        assert!(matches!(p.resolve_read("a\0b"), Err(PathError::Nul { .. })));
    }

    #[test]
    fn credential_stores_are_refused_even_inside_the_workspace() {
        let (_d, p) = setup();
        std::fs::create_dir(p.root().join(".ssh")).unwrap();
        std::fs::write(p.root().join(".ssh/id_ed25519"), "k").unwrap();
        let stores = vec![p.root().join(".ssh"), p.root().join(".netrc")];
        let p = p.hide_stores(stores);
        for path in [".ssh/id_ed25519", ".ssh", "./x/../.ssh/config", ".netrc"] {
            let err = p.resolve_read(path).unwrap_err();
            assert!(matches!(err, PathError::CredentialStore { .. }), "{path}: {err}");
            assert!(err.to_string().contains("unhide"), "{err}");
            assert!(p.resolve_write(path).is_err(), "{path}");
        }
        // Through a symlink too: the comparison is on the resolved path.
        symlink(p.root().join(".ssh"), p.root().join("keys")).unwrap();
        assert!(matches!(
            p.resolve_read("keys/id_ed25519"),
            Err(PathError::CredentialStore { .. })
        ));
        assert!(p.resolve_read(".sshx").is_ok());
    }

    #[test]
    fn secret_files_are_refused_unless_the_user_allowed_this_one() {
        let (_d, p) = setup();
        for name in [".env", "config/.env.local", "certs/server.pem", "tls.key", "id_rsa"] {
            let err = p.resolve_read(name).unwrap_err();
            assert!(matches!(err, PathError::SecretFile { .. }), "{name}: {err}");
            assert!(err.to_string().contains("says yes"), "{err}");
        }
        for name in [".env.example", "src/env.rs", "id_rsa.pub"] {
            assert!(p.resolve_read(name).is_ok(), "{name}");
        }
        let env = p.resolve(".env").unwrap();
        assert_eq!(p.secret_reason(&env), Some("a .env file"));
        let allowed = p.clone().allow_secret_file(env.clone());
        assert_eq!(allowed.resolve_read(".env").unwrap(), env);
        assert!(
            allowed.resolve_read("tls.key").is_err(),
            "the yes covers only that file"
        );
        // Writing one is the gate's business (it asks), not a refusal here.
        assert!(p.resolve_write(".env").is_ok());
    }

    #[test]
    fn extra_roots() {
        let (d, p) = setup();
        std::fs::create_dir(d.path().join("store")).unwrap();
        std::fs::create_dir(d.path().join("extra")).unwrap();
        let p = p
            .allow_read_root(d.path().join("store"))
            .allow_write_root(d.path().join("extra"));
        let store = d.path().join("store/r.txt");
        assert!(p.resolve_read(store.to_str().unwrap()).is_ok());
        assert!(p.resolve_write(store.to_str().unwrap()).is_err());
        assert!(p.resolve_write(d.path().join("extra/x").to_str().unwrap()).is_ok());
    }
}
