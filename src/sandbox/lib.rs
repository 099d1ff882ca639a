//! The Linux OS sandbox every `exec` command runs in (unless the user approved running one outside it): the floor
//! under the approval gate, so that a gate mistake cannot become a disaster.
//!
//! tern re-executes itself as the launcher: `tern __sandbox <policy> -- bash -c CMD` (see `launcher`). The launcher
//! enters new user, mount, PID, IPC and (unless network is allowed) network namespaces, and forks the PID namespace's
//! init, which mounts a fresh `/proc`, the session's private temp directory over `/tmp`, `/var/tmp`, `$TMPDIR` and
//! `/dev/shm`, a devpts of its own, makes `.tern` and what git obeys read-only, hides tern's own files and the
//! user's credentials, brings loopback up, applies Landlock (read and execute everywhere; write only to the
//! workspace, the private temp, configured roots and a few device files), drops every capability, installs a
//! system-call filter (no unix sockets, io_uring or keyring), and runs the command. When the command's main process
//! ends, init exits with its status and the kernel ends everything else in the namespace: `setsid` and double-forked
//! daemons included.
//!
//! A session's commands share one set of namespaces and mounts, kept by a holder process that starts each command's
//! launcher itself when tern sends it the command (`holder`, `held`), which saves a fork of tern and an exec of the
//! launcher per command.
//!
//! This module builds the launcher command (`command`), checks once whether the kernel supports all this (`probe`),
//! keeps the session's state (`session`, `git_repos`), and recognises output that looks like a sandbox refusal
//! (`refusal_note`). It decides nothing about whether a command may run: that is the approval gate's business.

mod dir_watch;
pub mod git_repos;
mod held;
mod holder;
mod landlock_rules;
pub mod launcher;
mod namespaces;
mod private_mounts;
mod probe;
mod refusal;
mod seccomp;
mod session;
mod settings;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use self::held::{HeldChild, HeldStart};
pub use self::probe::{Support, probe};
pub use self::refusal::refusal_note;
use self::session::SessionState;
pub use self::settings::SandboxSettings;

/// The first argument that makes `tern` act as the sandbox launcher instead of the assistant.
pub const LAUNCHER_ARG: &str = "__sandbox";

/// The launcher on its own (`src/bin/tern-sandbox.rs`), installed next to `tern`. It takes the same arguments.
pub(crate) const SMALL_LAUNCHER: &str = "tern-sandbox";

/// What a sandboxed command may do beyond reading and executing everywhere.
///
/// Every property holds in one place: writes (Landlock, `landlock_rules`), what is visible and read-only (mounts,
/// `namespaces` and `private_mounts`), unix sockets, io_uring and the keyring (`seccomp`), processes and signals (the
/// PID namespace and Landlock scoping). Clones share the session's state (its private temp directory and the git
/// repositories found), which goes when the last clone is dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The program run as `<launcher> __sandbox ...`: tern itself (integration tests and benchmarks pass the built
    /// `tern` binary, since inside a test harness the current executable is the harness).
    pub launcher: PathBuf,
    /// Directories writable besides the workspace and the temp directory.
    pub writable_roots: Vec<PathBuf>,
    /// Whether commands may use the network; without it they get a network namespace of their own with only
    /// loopback, so they can still talk to servers they start themselves.
    pub network: bool,
    /// Whether the workspace's `.git` is mounted read-only (commits, branch changes and hook edits then fail).
    pub git_read_only: bool,
    /// Whether what git obeys in every repository under the workspace (hooks, config, info, a `.git` file) is
    /// read-only, while objects, refs and the index stay writable (default on).
    pub protect_git: bool,
    /// Directories and files commands cannot see at all: tern's own configuration (which may hold a key) and data
    /// (sessions, logs, stored results), credential stores. A directory looks empty, a file is empty.
    pub hidden: Vec<PathBuf>,
    /// Nothing writable but the private temp directory and the devices (read-only mode).
    pub writes_nothing: bool,
    /// Unix sockets the user allowed commands to connect to (`[sandbox] allow_unix_sockets`). Empty: no command may
    /// create a unix socket other than with `socketpair`. Non-empty: unix sockets are allowed, and the kernel cannot
    /// restrict which path they connect to (seccomp sees only a pointer), so every socket the sandbox can see is
    /// reachable; the listed ones stay visible even under `/tmp`.
    pub unix_sockets: Vec<PathBuf>,
    /// Devices under `/dev` commands may open besides the harmless ones (`[sandbox] devices`).
    pub devices: Vec<PathBuf>,
    /// Whether commands join the namespaces of the session's holder (made once, with the shared mounts) instead of
    /// making their own: the same sandbox, at a fraction of the cost per command (default on; benchmarks compare).
    pub shared_namespaces: bool,
    session: SessionHandle,
    /// The workspace's secret files (`.env`, keys), hidden like `hidden`: found by a walk in the background, waited
    /// for when a command starts.
    pub secret_files: tern_secrets::files::WorkspaceSecrets,
}

