//! User hooks: commands from the user's config (or a trusted project's) run at points of a session, with Claude
//! Code's contract, so a Claude Code user's scripts work unchanged:
//!
//! | event                | when                                   | matcher over      | may                                 |
//! |----------------------|----------------------------------------|-------------------|-------------------------------------|
//! | `PreToolUse`         | a prepared call reaches the gate       | tool name         | allow, ask or deny; change the input |
//! | `PermissionRequest`  | the user is about to be asked          | tool name         | allow or deny in the user's place   |
//! | `PostToolUse`        | a call succeeded                       | tool name         | add feedback, or flag it            |
//! | `PostToolUseFailure` | a call failed                          | tool name         | add feedback                        |
//! | `UserPromptSubmit`   | the user sent a prompt                 | –                 | block the prompt, or add context    |
//! | `SessionStart`       | the session starts, resumes or clears  | start source      | add context                         |
//! | `SessionEnd`         | the conversation is cleared, tern ends | end reason        | –                                   |
//! | `Stop`               | a turn ends with the model's answer    | –                 | keep the turn going (3 times at most) |
//! | `SubagentStart`      | a subagent is given its task           | subagent type     | add context                         |
//! | `SubagentStop`       | a subagent's task ends with an answer  | subagent type     | keep it going (3 times at most)     |
//! | `PreCompact`         | before the conversation is summarised  | `manual`, `auto`  | block the summary                   |
//! | `Notification`       | approval or request for input waits    | notification type | –                                   |
//!
//! A call is shown to hooks as the Claude Code call it stands for (`call.rs`): `exec` as `Bash` with
//! `tool_input.command`, an edit as `Edit` with an absolute `tool_input.file_path`, a patch once per file, an MCP tool as
//! `mcp__SERVER__TOOL`; a matcher (read as Claude Code reads it: exact names, or a regex that may match anywhere) is
//! tried on Claude Code's name and tern's.
//!
//! Each hook runs with `sh -c` in the workspace, outside the OS sandbox (it is the user's own program, and hooks that
//! log to the user's files or notify through the desktop's sockets must keep working), with the environment commands
//! get (no API keys: `tern_process::env`) and the neutral git environment (`tern_process::git_env`: git in a hook starts
//! no fsmonitor, hook or pager a command planted) plus `TERN_PROJECT_DIR` and `CLAUDE_PROJECT_DIR`, in a
//! process group of its own that is killed at its timeout (default 60 s). It gets one JSON object on stdin:
//! `hook_event_name`, `session_id`, `transcript_path`, `cwd`, and per event `tool_name`, `tool_input`, `tool_use_id`,
//! `permission_mode` (PreToolUse, in Claude Code's words), `tool_response` (PostToolUse, in the shape Claude Code gives
//! its tools' results), `error` (PostToolUseFailure), `prompt` (UserPromptSubmit), `source` (SessionStart), `reason`
//! (SessionEnd), `stop_hook_active` (Stop, SubagentStop), `trigger` and `custom_instructions` (PreCompact),
//! `notification_type` and `message` (Notification).
//!
//! What it answers (`reply.rs`): exit 0 is fine, and stdout may be JSON: `decision: "block"` with `reason`;
//! `hookSpecificOutput.permissionDecision` `allow`/`ask`/`deny` with `permissionDecisionReason` and `updatedInput`
//! (PreToolUse; the old `decision: "approve"`/`"block"` too); `hookSpecificOutput.additionalContext`; `systemMessage`
//! (shown to the user); `continue: false` with `stopReason` (stops the agent: the turn ends). Plain stdout is context
//! for UserPromptSubmit and SessionStart and ignored elsewhere. Exit 2 blocks, with stderr as the reason. Any other
//! exit, a crash or a timeout is shown to the user and otherwise ignored: the session goes on as if the hook were not
//! there.
//!
//! A hook's `allow` never overrides the gate's own refusal (read-only mode, deny rules), and never skips the prompt
//! for a call that would leave the floor under the gate (`gate.rs`): a command run outside the OS sandbox, a command
//! a deny rule may block, an edit in `.git/` or `.tern/`, or an edit outside the workspace still asks. An
//! `updatedInput` is turned back into the tool's arguments, prepared (cast, validated) and gated again, so what runs is
//! what was gated and what the prompt shows. A hook's input carries what the model wrote (arguments, results): a
//! script must treat it as untrusted data, never as code.
//!
//! Every hook that decided something, added context or failed is told to the user as a notice (recorded in the
//! session log like other events). Everything a hook prints is masked for secrets before it goes anywhere.

