//! tern's language-server client: after an edit, the diagnostics of the files it wrote, from the project's language
//! server (rust-analyzer, pyright, typescript-language-server, gopls, clangd: `languages`), for the model with the
//! edit's result and a count for the pane.
//!
//! A server runs the project's code (build scripts, plugins, the go tool), so it runs inside the OS sandbox exactly as
//! a command does: `Servers` is given the session's `SandboxPolicy` and starts nothing without one. Only a program of
//! the detection list or the user's own command for a language starts (the root keeps a project's commands out unless
//! the project is trusted). Servers start on the first edit of a file of their language, one per language per session
//! (the session's subagents share them; one that stops is started again at the next edit, at most `RESTARTS` times), and
//! an edit waits for diagnostics at most a short deadline.
//!
//! Must not: decide whether an edit may run, or read what the model did not write; its text is the project's data.

mod framing;
pub mod languages;
mod report;
mod server;
mod uri;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use report::{Counts, Report, summary};
use report::{FileDiagnostics, build};
use server::{Server, Waited};
use tern_sandbox::{Launch, SandboxPolicy};

/// What the root configures (`[lsp]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspSettings {
    /// How long an edit waits for diagnostics after it wrote.
    pub deadline: Duration,
    /// The user's own server command (program and arguments) per language; an empty one turns the language off.
    pub commands: BTreeMap<String, Vec<String>>,
}

impl Default for LspSettings {
    fn default() -> Self {
        Self {
            deadline: Duration::from_millis(1500),
            commands: BTreeMap::new(),
        }
    }
}

/// Whether a server of some language would start under `settings` (one of the detection list installed, or the
/// user's own): what a warning about servers that cannot start is worth.
pub fn any_installed(settings: &LspSettings) -> bool {
    let path = tern_fs::search_path::own_path();
    languages::LANGUAGES
        .iter()
        .any(|language| command_for(settings, language, &path).is_some())
}

/// The program and arguments for `language`: the user's own, or the first detected one installed on `path` (tern's
/// `own_path`: never a program in a directory commands may write).
fn command_for(settings: &LspSettings, language: &languages::Language, path: &std::ffi::OsStr) -> Option<Vec<String>> {
    let found = |argv: &[String]| {
        let program = tern_fs::search_path::find_in(argv.first()?, path)?;
        let mut argv = argv.to_vec();
        argv[0] = program.to_string_lossy().into_owned();
        Some(argv)
    };
    match settings.commands.get(language.name) {
        Some(argv) => found(argv),
        None => language
            .detected
            .iter()
            .find_map(|argv| found(&argv.iter().map(|a| a.to_string()).collect::<Vec<_>>())),
    }
}

/// How many times a language's server that stopped is started again in one session: a crash (an out-of-memory kill,
/// a bug hit by one file) costs the session its diagnostics only after the third.
const RESTARTS: u32 = 2;

/// A language's server in the session: running (its name, and how many times it was started again), or never to
/// start (not installed, failed to start).
enum Slot {
    Running(Arc<Server>, String, u32),
    Off,
}

/// The session's language servers, shared by its agents.
pub struct Servers {
    settings: LspSettings,
    sandbox: SandboxPolicy,
    workspace: PathBuf,
    slots: Mutex<HashMap<&'static str, Slot>>,
    /// Languages whose "still starting" or failure was told already.
    told: Mutex<Vec<String>>,
}

impl Servers {
    /// The servers of a session in `workspace`, run in `sandbox`.
    pub fn new(settings: LspSettings, sandbox: SandboxPolicy, workspace: PathBuf) -> Self {
        Self {
            settings,
            sandbox,
            workspace,
            slots: Mutex::default(),
            told: Mutex::default(),
        }
    }

