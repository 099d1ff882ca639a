//! Checkpoints: what the work tree looked like before each turn, so `/undo` and `/rewind` can put it back.
//!
//! Two layers, kept per turn:
//! - **File checkpoints**: before an approved edit, write or patch runs, the content (or absence) of every file it
//!   will write is saved under `<session>/checkpoints/turn-<n>/` (directories 0700, files 0600). At the end of the
//!   turn, a hash of each such file is kept, so a later change by someone else is noticed before it is overwritten.
//! - **Shadow snapshots**: in a git work tree, the whole tree is snapshotted before and after each turn into a git
//!   directory of tern's own (`shadow.rs`), so what shell commands changed is undoable too. A tree too large
//!   (more than `MAX_SNAPSHOT_FILES` files) or too slow to snapshot (over `SNAPSHOT_LIMIT`) turns snapshots off for
//!   the session, with a notice. The first snapshot, which hashes every file, is indexed in the background when the
//!   session starts (`prepare`), so a turn start only waits for what changed.
//!
//! Each record is written to the session log when its turn begins, when it changes and when the turn ends
//! (`record_to`), and a resumed session starts with the records it had (`restore`, `restore.rs`), so its earlier turns
//! stay undoable. Where a turn begins in the conversation is not re-recorded when compaction, a rewind or a new
//! conversation moves it: the log's own lines for those move it on load, by the same rules (`session::checkpoint`).
//!
//! Reverting (`revert.rs`) and the agent's `/undo` and `/rewind` (`ops.rs`) are built on these records. Nothing here
//! goes through the approval gate: it only reads files the gate already let a tool write, and runs git in a way the
//! project cannot steer.

mod ops;
mod restore;
mod revert;
pub mod shadow;

pub use restore::restorable;
pub(crate) use revert::stays_inside;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::session::checkpoint::{FileAfter, RecordPath, SavedFile, TurnCheckpoint};
use crate::tools::PathPolicy;
use crate::tools::file_state::hash_bytes;
use shadow::Shadow;

/// The tools whose write targets `approval::edit_paths` lists.
const WRITE_TOOLS: &[&str] = &["write_file", "edit_file", "notebook_edit", "apply_patch"];
/// How long one snapshot may take before snapshots are turned off for the session.
pub const SNAPSHOT_LIMIT: Duration = Duration::from_secs(3);
/// How long the first indexing of the work tree may take, in the background.
const FIRST_INDEX_LIMIT: Duration = Duration::from_secs(120);
/// Work trees with more files than this are not snapshotted.
pub const MAX_SNAPSHOT_FILES: usize = 20_000;
/// Files larger than this get no file checkpoint (no edit tool handles them anyway).
const MAX_CHECKPOINT_BYTES: u64 = 32 * 1024 * 1024;

/// A file as it was before the turn first wrote it.
#[derive(Debug, Clone)]
enum Saved {
    Absent,
    Stored(PathBuf),
}

#[derive(Debug, Clone)]
struct FileCheckpoint {
    display: String,
    before: Saved,
    /// The file's hash at the end of the turn (`None` inside: it did not exist then); `None`: not yet known.
    after: Option<Option<u64>>,
}

/// One turn's checkpoints and where it began in the conversation.
#[derive(Debug, Clone)]
pub(crate) struct TurnRecord {
    pub turn: u64,
    /// The user's message as typed.
    pub text: String,
    /// How many messages the conversation had before this turn's message; `None` once the turn is no longer in the
    /// conversation (rewound, compacted away, a new conversation).
    pub messages: Option<usize>,
    /// How many transcript events the log held before the turn.
    pub events: usize,
    before: Option<String>,
    after: Option<String>,
    files: BTreeMap<PathBuf, FileCheckpoint>,
    ran_commands: bool,
    /// The turn's changes are still in the work tree (not undone).
    pub code: bool,
}

impl TurnRecord {
    /// The files the turn's edit tools wrote (`/review` offers only these).
    pub(crate) fn edited(&self) -> impl Iterator<Item = &PathBuf> {
        self.files.keys()
    }

