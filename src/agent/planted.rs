//! Instruction files a command wrote. tern reads some of the workspace's files as instructions or configuration
//! (`.tern/**`: config, skills, commands; Claude Code's `.claude/**`: settings, commands, skills, subagents;
//! `AGENTS.md`/`CLAUDE.md`/`CLAUDE.local.md` from the repository root down to the workspace; `.mcp.json`), whether
//! or not they exist yet. A command the model ran must not be able to plant one unseen: an
//! always-on skill would reach every later request of this session and the next.
//!
//! `Fingerprint` stats those paths (and walks the `.tern` tree) before and after each command; what changed is
//! reported to the user and the model, and recorded in a marker in tern's data directory (which commands cannot see
//! in the sandbox). While a marker stands, the project's instruction files stay out of the prompt and its commands
//! are not loaded (`withheld`), and the trust prompt asks at the next start; trusting the project clears it (`clear`).
//!
//! It must not read the files' contents (a stat each is the whole cost per command) nor follow symlinks.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Entries of the `.tern` tree looked at; a tree larger than this counts the rest as one change-prone blob (its
/// directory stamps still move when anything is added or removed).
const MAX_ENTRIES: usize = 4096;

/// The files directly in the workspace that start something outside the sandbox later, besides the `.tern` tree and
/// the context-file chain: `.mcp.json` (its servers, once the project is trusted) and VS Code's `tasks.json`, whose
/// `"runOn": "folderOpen"` tasks run when the folder is next opened in an editor that allows automatic tasks.
const ROOT_FILES: [&str; 2] = [".mcp.json", ".vscode/tasks.json"];

/// What a path looked like: absent, or its kind, size, modification time, inode and mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime_ns: i128,
    ino: u64,
    mode: u32,
}

/// The stamps of every instruction path of a workspace at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Fingerprint {
    stamps: BTreeMap<PathBuf, Stamp>,
}

impl Fingerprint {
    /// Stats the instruction paths of `workspace` now.
    pub(crate) fn take(workspace: &Path) -> Self {
        let mut stamps = BTreeMap::new();
        for path in watched_files(workspace) {
            if let Some(stamp) = stamp(&path) {
                stamps.insert(path, stamp);
            }
        }
        walk(&workspace.join(".tern"), &mut stamps);
        // Claude Code's project folder: its settings' hooks, commands, skills and subagents.
        walk(&workspace.join(".claude"), &mut stamps);
        Self { stamps }
    }

    /// The paths (relative to `workspace`) that appeared, went or changed between `self` and `after`.
    pub(crate) fn changed(&self, after: &Fingerprint, workspace: &Path) -> Vec<String> {
        let mut paths: Vec<&PathBuf> = Vec::new();
        for (path, stamp) in &after.stamps {
            if self.stamps.get(path) != Some(stamp) {
                paths.push(path);
            }
        }
        paths.extend(self.stamps.keys().filter(|p| !after.stamps.contains_key(*p)));
        let mut shown: Vec<String> = paths
            .into_iter()
            .map(|p| p.strip_prefix(workspace).unwrap_or(p).display().to_string())
            .collect();
        shown.sort();
        shown.dedup();
        // A directory changed because something in it did: name what did.
        let leaves: Vec<String> = shown
            .iter()
            .filter(|p| {
                !shown
                    .iter()
                    .any(|q| q.len() > p.len() && q.starts_with(p.as_str()) && q[p.len()..].starts_with('/'))
            })
            .cloned()
            .collect();
        leaves
    }
}

/// The context files (`AGENTS.md`, `CLAUDE.md`) of each directory from the repository root down to the workspace,
/// and the workspace's `ROOT_FILES`: absent ones too, since creating one is the change that matters.
fn watched_files(workspace: &Path) -> Vec<PathBuf> {
    let root = crate::prompt::files::repository_root(workspace);
    let mut files: Vec<PathBuf> = ROOT_FILES.iter().map(|name| workspace.join(name)).collect();
    for dir in workspace.ancestors().take_while(|d| d.starts_with(&root)) {
        files.extend(crate::prompt::files::NAMES.iter().map(|name| dir.join(name)));
    }
    files
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(Stamp {
        len: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ino: meta.ino(),
        mode: meta.mode(),
    })
}

