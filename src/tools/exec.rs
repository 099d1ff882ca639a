//! The `exec` tool: runs a shell command in the workspace and reports its output, exit code and duration.
//!
//! The command runs as `bash -c` with stdin closed, in a process group of its own that is ended whole on timeout,
//! interrupt, or when the future is dropped, and when the command ends with children still running (nothing outlives
//! a call). Output is streamed live to `ctx.output` (see `live`) and captured for the model with bounded memory (see
//! `capture`). Commands get an allowlisted environment, without values that look like credentials (see `env`).
//!
//! With a sandbox configured (`ExecConfig::sandbox`), every command runs in the OS sandbox (`tern_sandbox`) unless
//! the call says `unsandboxed: true`, which the approval gate always asks the user about. A sandboxed command that
//! fails with what looks like a sandbox refusal gets a note saying which restriction probably applied.
//!
//! An interrupt (`ctx.cancel`) returns `Ok` with an error result holding the output so far, not
//! `Err(ToolError::Cancelled)`: the registry turns that into a bare "interrupted" message and the output would be lost.
//! Whether a command may run at all is the approval gate's business, not this module's.

mod capture;
pub(crate) mod live;
pub(crate) mod process;
mod spill;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use self::capture::StreamText;
use self::process::{Ending, Finished, Spec};
use super::{Tool, ToolContext, ToolError};
use crate::{CommandCall, Effects, effects};
use tern_protocol::{ToolDetails, ToolKind, ToolOutput};
use tern_sandbox::{self as sandbox, SandboxPolicy};

/// How `exec` behaves; built from the user's configuration.
#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// Used when the model gives no `timeout`.
    pub default_timeout: Duration,
    /// The largest `timeout` the model may ask for.
    pub max_timeout: Duration,
    /// Variable names passed to commands even though they look secret (exact names, e.g. `NPM_TOKEN`).
    pub env_allow: Vec<String>,
    /// Characters of output the model gets (stdout and stderr together); the middle of longer output is cut.
    pub max_output_chars: usize,
    /// The OS sandbox commands run in; `None` runs them unconfined (where the kernel lacks support, or in tests that
    /// run inside a test harness, which cannot act as the launcher).
    pub sandbox: Option<SandboxPolicy>,
}

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            env_allow: Vec::new(),
            // Below the runner's 16,000-char limit for inline results, so the exit code at the end of the result is
            // never hidden behind a preview of its head.
            max_output_chars: 15_000,
            sandbox: None,
        }
    }
}

/// How one command may run, as the approval step decided (the gate's business, not this tool's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecLimits {
    /// Read-only mode: the sandbox lets the command write nothing but its private temp.
    pub writes_nothing: bool,
    /// The command runs unasked from the built-in read-only list: its git gets the neutral environment (`git_env`),
    /// so no fsmonitor, hook, pager or external diff a repository's config names runs.
    pub neutral_git: bool,
}

pub struct ExecTool {
    config: ExecConfig,
    description: String,
}

impl ExecTool {
    pub fn new(config: ExecConfig) -> Self {
        let description = format!(
            "Run a shell command with `bash -c` in the workspace (or in `working_dir` inside it) and get its stdout, \
             stderr, exit code and duration. Use it for builds, tests, git, package managers and running programs. \
             Do not use it to read, edit or search files: read_file, edit_file, write_file, grep and find_files do \
             that better than cat, head, sed, echo > or find/grep in the shell. \
             Non-interactive only: stdin is closed and there is no terminal, so pass flags such as -y or -m instead \
             of expecting a prompt; pagers are off. The command is killed after `timeout` seconds (default {}, max \
             {}). Every process it starts is killed when it ends (a server started with `&` ends with the command). \
             Output over \
             {} characters keeps its beginning and end here, and the whole of it is saved to a file you can read. \
             For a server, a watcher or an interactive program, pass `background: true`: the command starts as a live \
             process and the call returns at once with its id (p1, p2, …) and first output; read it with \
             process_output, type into it with process_input, stop it with process_stop. It runs on a terminal \
             ({}x{}; `tty: false` for plain pipes), keeps running until it exits or is stopped, and ends with the \
             session. {}{}",
            self::secs(config.default_timeout),
            self::secs(config.max_timeout),
            config.max_output_chars,
            crate::processes::DEFAULT_COLS,
            crate::processes::DEFAULT_ROWS,
            tern_process::env::note_for_model(&config.env_allow),
            config.sandbox.as_ref().map(sandbox_note).unwrap_or_default(),
        );
        Self { config, description }
    }

    fn unsandboxed_arg(value: Option<&Value>) -> Result<bool, ToolError> {
        match value {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(ToolError::Invalid(format!(
                "unsandboxed must be true or false, got {other}"
            ))),
        }
    }

