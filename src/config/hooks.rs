//! The `[hooks]` section: user commands run at points of a session (see `crate::hooks` for what each gets and may
//! answer). Written as arrays of tables, one per hook:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "exec|edit_.*|mcp__github__.*"   # a regex over the whole tool name; absent, "" or "*" = every tool
//! command = "~/bin/check-call.sh"
//! timeout_sec = 10                           # default 10, at most 600
//! ```
//!
//! Hooks run programs, so an untrusted project's hooks are dropped with the other loosening settings
//! (`ConfigFile::without_loosening`) and never run.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;
use crate::hooks::{Hook, HookEvent};

/// How long a hook may run when its entry does not say.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest a hook may be given.
pub const MAX_HOOK_TIMEOUT_SECS: u64 = 600;

/// `[hooks]` as written: the entries of each event, in the order the files give them.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    #[serde(rename = "PreToolUse", default)]
    pub pre_tool_use: Vec<HookEntry>,
    #[serde(rename = "PostToolUse", default)]
    pub post_tool_use: Vec<HookEntry>,
    #[serde(rename = "UserPromptSubmit", default)]
    pub user_prompt_submit: Vec<HookEntry>,
    #[serde(rename = "SessionStart", default)]
    pub session_start: Vec<HookEntry>,
    #[serde(rename = "Stop", default)]
    pub stop: Vec<HookEntry>,
}

/// One hook as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// A regex over the whole tool name (PreToolUse, PostToolUse) or the start source (SessionStart: `startup`,
    /// `resume`, `clear`).
    pub matcher: Option<String>,
    /// Run with `sh -c` in the workspace.
    pub command: String,
    pub timeout_sec: Option<u64>,
}

impl HooksFile {
    pub fn is_empty(&self) -> bool {
        self.lists().iter().all(|(_, list)| list.is_empty())
    }

    /// A later layer's hooks run after this one's.
    pub fn extend(&mut self, other: HooksFile) {
        self.pre_tool_use.extend(other.pre_tool_use);
        self.post_tool_use.extend(other.post_tool_use);
        self.user_prompt_submit.extend(other.user_prompt_submit);
        self.session_start.extend(other.session_start);
        self.stop.extend(other.stop);
    }

    fn lists(&self) -> [(HookEvent, &Vec<HookEntry>); 5] {
        [
            (HookEvent::PreToolUse, &self.pre_tool_use),
            (HookEvent::PostToolUse, &self.post_tool_use),
            (HookEvent::UserPromptSubmit, &self.user_prompt_submit),
            (HookEvent::SessionStart, &self.session_start),
            (HookEvent::Stop, &self.stop),
        ]
    }

    /// The hooks, checked: a command is given, the matcher is a valid regex on an event that has something to match.
    /// Errors name the entry (`hooks.PreToolUse[1].matcher`).
    pub fn compile(&self) -> Result<Vec<Hook>, ConfigError> {
        let mut hooks = Vec::new();
        for (event, list) in self.lists() {
            for (i, entry) in list.iter().enumerate() {
                let at = format!("hooks.{}[{i}]", event.as_str());
                if entry.command.trim().is_empty() {
                    return Err(ConfigError::Invalid(format!("{at}.command: empty")));
                }
                let matcher = entry
                    .matcher
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty() && *m != "*");
                if matcher.is_some() && !event.has_matcher() {
                    return Err(ConfigError::Invalid(format!(
                        "{at}.matcher: {} hooks have nothing to match; remove the matcher",
                        event.as_str()
                    )));
                }
                let timeout = match entry.timeout_sec {
                    None => DEFAULT_HOOK_TIMEOUT,
                    Some(secs @ 1..=MAX_HOOK_TIMEOUT_SECS) => Duration::from_secs(secs),
                    Some(secs) => {
                        return Err(ConfigError::Invalid(format!(
                            "{at}.timeout_sec = {secs}: expected 1 to {MAX_HOOK_TIMEOUT_SECS} seconds"
                        )));
                    }
                };
                let hook = Hook::new(event, matcher, entry.command.clone(), timeout)
                    .map_err(|e| ConfigError::Invalid(format!("{at}.matcher: {e}")))?;
                hooks.push(hook);
            }
        }
        Ok(hooks)
    }
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
    fn entries_compile_with_defaults_and_anchored_matchers() {
        let file = parse(
            "[[hooks.PreToolUse]]\nmatcher = \"exec|mcp__github__.*\"\ncommand = \"a\"\n\
             [[hooks.PreToolUse]]\ncommand = \"b\"\ntimeout_sec = 3\n\
             [[hooks.Stop]]\nmatcher = \"*\"\ncommand = \"c\"\n",
        );
        let hooks = file.hooks.compile().unwrap();
        assert_eq!(hooks.len(), 3);
        assert_eq!(hooks[0].timeout, DEFAULT_HOOK_TIMEOUT);
        assert!(hooks[0].matches("exec") && hooks[0].matches("mcp__github__create_issue"));
        // The whole name must match: a tool whose name merely contains "exec" is not matched.
        assert!(!hooks[0].matches("exec_more") && !hooks[0].matches("read_file"));
        assert!(hooks[1].matches("anything"));
        assert_eq!(hooks[1].timeout, Duration::from_secs(3));
        assert_eq!(hooks[2].event, HookEvent::Stop);
    }

    #[test]
    fn bad_entries_name_the_field() {
        let cases = [
            (
                "[[hooks.PreToolUse]]\nmatcher = \"(\"\ncommand = \"a\"\n",
                "hooks.PreToolUse[0].matcher",
            ),
            (
                "[[hooks.Stop]]\nmatcher = \"x\"\ncommand = \"a\"\n",
                "hooks.Stop[0].matcher",
            ),
            (
                "[[hooks.PostToolUse]]\ncommand = \" \"\n",
                "hooks.PostToolUse[0].command",
            ),
            (
                "[[hooks.SessionStart]]\ncommand = \"a\"\ntimeout_sec = 0\n",
                "hooks.SessionStart[0].timeout_sec",
            ),
            (
                "[[hooks.SessionStart]]\ncommand = \"a\"\ntimeout_sec = 601\n",
                "timeout_sec = 601",
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
        let merged = user.clone().merge(project.clone());
        let commands: Vec<String> = merged.hooks.compile().unwrap().into_iter().map(|h| h.command).collect();
        assert_eq!(commands, ["user", "project"]);
        let (untrusted, dropped) = project.without_loosening();
        assert!(untrusted.hooks.is_empty());
        assert!(dropped.contains(&"hooks"), "{dropped:?}");
        let commands: Vec<String> = user
            .merge(untrusted)
            .hooks
            .compile()
            .unwrap()
            .into_iter()
            .map(|h| h.command)
            .collect();
        assert_eq!(commands, ["user"]);
    }
}
