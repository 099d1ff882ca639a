//! The project trust offer: when a workspace has its own configuration (`.tern/config.toml`, `.mcp.json`) that is
//! not trusted, or a command wrote instruction files that tern withholds until the user looks (`tern_agent::planted`),
//! what the UI asks at start — which files it found and what trusting would enable (the MCP servers that would
//! start, with their commands as written; the allow rules, hooks and looser settings that would apply). Read
//! once before the UI starts; never asked headless (`tern run` keeps `--trust-project`). A project cannot trust
//! itself: trust is written only to the user's config (`config::write::trust_project`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ConfigFile, Settings};
pub use crate::tui::host::TrustOffer;

/// The offer for a session in `workspace`, or `None` when there is nothing to ask: the project is trusted (in the
/// user's config or with `--trust-project`), has no configuration of its own, or there is no user config to write to.
pub fn offer(settings: &Settings, workspace: &Path) -> Option<TrustOffer> {
    // Instruction files a command wrote ask again, however the project is trusted.
    if settings.project_trusted && crate::agent::planted::withheld(workspace).is_empty() {
        return None;
    }
    offer_for(workspace, tern_fs::places::user_config_path()?)
}

/// `offer` without the settings: the project files and what they would change.
pub fn offer_for(workspace: &Path, user_config: PathBuf) -> Option<TrustOffer> {
    let digest = super::trust::digest(workspace);
    let mut files = Vec::new();
    let mut servers = Vec::new();
    let mut changes = Vec::new();
    // The project's files from the repository root down to the workspace: the workspace's named as they are, the
    // others by their whole path.
    for dir in tern_fs::places::project_dirs(workspace) {
        let label = |name: &str| match dir == workspace {
            true => name.to_string(),
            false => dir.join(name).display().to_string(),
        };
        let config_path = dir.join(".tern/config.toml");
        if config_path.is_file() {
            files.push(label(".tern/config.toml"));
            match ConfigFile::load(&config_path) {
                Ok(Some(project)) => {
                    servers.extend(toml_servers(&project.mcp_servers));
                    let (_, dropped) = project.clone().without_loosening();
                    changes.extend(dropped.iter().filter_map(|field| describe(field, &project)));
                }
                Ok(None) => {}
                Err(e) => changes.push(format!("(its config cannot be read: {e})")),
            }
        }
        let json_path = dir.join(".mcp.json");
        if json_path.is_file() {
            files.push(label(".mcp.json"));
            servers.extend(json_servers(&json_path));
        }
        claude_files(&dir, &label, &mut files, &mut changes);
    }
    let planted = crate::agent::planted::withheld(workspace);
    if !planted.is_empty() {
        files.extend(planted.iter().map(|path| format!("{path} (written by a command)")));
        changes.push(
            "commands wrote its instruction files: its AGENTS.md, skills and commands reach the model again".into(),
        );
    }
    if files.is_empty() {
        return None;
    }
    Some(TrustOffer {
        workspace: workspace.to_path_buf(),
        user_config,
        files,
        servers,
        changes,
        digest,
    })
}

/// What Claude Code's files in the project directory `dir` would do once trusted: the hooks of its settings files, and
/// its commands that pre-approve commands (`allowed-tools`). Each file is added to `files` as `label` names it.
fn claude_files(dir: &Path, label: &dyn Fn(&str) -> String, files: &mut Vec<String>, changes: &mut Vec<String>) {
    for name in super::claude::PROJECT_SETTINGS {
        let path = dir.join(name);
        let Some(hooks) = super::claude::read(&path, &mut Vec::new()).and_then(|s| s.hooks(&mut Vec::new())) else {
            continue;
        };
        files.push(label(name));
        let commands: Vec<String> = match hooks.compile() {
            Ok(compiled) => compiled
                .hooks
                .iter()
                .map(|h| format!("{} `{}`", h.event.as_str(), h.command))
                .collect(),
            Err(e) => vec![format!("(its hooks cannot be used: {e})")],
        };
        if !commands.is_empty() {
            changes.push(format!("runs its Claude Code hooks: {}", commands.join(", ")));
        }
    }
    let approving = super::trust::approving_commands(dir);
    if !approving.is_empty() {
        let names: Vec<String> = approving
            .iter()
            .map(|path| {
                let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
                files.push(label(&shown));
                format!("/{}", path.file_stem().unwrap_or_default().to_string_lossy())
            })
            .collect();
        changes.push(format!(
            "its commands {} may run commands unasked for their turn (allowed-tools)",
            names.join(", ")
        ));
    }
}