/// The `.tern` tree, depth first, without following symlinks, up to `MAX_ENTRIES`.
fn walk(root: &Path, stamps: &mut BTreeMap<PathBuf, Stamp>) {
    let Some(top) = stamp(root) else {
        return;
    };
    stamps.insert(root.to_path_buf(), top);
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return;
            }
            let path = entry.path();
            let Some(stamp) = stamp(&path) else { continue };
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path.clone());
            }
            stamps.insert(path, stamp);
        }
    }
}

/// The marker file for `workspace` in tern's data directory.
fn marker(workspace: &Path) -> PathBuf {
    let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let hash = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
    let name: String = hash.iter().take(16).map(|b| format!("{b:02x}")).collect();
    tern_fs::places::data_dir().join("planted").join(format!("{name}.json"))
}

/// Records that commands changed `paths` of `workspace`, adding to what an earlier command left.
pub(crate) fn record(workspace: &Path, paths: &[String]) -> std::io::Result<()> {
    let mut all = withheld(workspace);
    for path in paths {
        if !all.contains(path) {
            all.push(path.clone());
        }
    }
    let file = marker(workspace);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let body = serde_json::json!({ "workspace": workspace.display().to_string(), "paths": all });
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, body.to_string())?;
    std::fs::rename(tmp, file)
}

/// The instruction paths commands changed in `workspace` since the user last trusted it; empty when none.
pub fn withheld(workspace: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(marker(workspace)) else {
        return Vec::new();
    };
    let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    match value.get("paths").and_then(serde_json::Value::as_array) {
        Some(paths) => paths.iter().filter_map(|p| p.as_str().map(str::to_string)).collect(),
        // A marker that cannot be read still withholds: it was written for a reason.
        None => vec!["(unreadable record)".to_string()],
    }
}

/// The user trusted the project with its files as they are now.
pub fn clear(workspace: &Path) {
    let _ = std::fs::remove_file(marker(workspace));
}

/// After a command: what changed since `before` is recorded (withheld from now on) and the note for the model and the
/// user comes back; `None` when nothing did.
pub(crate) fn after_command(workspace: &Path, before: &Fingerprint) -> Option<String> {
    let changed = before.changed(&Fingerprint::take(workspace), workspace);
    if changed.is_empty() {
        return None;
    }
    let mut note = report(&changed);
    if let Err(e) = record(workspace, &changed) {
        note.push_str(&format!(" (tern could not record this for the next session: {e})"));
    }
    Some(note)
}

/// What the model and the user are told after a command changed instruction files.
pub(crate) fn report(paths: &[String]) -> String {
    let shown = if paths.len() > 5 {
        format!("{} (and {} more)", paths[..5].join(", "), paths.len() - 5)
    } else {
        paths.join(", ")
    };
    format!(
        "This command changed files tern reads as instructions or configuration, or that start something later: \
         {shown}. They do not reach the prompt or run through tern: the project's AGENTS.md, skills and commands are \
         withheld until the user looks at them and trusts the project again."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_skill_and_a_new_agents_file_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        std::fs::create_dir(work.join(".git")).unwrap();
        std::fs::write(work.join("main.rs"), "fn main() {}").unwrap();
        let before = Fingerprint::take(work);
        // An ordinary file changes nothing that matters.
        std::fs::write(work.join("main.rs"), "fn main() { }").unwrap();
        assert_eq!(before.changed(&Fingerprint::take(work), work), Vec::<String>::new());
        std::fs::create_dir_all(work.join(".tern/skills/x")).unwrap();
        std::fs::write(work.join(".tern/skills/x/SKILL.md"), "---\nname: x\n---\n").unwrap();
        std::fs::write(work.join("AGENTS.md"), "hi").unwrap();
        // A task an editor runs when it opens the folder starts outside the sandbox too.
        std::fs::create_dir(work.join(".vscode")).unwrap();
        std::fs::write(
            work.join(".vscode/tasks.json"),
            r#"{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}"#,
        )
        .unwrap();
        let changed = before.changed(&Fingerprint::take(work), work);
        assert_eq!(changed, [".tern/skills/x/SKILL.md", ".vscode/tasks.json", "AGENTS.md"]);
        // A rewrite of the same size is seen too (the time or inode moves).
        let before = Fingerprint::take(work);
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(work.join(".tern/skills/x/SKILL.md"), "---\nname: y\n---\n").unwrap();
        assert_eq!(
            before.changed(&Fingerprint::take(work), work),
            vec![".tern/skills/x/SKILL.md".to_string()]
        );
    }
}
