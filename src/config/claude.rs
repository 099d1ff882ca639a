//! Claude Code's settings files, read where tern reads its own so a Claude Code user's hooks and permission rules
//! carry over: the `hooks` and `permissions` of `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when that
//! is set) and of a project's `.claude/settings.json` and `.claude/settings.local.json`. A project's hooks and allow
//! rules count only when the project is trusted, as its `.tern/config.toml`'s do; its deny rules always (they only
//! tighten). The project's files count in its trust digest (`trust::PROJECT_FILES`).
//!
//! A permission rule becomes one of tern's where tern has the same rule (`tool_rule`): `Bash(git diff:*)` a command
//! prefix, `mcp__server__tool` an MCP rule. Others are warnings, never widened: `Bash(npm test)` allows exactly that
//! command in Claude Code, and tern's rules are prefixes.
//!
//! The hooks run as tern's own do (`crate::hooks`), after them. A file that is not valid JSON, an event tern has no
//! point for, or `disableAllHooks` is a warning: Claude Code's settings must not keep tern from starting.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::hooks::{Handler, HookEntry, HooksFile};
use crate::hooks::HookEvent;

/// A project's Claude Code settings files, relative to the workspace.
pub const PROJECT_SETTINGS: [&str; 2] = crate::agent::CLAUDE_SETTINGS;

/// The user's Claude Code settings file.
pub fn user_settings_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("settings.json"));
    }
    std::env::home_dir().map(|home| home.join(".claude/settings.json"))
}

/// A Claude Code settings file, read and parsed once.
pub struct Settings {
    path: PathBuf,
    value: Value,
}

/// The Claude Code settings file at `path`; `None` when there is none, or (said in `warnings`) when it cannot be
/// read or is not JSON.
pub fn read(path: &Path, warnings: &mut Vec<String>) -> Option<Settings> {
    let text = match super::read_config(path) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(e) => {
            warnings.push(format!("{}: cannot read it ({e}); it is not used", path.display()));
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(value) => Some(Settings {
            path: path.to_path_buf(),
            value,
        }),
        Err(e) => {
            warnings.push(format!(
                "{}: not valid JSON (line {}, column {}); it is not used",
                path.display(),
                e.line(),
                e.column()
            ));
            None
        }
    }
}

impl Settings {
    /// Its hooks; `None` when it has none or sets `disableAllHooks`. What cannot be used is added to `warnings`.
    pub fn hooks(&self, warnings: &mut Vec<String>) -> Option<HooksFile> {
        let (path, settings) = (&self.path, &self.value);
        if settings.get("disableAllHooks") == Some(&Value::Bool(true)) {
            warnings.push(format!(
                "{}: disableAllHooks is set; its hooks are not used",
                path.display()
            ));
            return None;
        }
        let events = settings.get("hooks").and_then(Value::as_object)?;
        let mut file = HooksFile::default();
        for (name, groups) in events {
            let Some(event) = HookEvent::ALL.into_iter().find(|e| e.as_str() == name) else {
                warnings.push(format!(
                    "{}: tern has no {name} event; those hooks are not used",
                    path.display()
                ));
                continue;
            };
            for (i, group) in groups.as_array().into_iter().flatten().enumerate() {
                let handlers = group.get("hooks").cloned().unwrap_or(Value::Array(Vec::new()));
                match serde_json::from_value::<Vec<Handler>>(handlers) {
                    Ok(hooks) => file.list_mut(event).push(HookEntry {
                        matcher: group.get("matcher").and_then(Value::as_str).map(str::to_string),
                        command: None,
                        kind: None,
                        timeout: None,
                        timeout_sec: None,
                        hooks,
                    }),
                    Err(e) => warnings.push(format!(
                        "{}: hooks.{name}[{i}] is not a list of hooks ({e}); not used",
                        path.display()
                    )),
                }
            }
        }
        Some(file)
    }