mod call;
mod gate;
mod points;
mod reply;
mod run;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// The subagent type SubagentStart and SubagentStop hooks are told, as Claude Code names its default subagent.
pub(crate) const SUBAGENT_TYPE: &str = "general-purpose";

/// How many times a turn's Stop hooks may keep it going.
pub const MAX_STOP_CONTINUES: u32 = 3;
pub(crate) use call::HookCall;
pub(crate) use gate::{decide, firm_question};
use reply::{Outcome, Reply};
pub(crate) use reply::{Permission, PreDecision};

/// Where the hook points tell the user what a hook did (the agent sends it as a notice).
pub(crate) type Notify<'a> = dyn Fn(String) + Sync + 'a;

/// The points of a session where hooks run, with Claude Code's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    UserPromptSubmit,
    SessionStart,
    SessionEnd,
    Stop,
    SubagentStart,
    SubagentStop,
    PreCompact,
    Notification,
}

impl HookEvent {
    /// Every event, in the order config files list them.
    pub const ALL: [HookEvent; 12] = [
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::UserPromptSubmit,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Stop,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::Notification,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }

    /// Whether the event has something a matcher can select on: a tool name, a start source or an end reason, what
    /// started a compaction, a notification's type, a subagent's type. (Claude Code ignores a matcher on the others;
    /// tern says so in the config's check.)
    pub fn has_matcher(self) -> bool {
        !matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }

    /// Whether the event is about one tool call, so its matcher selects tools by name.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PermissionRequest
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
        )
    }
}

/// What a hook's matcher selects, as Claude Code reads it: absent, `""` or `*` is everything; a matcher of only
/// letters, digits, `_`, `-`, spaces, `,` and `|` is a list of exact names (`Edit|Write`, `Edit, Write`); anything
/// else is a regular expression that may match anywhere in the name (`Edit.*` also matches `NotebookEdit`; `^Edit$`
/// is one tool).
#[derive(Debug, Clone)]
enum Matcher {
    All,
    Names(Vec<String>),
    Pattern(regex::Regex),
}

impl Matcher {
    fn new(text: Option<&str>) -> Result<Self, regex::Error> {
        let text = text.map(str::trim).unwrap_or_default();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if plain {
            let names = text
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            return Ok(Matcher::Names(names));
        }
        regex::Regex::new(text).map(Matcher::Pattern)
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == name),
            Matcher::Pattern(pattern) => pattern.is_match(name),
        }
    }
}

/// One configured hook.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: HookEvent,
    matcher: Matcher,
    pub command: String,
    pub timeout: Duration,
}

impl Hook {
    /// `matcher` as Claude Code reads it (`Matcher`); `None`, `""` or `*` matches everything.
    pub fn new(
        event: HookEvent,
        matcher: Option<&str>,
        command: impl Into<String>,
        timeout: Duration,
    ) -> Result<Self, regex::Error> {
        Ok(Self {
            event,
            matcher: Matcher::new(matcher)?,
            command: command.into(),
            timeout,
        })
    }

    /// Whether the hook is for `subject` (a tool's name as Claude Code or tern calls it, a start source, ...).
    pub fn matches(&self, subject: &str) -> bool {
        self.matcher.matches(subject)
    }

    /// How a notice names the hook: its command on one line, shortened.
    fn label(&self) -> String {
        let line: String = self.command.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = tern_secrets::mask(&line).into_owned();
        let short: String = line.chars().take(60).collect();
        if short.len() < line.len() {
            format!("`{short}…`")
        } else {
            format!("`{short}`")
        }
    }
}

/// The hooks of one session and what every hook is told about it. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    list: Arc<[Hook]>,
    session_id: String,
    cwd: PathBuf,
    transcript_path: Option<PathBuf>,
    /// Secret-looking variables the user lets commands (and so hooks) see.
    env_allow: Vec<String>,
}

