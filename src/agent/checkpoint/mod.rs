//! Checkpoints: what the work tree looked like before each turn, so `/undo` and `/rewind` can put it back.
//!
//! Two layers, kept per turn:
//! - **File checkpoints**: before an approved edit, write or patch runs, the content (or absence) of every file it
//!   will write is saved under `<session>/checkpoints/turn-<n>/` (directories 0700, files 0600). At the end of the
//!   turn, a hash of each such file is kept, so a later change by someone else is noticed before it is overwritten.
//! - **Shadow snapshots**: in a git work tree, a turn that runs a call whose writes are not known beforehand (a
//!   command, an MCP tool that is not read-only: any tool that is not `read_only()` and writes no file checkpoint)
//!   snapshots the whole tree just before the first such call and again at its end, into the workspace's shadow
//!   repository (`shadow.rs`), so what commands changed is undoable too. A turn that changes nothing, or only edits
//!   files through edit tools, takes no snapshot. When the workspace was snapshotted before, its persistent index is
//!   brought up to date in the background as each turn starts, so the first command waits for little more than a
//!   commit; files the turn's edit tools wrote by then go into that snapshot as they were before the turn. A tree
//!   too large (more than `MAX_SNAPSHOT_FILES` files) or too slow to snapshot turns snapshots off for the session,
//!   with a notice; a first indexing slower than `SNAPSHOT_LIMIT` goes on in the background for the next turns.
//!   Old snapshots are collected by `retention.rs`.
//!
//! Each record is written to the session log when its turn begins, when it changes and when the turn ends
//! (`record_to`), and a resumed session starts with the records it had (`restore`, `restore.rs`), so its earlier turns
//! stay undoable. Where a turn begins in the conversation is not re-recorded when compaction, a rewind or a new
//! conversation moves it: the log's own lines for those move it on load, by the same rules (`session::checkpoint`).
//!
//! Reverting (`revert.rs`) and the agent's `/undo` and `/rewind` (`ops.rs`) are built on these records. Nothing here
//! goes through the approval gate: it only reads files the gate already let a tool write, and runs git in a way the
//! project cannot steer.

mod restore;
mod retention;
mod revert;
pub(crate) use revert::Revert;
pub(crate) mod shadow;

pub use retention::{Retention, collect, collect_in_background};

pub use restore::restorable;
pub(crate) use revert::stays_inside;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shadow::Shadow;
use tern_protocol::ToolKind;
use tern_session::checkpoint::{FileAfter, RecordPath, SavedFile, TurnCheckpoint};
use tern_tools::file_state::hash_bytes;
use tern_tools::{Effects, PathPolicy};

/// How long a command waits for the snapshot before it, and how long the snapshot after a turn may take before
/// snapshots are turned off for the session.
pub(crate) const SNAPSHOT_LIMIT: Duration = Duration::from_secs(3);
/// How long the indexing of the work tree may take, in the background (the first one hashes every file).
const FIRST_INDEX_LIMIT: Duration = Duration::from_secs(600);
/// Work trees with more files than this are not snapshotted (counted once, before the first indexing).
pub(crate) const MAX_SNAPSHOT_FILES: usize = 500_000;
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
    /// The work tree.
    root: PathBuf,
    /// The last turn whose snapshot before its first command was tried (taken or missed: a turn gets one try, as
    /// a later one would miss what the first command changed).
    tried: Mutex<u64>,
    sink: Option<RecordSink>,
}

struct ShadowSlot {
    shadow: Shadow,
    /// The work tree's size was checked.
    sized: bool,
    /// The turn the index was last brought up to date for.
    indexed_for: Option<u64>,
    /// Why snapshots are off, once they are, and whether the user was told.
    off: Option<String>,
    told: bool,
}