/// What trusting would change for one field an untrusted project may not set, with its values where they are short.
/// MCP servers are listed on their own.
fn describe(field: &str, project: &ConfigFile) -> Option<String> {
    let list = |items: &[String]| items.join(", ");
    let paths = |items: &[PathBuf]| {
        items
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(match field {
        "mcp_servers" => return None,
        "mode" => format!(
            "approval mode {}",
            project.mode.map(|m| m.to_string()).unwrap_or_default()
        ),
        "approval.allow" => format!("commands run without asking: {}", list(&project.approval.allow)),
        "hooks" => "its hooks run commands at points of the session".to_string(),
        "write_roots" => format!("writes allowed in: {}", paths(&project.write_roots)),
        "exec.env_allow" => format!("commands see the variables: {}", list(&project.exec.env_allow)),
        "sandbox.enabled" => "commands run outside the OS sandbox".to_string(),
        "sandbox.network" => "sandboxed commands get the network".to_string(),
        "sandbox.writable_roots" => format!(
            "sandboxed commands may write to: {}",
            paths(&project.sandbox.writable_roots)
        ),
        "sandbox.git_read_only" => "the sandbox may write to .git".to_string(),
        "sandbox.unhide" => format!(
            "commands and the file tools may read the credential stores: {}",
            paths(&project.sandbox.unhide)
        ),
        "sandbox.hide_workspace_secrets" => "commands may read the workspace's .env files and keys".to_string(),
        "sandbox.allow_unix_sockets" => format!(
            "sandboxed commands may connect to unix sockets: {}",
            paths(&project.sandbox.allow_unix_sockets)
        ),
        "base_url" | "api_key" | "api_key_env" | "provider" => {
            format!("its provider setting `{field}` (where requests and keys go)")
        }
        other => format!("its setting `{other}`"),
    })
}

/// The servers of a `[mcp_servers]` table: name and command line (or URL) as written.
fn toml_servers(table: &toml::Table) -> Vec<(String, String)> {
    table
        .iter()
        .map(|(name, value)| {
            let json = serde_json::to_value(value).unwrap_or(Value::Null);
            (name.clone(), target(&json))
        })
        .collect()
}

/// The servers of a `.mcp.json` file (`mcpServers`, or VS Code's `servers`); an unreadable file lists none (the
/// agent reports its errors).
fn json_servers(path: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Ok(root) = serde_json::from_str::<Value>(&text) else {
        return vec![("(unreadable .mcp.json)".into(), String::new())];
    };
    let servers = root.get("mcpServers").or_else(|| root.get("servers"));
    match servers.and_then(Value::as_object) {
        Some(map) => map.iter().map(|(name, v)| (name.clone(), target(v))).collect(),
        None => Vec::new(),
    }
}

/// `command args…` or the URL, as written: `${VAR}` stays unexpanded, so no secret reaches the screen.
fn target(server: &Value) -> String {
    if let Some(url) = server.get("url").and_then(Value::as_str) {
        return url.to_string();
    }
    let mut words: Vec<&str> = server.get("command").and_then(Value::as_str).into_iter().collect();
    if let Some(args) = server.get("args").and_then(Value::as_array) {
        words.extend(args.iter().filter_map(Value::as_str));
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_pre_approve_commands_are_offered_as_a_loosening() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".claude/commands")).unwrap();
        std::fs::write(ws.join(".claude/commands/explain.md"), "Explain $ARGUMENTS.\n").unwrap();
        assert_eq!(offer_for(ws, ws.join("user.toml")), None, "a prompt loosens nothing");
        std::fs::write(
            ws.join(".claude/commands/ship.md"),
            "---\nallowed-tools: Bash(git push:*)\n---\n!`git push`\n",
        )
        .unwrap();
        let offer = offer_for(ws, ws.join("user.toml")).unwrap();
        assert_eq!(offer.files, [".claude/commands/ship.md"]);
        assert_eq!(
            offer.changes,
            ["its commands /ship may run commands unasked for their turn (allowed-tools)"]
        );
    }

    #[test]
    fn lists_the_files_servers_and_changes_of_an_untrusted_project() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        assert_eq!(
            offer_for(ws, ws.join("user.toml")),
            None,
            "nothing of its own: nothing to ask"
        );
        std::fs::create_dir(ws.join(".tern")).unwrap();
        std::fs::write(
            ws.join(".tern/config.toml"),
            "model = \"m\"\n[approval]\nallow = [\"cargo test\", \"make\"]\n[sandbox]\nnetwork = true\n\
             [mcp_servers.db]\ncommand = \"db-server\"\nargs = [\"--port\", \"1\"]\n",
        )
        .unwrap();
        std::fs::write(
            ws.join(".mcp.json"),
            r#"{"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs", "--token", "${DOCS_TOKEN}"]},
                "web": {"url": "https://example.com/mcp"}}}"#,
        )
        .unwrap();
        let offer = offer_for(ws, ws.join("user.toml")).unwrap();
        assert_eq!(offer.files, [".tern/config.toml", ".mcp.json"]);
        assert_eq!(
            offer.servers,
            [
                ("db".to_string(), "db-server --port 1".to_string()),
                ("docs".to_string(), "npx -y docs --token ${DOCS_TOKEN}".to_string()),
                ("web".to_string(), "https://example.com/mcp".to_string()),
            ]
        );
        assert_eq!(
            offer.changes,
            [
                "commands run without asking: cargo test, make",
                "sandboxed commands get the network"
            ]
        );
    }
}