    fn flag_arg(args: &Value, name: &str, default: bool) -> Result<bool, ToolError> {
        match args.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(ToolError::Invalid(format!("{name} must be true or false, got {other}"))),
        }
    }

    fn timeout_arg(&self, value: Option<&Value>) -> Result<Duration, ToolError> {
        let max = secs(self.config.max_timeout).max(1);
        let secs = match value {
            None | Some(Value::Null) => return Ok(self.config.default_timeout.min(self.config.max_timeout)),
            Some(v) => v.as_u64().or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| f.ceil() as u64)
            }),
        };
        match secs {
            Some(s) if (1..=max).contains(&s) => Ok(Duration::from_secs(s)),
            _ => Err(ToolError::Invalid(format!(
                "timeout must be a whole number of seconds from 1 to {max}, got {}",
                value.map(Value::to_string).unwrap_or_default()
            ))),
        }
    }

    fn working_dir(&self, value: Option<&Value>, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
        let dir = match value {
            None | Some(Value::Null) => return Ok(ctx.policy.root().to_path_buf()),
            Some(Value::String(s)) if s.trim().is_empty() => return Ok(ctx.policy.root().to_path_buf()),
            Some(Value::String(s)) => s,
            Some(other) => return Err(ToolError::Invalid(format!("working_dir must be a string, got {other}"))),
        };
        let resolved = ctx
            .policy
            .resolve_write(dir)
            .map_err(|e| ToolError::Invalid(format!("working_dir: {e}")))?;
        match std::fs::metadata(&resolved) {
            Ok(meta) if meta.is_dir() => Ok(resolved),
            Ok(_) => Err(ToolError::Invalid(format!("working_dir '{dir}' is not a directory"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ToolError::Invalid(format!("working_dir '{dir}' does not exist")))
            }
            Err(e) => Err(ToolError::io(dir, e)),
        }
    }

    fn report(&self, finished: Finished, timeout: Duration, sandbox: Option<(&SandboxPolicy, &Path)>) -> ToolOutput {
        let Finished {
            ending,
            stdout,
            stderr,
            duration,
            killed_leftovers,
            stored,
        } = finished;
        let mut text = String::new();
        match &ending {
            Ending::TimedOut => text.push_str(&format!(
                "Error: Command timed out after {} seconds and was killed, with every process it started. \
                 Output so far:\n",
                secs(timeout)
            )),
            Ending::Interrupted => text.push_str(&format!(
                "Error: Command interrupted by the user after {} and killed, with every process it started. \
                 Output so far:\n",
                format_duration(duration)
            )),
            Ending::Lost(e) => text.push_str(&format!(
                "Error: lost track of the command ({e}); it was killed. Output so far:\n"
            )),
            Ending::Exited(_) => {}
        }
        render_streams(
            &mut text,
            stdout.into_text(),
            stderr.into_text(),
            self.config.max_output_chars,
        );
        let exit_code = match &ending {
            Ending::Exited(status) => {
                text.push_str(&format!("{} (took {})", status_line(status), format_duration(duration)));
                status.code()
            }
            Ending::TimedOut => {
                text.push_str(&format!(
                    "If it needs longer, pass a larger `timeout` (max {} seconds).",
                    secs(self.config.max_timeout)
                ));
                None
            }
            Ending::Interrupted | Ending::Lost(_) => {
                text.push_str(&format!("(ran {})", format_duration(duration)));
                None
            }
        };
        if killed_leftovers {
            text.push_str("\nNote: processes it left running in the background were killed when it finished.");
        }
        if let Some(stored) = &stored {
            text.push('\n');
            text.push_str(&stored_note(stored));
        }
        let git = sandbox.map(|(policy, workspace)| (policy.git_changes(workspace), workspace));
        if let Some((changes, workspace)) = &git {
            text.push_str(&git_changes_note(changes, workspace));
        }
        if let Some((policy, _)) = sandbox
            && matches!(ending, Ending::Exited(_))
            && exit_code != Some(0)
            && let Some(note) = sandbox::refusal_note(&text, policy)
        {
            text.push('\n');
            text.push_str(&note);
        }
        let details = ToolDetails::Exec {
            exit_code,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            timed_out: matches!(ending, Ending::TimedOut),
            sandboxed: sandbox.is_some(),
            new_git_repos: git
                .map(|(changes, workspace)| relative(&changes.new_repos, workspace))
                .unwrap_or_default(),
            background: None,
        };
        let output = if exit_code == Some(0) {
            ToolOutput::text(text)
        } else {
            ToolOutput::error(text)
        };
        output.with_details(details)
    }
}