impl ShadowSlot {
    /// Checks the size once; turns snapshots off for a work tree that is too large.
    async fn check_size(&mut self) -> bool {
        if !self.sized {
            self.sized = true;
            if self.shadow.indexed() {
                return self.off.is_none();
            }
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
            Some(base) if shadow::in_git_work_tree(root) => {
                let shadow = workspace_shadow(base, temp.is_some(), root);
                Some(Arc::new(tokio::sync::Mutex::new(ShadowSlot {
                    shadow,
                    sized: false,
                    indexed_for: None,
                    off: None,
                    told: false,
                })))
            }
            _ => None,
        };
        Self {
            dir,
            _temp: temp,
            shadow,
            turns: Mutex::new(Vec::new()),
            root: root.to_path_buf(),
            tried: Mutex::new(0),
            sink: None,
        }
    }

    /// Writes each record with `sink` when its turn begins, when it changes and when the turn ends.
    pub(crate) fn record_to(&mut self, sink: impl Fn(&TurnCheckpoint) + Send + Sync + 'static) {
        self.sink = Some(Box::new(sink));
    }

    /// Starts with the records of a resumed session's earlier runs (see `restorable`).
    pub(crate) fn restore(&mut self, records: Vec<TurnCheckpoint>) {
        if let Ok(mut turns) = self.turns.lock() {
            turns.extend(records.into_iter().map(TurnRecord::restored));
            turns.sort_by_key(|r| r.turn);
        }
    }