    /// The record as the session log keeps it.
    fn saved(&self) -> TurnCheckpoint {
        TurnCheckpoint {
            turn: self.turn,
            text: self.text.clone(),
            messages: self.messages,
            events: self.events,
            before: self.before.clone(),
            after: self.after.clone(),
            files: self
                .files
                .iter()
                .map(|(path, file)| SavedFile {
                    path: RecordPath(path.clone()),
                    display: file.display.clone(),
                    saved: match &file.before {
                        Saved::Absent => None,
                        Saved::Stored(stored) => Some(RecordPath(stored.clone())),
                    },
                    after: file.after.map(|after| after.map_or(FileAfter::Absent, FileAfter::Hash)),
                })
                .collect(),
            ran_commands: self.ran_commands,
            code: self.code,
        }
    }

    /// A record read back from the session log.
    fn restored(saved: TurnCheckpoint) -> Self {
        Self {
            turn: saved.turn,
            text: saved.text,
            messages: saved.messages,
            events: saved.events,
            before: saved.before,
            after: saved.after,
            files: saved
                .files
                .into_iter()
                .map(|file| {
                    let checkpoint = FileCheckpoint {
                        display: file.display,
                        before: file.saved.map_or(Saved::Absent, |stored| Saved::Stored(stored.0)),
                        after: file.after.map(|after| match after {
                            FileAfter::Absent => None,
                            FileAfter::Hash(hash) => Some(hash),
                        }),
                    };
                    (file.path.0, checkpoint)
                })
                .collect(),
            ran_commands: saved.ran_commands,
            code: saved.code,
        }
    }
}

/// Where changed records are written (the session log).
type RecordSink = Box<dyn Fn(&TurnCheckpoint) + Send + Sync>;

pub struct Checkpoints {
    dir: PathBuf,
    /// Keeps a session without a data directory's checkpoints alive for the session.
    _temp: Option<tempfile::TempDir>,
    /// Locked by whoever runs git on it: a turn's snapshot, a revert, or the first indexing in the background.
    shadow: Option<Arc<tokio::sync::Mutex<ShadowSlot>>>,
    turns: Mutex<Vec<TurnRecord>>,
    sink: Option<RecordSink>,
}

struct ShadowSlot {
    shadow: Shadow,
    /// The work tree's size was checked.
    sized: bool,
    /// Why snapshots are off, once they are, and whether the user was told.
    off: Option<String>,
    told: bool,
}

impl ShadowSlot {
    /// Checks the size once; turns snapshots off for a work tree that is too large.
    async fn check_size(&mut self) -> bool {
        if !self.sized {
            self.sized = true;
            let root = self.shadow.work_tree().to_path_buf();
            let count = tokio::task::spawn_blocking(move || shadow::count_files(&root, MAX_SNAPSHOT_FILES + 1))
                .await
                .unwrap_or(0);
            if count > MAX_SNAPSHOT_FILES {
                self.turn_off(format!("the work tree has more than {MAX_SNAPSHOT_FILES} files"));
            }
        }
        self.off.is_none()
    }

    fn turn_off(&mut self, reason: String) {
        tracing::warn!(%reason, "work-tree snapshots off");
        self.off = Some(reason);
    }

    /// The notice that snapshots are off, the first time it is asked for.
    fn tell(&mut self) -> Option<String> {
        let reason = self.off.as_ref().filter(|_| !self.told)?;
        let notice = format!(
            "work-tree snapshots are off for this session ({reason}): edits by tools stay undoable, changes made by \
             commands do not"
        );
        self.told = true;
        Some(notice)
    }
}

impl Checkpoints {
    /// Checkpoints kept in `session_dir` (a temporary directory without one) for the workspace `root`.
    pub fn new(session_dir: Option<&Path>, root: &Path) -> Self {
        let (base, temp) = match session_dir {
            Some(dir) => (Some(dir.to_path_buf()), None),
            None => match tempfile::Builder::new().prefix("tern-checkpoints-").tempdir() {
                Ok(t) => (Some(t.path().to_path_buf()), Some(t)),
                Err(_) => (None, None),
            },
        };
        let dir = base.as_ref().map(|b| b.join("checkpoints")).unwrap_or_default();
        let shadow = match &base {
            Some(base) if shadow::in_git_work_tree(root) => Some(Arc::new(tokio::sync::Mutex::new(ShadowSlot {
                shadow: Shadow::new(base.join("shadow.git"), root.to_path_buf()),
                sized: false,
                off: None,
                told: false,
            }))),
            _ => None,
        };
        Self {
            dir,
            _temp: temp,
            shadow,
            turns: Mutex::new(Vec::new()),
            sink: None,
        }
    }

