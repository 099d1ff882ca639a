//! Claude Code's settings files, read where tern reads its own so a Claude Code user's hooks carry over unchanged: the
//! `hooks` of `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when that is set) and of a trusted
//! project's `.claude/settings.json` and `.claude/settings.local.json`. An untrusted project's are not used, as its
//! `.tern/config.toml` hooks are not, and they count in the project's trust digest (`trust::PROJECT_FILES`).
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

/// The hooks of the Claude Code settings file at `path`; `None` when there is no such file. What cannot be used is
/// added to `warnings`.
pub fn hooks(path: &Path, warnings: &mut Vec<String>) -> Option<HooksFile> {
    let text = match super::read_config(path) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(e) => {
            warnings.push(format!(
                "{}: cannot read it ({e}); its hooks are not used",
                path.display()
            ));
            return None;
        }
    };
    let settings: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(e) => {
            warnings.push(format!(
                "{}: not valid JSON (line {}, column {}); its hooks are not used",
                path.display(),
                e.line(),
                e.column()
            ));
            return None;
        }
    };
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
                  "PermissionRequest": [{"hooks": [{"type": "command", "command": "x"}]}]
                }}"#,
        )
        .unwrap();
        let mut warnings = Vec::new();
        let file = hooks(&path, &mut warnings).unwrap();
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
                (HookEvent::PostToolUse, "fmt.sh", 60)
            ]
        );
        assert!(compiled.hooks[0].matches("Bash") && !compiled.hooks[0].matches("Read"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("no PermissionRequest event"), "{warnings:?}");
        std::fs::write(&path, "{ not json").unwrap();
        let mut warnings = Vec::new();
        assert!(hooks(&path, &mut warnings).is_none());
        assert!(warnings[0].contains("not valid JSON"), "{warnings:?}");
        assert!(hooks(&dir.path().join("absent.json"), &mut Vec::new()).is_none());
    }
}