    /// The diagnostics of `files` (absolute path, the name the model knows it by, its new text) after an edit wrote
    /// them, waiting at most the deadline; `None` when no server covers them.
    pub async fn after_edit(&self, files: Vec<(PathBuf, String, String)>) -> Option<Report> {
        let deadline = tokio::time::Instant::now() + self.settings.deadline;
        let mut pending = Vec::new();
        for (path, shown, text) in files {
            let Some((language, id)) = languages::of(&path) else {
                continue;
            };
            let Some((server, name, restarts)) = self.server(language) else {
                continue;
            };
            pending.push((server.sync(&path, id, text), server, name, restarts, shown, path));
        }
        if pending.is_empty() {
            return None;
        }
        let mut found = Vec::new();
        let mut notes = Vec::new();
        for (waiting, server, name, restarts, shown, path) in pending {
            match server.wait(&waiting, deadline).await {
                Waited::Diagnostics(diagnostics) => found.push(FileDiagnostics {
                    path,
                    shown,
                    server: name,
                    diagnostics,
                }),
                Waited::Starting => notes.extend(self.once(
                    format!("{name} starting"),
                    format!("language server {name} still starting"),
                )),
                Waited::Late => {}
                Waited::Failed(why) => {
                    notes.extend(self.once(format!("{name} stopped {restarts}"), stopped(&name, &why, restarts)))
                }
            }
        }
        Some(build(found, notes))
    }

    /// `note` the first time something is to be said of `what`.
    fn once(&self, what: String, note: String) -> Option<String> {
        let mut told = self.told.lock().ok()?;
        if told.contains(&what) {
            return None;
        }
        told.push(what);
        Some(note)
    }

    /// The language's server (its name, how many times it was started again), started now when this is its first
    /// file, or again when it stopped and may be restarted.
    fn server(&self, language: &'static languages::Language) -> Option<(Arc<Server>, String, u32)> {
        let mut slots = self.slots.lock().ok()?;
        let slot = slots.entry(language.name).or_insert_with(|| self.start(language, 0));
        if let Slot::Running(server, name, restarts) = slot
            && server.failure().is_some()
            && *restarts < RESTARTS
        {
            tracing::info!(server = %name, "restarting a language server that stopped");
            *slot = self.start(language, *restarts + 1);
        }
        match slot {
            Slot::Running(server, _, _) if server.failure().is_some() => None,
            Slot::Running(server, name, restarts) => Some((Arc::clone(server), name.clone(), *restarts)),
            Slot::Off => None,
        }
    }

    fn start(&self, language: &languages::Language, restarts: u32) -> Slot {
        let path = tern_fs::search_path::own_path();
        let Some(argv) = command_for(&self.settings, language, &path) else {
            return Slot::Off;
        };
        let name = Path::new(&argv[0])
            .file_name()
            .map_or_else(|| argv[0].clone(), |n| n.to_string_lossy().into_owned());
        let cmd = match self.sandboxed(&argv) {
            Ok(cmd) => cmd,
            Err(e) => {
                tracing::warn!(server = %name, error = %e, "cannot launch a language server in the sandbox");
                return Slot::Off;
            }
        };
        match Server::start(&name, cmd, &self.workspace) {
            Ok(server) => Slot::Running(Arc::new(server), name, restarts),
            Err(e) => {
                tracing::warn!(server = %name, error = %e, "language server did not start");
                Slot::Off
            }
        }
    }

    /// `argv` run as an `exec` command is: through the sandbox launcher, with the scrubbed environment, in the
    /// workspace.
    fn sandboxed(&self, argv: &[String]) -> std::io::Result<tokio::process::Command> {
        let script = format!(
            "exec {}",
            shlex::try_join(argv.iter().map(String::as_str)).map_err(std::io::Error::other)?
        );
        let launcher = match tern_sandbox::command(&self.sandbox, &self.workspace, &script)? {
            // A long-lived child with piped stdin: a launcher of its own that joins the holder's namespaces.
            Launch::Held { fallback, .. } => fallback,
            Launch::Spawn(cmd) => cmd,
        };
        let mut cmd = tokio::process::Command::from(launcher);
        cmd.env_clear()
            .envs(tern_process::env::child_env(&[]))
            .current_dir(&self.workspace);
        Ok(cmd)
    }
}

/// What the model is told when server `name` stopped (`restarts` times started again before).
fn stopped(name: &str, why: &str, restarts: u32) -> String {
    if restarts < RESTARTS {
        format!("language server {name} stopped: {why}; it is started again at the next edit")
    } else {
        format!("language server {name} stopped: {why}; it is not started again in this session")
    }
}
