//! The `[hooks]` section: user commands run at points of a session (see `crate::hooks` for what each gets and may
//! answer). Written as arrays of tables, one per hook, or one per matcher with its handlers as Claude Code's
//! `settings.json` groups them:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "Bash|mcp__github__.*"   # Claude Code's tool names (or tern's); absent, "" or "*" = every tool
//! command = "~/.claude/hooks/check-call.sh"
//! timeout = 60                        # seconds; default 60, at most 600 (`timeout_sec` is the same)
//!
//! [[hooks.PostToolUse]]
//! matcher = "Edit|Write"
//! hooks = [{ type = "command", command = "jq -r .tool_input.file_path | xargs prettier --write" }]
//! ```
//!
//! Events and keys are Claude Code's, so its hooks carry over: every event tern has a point for is accepted, a
//! handler of another `type` than `command` (`prompt`, `http`, `agent`, `mcp_tool`) is skipped with a warning, and a
//! tool matcher that can match no tool tern has is a warning. Hooks run programs, so an untrusted project's hooks are
//! dropped with the other loosening settings (`ConfigFile::without_loosening`) and never run.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;
use crate::hooks::{Hook, HookEvent};

/// How long a hook may run when its entry does not say: Claude Code's classic default.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a hook may be given.
pub const MAX_HOOK_TIMEOUT_SECS: u64 = 600;

/// The names a tool matcher may meet: Claude Code's for tern's tools (`tern_tools::ClaudeTool`), as they appear in
/// published hooks, and tern's own. MCP tools are `mcp__SERVER__TOOL`.
const TOOL_NAMES: &[&str] = &[
    "Bash",
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "WebSearch",
    "Task",
    "Agent",
    "TodoWrite",
    "NotebookEdit",
    "exec",
    "read_file",
    "write_file",
    "edit_file",
    "apply_patch",
    "find_files",
    "grep",
    "list_dir",
    "web_fetch",
    "web_search",
    "spawn",
    "todo_write",
    "notebook_edit",
];

/// `[hooks]` as written: the entries of each event, in the order the files give them.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    #[serde(rename = "PreToolUse", default)]
    pub pre_tool_use: Vec<HookEntry>,
    #[serde(rename = "PermissionRequest", default)]
    pub permission_request: Vec<HookEntry>,
    #[serde(rename = "PostToolUse", default)]
    pub post_tool_use: Vec<HookEntry>,
    #[serde(rename = "PostToolUseFailure", default)]
    pub post_tool_use_failure: Vec<HookEntry>,
    #[serde(rename = "UserPromptSubmit", default)]
    pub user_prompt_submit: Vec<HookEntry>,
    #[serde(rename = "SessionStart", default)]
    pub session_start: Vec<HookEntry>,
    #[serde(rename = "SessionEnd", default)]
    pub session_end: Vec<HookEntry>,
    #[serde(rename = "Stop", default)]
    pub stop: Vec<HookEntry>,
    #[serde(rename = "SubagentStart", default)]
    pub subagent_start: Vec<HookEntry>,
    #[serde(rename = "SubagentStop", default)]
    pub subagent_stop: Vec<HookEntry>,
    #[serde(rename = "PreCompact", default)]
    pub pre_compact: Vec<HookEntry>,
    #[serde(rename = "Notification", default)]
    pub notification: Vec<HookEntry>,
}

/// One hook as written: a command, or (Claude Code's shape) a matcher with a list of handlers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// What the hooks are for: tool names (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure), the start
    /// source (SessionStart: `startup`, `resume`, `clear`), the end reason (SessionEnd), the trigger (PreCompact:
    /// `manual`, `auto`), the notification's type, the subagent's type (SubagentStart, SubagentStop). Read as Claude
    /// Code reads it.
    pub matcher: Option<String>,
    /// Run with `sh -c` in the workspace.
    pub command: Option<String>,
    /// Claude Code's handler type; only `command` runs.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Seconds (Claude Code's key).
    pub timeout: Option<u64>,
    /// Seconds (tern's earlier key).
    pub timeout_sec: Option<u64>,
    /// Handlers under one matcher, as Claude Code's `settings.json` writes them.
    #[serde(default)]
    pub hooks: Vec<Handler>,
}