/// The session's state inside a policy: not part of what the policy allows, so every two handles compare equal.
#[derive(Debug, Clone, Default)]
struct SessionHandle(Arc<SessionState>);

impl PartialEq for SessionHandle {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SessionHandle {}

impl SandboxPolicy {
    /// The strictest policy, launched by `tern-sandbox` next to the running executable (a small binary that starts in
    /// a fraction of tern's time), or by the running executable itself (`tern __sandbox`) when there is none.
    pub(crate) fn current_exe() -> std::io::Result<Self> {
        let exe = std::env::current_exe()?;
        let small = exe.with_file_name(SMALL_LAUNCHER);
        let is_program = std::fs::metadata(&small).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        Ok(Self::with_launcher(if is_program { small } else { exe }))
    }

    /// The strictest policy (no extra roots, no network, no unix sockets; `.git` writable like the rest of the
    /// workspace except what git obeys), with a session of its own.
    pub fn with_launcher(launcher: impl Into<PathBuf>) -> Self {
        Self {
            launcher: launcher.into(),
            writable_roots: Vec::new(),
            network: false,
            git_read_only: false,
            protect_git: true,
            hidden: Vec::new(),
            secret_files: tern_secrets::files::WorkspaceSecrets::none(),
            writes_nothing: false,
            unix_sockets: Vec::new(),
            devices: Vec::new(),
            shared_namespaces: true,
            session: SessionHandle::default(),
        }
    }

    /// The policy configured in `settings`, launched by the running executable, with `write_roots` (the directories
    /// file tools may write to) writable for commands too. `None` when the sandbox is off or this kernel cannot run
    /// it (`probe` says why). `Err` only when the running executable cannot be found.
    pub fn from_settings(settings: &SandboxSettings, write_roots: &[PathBuf]) -> std::io::Result<Option<Self>> {
        if !settings.enabled || !probe().is_available() {
            return Ok(None);
        }
        let mut policy = Self::current_exe()?;
        // Resolved now, as the file tools resolve `write_roots`: the launcher would otherwise resolve a relative root
        // from the command's working directory. A root that does not exist is left out.
        policy.writable_roots = write_roots
            .iter()
            .chain(&settings.writable_roots)
            .filter_map(|root| std::fs::canonicalize(root).ok())
            .collect();
        policy.network = settings.network;
        policy.git_read_only = settings.git_read_only;
        policy.unix_sockets = settings
            .allow_unix_sockets
            .iter()
            .filter_map(|socket| std::fs::canonicalize(socket).ok())
            .collect();
        // Only device nodes (and directories of them) under `/dev`, resolved: nothing else is bound into the private
        // `/dev`, whatever the setting says.
        policy.devices = settings
            .devices
            .iter()
            .filter_map(|device| std::fs::canonicalize(device).ok())
            .filter(|device| device.starts_with("/dev/"))
            .collect();
        let config = tern_fs::places::user_config_path().and_then(|file| file.parent().map(Path::to_path_buf));
        policy.hidden = config
            .into_iter()
            .chain([tern_fs::places::data_dir()])
            .filter_map(|dir| std::fs::canonicalize(dir).ok())
            .chain(settings.credential_stores().into_iter().filter(|store| store.exists()))
            .collect();
        Ok(Some(policy))
    }

    /// Where commands may write, for the model: `the workspace and the temp directory (.tern is read-only)`.
    pub fn writes_summary(&self) -> String {
        if self.writes_nothing {
            return "the temp directory (this session is read-only)".into();
        }
        let places = if self.writable_roots.is_empty() {
            "the workspace and the temp directory"
        } else {
            "the workspace, the temp directory and the configured writable roots"
        };
        let read_only = if self.git_read_only {
            ".git and .tern are read-only"
        } else if self.protect_git {
            ".tern is read-only, and so are git hooks and config"
        } else {
            ".tern is read-only"
        };
        format!("{places} ({read_only})")
    }

    /// The note for the user and the model when the sandbox lets commands reach unix sockets, or `None`.
    pub fn unix_sockets_notice(&self) -> Option<String> {
        (!self.unix_sockets.is_empty()).then(|| {
            "[sandbox] allow_unix_sockets is set: sandboxed commands may connect to any unix socket they can see \
             (the kernel cannot restrict which path), not only the listed ones."
                .to_string()
        })
    }