    /// The highest turn number recorded (0 when none is): the next turn takes the one after.
    pub(crate) fn last_turn(&self) -> u64 {
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

    /// Starts a turn's record. In a work tree snapshotted before, the index is brought up to date in the
    /// background (off the path of the turn's first request), so a command in the turn waits for little. Nothing
    /// is written for a turn that changes nothing.
    pub async fn begin_turn(&mut self, turn: u64, text: &str, messages: usize, events: usize) -> Option<String> {
        if let Ok(mut turns) = self.turns.lock() {
            turns.push(TurnRecord {
                turn,
                text: text.to_string(),
                messages: Some(messages),
                events,
                before: None,
                after: None,
                files: BTreeMap::new(),
                ran_commands: false,
                code: true,
            });
        }
        if let Some(slot) = &self.shadow
            && slot.try_lock().is_ok_and(|s| s.shadow.indexed() && s.off.is_none())
        {
            drop(self.index_in_background(turn));
        }
        // Recorded now: a crash during the turn leaves its number taken.
        self.save_current();
        None
    }

    /// Brings the index up to date for `turn` in a task of its own, which goes on when its caller stops waiting.
    fn index_in_background(&self, turn: u64) -> Option<tokio::task::JoinHandle<Result<(), String>>> {
        let slot = self.shadow.clone()?;
        Some(tokio::spawn(async move {
            let mut slot = slot.lock().await;
            if slot.indexed_for == Some(turn) {
                return Ok(());
            }
            if !slot.check_size().await {
                return Err(slot.off.clone().unwrap_or_default());
            }
            match slot.shadow.index(FIRST_INDEX_LIMIT).await {
                Ok(()) => {
                    slot.indexed_for = Some(turn);
                    Ok(())
                }
                Err(e) => {
                    slot.turn_off(e.to_string());
                    Err(e.to_string())
                }
            }
        }))
    }

    /// Before a call that can change files: an edit tool's files are saved (`before_write`; with an `editor` that
    /// takes writes, the text it shows, which is what the edit changes); for any other call that is not read-only (a
    /// command, an MCP tool), the work tree is snapshotted, the first time in the turn. Returns a notice when that
    /// snapshot could not be taken.
    pub(crate) async fn before_call(
        &self,
        tool: &dyn tern_tools::Tool,
        effects: &Effects,
        policy: &PathPolicy,
        editor: Option<&Arc<dyn tern_tools::Buffers>>,
    ) -> Option<String> {
        // An MCP server's read-only hint is not a guarantee; a request to the outside (a web fetch) writes nothing.
        let declares_nothing = effects.command.is_none() && effects.writes.is_empty();
        if (tool.read_only() && tool.hints().is_none() && declares_nothing) || effects.request.is_some() {
            return None;
        }
        if tool.kind() == ToolKind::Edit || !effects.writes.is_empty() {
            let texts = match editor.filter(|editor| editor.writes()) {
                Some(editor) => self.editor_texts(editor, effects, policy).await,
                None => HashMap::new(),
            };
            if self.save_files(effects, policy, &texts) {
                self.save_current();
            }
            return None;
        }
        let notice = self.before_command().await;
        self.ran_command();
        notice
    }

    /// Snapshots the work tree before the turn's first command (once per turn): the index as the turn found it,
    /// with the files the turn's edit tools already wrote as they were before. Waits at most `SNAPSHOT_LIMIT`; a
    /// slower first indexing goes on for the next turns.
    pub async fn before_command(&self) -> Option<String> {
        let turn = self.current(|r| r.turn)?;
        let first = self
            .tried
            .lock()
            .map(|mut tried| std::mem::replace(&mut *tried, turn) != turn)
            .unwrap_or(false);
        if !first {
            return None;
        }
        let slot = self.shadow.clone()?;
        let started = std::time::Instant::now();
        let indexing = self.index_in_background(turn)?;
        let late = "the work tree is still being indexed for snapshots: what commands change in this turn cannot be \
                    undone (edits by tools can)";
        match tokio::time::timeout(SNAPSHOT_LIMIT, indexing).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(_))) | Ok(Err(_)) => return slot.lock().await.tell(),
            Err(_) => return Some(late.into()),
        }
        let earlier = self.earlier();
        let mut slot = slot.lock().await;
        let left = SNAPSHOT_LIMIT.saturating_sub(started.elapsed()).max(SNAPSHOT_LIMIT / 3);
        match slot.shadow.commit(&format!("before turn {turn}"), &earlier, left).await {
            Ok(commit) => {
                self.update(|turns| {
                    if let Some(record) = turns.last_mut() {
                        record.before = Some(commit);
                    }
                });
                self.save_current();
                None
            }
            Err(e) => {
                slot.turn_off(e.to_string());
                slot.tell()
            }
        }
    }

    /// The files the current turn's edit tools wrote, as they were before the turn, relative to the work tree.
    fn earlier(&self) -> Vec<shadow::Earlier> {
        let root = self.root.canonicalize().unwrap_or_else(|_| self.root.clone());
        self.current(|record| {
            record
                .files
                .iter()
                .filter_map(|(path, file)| {
                    let relative = path.strip_prefix(&root).ok()?.to_str()?.to_string();
                    Some(shadow::Earlier {
                        path: relative,
                        saved: match &file.before {
                            Saved::Absent => None,
                            Saved::Stored(stored) => Some(stored.clone()),
                        },
                    })
                })
                .collect()
        })
        .unwrap_or_default()
    }

    /// Ends the current turn's record: the snapshot after it (when there is one from before it), and each
    /// checkpointed file's hash.
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
                file.after = Some(tern_fs::read(path).ok().map(|b| hash_bytes(&b)));
            }
        }
        self.save_current();
        notice
    }

    fn current<T>(&self, f: impl FnOnce(&TurnRecord) -> T) -> Option<T> {
        self.turns.lock().ok().and_then(|t| t.last().map(f))
    }

    /// A snapshot within `SNAPSHOT_LIMIT`, and a notice for the user.
    async fn snapshot(&self, message: &str) -> (Option<String>, Option<String>) {
        let Some(slot) = &self.shadow else {
            return (None, None);
        };
        let Ok(mut slot) = tokio::time::timeout(SNAPSHOT_LIMIT, slot.lock()).await else {
            return (None, None);
        };
        if !slot.check_size().await {
            return (None, slot.tell());
        }
        match slot.shadow.snapshot(message, SNAPSHOT_LIMIT).await {
            Ok(commit) => {
                slot.indexed_for = None;
                (Some(commit), None)
            }
            Err(e) => {
                slot.turn_off(e.to_string());
                (None, slot.tell())
            }
        }
    }

    /// Saves the disk's text of the files an approved call will write (the tests' way in; `before_call` also takes
    /// an editor's text).
    #[cfg(test)]
    pub(crate) fn before_write(&self, effects: &Effects, policy: &PathPolicy) {
        if self.save_files(effects, policy, &HashMap::new()) {
            self.save_current();
        }
    }

    /// The editor's text of each file `effects` writes that the turn has not saved yet (the edit tools edit that
    /// text, so it is what the file was before the edit).
    async fn editor_texts(
        &self,
        editor: &Arc<dyn tern_tools::Buffers>,
        effects: &Effects,
        policy: &PathPolicy,
    ) -> HashMap<PathBuf, String> {
        let saved = self
            .current(|record| record.files.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let mut texts = HashMap::new();
        for path in &effects.writes {
            let Ok(resolved) = policy.resolve(path) else {
                continue;
            };
            if saved.contains(&resolved) || texts.contains_key(&resolved) {
                continue;
            }
            if let Some(text) = editor.text(&resolved).await.filter(|text| !text.contains('\0')) {
                texts.insert(resolved, text);
            }
        }
        texts
    }

    /// Saves the files (the editor's text where `texts` has it, else the disk's); whether any was new to the turn.
    fn save_files(&self, effects: &Effects, policy: &PathPolicy, texts: &HashMap<PathBuf, String>) -> bool {
        if effects.writes.is_empty() {
            return false;
        }
        let Ok(mut turns) = self.turns.lock() else {
            return false;
        };
        let Some(record) = turns.last_mut() else {
            return false;
        };
        let known = record.files.len();
        for path in &effects.writes {
            let Ok(resolved) = policy.resolve(path) else {
                continue;
            };
            if record.files.contains_key(&resolved) {
                continue;
            }
            let stored = self
                .dir
                .join(format!("turn-{}", record.turn))
                .join(format!("{}", record.files.len()));
            let before = match (texts.get(&resolved), tern_fs::metadata(&resolved)) {
                (Some(text), _) => match store(&stored, text.as_bytes()) {
                    Ok(()) => Saved::Stored(stored),
                    Err(e) => {
                        tracing::warn!(error = %e, path = %resolved.display(), "cannot save a file checkpoint");
                        continue;
                    }
                },
                (None, Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Saved::Absent,
                (None, Ok(meta)) if meta.is_file() && meta.len() <= MAX_CHECKPOINT_BYTES => {
                    match tern_fs::read(&resolved).and_then(|bytes| store(&stored, &bytes)) {
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
                record.messages = tern_session::checkpoint::after_replace(record.messages, from, to, with);
            }
        });
    }

    /// The conversation kept only its first `keep` messages: turns from there on can no longer be rewound to.
    pub(crate) fn messages_cut(&self, keep: usize) {
        self.update(|turns| {
            for record in turns.iter_mut() {
                record.messages = tern_session::checkpoint::after_rewind(record.messages, keep);
            }
        });
    }

    /// A new conversation: no turn can be rewound to any more (their code can still be undone).
    pub(crate) fn forget_conversation(&self) {
        self.update(|turns| turns.iter_mut().for_each(|r| r.messages = None));
    }
}

/// Keeps `bytes` as a file checkpoint at `stored` (private, in a private directory).
fn store(stored: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = stored.parent() {
        tern_fs::private_dir(parent)?;
    }
    tern_fs::atomic_write_private(stored, bytes)
}

/// The shadow repository for the work tree `root` of a session kept in `base`: the workspace's, shared by its
/// sessions, under the data directory (`<data>/sessions/<id>` → `<data>/shadow/`); a session without a data
/// directory (`temporary`) keeps one of its own. A session of an earlier version kept its snapshots in its own
/// `shadow.git`: they stay readable through alternates.
fn workspace_shadow(base: &Path, temporary: bool, root: &Path) -> Shadow {
    let data = base.parent().and_then(Path::parent).filter(|_| !temporary);
    let session = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shadow = match data {
        Some(data) => Shadow::for_workspace(&data.join("shadow"), root.to_path_buf(), &session),
        None => Shadow::new(base.join("shadow"), root.to_path_buf()),
    };
    let own = base.join("shadow.git");
    if own.join("objects").is_dir()
        && let Err(e) = shadow::share_objects(shadow.git_dir(), &own)
    {
        tracing::warn!(error = %e, "cannot reach the session's earlier snapshots");
    }
    shadow
}

#[cfg(test)]
mod tests;