impl Default for ExecTool {
    fn default() -> Self {
        Self::new(ExecConfig::default())
    }
}

#[async_trait]
impl Tool for ExecTool {
    fn name(&self) -> &str {
        "exec"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Bash)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Command
    }

    fn effects(&self, args: &Value) -> Effects {
        Effects {
            command: Some(CommandCall {
                text: effects::text(args, "command").unwrap_or_default().to_string(),
                working_dir: effects::text(args, "working_dir")
                    .filter(|dir| !dir.trim().is_empty())
                    .map(str::to_string),
                unsandboxed: effects::flag(args, "unsandboxed"),
            }),
            ..Effects::default()
        }
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command line, run by `bash -c`. Pipes, &&, redirections and $(...) work."
                },
                "working_dir": {
                    "type": "string",
                    "description": "Directory to run in, relative to the workspace root (default: the root). \
                                    Must be inside the workspace."
                },
                "unsandboxed": {
                    "type": "boolean",
                    "description": "Run outside the OS sandbox; the user is always asked. Only after a sandboxed \
                                    run failed because the sandbox refused something the task needs."
                },
                "background": {
                    "type": "boolean",
                    "description": "Start it as a live process and return at once with its id (a server, a \
                                    watcher, a REPL); `timeout` does not apply."
                },
                "tty": {
                    "type": "boolean",
                    "description": "With `background`: run it on a terminal (default true), or on pipes (false)."
                },
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": secs(self.config.max_timeout).max(1),
                    "description": format!(
                        "Seconds before the command is killed (default {}).",
                        secs(self.config.default_timeout)
                    )
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        false
    }

    fn exclusive(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command = match args.get("command") {
            Some(Value::String(c)) => c.as_str(),
            Some(other) => return Err(ToolError::Invalid(format!("command must be a string, got {other}"))),
            None => return Err(ToolError::Invalid("missing required parameter 'command'".into())),
        };
        if command.trim().is_empty() {
            return Err(ToolError::Invalid("command is empty".into()));
        }
        if command.contains('\0') {
            return Err(ToolError::Invalid("command contains a NUL byte".into()));
        }
        let cwd = self.working_dir(args.get("working_dir"), ctx)?;
        let timeout = self.timeout_arg(args.get("timeout"))?;
        let unsandboxed = Self::unsandboxed_arg(args.get("unsandboxed"))?;
        // Read-only mode: a sandbox in which nothing is writable but the command's private temp.
        let read_only_policy = self
            .config
            .sandbox
            .clone()
            .filter(|_| ctx.limits.writes_nothing)
            .map(|mut policy| {
                policy.writes_nothing = true;
                policy
            });
        let sandbox = read_only_policy
            .as_ref()
            .or(self.config.sandbox.as_ref())
            .filter(|_| !unsandboxed);
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        if Self::flag_arg(&args, "background", false)? {
            let Some(starter) = &ctx.processes else {
                return Ok(ToolOutput::error(
                    "Error: background processes cannot be started here; run the command without `background`.",
                ));
            };
            let tty = Self::flag_arg(&args, "tty", true)?;
            let spec = crate::processes::Spec {
                command,
                cwd: &cwd,
                env_allow: &self.config.env_allow,
                neutral_git: ctx.limits.neutral_git,
                sandbox: sandbox.map(|policy| (policy, ctx.policy.root())),
                tty: tty.then_some((crate::processes::DEFAULT_COLS, crate::processes::DEFAULT_ROWS)),
            };
            return Ok(crate::processes::start(&spec, starter).await);
        }
        let spec = Spec {
            command,
            cwd: &cwd,
            timeout,
            env_allow: &self.config.env_allow,
            capture_cap: self.config.max_output_chars.max(64),
            sandbox: sandbox.map(|policy| (policy, ctx.policy.root())),
            full_output: ctx.full_output.as_deref(),
            neutral_git: ctx.limits.neutral_git,
        };
        match process::run(&spec, &ctx.cancel, &ctx.output).await {
            Ok(finished) => Ok(self.report(finished, timeout, sandbox.map(|p| (p, ctx.policy.root())))),
            Err(e) => Ok(ToolOutput::error(match sandbox {
                Some(policy) => format!(
                    "Error: could not start the sandbox launcher {} in '{}': {e}",
                    policy.launcher.display(),
                    ctx.policy.display(&cwd)
                ),
                None => format!("Error: could not start bash in '{}': {e}", ctx.policy.display(&cwd)),
            })
            .with_details(ToolDetails::Exec {
                exit_code: None,
                duration_ms: 0,
                timed_out: false,
                sandboxed: sandbox.is_some(),
                new_git_repos: Vec::new(),
                background: None,
            })),
        }
    }
}

