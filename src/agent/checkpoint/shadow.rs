//! The shadow repository: a git directory of tern's own, under the session's data directory, that snapshots the whole
//! work tree before and after each turn, so changes made by shell commands can be undone too.
//!
//! This is tern running git itself, outside the approval gate, so it must not run anything the project (or the
//! model, through the project) controls, and it must never touch the user's repository:
//! - `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE` are set explicitly: the user's `.git` (its index, refs, config,
//!   hooks, `info/exclude`) is never opened. Git itself never adds a `.git` entry of the work tree.
//! - The environment is cleared (PATH only), `GIT_CONFIG_GLOBAL=/dev/null` and `GIT_CONFIG_NOSYSTEM=1`: neither the
//!   user's nor the system's config is read, so no filter driver, fsmonitor command or signing program named there
//!   runs. The shadow's own config is the one `git init` wrote. An in-tree `.gitattributes` may name a filter, but a
//!   filter runs only when config defines its command, and ours defines none.
//! - `core.hooksPath=/dev/null`, `core.fsmonitor=false`, `commit.gpgSign=false` and a fixed identity on the command
//!   line; only plumbing that runs no hooks (`add`, `write-tree`, `commit-tree`, `update-ref`, `diff-tree`, `cat-file`).
//! - The project's `.gitignore` files are respected (git reads them from the work tree, as data).
//!
//! Every run is time-boxed; a child that overruns is killed, and its stale `index.lock` removed before the next run.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

/// Settings on every git command line, after the cleared environment (see the module docs).
const CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.quotePath=false",
    "commit.gpgSign=false",
    "gc.auto=0",
    "advice.addEmbeddedRepo=false",
    "user.name=tern",
    "user.email=tern@localhost",
];

/// Where the snapshots' history is kept, inside the shadow repository only.
const REF: &str = "refs/heads/snapshots";

#[derive(Debug, thiserror::Error)]
pub enum ShadowError {
    #[error("git did not finish within {0:?}")]
    Timeout(Duration),
    #[error("cannot run git: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("git {command} failed: {stderr}")]
    Failed { command: String, stderr: String },
}

/// One path a snapshot pair changed: its status letter (A, M, D, T) and path relative to the work tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    pub status: char,
    pub path: String,
}

#[derive(Debug)]
pub struct Shadow {
    git_dir: PathBuf,
    work_tree: PathBuf,
    index: PathBuf,
    head: Option<String>,
}

