//! The shadow repository: a git directory of tern's own, one per workspace under the data directory
//! (`<data>/shadow/<key>/`), that snapshots the whole work tree around the turns that run commands, so what shell
//! commands changed can be undone too. Its index persists between turns and sessions: git compares each file's stat
//! data with it and hashes only the files that changed, so a snapshot costs what changed plus one `lstat` per file.
//! Each session keeps its snapshots on a ref of its own (`refs/sessions/<id>`); `retention.rs` drops old ones.
//!
//! This is tern running git itself, outside the approval gate, so it must not run anything the project (or the
//! model, through the project) controls, and it must never touch the user's repository:
//! - `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE` are set explicitly: the user's `.git` (its index, refs, config,
//!   hooks, `info/exclude`) is never opened. Git itself never adds a `.git` entry of the work tree.
//! - Every git command is made by `neutral`, the one place that says what git may run: the environment cleared
//!   (PATH only), neither the user's nor the system's config read, the neutral settings of `tern_process::git_env`
//!   (no hooks, no fsmonitor, no pager, no editor), no signing, no collection started by git itself (retention
//!   runs the only one), and attributes read from the empty tree (`GIT_ATTR_SOURCE`) so an in-tree
//!   `.gitattributes` can name no filter, textconv or end-of-line conversion: a snapshot holds the files' bytes as
//!   they are.
//! - Only plumbing that runs no hooks (`add`, `write-tree`, `commit-tree`, `update-ref`, `diff-tree`, `cat-file`,
//!   `hash-object`, `update-index`, `ls-files`, `gc`).
//! - The project's `.gitignore` files are respected (git reads them from the work tree, as data).
//!
//! Every run is time-boxed; a child that overruns is killed. Writers of the shared index take `tern.lock` (sessions
//! of the same workspace in other processes wait for it), so a stale `index.lock` found under it is a killed run's.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// Settings of the shadow repository's own, after the neutral ones of `tern_process::git_env` (which keep git from
/// starting hooks, an fsmonitor, a pager or an editor), in the same list.
const CONFIG: &[(&str, &str)] = &[
    ("core.untrackedCache", "true"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.quotePath", "false"),
    ("core.logAllRefUpdates", "false"),
    ("index.threads", "true"),
    ("commit.gpgSign", "false"),
    // No collection starts by itself, and none detached that would outlive the command (and write into a
    // repository retention is removing): retention collects explicitly, under the repository's lock.
    ("gc.auto", "0"),
    ("gc.autoDetach", "false"),
    ("maintenance.auto", "false"),
    ("gc.writeCommitGraph", "false"),
    ("advice.addEmbeddedRepo", "false"),
    ("user.name", "tern"),
    ("user.email", "tern@localhost"),
];

/// The empty tree, which git knows without storing it: attributes are read from it, so there are none.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// How long a writer waits for another process's writer of the same shadow repository.
const LOCK_WAIT: Duration = Duration::from_secs(120);

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
pub(crate) struct Changed {
    pub status: char,
    pub path: String,
}

/// A file to put into a snapshot as it was before the turn, instead of as it is (see `Shadow::commit`).
#[derive(Debug, Clone)]
pub(crate) struct Earlier {
    /// Relative to the work tree.
    pub path: String,
    /// Where its earlier content is saved; `None`: it did not exist.
    pub saved: Option<PathBuf>,
}

/// Makes `cmd` a git command that runs nothing but git (see the module docs): the one function every shadow git
/// call goes through. The neutral settings are `tern_process::git_env`'s; what is added here is the shadow's own.
pub(crate) fn neutral(cmd: &mut Command, home: &Path) {
    cmd.env_clear()
        // Never a `git` a command could have planted in a directory on PATH it may write.
        .env("PATH", tern_fs::search_path::own_path())
        .env("HOME", home)
        .env("LC_ALL", "C")
        .envs(tern_process::git_env::vars_with(CONFIG))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_SOURCE", EMPTY_TREE)
        .env("GIT_AUTHOR_NAME", "tern")
        .env("GIT_AUTHOR_EMAIL", "tern@localhost")
        .env("GIT_COMMITTER_NAME", "tern")
        .env("GIT_COMMITTER_EMAIL", "tern@localhost")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
}

#[derive(Debug)]
pub(crate) struct Shadow {
    git_dir: PathBuf,
    work_tree: PathBuf,
    index: PathBuf,
    /// This session's ref.
    reference: String,
    head: Option<String>,
    /// The ref was read (a resumed session's snapshots go on from its earlier runs' last one).
    head_read: bool,
}

impl Shadow {
    /// A shadow repository in `git_dir` (created 0700 on first use) for the work tree `work_tree`.
    pub(crate) fn new(git_dir: PathBuf, work_tree: PathBuf) -> Self {
        let index = git_dir.join("tern-index");
        Self {
            git_dir,
            work_tree,
            index,
            reference: "refs/sessions/default".into(),
            head: None,
            head_read: false,
        }
    }

    /// The shadow repository of `work_tree` under `shadows` (`<data>/shadow`), whose snapshots go to the ref of
    /// `session`.
    pub(crate) fn for_workspace(shadows: &Path, work_tree: PathBuf, session: &str) -> Self {
        let mut shadow = Self::new(shadows.join(workspace_key(&work_tree)), work_tree);
        let name: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !name.is_empty() {
            shadow.reference = format!("refs/sessions/{name}");
        }
        shadow
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The index exists: a snapshot only looks at what changed since the last one.
    pub(crate) fn indexed(&self) -> bool {
        self.index.exists()
    }

    pub(super) fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        neutral(&mut cmd, &self.git_dir);
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .current_dir(&self.work_tree)
            .kill_on_drop(true);
        cmd
    }

    pub(super) async fn git(&self, args: &[&str]) -> Result<Vec<u8>, ShadowError> {
        self.git_with(args, None).await
    }

    async fn git_with(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, ShadowError> {
        let mut cmd = self.command();
        cmd.args(args);
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn()?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin.write_all(input).await?;
        }
        let output = child.wait_with_output().await?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            Err(ShadowError::Failed {
                // The subcommand, after any `-c key=value`.
                command: args
                    .iter()
                    .find(|a| !a.starts_with('-') && !a.contains('='))
                    .copied()
                    .unwrap_or_default()
                    .to_string(),
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
    pub(crate) async fn snapshot(&mut self, message: &str, limit: Duration) -> Result<String, ShadowError> {
        self.timed(limit, async |shadow: &mut Self| {
            shadow.add_all().await?;
            shadow.commit_now(message, &[]).await
        })
        .await
    }

    /// Brings the index up to date with the work tree (the slow part of a first snapshot), within `limit`.
    pub(crate) async fn index(&mut self, limit: Duration) -> Result<(), ShadowError> {
        self.timed(limit, async |shadow: &mut Self| shadow.add_all().await)
            .await
    }

    /// Commits the index as it is (brought up to date by `index`), with each of `earlier` as it was before, within
    /// `limit`: the work tree before a turn whose edit tools already wrote some files.
    pub(crate) async fn commit(
        &mut self,
        message: &str,
        earlier: &[Earlier],
        limit: Duration,
    ) -> Result<String, ShadowError> {
        self.timed(limit, async |shadow: &mut Self| {
            // An index that is gone (the repository removed and made again since `index`) would be a snapshot
            // of nothing, which a revert would read as "every file was added by the turn".
            if !shadow.indexed() {
                return Err(ShadowError::Failed {
                    command: "write-tree".into(),
                    stderr: "the snapshot index is gone".into(),
                });
            }
            shadow.commit_now(message, earlier).await
        })
        .await
    }

    /// Runs `work` under the cross-process lock and `limit`. A killed `git add` may leave its lock behind: under our
    /// lock nobody else writes this index, so it is removed.
    async fn timed<T>(
        &mut self,
        limit: Duration,
        work: impl AsyncFnOnce(&mut Self) -> Result<T, ShadowError>,
    ) -> Result<T, ShadowError> {
        let started = Instant::now();
        self.create()?;
        let path = self.git_dir.join("tern.lock");
        let wait = limit.min(LOCK_WAIT);
        let _lock = match lock(&path, wait).await {
            // Retention removed the repository while this waited: it is made again.
            Err(ShadowError::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                self.create()?;
                lock(&path, wait).await?
            }
            other => other?,
        };
        // For retention: when the workspace's snapshots were last taken.
        let _ = std::fs::File::create(self.git_dir.join("used"));
        let stale = self.index.with_extension("lock");
        let _ = std::fs::remove_file(&stale);
        let left = limit.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, work(self)).await {
            Ok(result) => result,
            Err(_) => {
                let _ = std::fs::remove_file(&stale);
                Err(ShadowError::Timeout(limit))
            }
        }
    }

    /// Creates the repository (0700, under a directory that may be shared) the first time, and again after
    /// retention removed it (then no earlier snapshot of this session is there to go on from).
    fn create(&mut self) -> Result<(), ShadowError> {
        if !self.git_dir.join("HEAD").exists() {
            self.head = None;
            self.head_read = false;
            if let Some(parent) = self.git_dir.parent() {
                tern_fs::private_dir(parent)?;
            }
            tern_fs::private_dir(&self.git_dir)?;
            // `git init` would write sample hooks of the system's template; the few files a repository needs are
            // written here, so no git runs before the repository's config is ours.
            for dir in ["objects", "refs/heads", "refs/sessions"] {
                std::fs::create_dir_all(self.git_dir.join(dir))?;
            }
            std::fs::write(
                self.git_dir.join("config"),
                "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
            )?;
            self.exclude_own_data()?;
            // Retention's first collection is a day away (see `retention.rs`).
            std::fs::write(self.git_dir.join("collected"), b"")?;
            std::fs::write(self.git_dir.join("HEAD"), "ref: refs/heads/snapshots\n")?;
        }
        Ok(())
    }

    async fn add_all(&mut self) -> Result<(), ShadowError> {
        // The first indexing writes every file of the tree. Files over `core.bigFileThreshold` are streamed into one
        // pack instead of a loose object each: on 10,000 small files 1.3 s and 0.5 MB instead of 2.2 s and 41 MB.
        // Later ones write the few changed files as loose objects, as usual. (Only for `add`: the threshold also makes
        // diffs treat files as binary.)
        const ALL: [&str; 5] = ["add", "-A", "--ignore-errors", "--", "."];
        let first = ["-c", "core.bigFileThreshold=1"].into_iter().chain(ALL);
        let args: Vec<&str> = if self.indexed() { ALL.to_vec() } else { first.collect() };
        self.git(&args).await.or_else(|e| match e {
            // `--ignore-errors` still exits non-zero for an unreadable file after adding the rest: keep the snapshot.
            ShadowError::Failed { ref stderr, .. } if stderr.contains("unable to") => Ok(Vec::new()),
            e => Err(e),
        })?;
        Ok(())
    }

    async fn commit_now(&mut self, message: &str, earlier: &[Earlier]) -> Result<String, ShadowError> {
        self.put_back(earlier).await?;
        let tree = self.text(&["write-tree"]).await?;
        if !self.head_read {
            self.head_read = true;
            // A resumed session's earlier runs: their snapshots stay reachable from this session's ref.
            self.head = self
                .text(&["rev-parse", "--verify", "-q", &format!("{}^{{commit}}", self.reference)])
                .await
                .ok()
                .filter(|h| !h.is_empty());
        }
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
        let parent = self.head.clone();
        if let Some(parent) = &parent {
            args.extend(["-p", parent.as_str()]);
        }
        let commit = self.text(&args).await?;
        self.git(&["update-ref", &self.reference, &commit]).await?;
        self.head = Some(commit.clone());
        Ok(commit)
    }

    /// Puts the files of `earlier` that the index tracks back into it as they were (or out of it). Entries put in
    /// this way carry no stat data, so the next `add` hashes those files again.
    async fn put_back(&self, earlier: &[Earlier]) -> Result<(), ShadowError> {
        if earlier.is_empty() {
            return Ok(());
        }
        let mut args = vec!["ls-files", "-z", "--"];
        args.extend(earlier.iter().map(|e| e.path.as_str()));
        let listed = self.git(&args).await?;
        let tracked: Vec<&[u8]> = listed.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
        let chosen: Vec<&Earlier> = earlier
            .iter()
            .filter(|e| tracked.contains(&e.path.as_bytes()))
            .collect();
        let stored: Vec<&Path> = chosen.iter().filter_map(|e| e.saved.as_deref()).collect();
        let mut hashes = Vec::new();
        if !stored.is_empty() {
            let paths: Vec<u8> = stored
                .iter()
                .flat_map(|p| format!("{}\n", p.display()).into_bytes())
                .collect();
            let out = self
                .git_with(&["hash-object", "-w", "--no-filters", "--stdin-paths"], Some(&paths))
                .await?;
            hashes = String::from_utf8_lossy(&out).lines().map(str::to_string).collect();
        }
        let mut hashes = hashes.into_iter();
        let mut info = Vec::new();
        for entry in chosen {
            let line = match &entry.saved {
                Some(_) => format!("100644 {}\t{}", hashes.next().unwrap_or_default(), entry.path),
                None => format!("0 {}\t{}", "0".repeat(40), entry.path),
            };
            info.extend(line.into_bytes());
            info.push(0);
        }
        self.git_with(&["update-index", "-z", "--index-info"], Some(&info))
            .await
            .map(|_| ())
    }

    /// When tern's data directory is inside the work tree (a workspace that is the home directory), the data
    /// directory stays out of the snapshots: they must not snapshot themselves.
    fn exclude_own_data(&self) -> std::io::Result<()> {
        let data = self.git_dir.parent().and_then(Path::parent);
        let root = self.work_tree.canonicalize().unwrap_or_else(|_| self.work_tree.clone());
        let Some(inside) = data
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
    pub(crate) async fn changed(&self, from: &str, to: &str) -> Result<Vec<Changed>, ShadowError> {
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
    pub(crate) async fn content(&self, commit: &str, path: &str) -> Result<Vec<u8>, ShadowError> {
        self.git(&["cat-file", "blob", &format!("{commit}:{path}")]).await
    }

    pub(crate) fn work_tree(&self) -> &Path {
        &self.work_tree
    }
}

/// The directory name of a workspace's shadow repository: its last component (for people) and a hash of its
/// canonical path.
pub(crate) fn workspace_key(work_tree: &Path) -> String {
    use sha2::Digest;
    let root = work_tree.canonicalize().unwrap_or_else(|_| work_tree.to_path_buf());
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    format!("{name}-{hex}")
}

/// Takes the lock file at `path` (created if need be), waiting up to `wait` for another process to let it go.
/// Released when the returned file and every process it was handed to (a collection, see `retention.rs`) let it go.
/// A lock taken on a file that was removed meanwhile (retention removed the repository while this waited) guards
/// nothing: the file at `path` is opened again, and when its directory is gone the error is `NotFound`.
pub(crate) async fn lock(path: &Path, wait: Duration) -> Result<std::fs::File, ShadowError> {
    let started = Instant::now();
    loop {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(std::fs::TryLockError::WouldBlock) => return Err(ShadowError::Timeout(wait)),
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        if same_file(&file, path) {
            return Ok(file);
        }
    }
}

/// Whether the open `file` is still the one at `path`.
fn same_file(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// Lets the shadow repository in `git_dir` read the objects of the one in `from` through git's alternates (a
/// session of an earlier version kept its snapshots in its own directory; a fork reads its original's): nothing is
/// copied. Added to the alternates already there.
pub(crate) fn share_objects(git_dir: &Path, from: &Path) -> std::io::Result<()> {
    let objects = from.join("objects").canonicalize()?;
    let Some(line) = objects.to_str().filter(|t| !t.contains('\n')) else {
        return Err(std::io::Error::other(
            "the original's path cannot be written to an alternates file",
        ));
    };
    tern_fs::private_dir(git_dir)?;
    let info = git_dir.join("objects").join("info");
    std::fs::create_dir_all(&info)?;
    let file = info.join("alternates");
    let mut known = std::fs::read_to_string(&file).unwrap_or_default();
    if known.lines().any(|l| l == line) {
        return Ok(());
    }
    known.push_str(line);
    known.push('\n');
    std::fs::write(file, known)
}

/// Whether `dir` is inside a git work tree, found by looking for a `.git` entry upwards, without running git (the
/// user's git reads the repository's config, which may name commands).
pub(crate) fn in_git_work_tree(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// How many files a snapshot would cover (what git would see: `.gitignore` respected, `.git` skipped), counting up
/// to `cap` and stopping there.
pub(crate) fn count_files(root: &Path, cap: usize) -> usize {
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
