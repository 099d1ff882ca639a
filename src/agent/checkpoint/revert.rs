//! Reverting turns: which files to put back, to what, and which of them someone changed since the turn (those are
//! not overwritten without the user's confirmation). Several turns revert newest first: a file touched by more than
//! one gets the content from before the oldest of them, and is checked against what the newest left.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::shadow::{Shadow, ShadowError};
use super::{Checkpoints, Saved, TurnRecord};
use tern_protocol::FileDiff;
use tern_tools::file_state::hash_bytes;

/// What a file should look like now if nobody changed it after the turns.
#[derive(Debug, Clone)]
enum Expected {
    Bytes(Option<Vec<u8>>),
    Hash(Option<u64>),
    Unknown,
}

impl Expected {
    fn matches(&self, current: &Option<Vec<u8>>) -> bool {
        match self {
            Expected::Bytes(bytes) => bytes == current,
            Expected::Hash(hash) => *hash == current.as_deref().map(hash_bytes),
            Expected::Unknown => true,
        }
    }
}

/// One file to put back.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub path: PathBuf,
    /// A path from a snapshot must stay inside the work tree: a directory on its way that became a symlink since
    /// must not carry the write elsewhere.
    pub confine: Option<PathBuf>,
    pub display: String,
    pub current: Option<Vec<u8>>,
    pub restore: Option<Vec<u8>>,
}

/// What reverting some turns would do.
#[derive(Debug, Default)]
pub(crate) struct Revert {
    pub turns: Vec<u64>,
    pub changes: Vec<Change>,
    /// Files changed after the turns (by the user, or anyone but the turns): not overwritten unless forced.
    pub conflicts: Vec<String>,
    /// Files whose earlier content could not be read back.
    pub unreadable: Vec<String>,
    /// A reverted turn ran commands and there was no snapshot of it: what they changed stays.
    pub commands_not_undone: bool,
}

struct Entry {
    display: String,
    confine: Option<PathBuf>,
    restore: Option<Vec<u8>>,
    expected: Expected,
}

impl Checkpoints {
    /// What reverting `records` (given newest first) would do.
    pub(crate) async fn plan(&self, records: &[TurnRecord]) -> Revert {
        let mut revert = Revert::default();
        let mut entries: BTreeMap<PathBuf, Entry> = BTreeMap::new();
        let slot = match &self.shadow {
            Some(slot) => Some(slot.lock().await),
            None => None,
        };
        let shadow = slot.as_ref().map(|s| &s.shadow);
        for record in records {
            revert.turns.push(record.turn);
            let covered = match (shadow, &record.before, &record.after) {
                (Some(shadow), Some(before), Some(after)) => {
                    match from_snapshots(shadow, before, after, &mut entries, &mut revert.unreadable).await {
                        Ok(covered) => covered,
                        Err(e) => {
                            tracing::warn!(error = %e, "cannot compare snapshots");
                            revert.commands_not_undone |= record.ran_commands;
                            BTreeSet::new()
                        }
                    }
                }
                _ => {
                    revert.commands_not_undone |= record.ran_commands;
                    BTreeSet::new()
                }
            };
            // Files the snapshot does not cover: ignored by git, outside the workspace, or no snapshot at all.
            from_saved(record, &covered, &mut entries, &mut revert.unreadable);
        }
        for (path, entry) in entries {
            let current = tern_fs::read(&path).ok();
            if !entry.expected.matches(&current) {
                revert.conflicts.push(entry.display.clone());
            }
            if current != entry.restore {
                revert.changes.push(Change {
                    path,
                    confine: entry.confine,
                    display: entry.display,
                    current,
                    restore: entry.restore,
                });
            }
        }
        revert
    }