    /// Writes each record with `sink` when its turn begins, when it changes and when the turn ends.
    pub(crate) fn record_to(&mut self, sink: impl Fn(&TurnCheckpoint) + Send + Sync + 'static) {
        self.sink = Some(Box::new(sink));
    }

    /// Starts with the records of a resumed session's earlier runs (see `restorable`).
    pub fn restore(&mut self, records: Vec<TurnCheckpoint>) {
        if let Ok(mut turns) = self.turns.lock() {
            turns.extend(records.into_iter().map(TurnRecord::restored));
            turns.sort_by_key(|r| r.turn);
        }
    }

    /// The highest turn number recorded (0 when none is): the next turn takes the one after.
    pub fn last_turn(&self) -> u64 {
        self.turns
            .lock()
            .map(|t| t.iter().map(|r| r.turn).max().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Writes the records `pick` chooses to the sink (after the lock is released: the sink takes the log's lock).
    fn save(&self, pick: impl Fn(&TurnRecord) -> bool) {
        let Some(sink) = &self.sink else {
            return;
        };
        let saved: Vec<TurnCheckpoint> = self
            .turns
            .lock()
            .map(|turns| turns.iter().filter(|r| pick(r)).map(TurnRecord::saved).collect())
            .unwrap_or_default();
        saved.iter().for_each(sink);
    }

    /// Writes the current turn's record.
    fn save_current(&self) {
        if let Some(turn) = self.current(|r| r.turn) {
            self.save(|r| r.turn == turn);
        }
    }

    /// Marks `turns` undone and records that.
    pub(crate) fn mark_undone(&self, turns: &[u64]) {
        self.update(|all| {
            for record in all.iter_mut().filter(|r| turns.contains(&r.turn)) {
                record.code = false;
            }
        });
        self.save(|r| turns.contains(&r.turn));
    }

    /// Starts the first snapshot's indexing in the background (hashing every file is the slow part: ~1 s for 10,000
    /// files), so that by the first turn a snapshot only looks at what changed. Needs a tokio runtime.
    pub fn prepare(&self) {
        let Some(slot) = self.shadow.clone() else {
            return;
        };
        tokio::spawn(async move {
            let mut slot = slot.lock().await;
            if slot.check_size().await
                && let Err(e) = slot.shadow.index(FIRST_INDEX_LIMIT).await
            {
                slot.turn_off(e.to_string());
            }
        });
    }

    /// Starts a turn's record, snapshotting the work tree first. Returns a notice when snapshots are off or late.
    pub async fn begin_turn(&mut self, turn: u64, text: &str, messages: usize, events: usize) -> Option<String> {
        let (before, notice) = self.snapshot(&format!("before turn {turn}")).await;
        if let Ok(mut turns) = self.turns.lock() {
            turns.push(TurnRecord {
                turn,
                text: text.to_string(),
                messages: Some(messages),
                events,
                before,
                after: None,
                files: BTreeMap::new(),
                ran_commands: false,
                code: true,
            });
        }
        // Recorded now: a crash during the turn leaves its snapshot from before it, and its number taken.
        self.save_current();
        notice
    }

    /// Ends the current turn's record: the snapshot after it, and each checkpointed file's hash.
    pub async fn end_turn(&mut self) -> Option<String> {
        let has_before = self.current(|r| r.before.is_some()).unwrap_or(false);
        let (after, notice) = if has_before {
            let turn = self.current(|r| r.turn).unwrap_or(0);
            self.snapshot(&format!("after turn {turn}")).await
        } else {
            (None, None)
        };
        if let Ok(mut turns) = self.turns.lock()
            && let Some(record) = turns.last_mut()
        {
            record.after = after;
            for (path, file) in record.files.iter_mut() {
                file.after = Some(crate::tools::strict_fs::read(path).ok().map(|b| hash_bytes(&b)));
            }
        }
        self.save_current();
        notice
    }

    fn current<T>(&self, f: impl FnOnce(&TurnRecord) -> T) -> Option<T> {
        self.turns.lock().ok().and_then(|t| t.last().map(f))
    }

    /// A snapshot within `SNAPSHOT_LIMIT` (waiting for the first indexing included), and a notice for the user.
    async fn snapshot(&self, message: &str) -> (Option<String>, Option<String>) {
        let Some(slot) = &self.shadow else {
            return (None, None);
        };
        let Ok(mut slot) = tokio::time::timeout(SNAPSHOT_LIMIT, slot.lock()).await else {
            return (
                None,
                Some(
                    "the first snapshot of the work tree is still being taken: what commands change in this turn \
                     cannot be undone (edits by tools can)"
                        .into(),
                ),
            );
        };
        if !slot.check_size().await {
            return (None, slot.tell());
        }
        match slot.shadow.snapshot(message, SNAPSHOT_LIMIT).await {
            Ok(commit) => (Some(commit), None),
            Err(e) => {
                slot.turn_off(e.to_string());
                (None, slot.tell())
            }
        }
    }

    /// Saves the files an approved call of `tool` will write, the first time the turn writes each, and records them
    /// (a crash during the turn keeps them undoable).
    pub(crate) fn before_write(&self, tool: &str, args: &Value, policy: &PathPolicy) {
        if self.save_files(tool, args, policy) {
            self.save_current();
        }
    }

    /// Saves the files; whether any was new to the turn.
    fn save_files(&self, tool: &str, args: &Value, policy: &PathPolicy) -> bool {
        if !WRITE_TOOLS.contains(&tool) || args.get("dry_run").and_then(Value::as_bool) == Some(true) {
            return false;
        }
        let Ok(mut turns) = self.turns.lock() else {
            return false;
        };
        let Some(record) = turns.last_mut() else {
            return false;
        };
        let known = record.files.len();
        for path in crate::agent::approval::edit_paths(tool, args) {
            let Ok(resolved) = policy.resolve(path) else {
                continue;
            };
            if record.files.contains_key(&resolved) {
                continue;
            }
            let before = match crate::tools::strict_fs::metadata(&resolved) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Saved::Absent,
                Ok(meta) if meta.is_file() && meta.len() <= MAX_CHECKPOINT_BYTES => {
                    let stored = self
                        .dir
                        .join(format!("turn-{}", record.turn))
                        .join(format!("{}", record.files.len()));
                    let saved = crate::tools::strict_fs::read(&resolved).and_then(|bytes| {
                        if let Some(parent) = stored.parent() {
                            crate::session::log::private_dir(parent)?;
                        }
                        crate::tools::file_state::atomic_write_private(&stored, &bytes)
                    });
                    match saved {
                        Ok(()) => Saved::Stored(stored),
                        Err(e) => {
                            tracing::warn!(error = %e, path = %resolved.display(), "cannot save a file checkpoint");
                            continue;
                        }
                    }
                }
                _ => continue,
            };
            record.files.insert(
                resolved.clone(),
                FileCheckpoint {
                    display: policy.display(&resolved),
                    before,
                    after: None,
                },
            );
        }
        record.files.len() > known
    }

    /// Notes that the turn ran a command (whose changes only a snapshot can undo).
    pub(crate) fn ran_command(&self) {
        let first = self
            .turns
            .lock()
            .ok()
            .and_then(|mut turns| turns.last_mut().map(|r| !std::mem::replace(&mut r.ran_commands, true)))
            .unwrap_or(false);
        if first {
            self.save_current();
        }
    }

    /// The turns recorded so far (clones: reverting runs git without holding the lock).
    pub(crate) fn records(&self) -> Vec<TurnRecord> {
        self.turns.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Changes the records under the lock.
    pub(crate) fn update(&self, f: impl FnOnce(&mut Vec<TurnRecord>)) {
        if let Ok(mut turns) = self.turns.lock() {
            f(&mut turns);
        }
    }

    /// The conversation's messages `from..to` were replaced by `with` count messages: turns after them move, turns
    /// inside them can no longer be rewound to.
    pub(crate) fn messages_replaced(&self, from: usize, to: usize, with: usize) {
        self.update(|turns| {
            for record in turns.iter_mut() {
                record.messages = crate::session::checkpoint::after_replace(record.messages, from, to, with);
            }
        });
    }

    /// The conversation kept only its first `keep` messages: turns from there on can no longer be rewound to.
    pub(crate) fn messages_cut(&self, keep: usize) {
        self.update(|turns| {
            for record in turns.iter_mut() {
                record.messages = crate::session::checkpoint::after_rewind(record.messages, keep);
            }
        });
    }

    /// A new conversation: no turn can be rewound to any more (their code can still be undone).
    pub(crate) fn forget_conversation(&self) {
        self.update(|turns| turns.iter_mut().for_each(|r| r.messages = None));
    }
}

#[cfg(test)]
mod tests;
