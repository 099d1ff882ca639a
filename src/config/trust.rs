//! Which projects the user trusts, and with what. A project's own files (`.tern/config.toml`, `.mcp.json`, Claude
//! Code's `.claude/settings.json` and `.claude/settings.local.json`) can start MCP servers and hooks outside the sandbox, so trusting a project means trusting what those files say. The trust
//! prompt records a digest of exactly the files the user saw; when they change (a command the model ran, a `git pull`
//! of someone else's commit), the project is untrusted until the user looks again. An entry written by hand as a
//! bare path trusts the project whatever its files say.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The files whose content trust is bound to, relative to the workspace.
pub const PROJECT_FILES: [&str; 2] = [".tern/config.toml", ".mcp.json"];
/// Files added to the digest later: hashed only when present, so a digest recorded before them still holds for a
/// project that has none.
const LATER_FILES: [&str; 2] = super::claude::PROJECT_SETTINGS;

/// The project's command folders: a trusted project's command may pre-approve commands for its turn
/// (`allowed-tools`), so the commands that say so are part of what trust is bound to.
const COMMAND_DIRS: [&str; 2] = [".tern/commands", ".claude/commands"];

/// The command files of the project directory `dir` that name `allowed-tools` (a rough test on the text, so a file
/// that only mentions it counts too: it can only add to what is hashed), in a stable order.
pub fn approving_commands(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for sub in COMMAND_DIRS {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "md"))
            .filter(|path| std::fs::read(path).is_ok_and(|bytes| bytes.windows(13).any(|w| w == b"allowed-tools")))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

/// One entry of the user config's `trusted_projects`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum TrustedProject {
    /// `"/path"`: trusted whatever its files say.
    Path(PathBuf),
    /// `{ path = "/path", digest = "sha256:…" }`: trusted while its files are the ones the user saw.
    Seen { path: PathBuf, digest: String },
}

impl TrustedProject {
    pub fn path(&self) -> &Path {
        match self {
            TrustedProject::Path(path) | TrustedProject::Seen { path, .. } => path,
        }
    }
}

/// How the user's entries stand for one workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Trusted,
    /// Trusted once, but its files changed since.
    Changed,
    Untrusted,
}

/// How `entries` stand for `workspace` as its files are now.
pub fn standing(entries: &[TrustedProject], workspace: &Path) -> Standing {
    let mut now: Option<String> = None;
    let mut changed = false;
    for entry in entries.iter().filter(|e| super::same_dir(e.path(), workspace)) {
        match entry {
            TrustedProject::Path(_) => return Standing::Trusted,
            TrustedProject::Seen { digest, .. } => {
                let now = now.get_or_insert_with(|| self::digest(workspace));
                if digest == now {
                    return Standing::Trusted;
                }
                changed = true;
            }
        }
    }
    if changed {
        Standing::Changed
    } else {
        Standing::Untrusted
    }
}