    /// Walks `workspace` for git repositories now (a session does it before its first command, off the hot path);
    /// later calls cost nothing.
    pub fn prepare(&self, workspace: &Path) {
        if self.protect_git {
            let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
            self.session.0.with_repos(&workspace, |_| ());
        }
    }

    /// What the last command changed in the git repositories under `workspace`, after undoing what must not stay:
    /// the repositories (their `.git` entries) that appeared, which the sandbox protects from the next command on
    /// and the user should know of, and the `commondir` files it planted, now removed
    /// (`RepoScan::remove_planted_commondirs`).
    pub fn git_changes(&self, workspace: &Path) -> GitChanges {
        if !self.protect_git {
            return GitChanges::default();
        }
        self.session.0.with_repos(workspace, |scan| GitChanges {
            removed: scan.remove_planted_commondirs(),
            new_repos: scan.refresh(),
        })
    }
}

/// See `SandboxPolicy::git_changes`.
#[derive(Debug, Default)]
pub struct GitChanges {
    pub new_repos: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
}

/// The one-time notice for the user when commands will run outside the sandbox (so the gate asks before each), or
/// `None` when they run in it.
pub fn notice(settings: &SandboxSettings) -> Option<String> {
    const CONSEQUENCE: &str = "commands run without it, so tern asks before every command";
    if !settings.enabled {
        return Some(format!(
            "The OS sandbox is off ([sandbox] enabled = false): {CONSEQUENCE}."
        ));
    }
    match probe() {
        Support::Available => None,
        Support::Unavailable(reason) => Some(format!("The OS sandbox is not available ({reason}): {CONSEQUENCE}.")),
    }
}

/// The directories the private temp is mounted over: `/tmp`, `/var/tmp` and `$TMPDIR`, resolved, those that exist,
/// each once, parents first (found once per process).
fn temp_mounts() -> &'static [PathBuf] {
    static DIRS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        let mut dirs: Vec<PathBuf> = [PathBuf::from("/tmp"), PathBuf::from("/var/tmp"), std::env::temp_dir()]
            .iter()
            .filter_map(|dir| std::fs::canonicalize(dir).ok())
            .filter(|dir| dir.is_dir() && dir != Path::new("/"))
            .collect();
        dirs.sort_by_key(|dir| dir.as_os_str().len());
        dirs.dedup();
        dirs
    })
}

/// How a sandboxed command starts.
pub enum Launch {
    /// By the session's holder, already inside its namespaces (`held`); `fallback` spawns a launcher that joins them,
    /// for when the holder cannot start it (nothing ran then).
    Held {
        start: HeldStart,
        fallback: std::process::Command,
    },
    /// By a launcher tern spawns: one that joins a holder (a command that keeps tern's network), or one that makes its
    /// own namespaces when there is no holder.
    Spawn(std::process::Command),
}

/// How to run `bash -c <script>` inside the sandbox for a command in `workspace`. For a spawned launcher the caller
/// sets the working directory, stdio, environment and process group, exactly as for an unsandboxed `bash`; a held
/// start takes them as arguments. `Err` when the session's private temp directory cannot be made.
pub fn command(policy: &SandboxPolicy, workspace: &Path, script: &str) -> std::io::Result<Launch> {
    command_with(policy, workspace, script, false)
}

/// `command`, for a command whose stdin, stdout and stderr are a terminal (`tty`: a pseudo-terminal tern opened for a
/// live process), which becomes the controlling terminal of its session.
pub fn command_with(policy: &SandboxPolicy, workspace: &Path, script: &str, tty: bool) -> std::io::Result<Launch> {
    let private = policy.session.0.private_temp()?;
    let repos: Vec<PathBuf> = if policy.protect_git {
        policy
            .session
            .0
            .with_repos(workspace, |scan| scan.repos().cloned().collect())
    } else {
        Vec::new()
    };
    let mut args = launcher_args(policy, workspace, script, private, &repos);
    if tty {
        // Before `--`, which ends the flags.
        let at = args.len() - 4;
        args.insert(at, "--tty".into());
    }
    let holder = policy.shared_namespaces.then(|| {
        policy
            .session
            .0
            .holder
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&policy.launcher, workspace, holder_args(policy, workspace, private))
    });
    let Some((key, control)) = holder.flatten() else {
        let mut cmd = std::process::Command::new(&policy.launcher);
        cmd.args(args);
        return Ok(Launch::Spawn(cmd));
    };
    // The holder's commands are in its network namespace: one that keeps tern's joins it from a launcher of its own.
    let held = (!policy.network).then(|| args[1..].to_vec());
    args.splice(1..1, ["--join".into(), key.to_string().into()]);
    let mut cmd = std::process::Command::new(&policy.launcher);
    cmd.args(args);
    Ok(match held {
        Some(args) => Launch::Held {
            start: HeldStart { control, args },
            fallback: cmd,
        },
        None => Launch::Spawn(cmd),
    })
}