/// One handler of a matcher group.
#[derive(Debug, Clone, Deserialize)]
pub struct Handler {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    pub timeout: Option<u64>,
    /// Claude Code's other keys (`statusMessage`, `async`, `if`, ...), accepted and not used.
    #[serde(flatten)]
    pub other: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

/// The hooks of a config, and what in it tern does not do, for warnings.
#[derive(Debug, Default)]
pub struct Compiled {
    pub hooks: Vec<Hook>,
    pub warnings: Vec<String>,
}

impl HooksFile {
    pub fn is_empty(&self) -> bool {
        self.lists().iter().all(|(_, list)| list.is_empty())
    }

    /// A later layer's hooks run after this one's.
    pub fn extend(&mut self, other: HooksFile) {
        for (event, theirs) in HookEvent::ALL.into_iter().zip(other.into_lists()) {
            self.list_mut(event).extend(theirs);
        }
    }

    fn lists(&self) -> [(HookEvent, &Vec<HookEntry>); 12] {
        [
            (HookEvent::PreToolUse, &self.pre_tool_use),
            (HookEvent::PermissionRequest, &self.permission_request),
            (HookEvent::PostToolUse, &self.post_tool_use),
            (HookEvent::PostToolUseFailure, &self.post_tool_use_failure),
            (HookEvent::UserPromptSubmit, &self.user_prompt_submit),
            (HookEvent::SessionStart, &self.session_start),
            (HookEvent::SessionEnd, &self.session_end),
            (HookEvent::Stop, &self.stop),
            (HookEvent::SubagentStart, &self.subagent_start),
            (HookEvent::SubagentStop, &self.subagent_stop),
            (HookEvent::PreCompact, &self.pre_compact),
            (HookEvent::Notification, &self.notification),
        ]
    }

    /// The entries of `event`.
    pub fn list_mut(&mut self, event: HookEvent) -> &mut Vec<HookEntry> {
        match event {
            HookEvent::PreToolUse => &mut self.pre_tool_use,
            HookEvent::PermissionRequest => &mut self.permission_request,
            HookEvent::PostToolUse => &mut self.post_tool_use,
            HookEvent::PostToolUseFailure => &mut self.post_tool_use_failure,
            HookEvent::UserPromptSubmit => &mut self.user_prompt_submit,
            HookEvent::SessionStart => &mut self.session_start,
            HookEvent::SessionEnd => &mut self.session_end,
            HookEvent::Stop => &mut self.stop,
            HookEvent::SubagentStart => &mut self.subagent_start,
            HookEvent::SubagentStop => &mut self.subagent_stop,
            HookEvent::PreCompact => &mut self.pre_compact,
            HookEvent::Notification => &mut self.notification,
        }
    }

    /// The entries of each event, in `HookEvent::ALL`'s order.
    fn into_lists(self) -> [Vec<HookEntry>; 12] {
        [
            self.pre_tool_use,
            self.permission_request,
            self.post_tool_use,
            self.post_tool_use_failure,
            self.user_prompt_submit,
            self.session_start,
            self.session_end,
            self.stop,
            self.subagent_start,
            self.subagent_stop,
            self.pre_compact,
            self.notification,
        ]
    }

    /// The hooks, checked: each has a command, a valid matcher and a timeout in range. Errors name the entry
    /// (`hooks.PreToolUse[1].matcher`); what tern does not do is a warning.
    pub fn compile(&self) -> Result<Compiled, ConfigError> {
        let mut out = Compiled::default();
        for (event, list) in self.lists() {
            for (i, entry) in list.iter().enumerate() {
                let at = format!("hooks.{}[{i}]", event.as_str());
                let matcher = entry
                    .matcher
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty() && *m != "*");
                if let Some(matcher) = matcher {
                    if !event.has_matcher() {
                        out.warnings.push(format!(
                            "{at}.matcher: {} hooks have nothing to match, so it is ignored (as Claude Code does)",
                            event.as_str()
                        ));
                    } else if event.is_tool_event()
                        && let Ok(hook) = Hook::new(event, Some(matcher), "", DEFAULT_HOOK_TIMEOUT)
                        && !matcher.contains("mcp__")
                        && !TOOL_NAMES.iter().any(|name| hook.matches(name))
                    {
                        out.warnings.push(format!(
                            "{at}.matcher {matcher:?} matches no tool tern has (tools are named as in Claude Code: \
                             Bash, Read, Write, Edit, MultiEdit, Glob, Grep, LS, WebFetch, WebSearch, Task, \
                             TodoWrite, NotebookEdit, mcp__SERVER__TOOL), so the hook never runs"
                        ));
                    }
                }
                let matcher = matcher.filter(|_| event.has_matcher());
                let handlers = entry_handlers(entry, &at)?;
                for Written {
                    at: where_,
                    kind,
                    command,
                    timeout,
                } in handlers
                {
                    if kind != "command" {
                        out.warnings.push(format!(
                            "{where_}: a hook of type {kind:?} is not something tern runs (only \"command\"); skipped"
                        ));
                        continue;
                    }
                    let command = command.unwrap_or_default();
                    if command.trim().is_empty() {
                        return Err(ConfigError::Invalid(format!("{where_}.command: empty")));
                    }
                    let timeout = match timeout {
                        None => DEFAULT_HOOK_TIMEOUT,
                        Some(secs @ 1..=MAX_HOOK_TIMEOUT_SECS) => Duration::from_secs(secs),
                        Some(secs) => {
                            return Err(ConfigError::Invalid(format!(
                                "{where_}.timeout = {secs}: expected 1 to {MAX_HOOK_TIMEOUT_SECS} seconds"
                            )));
                        }
                    };
                    let hook = Hook::new(event, matcher, command, timeout)
                        .map_err(|e| ConfigError::Invalid(format!("{at}.matcher: {e}")))?;
                    out.hooks.push(hook);
                }
            }
        }
        Ok(out)
    }
}