/// A digest of the project's own files as they are now (an absent file counts as absent, not as empty), those of the
/// directories from the repository root down to `workspace` included (`tern_fs::places::project_dirs`).
pub fn digest(workspace: &Path) -> String {
    let mut hash = Sha256::new();
    for name in PROJECT_FILES {
        hash.update(name.as_bytes());
        match std::fs::read(workspace.join(name)) {
            Ok(bytes) => {
                hash.update([1]);
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(&bytes);
            }
            Err(_) => hash.update([0]),
        }
    }
    for name in LATER_FILES {
        if let Ok(bytes) = std::fs::read(workspace.join(name)) {
            hash.update(name.as_bytes());
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(&bytes);
        }
    }
    for path in approving_commands(workspace) {
        if let Ok(bytes) = std::fs::read(&path) {
            let name = path.strip_prefix(workspace).unwrap_or(&path);
            hash.update(name.as_os_str().as_encoded_bytes());
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(&bytes);
        }
    }
    // Started below the repository root, the project's files of the directories above count too (those present,
    // named by where they are, so a digest of the root's own files is what it was).
    for dir in tern_fs::places::project_dirs(workspace) {
        if dir == workspace {
            continue;
        }
        let files = PROJECT_FILES.iter().chain(&LATER_FILES).map(|name| dir.join(name));
        for path in files.chain(approving_commands(&dir)) {
            if let Ok(bytes) = std::fs::read(&path) {
                hash.update(path.as_os_str().as_encoded_bytes());
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(&bytes);
            }
        }
    }
    let bytes = hash.finalize();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_follows_the_files_the_user_saw() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        std::fs::create_dir(work.join(".tern")).unwrap();
        std::fs::write(work.join(".tern/config.toml"), "mode = \"ask\"\n").unwrap();
        let seen = vec![TrustedProject::Seen {
            path: work.to_path_buf(),
            digest: digest(work),
        }];
        assert_eq!(standing(&seen, work), Standing::Trusted);
        // A new `.mcp.json` (which would start a server outside the sandbox) is a change.
        std::fs::write(work.join(".mcp.json"), "{\"mcpServers\":{}}").unwrap();
        assert_eq!(standing(&seen, work), Standing::Changed);
        std::fs::remove_file(work.join(".mcp.json")).unwrap();
        assert_eq!(standing(&seen, work), Standing::Trusted);
        // Claude Code's project settings can run hooks: a new one is a change too.
        std::fs::create_dir(work.join(".claude")).unwrap();
        std::fs::write(work.join(".claude/settings.json"), "{\"hooks\":{}}").unwrap();
        assert_eq!(standing(&seen, work), Standing::Changed);
        std::fs::remove_file(work.join(".claude/settings.json")).unwrap();
        assert_eq!(standing(&seen, work), Standing::Trusted);
        std::fs::write(work.join(".tern/config.toml"), "mode = \"full-auto\"\n").unwrap();
        assert_eq!(standing(&seen, work), Standing::Changed);
        // A bare path trusts whatever the files say; another directory's entry says nothing about this one.
        assert_eq!(
            standing(&[TrustedProject::Path(work.to_path_buf())], work),
            Standing::Trusted
        );
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            standing(&[TrustedProject::Path(other.path().to_path_buf())], work),
            Standing::Untrusted
        );
    }

    #[test]
    fn a_command_that_pre_approves_commands_is_part_of_what_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        std::fs::create_dir_all(work.join(".claude/commands")).unwrap();
        std::fs::write(work.join(".claude/commands/plain.md"), "Summarise the diff.\n").unwrap();
        let seen = vec![TrustedProject::Seen {
            path: work.to_path_buf(),
            digest: digest(work),
        }];
        // A command that only prompts changes nothing trust is bound to.
        std::fs::write(work.join(".claude/commands/other.md"), "Explain the build.\n").unwrap();
        assert_eq!(standing(&seen, work), Standing::Trusted);
        // One that pre-approves commands does: trusting the project would let them run unasked.
        let approving = "---\nallowed-tools: Bash(curl:*)\n---\n!`curl example.com`\n";
        std::fs::write(work.join(".claude/commands/deploy.md"), approving).unwrap();
        assert_eq!(standing(&seen, work), Standing::Changed);
        assert_eq!(approving_commands(work), [work.join(".claude/commands/deploy.md")]);
        let seen = vec![TrustedProject::Seen {
            path: work.to_path_buf(),
            digest: digest(work),
        }];
        std::fs::write(
            work.join(".claude/commands/deploy.md"),
            approving.replace("curl:*", "rm:*"),
        )
        .unwrap();
        assert_eq!(standing(&seen, work), Standing::Changed);
    }

    #[test]
    fn an_absent_file_differs_from_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let before = digest(dir.path());
        std::fs::write(dir.path().join(".mcp.json"), "").unwrap();
        assert_ne!(before, digest(dir.path()));
    }
}