/// The arguments of the session's holder (`launcher::hold`): the shared ones.
fn holder_args(policy: &SandboxPolicy, workspace: &Path, private: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![LAUNCHER_ARG.into(), "--hold".into()];
    args.extend(shared_args(policy, workspace, private));
    args
}

/// What the mounts every command of a session shares depend on, given both to the holder and to each command (which
/// makes them itself without one). Read-only mode is among them: a workspace under a temp directory is bound back
/// read-only then (Landlock lets commands write anywhere under the temp directories), so switching modes starts
/// another holder.
fn shared_args(policy: &SandboxPolicy, workspace: &Path, private: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut flag = |name: &str, path: &Path| {
        args.push(name.into());
        args.push(path.as_os_str().to_owned());
    };
    flag("--private-temp", private);
    for dir in temp_mounts() {
        flag("--temp-over", dir);
    }
    flag("--keep", workspace);
    if !policy.writes_nothing {
        flag("--write", workspace);
        for root in &policy.writable_roots {
            flag("--write", root);
        }
    }
    for device in &policy.devices {
        flag("--device", device);
    }
    for socket in &policy.unix_sockets {
        flag("--unix-socket", socket);
    }
    args
}

/// The arguments after the launcher's path (see `launcher::Args::parse` for their meaning).
fn launcher_args(
    policy: &SandboxPolicy,
    workspace: &Path,
    script: &str,
    private: &Path,
    repos: &[PathBuf],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![LAUNCHER_ARG.into()];
    args.extend(shared_args(policy, workspace, private));
    let mut flag = |name: &str, path: &Path| {
        args.push(name.into());
        args.push(path.as_os_str().to_owned());
    };
    // `.tern/` holds the project's own tern settings (rules, mode, MCP servers): a command must not loosen the next
    // session of a trusted project. The edit tools ask before touching it; here it is simply read-only.
    flag("--read-only", &workspace.join(".tern"));
    let git = workspace.join(".git");
    if policy.git_read_only {
        flag("--read-only", &git);
    }
    for repo in repos.iter() {
        let protection = git_repos::protection(repo, &policy.writable_roots);
        // A read-only `.git` needs nothing more inside it; a hooks path in the work tree still does.
        let needed = |path: &&PathBuf| !(policy.git_read_only && path.starts_with(&git));
        for path in protection.pin.iter().filter(needed) {
            flag("--pin", path);
        }
        for path in protection.read_only.iter().filter(needed) {
            flag("--read-only", path);
        }
        for path in protection.read_only_dirs.iter().filter(needed) {
            flag("--read-only-dir", path);
        }
        for path in protection.read_only_files.iter().filter(needed) {
            flag("--read-only-file", path);
        }
    }
    // A workspace inside a hidden directory stays visible: hiding it would hide the work.
    let secret_files = policy.secret_files.wait();
    for path in policy
        .hidden
        .iter()
        .chain(&secret_files)
        .filter(|path| !workspace.starts_with(path))
    {
        flag("--hide", path);
    }
    if policy.network {
        args.push("--network".into());
    }
    args.extend(["--".into(), "bash".into(), "-c".into(), script.into()]);
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_args_round_trip_through_the_launcher_parser() {
        // Real directories: what a repository's protection covers depends on what it is on disk.
        let root = tempfile::tempdir().unwrap();
        let w = root.path().join("w s");
        std::fs::create_dir_all(w.join(".git")).unwrap();
        std::fs::create_dir_all(w.join("vendor/.git")).unwrap();
        let mut policy = SandboxPolicy::with_launcher("/bin/tern");
        policy.writable_roots.push(PathBuf::from("/opt/cache dir"));
        policy.git_read_only = true;
        policy.hidden.push(PathBuf::from("/home/me/.netrc"));
        let repos = [w.join(".git"), w.join("vendor/.git")];
        let args = launcher_args(&policy, w.as_path(), "echo -- --network", Path::new("/p"), &repos);
        assert_eq!(args[0], OsString::from(LAUNCHER_ARG));
        let parsed = launcher::Args::parse(args[1..].to_vec()).unwrap();
        assert_eq!(parsed.writable, [w.clone(), PathBuf::from("/opt/cache dir")]);
        assert_eq!(parsed.private_temp, Some(PathBuf::from("/p")));
        assert_eq!(parsed.temp_over, temp_mounts());
        assert!(parsed.temp_over.contains(&PathBuf::from("/tmp")));
        assert_eq!(parsed.keep, std::slice::from_ref(&w));
        // The whole `.git` is read-only, so only the nested repository gets the finer protection.
        assert_eq!(
            parsed.read_only,
            [w.join(".tern"), w.join(".git"), w.join("vendor/.git/config.worktree"),]
        );
        assert_eq!(parsed.read_only_files, [w.join("vendor/.git/config")]);
        assert_eq!(parsed.pinned, [w.join("vendor/.git")]);
        assert_eq!(parsed.hidden, [PathBuf::from("/home/me/.netrc")]);
        assert!(!parsed.network && parsed.unix_sockets.is_empty());
        assert_eq!(
            parsed.command,
            [OsString::from("bash"), "-c".into(), "echo -- --network".into()]
        );
    }

    #[test]
    fn a_terminal_is_asked_for_before_the_command() {
        let parsed =
            launcher::Args::parse(["--tty", "--", "bash", "-c", "--tty"].map(OsString::from).to_vec()).unwrap();
        assert!(parsed.tty);
        assert_eq!(parsed.command.last(), Some(&OsString::from("--tty")));
        let plain = launcher::Args::parse(["--", "bash"].map(OsString::from).to_vec()).unwrap();
        assert!(!plain.tty);
    }

    #[test]
    fn a_sandbox_that_writes_nothing_passes_no_writable_path() {
        let mut policy = SandboxPolicy::with_launcher("/bin/tern");
        policy.writable_roots.push(PathBuf::from("/opt/cache"));
        policy.writes_nothing = true;
        let args = launcher_args(&policy, Path::new("/w"), "true", Path::new("/p"), &[]);
        let parsed = launcher::Args::parse(args[1..].to_vec()).unwrap();
        assert!(parsed.writable.is_empty(), "{parsed:?}");
        assert_eq!(parsed.keep, [PathBuf::from("/w")]);
        assert!(policy.writes_summary().contains("read-only"));
    }

    #[test]
    fn settings_become_a_policy_with_resolved_roots_unless_the_sandbox_is_off() {
        let root = tempfile::tempdir().unwrap();
        let settings = SandboxSettings {
            enabled: true,
            network: true,
            writable_roots: vec![root.path().join("missing"), root.path().to_path_buf()],
            git_read_only: true,
            devices: vec!["/dev/null".into(), "/etc/passwd".into(), "/dev/../etc/hostname".into()],
            ..SandboxSettings::default()
        };
        let write_roots = [root.path().join(".")];
        let policy = SandboxPolicy::from_settings(&settings, &write_roots).unwrap().unwrap();
        let canonical = std::fs::canonicalize(root.path()).unwrap();
        assert_eq!(policy.writable_roots, [canonical.clone(), canonical]);
        assert!(policy.network && policy.git_read_only);
        assert_eq!(policy.devices, [PathBuf::from("/dev/null")], "only devices under /dev");
        assert_eq!(policy.launcher, std::env::current_exe().unwrap());

        let off = SandboxSettings {
            enabled: false,
            ..settings
        };
        assert_eq!(SandboxPolicy::from_settings(&off, &write_roots).unwrap(), None);
    }

    #[test]
    fn the_user_is_told_once_when_commands_run_outside_the_sandbox() {
        assert_eq!(notice(&SandboxSettings::default()), None);
        let off = SandboxSettings {
            enabled: false,
            ..SandboxSettings::default()
        };
        let text = notice(&off).unwrap();
        assert!(
            text.contains("off") && text.contains("asks before every command"),
            "{text}"
        );
    }

    #[test]
    fn network_flag_is_passed_only_when_allowed() {
        let mut policy = SandboxPolicy::with_launcher("/bin/tern");
        let args = |policy: &SandboxPolicy| launcher_args(policy, Path::new("/w"), "true", Path::new("/p"), &[]);
        let strict = launcher::Args::parse(args(&policy)[1..].to_vec()).unwrap();
        assert!(!strict.network);
        assert_eq!(strict.read_only, [PathBuf::from("/w/.tern")]);
        policy.network = true;
        let open = launcher::Args::parse(args(&policy)[1..].to_vec()).unwrap();
        assert!(open.network);
    }
}