/// One handler as written.
struct Written {
    /// Where it is, for messages (`hooks.PreToolUse[0].hooks[1]`).
    at: String,
    kind: String,
    command: Option<String>,
    /// Seconds.
    timeout: Option<u64>,
}

/// An entry's handlers. An entry is one handler itself, or a group of them under `hooks`, not both.
fn entry_handlers(entry: &HookEntry, at: &str) -> Result<Vec<Written>, ConfigError> {
    let kind = |k: &Option<String>| k.clone().unwrap_or_else(|| "command".into());
    if entry.hooks.is_empty() {
        if entry.timeout.is_some() && entry.timeout_sec.is_some() {
            return Err(ConfigError::Invalid(format!(
                "{at}: timeout and timeout_sec both given; keep one"
            )));
        }
        return Ok(vec![Written {
            at: at.to_string(),
            kind: kind(&entry.kind),
            command: entry.command.clone(),
            timeout: entry.timeout.or(entry.timeout_sec),
        }]);
    }
    if entry.command.is_some() || entry.kind.is_some() || entry.timeout.is_some() || entry.timeout_sec.is_some() {
        return Err(ConfigError::Invalid(format!(
            "{at}: give either a command or a list of hooks under the matcher, not both"
        )));
    }
    Ok(entry
        .hooks
        .iter()
        .enumerate()
        .map(|(k, h)| Written {
            at: format!("{at}.hooks[{k}]"),
            kind: kind(&h.kind),
            command: h.command.clone(),
            timeout: h.timeout,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::ConfigFile;

    fn parse(text: &str) -> ConfigFile {
        ConfigFile::parse(text, Path::new("c.toml")).unwrap()
    }

    #[test]
    fn entries_compile_with_defaults_and_claude_code_matchers() {
        let file = parse(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash|mcp__github__.*\"\ncommand = \"a\"\n\
             [[hooks.PreToolUse]]\ncommand = \"b\"\ntimeout_sec = 3\n\
             [[hooks.Stop]]\nmatcher = \"*\"\ncommand = \"c\"\n",
        );
        let hooks = file.hooks.compile().unwrap().hooks;
        assert_eq!(hooks.len(), 3);
        assert_eq!(hooks[0].timeout, DEFAULT_HOOK_TIMEOUT);
        assert!(hooks[0].matches("Bash") && hooks[0].matches("mcp__github__create_issue"));
        assert!(!hooks[0].matches("Read"));
        // A regex may match anywhere in the name, as in Claude Code (`^Bash$` is one tool).
        assert!(hooks[0].matches("Bash2"));
        assert!(hooks[1].matches("anything"));
        assert_eq!(hooks[1].timeout, Duration::from_secs(3));
        assert_eq!(hooks[2].event, HookEvent::Stop);
    }

    /// Claude Code's `settings.json` shape carries over as it is: events, matcher groups with handlers, `type` and
    /// `timeout`; what tern does not run is a warning, not an error that keeps tern from starting.
    #[test]
    fn claude_code_hooks_carry_over_with_warnings_for_what_tern_does_not_do() {
        let file = parse(
            "[[hooks.PostToolUse]]\nmatcher = \"Edit|Write\"\n\
             hooks = [{ type = \"command\", command = \"fmt\", timeout = 30, statusMessage = \"formatting\" },\
                      { type = \"prompt\", prompt = \"is it ok?\" }]\n\
             [[hooks.SessionEnd]]\ncommand = \"bye\"\n\
             [[hooks.PreCompact]]\nmatcher = \"manual\"\ncommand = \"keep\"\n\
             [[hooks.Notification]]\ncommand = \"notify-send tern\"\n\
             [[hooks.SubagentStop]]\ncommand = \"check\"\n\
             [[hooks.PostToolUseFailure]]\nmatcher = \"Bash\"\ntype = \"command\"\ncommand = \"log\"\n\
             [[hooks.PreToolUse]]\nmatcher = \"Bsh\"\ncommand = \"typo\"\n\
             [[hooks.UserPromptSubmit]]\nmatcher = \"x\"\ncommand = \"p\"\n",
        );
        let compiled = file.hooks.compile().unwrap();
        let hooks: Vec<(HookEvent, &str, u64)> = compiled
            .hooks
            .iter()
            .map(|h| (h.event, h.command.as_str(), h.timeout.as_secs()))
            .collect();
        assert_eq!(
            hooks,
            [
                (HookEvent::PreToolUse, "typo", 60),
                (HookEvent::PostToolUse, "fmt", 30),
                (HookEvent::PostToolUseFailure, "log", 60),
                (HookEvent::UserPromptSubmit, "p", 60),
                (HookEvent::SessionEnd, "bye", 60),
                (HookEvent::SubagentStop, "check", 60),
                (HookEvent::PreCompact, "keep", 60),
                (HookEvent::Notification, "notify-send tern", 60),
            ]
        );
        let warnings = compiled.warnings.join("\n");
        assert_eq!(compiled.warnings.len(), 3, "{warnings}");
        assert!(warnings.contains("\"Bsh\" matches no tool"), "{warnings}");
        assert!(
            warnings.contains("hooks.PostToolUse[0].hooks[1]: a hook of type \"prompt\""),
            "{warnings}"
        );
        assert!(warnings.contains("hooks.UserPromptSubmit[0].matcher"), "{warnings}");
        // The matcher on an event without one is ignored: the hook runs for every prompt.
        assert!(compiled.hooks[3].matches("anything"));
    }

    #[test]
    fn bad_entries_name_the_field() {
        let cases = [
            (
                "[[hooks.PreToolUse]]\nmatcher = \"(\"\ncommand = \"a\"\n",
                "hooks.PreToolUse[0].matcher",
            ),
            (
                "[[hooks.PostToolUse]]\ncommand = \" \"\n",
                "hooks.PostToolUse[0].command",
            ),
            (
                "[[hooks.SessionStart]]\ncommand = \"a\"\ntimeout_sec = 0\n",
                "hooks.SessionStart[0].timeout",
            ),
            (
                "[[hooks.SessionStart]]\ncommand = \"a\"\ntimeout = 601\n",
                "timeout = 601",
            ),
            (
                "[[hooks.Stop]]\ncommand = \"a\"\nhooks = [{ command = \"b\" }]\n",
                "not both",
            ),
            (
                "[[hooks.Stop]]\nhooks = [{ type = \"command\" }]\n",
                "hooks.Stop[0].hooks[0].command",
            ),
        ];
        for (text, field) in cases {
            let err = parse(text).hooks.compile().unwrap_err().to_string();
            assert!(err.contains(field), "{text}: {err}");
        }
        // An unknown event or key is a parse error naming it.
        let err = ConfigFile::parse("[[hooks.PreToolUSE]]\ncommand = \"a\"\n", Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("PreToolUSE"), "{err}");
    }

    #[test]
    fn layers_add_hooks_and_an_untrusted_project_loses_them() {
        let user = parse("[[hooks.Stop]]\ncommand = \"user\"\n");
        let project = parse("[[hooks.Stop]]\ncommand = \"project\"\n");
        let commands = |file: ConfigFile| -> Vec<String> {
            file.hooks
                .compile()
                .unwrap()
                .hooks
                .into_iter()
                .map(|h| h.command)
                .collect()
        };
        assert_eq!(commands(user.clone().merge(project.clone())), ["user", "project"]);
        let (untrusted, dropped) = project.without_loosening();
        assert!(untrusted.hooks.is_empty());
        assert!(dropped.contains(&"hooks"), "{dropped:?}");
        assert_eq!(commands(user.merge(untrusted)), ["user"]);
    }
}