impl Hooks {
    /// The hooks, for a session in `workspace` (where they run).
    pub fn new(list: Vec<Hook>, session_id: &str, workspace: &Path) -> Self {
        Self {
            list: list.into(),
            session_id: session_id.to_string(),
            cwd: workspace.to_path_buf(),
            transcript_path: None,
            env_allow: Vec::new(),
        }
    }

    /// The session log, named to hooks as `transcript_path`.
    pub fn with_transcript(mut self, path: Option<&Path>) -> Self {
        self.transcript_path = path.map(Path::to_path_buf);
        self
    }

    /// Secret-looking variables hooks may see, as commands may (`exec.env_allow`).
    pub fn with_env_allow(mut self, allow: Vec<String>) -> Self {
        self.env_allow = allow;
        self
    }

    /// The hooks a subagent runs: the tool-call hooks (PreToolUse, PermissionRequest, PostToolUse,
    /// PostToolUseFailure), so the user's rules on calls hold for every call, and SubagentStart and SubagentStop at
    /// its start and end; session, prompt and stop hooks stay with the session the user drives.
    pub(crate) fn for_subagent(&self) -> Hooks {
        let list: Vec<Hook> = self
            .list
            .iter()
            .filter(|h| {
                h.event.is_tool_event() || matches!(h.event, HookEvent::SubagentStart | HookEvent::SubagentStop)
            })
            .cloned()
            .collect();
        Hooks {
            list: list.into(),
            ..self.clone()
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether any hook of `event` matches `subject` (a tool name, a start source).
    pub(crate) fn wants(&self, event: HookEvent, subject: &str) -> bool {
        self.list.iter().any(|h| h.event == event && h.matches(subject))
    }

    /// Runs every hook of `event` matching one of `subjects` (a tool's names; none for an event without a matcher),
    /// at once, with `fields` added to the common input. Returns each hook with what it answered, in config order.
    async fn run_all(
        &self,
        event: HookEvent,
        subjects: &[&str],
        fields: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Vec<(&Hook, Outcome)> {
        let hooks: Vec<&Hook> = self
            .list
            .iter()
            .filter(|h| h.event == event && (subjects.is_empty() || subjects.iter().any(|s| h.matches(s))))
            .collect();
        if hooks.is_empty() {
            return Vec::new();
        }
        let mut input = json!({
            "hook_event_name": event.as_str(),
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": self.cwd,
        });
        if let Some(object) = input.as_object_mut() {
            object.extend(fields);
        }
        // A key that reached a prompt, an argument or a result goes no further.
        let stdin = tern_secrets::mask(&input.to_string()).into_owned().into_bytes();
        let env = self.env();
        let runs = hooks.iter().map(|hook| {
            let (stdin, env) = (&stdin, &env);
            async move {
                let ran = run::run(&hook.command, stdin, &self.cwd, env, hook.timeout, cancel).await;
                (*hook, reply::read(event, &ran))
            }
        });
        join_all(runs).await
    }

    fn env(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let mut vars = tern_process::env::child_env(&self.env_allow);
        // A hook runs outside the sandbox, and its `git status` must not start what a command planted in the
        // workspace's repositories (fsmonitor, hooks, pager).
        tern_process::git_env::neutralise(&mut vars);
        // Nor a program, library or module a command planted in a directory it may write on PATH, LD_LIBRARY_PATH,
        // PYTHONPATH, ... (its `sh` included).
        tern_fs::search_path::own_env(&mut vars);
        let mut env: Vec<_> = vars.into_iter().collect();
        for name in ["TERN_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
            env.push((name.into(), self.cwd.clone().into_os_string()));
        }
        env
    }
}

/// Tells the user about one hook's answer, when there is something to tell, and hands back its reply.
fn told(event: HookEvent, hook: &Hook, outcome: Outcome, notify: &Notify<'_>) -> Option<Reply> {
    let name = format!("{} hook {}", event.as_str(), hook.label());
    match outcome {
        Outcome::Cancelled => None,
        Outcome::Failed(why) => {
            notify(format!("{name} failed ({why}); ignored"));
            None
        }
        Outcome::Replied(reply) => {
            if let Some(message) = &reply.system_message {
                notify(format!("{name}: {message}"));
            }
            if let Some(problem) = &reply.problem {
                notify(format!("{name}: {problem}"));
            }
            Some(reply)
        }
    }
}

#[cfg(test)]
mod tests;