/// Where the whole output is, for the model to page through.
fn stored_note(stored: &spill::Stored) -> String {
    let kept = if stored.cut {
        format!(
            "its first {} MB are saved to {} (the rest was not kept)",
            spill::MAX_STORED_BYTES / (1024 * 1024),
            stored.path.display()
        )
    } else {
        format!("it is saved whole to {}", stored.path.display())
    };
    format!(
        "[The output is {} bytes (stdout and stderr as they came) and what is shown above leaves out its middle; \
         {kept}. Use read_file on that path with offset/limit to see any part of it, or grep it.]",
        stored.total
    )
}

/// The note on what a sandboxed command changed in git (empty when nothing): repositories it created, whose hooks
/// and config git obeys outside the sandbox, so the user should look at them (from the next command on the sandbox
/// protects them); and `commondir` files it planted, which tern removed.
fn git_changes_note(changes: &sandbox::GitChanges, workspace: &Path) -> String {
    let relative = |paths: &[PathBuf]| relative(paths, workspace).join(", ");
    let mut note = String::new();
    if !changes.removed.is_empty() {
        note.push_str(&format!(
            "\nNote: this command wrote {}, which would make git take its config and hooks from another directory \
             outside the sandbox; tern removed it.",
            relative(&changes.removed)
        ));
    }
    let repos = &changes.new_repos;
    if repos.is_empty() {
        return note;
    }
    note + &format!(
        "\nNote: this command created git repositor{} at {}. Its hooks and config were writable during this command; \
         git runs hooks outside the sandbox, so they deserve a look before the next `git` the user runs. Later \
         commands cannot change them.",
        if repos.len() == 1 { "y" } else { "ies" },
        relative(repos)
    )
}

/// `paths` as the user knows them: relative to `workspace` when inside it.
fn relative(paths: &[PathBuf], workspace: &Path) -> Vec<String> {
    paths
        .iter()
        .map(|path| path.strip_prefix(workspace).unwrap_or(path).display().to_string())
        .collect()
}

/// The end of the description when commands run in the sandbox.
fn sandbox_note(policy: &SandboxPolicy) -> String {
    let network = if policy.network {
        ""
    } else {
        ", have no network (only a loopback of their own)"
    };
    format!(
        " Commands run in an OS sandbox: they can read everything but the user's credential stores (~/.ssh, \
         ~/.aws ...) and the workspace's .env files and keys, write only in {}{network}, and \
         every process they start ends with them. If a command fails because of that, call exec again with \
         `unsandboxed: true`, which asks the user.",
        policy.writes_summary()
    )
}

/// Appends stdout, then a `STDERR:` section, sharing `budget` characters between them: a short stream keeps all of
/// its text (up to half the budget) and the other gets the rest.
fn render_streams(text: &mut String, stdout: StreamText, stderr: StreamText, budget: usize) {
    let (out_len, err_len) = (stdout.char_len(), stderr.char_len());
    let (out_budget, err_budget) = if out_len + err_len <= budget as u64 {
        (budget, budget)
    } else if out_len <= err_len {
        let out_budget = usize::try_from(out_len).unwrap_or(usize::MAX).min(budget / 2);
        (out_budget, budget - out_budget)
    } else {
        let err_budget = usize::try_from(err_len).unwrap_or(usize::MAX).min(budget / 2);
        (budget - err_budget, err_budget)
    };
    if stdout.is_empty() && stderr.is_empty() {
        text.push_str("(no output)\n");
        return;
    }
    if !stdout.is_empty() {
        // Colours and cursor moves are noise to the model (and `clean` would show each on the screen).
        text.push_str(&tern_text::ansi::strip(&stdout.render(out_budget).0));
        end_line(text);
    }
    if !stderr.is_empty() {
        text.push_str("STDERR:\n");
        text.push_str(&tern_text::ansi::strip(&stderr.render(err_budget).0));
        end_line(text);
    }
}

fn end_line(text: &mut String) {
    if !text.ends_with('\n') {
        text.push('\n');
    }
}

fn status_line(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("Exit code: {code}");
    }
    let signal = status.signal().unwrap_or(0);
    let core = if status.core_dumped() { ", core dumped" } else { "" };
    match signal_name(signal) {
        Some(name) => format!("Killed by signal {signal} ({name}{core})"),
        None => format!(
            "Killed by signal {signal}{}",
            if core.is_empty() { "" } else { " (core dumped)" }
        ),
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return None,
    })
}

fn secs(d: Duration) -> u64 {
    d.as_secs()
}

fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.2}s")
    } else {
        format!("{}m {:02}s", d.as_secs() / 60, d.as_secs() % 60)
    }
}