impl Shadow {
    /// A shadow repository in `git_dir` (created 0700 on first use) for the work tree `work_tree`.
    pub fn new(git_dir: PathBuf, work_tree: PathBuf) -> Self {
        let index = git_dir.join("tern-index");
        Self {
            git_dir,
            work_tree,
            index,
            head: None,
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.git_dir)
            .env("LC_ALL", "C")
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "tern")
            .env("GIT_AUTHOR_EMAIL", "tern@localhost")
            .env("GIT_COMMITTER_NAME", "tern")
            .env("GIT_COMMITTER_EMAIL", "tern@localhost")
            .current_dir(&self.work_tree)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for setting in CONFIG {
            cmd.arg("-c").arg(setting);
        }
        cmd
    }

    async fn git(&self, args: &[&str]) -> Result<Vec<u8>, ShadowError> {
        let output = self.command().args(args).output().await?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            Err(ShadowError::Failed {
                command: args.first().copied().unwrap_or_default().to_string(),
                stderr: String::from_utf8_lossy(&output.stderr)
                    .trim()
                    .chars()
                    .take(300)
                    .collect(),
            })
        }
    }

    async fn text(&self, args: &[&str]) -> Result<String, ShadowError> {
        Ok(String::from_utf8_lossy(&self.git(args).await?).trim().to_string())
    }

    /// Snapshots the work tree as it is now and returns the commit, within `limit`.
    pub async fn snapshot(&mut self, message: &str, limit: Duration) -> Result<String, ShadowError> {
        match tokio::time::timeout(limit, self.snapshot_now(message)).await {
            Ok(result) => result,
            Err(_) => {
                // The killed `git add` may have left its lock behind; we are the only writer of this index.
                let _ = std::fs::remove_file(self.index.with_extension("lock"));
                Err(ShadowError::Timeout(limit))
            }
        }
    }

    /// Brings the shadow index up to date with the work tree (the slow part of a first snapshot), within `limit`.
    pub async fn index(&mut self, limit: Duration) -> Result<(), ShadowError> {
        match tokio::time::timeout(limit, self.add_all()).await {
            Ok(result) => result,
            Err(_) => {
                let _ = std::fs::remove_file(self.index.with_extension("lock"));
                Err(ShadowError::Timeout(limit))
            }
        }
    }

    async fn add_all(&mut self) -> Result<(), ShadowError> {
        if !self.git_dir.join("HEAD").exists() {
            crate::session::log::private_dir(&self.git_dir)?;
            // No template: no sample hooks or info files of the system's in tern's repository either.
            self.git(&["init", "-q", "--template="]).await?;
            self.exclude_own_data()?;
        }
        let _ = std::fs::remove_file(self.index.with_extension("lock"));
        self.git(&["add", "-A", "--ignore-errors", "--", "."])
            .await
            .or_else(|e| match e {
                // `--ignore-errors` still exits non-zero for an unreadable file after adding the rest: keep the snapshot.
                ShadowError::Failed { ref stderr, .. } if stderr.contains("unable to") => Ok(Vec::new()),
                e => Err(e),
            })?;
        Ok(())
    }

    async fn snapshot_now(&mut self, message: &str) -> Result<String, ShadowError> {
        self.add_all().await?;
        let tree = self.text(&["write-tree"]).await?;
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
        let parent = self.head.clone();
        if let Some(parent) = &parent {
            args.extend(["-p", parent.as_str()]);
        }
        let commit = self.text(&args).await?;
        self.git(&["update-ref", REF, &commit]).await?;
        self.head = Some(commit.clone());
        Ok(commit)
    }

    /// When tern's data directory is inside the work tree (a workspace that is the home directory), the sessions
    /// directory stays out of the snapshots: they must not snapshot themselves.
    fn exclude_own_data(&self) -> std::io::Result<()> {
        let sessions = self.git_dir.parent().and_then(Path::parent);
        let root = self.work_tree.canonicalize().unwrap_or_else(|_| self.work_tree.clone());
        let Some(inside) = sessions
            .and_then(|s| s.canonicalize().ok())
            .and_then(|s| s.strip_prefix(&root).map(Path::to_path_buf).ok())
        else {
            return Ok(());
        };
        let info = self.git_dir.join("info");
        std::fs::create_dir_all(&info)?;
        std::fs::write(info.join("exclude"), format!("/{}/\n", inside.display()))
    }

    /// The paths that differ between two snapshots.
    pub async fn changed(&self, from: &str, to: &str) -> Result<Vec<Changed>, ShadowError> {
        let out = self
            .git(&["diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to])
            .await?;
        let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
        let mut changed = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            changed.push(Changed {
                status: status.first().map(|b| char::from(*b)).unwrap_or('M'),
                path: String::from_utf8_lossy(path).into_owned(),
            });
        }
        Ok(changed)
    }

    /// A file's content in a snapshot.
    pub async fn content(&self, commit: &str, path: &str) -> Result<Vec<u8>, ShadowError> {
        self.git(&["cat-file", "blob", &format!("{commit}:{path}")]).await
    }

    pub fn work_tree(&self) -> &Path {
        &self.work_tree
    }
}

/// Lets the shadow repository in `git_dir` read the snapshots of the one in `from` (a forked session's turns from
/// before the fork) through git's alternates: nothing is copied, and its own snapshots still go to its own objects.
/// Written before the repository is first initialised is fine: `git init` keeps it.
pub fn share_objects(git_dir: &Path, from: &Path) -> std::io::Result<()> {
    let objects = from.join("objects").canonicalize()?;
    let Some(line) = objects.to_str().filter(|t| !t.contains('\n')) else {
        return Err(std::io::Error::other(
            "the original's path cannot be written to an alternates file",
        ));
    };
    crate::session::log::private_dir(git_dir)?;
    let info = git_dir.join("objects").join("info");
    std::fs::create_dir_all(&info)?;
    std::fs::write(info.join("alternates"), format!("{line}\n"))
}

/// Whether `dir` is inside a git work tree, found by looking for a `.git` entry upwards, without running git (the
/// user's git reads the repository's config, which may name commands).
pub fn in_git_work_tree(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// How many files a snapshot would cover (what git would see: `.gitignore` respected, `.git` skipped), counting up
/// to `cap` and stopping there.
pub fn count_files(root: &Path, cap: usize) -> usize {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut count = 0;
    for entry in walker.flatten() {
        if entry.file_type().is_some_and(|t| !t.is_dir()) {
            count += 1;
            if count >= cap {
                break;
            }
        }
    }
    count
}