    /// Its `permissions.allow` and `permissions.deny` rules as tern's command rules; entries tern has no rule for
    /// are added to `warnings`.
    pub fn permissions(&self, warnings: &mut Vec<String>) -> super::ApprovalFile {
        let (path, settings) = (&self.path, &self.value);
        let mut rules = super::ApprovalFile::default();
        for (key, allow) in [("allow", true), ("deny", false)] {
            let entries = settings
                .get("permissions")
                .and_then(|p| p.get(key))
                .and_then(Value::as_array);
            for entry in entries.into_iter().flatten().filter_map(Value::as_str) {
                match tool_rule(entry, allow) {
                    Ok(Some(rule)) if allow => rules.allow.push(rule),
                    Ok(Some(rule)) => rules.deny.push(rule),
                    Ok(None) => {}
                    Err(why) => warnings.push(format!("{}: permissions.{key} {entry}: {why}", path.display())),
                }
            }
        }
        rules
    }
}

/// The hooks and rules of the Claude Code settings files a session reads.
#[derive(Default)]
pub(super) struct Layer {
    hooks: HooksFile,
    rules: super::ApprovalFile,
}

impl Layer {
    /// The user's `~/.claude/settings.json`, when there is one (added to `sources`).
    pub(super) fn user(warnings: &mut Vec<String>, sources: &mut Vec<PathBuf>) -> Self {
        let mut layer = Self::default();
        if let Some(path) = user_settings_path()
            && let Some(settings) = read(&path, warnings)
        {
            if let Some(found) = settings.hooks(warnings) {
                layer.hooks.extend(found);
            }
            let rules = settings.permissions(warnings);
            layer.rules.allow.extend(rules.allow);
            layer.rules.deny.extend(rules.deny);
            sources.push(path);
        }
        layer
    }

    /// The project's settings files in `dirs` (root first): their deny rules always (they only tighten), their hooks
    /// and allow rules when the project is `trusted` (else told in `ignored`).
    pub(super) fn add_project(
        &mut self,
        dirs: &[PathBuf],
        trusted: bool,
        warnings: &mut Vec<String>,
        ignored: &mut Vec<String>,
        sources: &mut Vec<PathBuf>,
    ) {
        for path in dirs.iter().flat_map(|dir| PROJECT_SETTINGS.map(|name| dir.join(name))) {
            let Some(settings) = read(&path, warnings) else {
                continue;
            };
            let rules = settings.permissions(warnings);
            self.rules.deny.extend(rules.deny);
            let hooks = settings.hooks(warnings).filter(|h| !h.is_empty());
            if !trusted {
                let dropped = [
                    ("hooks", hooks.is_some()),
                    ("permissions.allow", !rules.allow.is_empty()),
                ];
                ignored.extend(
                    dropped
                        .iter()
                        .filter(|(_, dropped)| *dropped)
                        .map(|(field, _)| format!("{}: {field}", path.display())),
                );
                continue;
            }
            self.rules.allow.extend(rules.allow);
            self.hooks.extend(hooks.unwrap_or_default());
            sources.push(path);
        }
    }

    /// Adds the hooks (after tern's own) and the rules to `merged`.
    pub(super) fn apply(self, merged: &mut super::ConfigFile) {
        merged.hooks.extend(self.hooks);
        merged.approval.allow.extend(self.rules.allow);
        merged.approval.deny.extend(self.rules.deny);
    }
}

/// Tools tern never asks about (reads and searches, the plan, subagents): allowing them changes nothing.
const NEVER_ASKED: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "TodoWrite",
    "Task",
    "Agent",
    "WebSearch",
    "NotebookRead",
];
/// Edit tools: whether they ask is the mode's to say.
const EDITS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// tern's command rule for one of Claude Code's permission rules, for an allow list (`allow`) or a deny list:
/// `Ok(None)` when tern needs none (a read tool, always allowed; an edit tool, which the mode decides), `Err` with
/// what to write instead when tern has no rule that means the same. A deny rule may take a prefix for an exact
/// command: it then refuses more, the safe side.
pub fn tool_rule(entry: &str, allow: bool) -> Result<Option<String>, String> {
    let rule = claude_rule(entry, allow)?;
    // A rule tern cannot hold (`Bash(a && b)`) is said where it was written, never an error that keeps tern from
    // starting: a project's settings file is anyone's to write.
    if let Some(rule) = &rule {
        rule.parse::<crate::agent::approval::CommandRule>()
            .map_err(|e| e.to_string())?;
    }
    Ok(rule)
}

/// `tool_rule` for an allow list: what a custom command's `allowed-tools` entry grants for its turn.
pub fn tool_rule_allowed(entry: &str) -> Result<Option<String>, String> {
    tool_rule(entry, true)
}