    /// Writes the files back and marks `turns` undone. Returns the diff of each file as applied, and the files that
    /// could not be written.
    pub(crate) fn apply(&self, revert: &Revert) -> (Vec<FileDiff>, Vec<String>) {
        let mut diffs = Vec::new();
        let mut failed = Vec::new();
        for change in &revert.changes {
            if let Some(root) = &change.confine
                && !stays_inside(&change.path, root)
            {
                failed.push(format!(
                    "{}: a directory on its path now leads out of the workspace",
                    change.display
                ));
                continue;
            }
            let written = match &change.restore {
                Some(bytes) => tern_fs::atomic_write(&change.path, bytes, None),
                None => match tern_fs::remove_file(&change.path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                },
            };
            match written {
                Ok(()) => diffs.push(FileDiff::new(
                    change.display.clone(),
                    change.current.as_deref().map(shown),
                    change.restore.as_deref().map(shown),
                )),
                Err(e) => failed.push(format!("{}: {e}", change.display)),
            }
        }
        self.mark_undone(&revert.turns);
        (diffs, failed)
    }
}

/// Larger contents are not put in the diff (it goes to the screen and the session log): a line says what they were.
const MAX_SHOWN_BYTES: usize = 256 * 1024;

/// A file's content as the diff shows it.
fn shown(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if bytes.len() <= MAX_SHOWN_BYTES => text.to_string(),
        Ok(_) => format!("[a large file: {} bytes]\n", bytes.len()),
        Err(_) => format!("[a binary file: {} bytes]\n", bytes.len()),
    }
}

/// Whether the nearest existing directory of `path` is inside `root` once symlinks are followed.
pub(crate) fn stays_inside(path: &std::path::Path, root: &std::path::Path) -> bool {
    let Ok(root) = root.canonicalize() else {
        return false;
    };
    path.ancestors()
        .skip(1)
        .find(|dir| dir.exists())
        .and_then(|dir| dir.canonicalize().ok())
        .is_some_and(|dir| dir.starts_with(&root))
}

/// Adds to `entries` the files that changed between the snapshots `before` and `after` of a turn, and to
/// `unreadable` those whose earlier content cannot be read back; the paths the snapshots cover.
async fn from_snapshots(
    shadow: &Shadow,
    before: &str,
    after: &str,
    entries: &mut BTreeMap<PathBuf, Entry>,
    unreadable: &mut Vec<String>,
) -> Result<BTreeSet<PathBuf>, ShadowError> {
    let mut covered = BTreeSet::new();
    for c in shadow.changed(before, after).await? {
        let path = shadow.work_tree().join(&c.path);
        let restore = if c.status == 'A' {
            None
        } else {
            match shadow.content(before, &c.path).await {
                Ok(bytes) => Some(bytes),
                Err(_) => {
                    unreadable.push(c.path);
                    continue;
                }
            }
        };
        let expected = if c.status == 'D' {
            Expected::Bytes(None)
        } else {
            shadow
                .content(after, &c.path)
                .await
                .map(|b| Expected::Bytes(Some(b)))
                .unwrap_or(Expected::Unknown)
        };
        covered.insert(path.clone());
        let confine = Some(shadow.work_tree().to_path_buf());
        merge(entries, path, (c.path, confine), restore, expected);
    }
    Ok(covered)
}

/// Adds to `entries` the files `record` saved itself that are not `covered` by its snapshots, and to `unreadable`
/// those whose saved content cannot be read back.
fn from_saved(
    record: &TurnRecord,
    covered: &BTreeSet<PathBuf>,
    entries: &mut BTreeMap<PathBuf, Entry>,
    unreadable: &mut Vec<String>,
) {
    for (path, file) in record.files.iter().filter(|(p, _)| !covered.contains(*p)) {
        let restore = match &file.before {
            Saved::Absent => None,
            Saved::Stored(stored) => match std::fs::read(stored) {
                Ok(bytes) => Some(bytes),
                Err(_) => {
                    unreadable.push(file.display.clone());
                    continue;
                }
            },
        };
        let expected = file.after.map(Expected::Hash).unwrap_or(Expected::Unknown);
        merge(entries, path.clone(), (file.display.clone(), None), restore, expected);
    }
}

/// Adds one turn's change of a file; turns come newest first, so the first expectation stays and the last
/// restore content wins.
fn merge(
    entries: &mut BTreeMap<PathBuf, Entry>,
    path: PathBuf,
    (display, confine): (String, Option<PathBuf>),
    restore: Option<Vec<u8>>,
    expected: Expected,
) {
    entries
        .entry(path)
        .and_modify(|e| e.restore = restore.clone())
        .or_insert(Entry {
            display,
            confine,
            restore,
            expected,
        });
}
