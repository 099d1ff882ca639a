//! The Linux OS sandbox every `exec` command runs in (unless the user approved running one outside it): the floor
//! under the approval gate, so that a gate mistake cannot become a disaster.
//!
//! tern re-executes itself as the launcher: `tern __sandbox <policy> -- bash -c CMD` (see `launcher`). The launcher
//! enters new user, mount, PID and (unless network is allowed) network namespaces, and forks the PID namespace's
//! init, which mounts a fresh `/proc`, brings loopback up, optionally makes `.git` read-only, applies Landlock (read
//! and execute everywhere; write only to the workspace, the temp directory, configured roots and a few device
//! files), drops every capability, and runs the command. When the command's main process ends, init exits with its
//! status and the kernel ends everything else in the namespace: `setsid` and double-forked daemons included.
//!
//! This module builds the launcher command (`command`), checks once whether the kernel supports all this (`probe`),
//! and recognises output that looks like a sandbox refusal (`refusal_note`). It decides nothing about whether a
//! command may run: that is the approval gate's business.

mod landlock_rules;
pub mod launcher;
mod namespaces;
mod probe;
mod refusal;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use self::probe::{Support, probe};
pub use self::refusal::refusal_note;
use crate::config::SandboxSettings;

/// The first argument that makes `tern` act as the sandbox launcher instead of the assistant.
pub const LAUNCHER_ARG: &str = "__sandbox";

/// What a sandboxed command may do beyond reading and executing everywhere.
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
    /// Directories commands cannot see at all: tern's own configuration (which may hold a key) and data (sessions,
    /// logs, stored results). Reading is otherwise allowed everywhere.
    pub hidden: Vec<PathBuf>,
    /// Nothing is writable but the temp directory (read-only mode).
    pub writes_nothing: bool,
}

impl SandboxPolicy {
    /// The strictest policy, launched by the running executable.
    pub fn current_exe() -> std::io::Result<Self> {
        Ok(Self::with_launcher(std::env::current_exe()?))
    }

    /// The strictest policy (no extra roots, no network, `.git` writable like the rest of the workspace).
    pub fn with_launcher(launcher: impl Into<PathBuf>) -> Self {
        Self {
            launcher: launcher.into(),
            writable_roots: Vec::new(),
            network: false,
            git_read_only: false,
            hidden: Vec::new(),
            writes_nothing: false,
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
        let config = crate::config::user_config_path().and_then(|file| file.parent().map(Path::to_path_buf));
        policy.hidden = config
            .into_iter()
            .chain([crate::config::data_dir()])
            .filter_map(|dir| std::fs::canonicalize(dir).ok())
            .collect();
        Ok(Some(policy))
    }

    /// Where commands may write, for the model: `the workspace and the temp directory (.tern is read-only)`.
    pub fn writes_summary(&self) -> String {
        let places = if self.writable_roots.is_empty() {
            "the workspace and the temp directory"
        } else {
            "the workspace, the temp directory and the configured writable roots"
        };
        let read_only = if self.git_read_only {
            ".git and .tern are"
        } else {
            ".tern is"
        };
        format!("{places} ({read_only} read-only)")
    }

    /// Every directory a command in `workspace` may write to, in the order given to the launcher.
    pub fn writable(&self, workspace: &Path) -> Vec<PathBuf> {
        if self.writes_nothing {
            return vec![temp_dir()];
        }
        let mut roots = vec![workspace.to_path_buf(), temp_dir()];
        roots.extend(self.writable_roots.iter().cloned());
        roots
    }
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

/// The temp directory (`$TMPDIR`, else `/tmp`), resolved so Landlock sees the real directory.
fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir();
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// The launcher command that runs `bash -c <script>` inside the sandbox for a command in `workspace`. The caller sets
/// the working directory, stdio, environment and process group, exactly as for an unsandboxed `bash`.
pub fn command(policy: &SandboxPolicy, workspace: &Path, script: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(&policy.launcher);
    cmd.args(launcher_args(policy, workspace, script));
    cmd
}

/// The arguments after the launcher's path (see `launcher::Args::parse` for their meaning).
fn launcher_args(policy: &SandboxPolicy, workspace: &Path, script: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![LAUNCHER_ARG.into()];
    for root in policy.writable(workspace) {
        args.push("--write".into());
        args.push(root.into_os_string());
    }
    // `.tern/` holds the project's own tern settings (rules, mode, MCP servers): a command must not loosen the next
    // session of a trusted project. The edit tools ask before touching it; here it is simply read-only.
    args.push("--read-only".into());
    args.push(workspace.join(".tern").into_os_string());
    if policy.git_read_only {
        args.push("--read-only".into());
        args.push(workspace.join(".git").into_os_string());
    }
    // A workspace inside a hidden directory stays visible: hiding it would hide the work.
    for dir in policy.hidden.iter().filter(|dir| !workspace.starts_with(dir)) {
        args.push("--hide".into());
        args.push(dir.into());
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
        let mut policy = SandboxPolicy::with_launcher("/bin/tern");
        policy.writable_roots.push(PathBuf::from("/opt/cache dir"));
        policy.git_read_only = true;
        let args = launcher_args(&policy, Path::new("/w s"), "echo -- --network");
        assert_eq!(args[0], OsString::from(LAUNCHER_ARG));
        let parsed = launcher::Args::parse(args[1..].to_vec()).unwrap();
        assert_eq!(
            parsed.writable,
            [PathBuf::from("/w s"), temp_dir(), PathBuf::from("/opt/cache dir")]
        );
        assert_eq!(
            parsed.read_only,
            [PathBuf::from("/w s/.tern"), PathBuf::from("/w s/.git")]
        );
        assert!(!parsed.network);
        assert_eq!(
            parsed.command,
            [OsString::from("bash"), "-c".into(), "echo -- --network".into()]
        );
    }

    #[test]
    fn settings_become_a_policy_with_resolved_roots_unless_the_sandbox_is_off() {
        let root = tempfile::tempdir().unwrap();
        let settings = SandboxSettings {
            enabled: true,
            network: true,
            writable_roots: vec![root.path().join("missing"), root.path().to_path_buf()],
            git_read_only: true,
        };
        let write_roots = [root.path().join(".")];
        let policy = SandboxPolicy::from_settings(&settings, &write_roots).unwrap().unwrap();
        let canonical = std::fs::canonicalize(root.path()).unwrap();
        assert_eq!(policy.writable_roots, [canonical.clone(), canonical]);
        assert!(policy.network && policy.git_read_only);
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
        let strict = launcher::Args::parse(launcher_args(&policy, Path::new("/w"), "true")[1..].to_vec()).unwrap();
        assert!(!strict.network);
        assert_eq!(strict.read_only, [PathBuf::from("/w/.tern")]);
        policy.network = true;
        let open = launcher::Args::parse(launcher_args(&policy, Path::new("/w"), "true")[1..].to_vec()).unwrap();
        assert!(open.network);
    }
}