fn claude_rule(entry: &str, allow: bool) -> Result<Option<String>, String> {
    let entry = entry.trim();
    if allow && (NEVER_ASKED.contains(&entry) || EDITS.contains(&entry)) {
        return Ok(None);
    }
    if entry.starts_with("mcp__") {
        return Ok(Some(entry.to_string()));
    }
    match bash_rule(entry) {
        Some((prefix, true)) => Ok(Some(prefix.to_string())),
        Some((command, false)) if !allow => Ok(Some(command.to_string())),
        Some((command, false)) => Err(format!(
            "tern's command rules are prefixes, so it cannot allow exactly `{command}`; write Bash({command}:*) to \
             allow it with any arguments"
        )),
        None => Err(
            "tern has no rule for that; it takes Bash(PREFIX:*) and mcp__SERVER__TOOL entries (and allows \
                     Read, Grep, Glob and LS always; edits as the mode says). tern's spelling: [approval] allow and \
                     deny in ~/.config/tern/config.toml, and --mode"
                .into(),
        ),
    }
}

/// `Bash(git diff:*)` or `Bash(git diff *)` as (`git diff`, true: a prefix); `Bash(npm test)` as (`npm test`, false).
fn bash_rule(rule: &str) -> Option<(&str, bool)> {
    let inner = rule.strip_prefix("Bash(")?.strip_suffix(')')?.trim();
    let prefix = inner
        .strip_suffix(":*")
        .or_else(|| inner.strip_suffix(" *"))
        .map(str::trim_end);
    match prefix {
        Some(prefix) if !prefix.is_empty() => Some((prefix, true)),
        Some(_) => None,
        None if inner.is_empty() => None,
        None => Some((inner, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_settings_give_their_hooks_and_warn_about_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"$schema": "https://json.schemastore.org/claude-code-settings.json",
                "permissions": {"allow": ["Bash(git diff:*)"]},
                "hooks": {
                  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5,
                                   "statusMessage": "checking", "async": false}]}],
                  "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}],
                  "PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "decide.sh"}]}],
                  "TeammateIdle": [{"hooks": [{"type": "command", "command": "x"}]}]
                }}"#,
        )
        .unwrap();
        let mut warnings = Vec::new();
        let file = read(&path, &mut warnings).unwrap().hooks(&mut warnings).unwrap();
        let compiled = file.compile().unwrap();
        let found: Vec<(HookEvent, &str, u64)> = compiled
            .hooks
            .iter()
            .map(|h| (h.event, h.command.as_str(), h.timeout.as_secs()))
            .collect();
        assert_eq!(
            found,
            [
                (HookEvent::PreToolUse, "guard.sh", 5),
                (HookEvent::PermissionRequest, "decide.sh", 60),
                (HookEvent::PostToolUse, "fmt.sh", 60)
            ]
        );
        assert!(compiled.hooks[0].matches("Bash") && !compiled.hooks[0].matches("Read"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("no TeammateIdle event"), "{warnings:?}");
        std::fs::write(&path, "{ not json").unwrap();
        let mut warnings = Vec::new();
        assert!(read(&path, &mut warnings).is_none());
        assert!(warnings[0].contains("not valid JSON"), "{warnings:?}");
        assert!(read(&dir.path().join("absent.json"), &mut Vec::new()).is_none());
    }

    #[test]
    fn permission_rules_become_tern_rules_where_tern_has_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"permissions": {
                "allow": ["Bash(git diff:*)", "Read", "Edit", "Bash(npm run lint)", "WebFetch(domain:example.com)",
                          "mcp__github__get_issue"],
                "deny": ["Bash(rm:*)", "Bash(git push)", "Read(./.env)", "Bash(a && b)", "mcp__"]}}"#,
        )
        .unwrap();
        let mut warnings = Vec::new();
        let rules = read(&path, &mut warnings).unwrap().permissions(&mut warnings);
        assert_eq!(rules.allow, ["git diff", "mcp__github__get_issue"]);
        assert_eq!(rules.deny, ["rm", "git push"]);
        // A rule tern cannot hold is a warning too: a project's file must not keep tern from starting.
        assert_eq!(warnings.len(), 5, "{warnings:?}");
        assert!(warnings[0].contains("Bash(npm run lint:*)"), "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("Bash(a && b)")), "{warnings:?}");
    }
}
