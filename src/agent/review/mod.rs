//! `/review`: the hunks the agent changed since a point (the last turn, or the whole session), for the user to keep
//! or revert one by one, like `git add -p`; then the rejected hunks reverted all or nothing, and the model told in its
//! next turn which hunks the user reverted.
//!
//! What the agent changed is the diff between the checkpoints from before the chosen turns (`checkpoint::plan`,
//! the same code `/undo` uses to know what to put back) and the work tree now, restricted to the files the turns' edit
//! tools wrote: a file only the user (or a command) changed is not offered. Created, deleted and binary files are
//! offered whole. Only run between turns (the runner refuses the ops while a turn runs).

mod commit;
pub(crate) mod hunks;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::checkpoint::Checkpoints;
use commit::Planned;
use hunks::FileHunks;
use tern_protocol::{Event, FileDiff, HunkRef, ReviewChange, ReviewFile, ReviewHunk, ReviewSince};

pub(crate) use commit::{Writer, write_file};

/// Review ids, so an answer to an older review is not applied to a newer one.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A review waiting for the user's answer: each file as it was before the turns and as the review saw it.
pub(crate) struct PendingReview {
    id: u64,
    files: Vec<Reviewed>,
}

struct Reviewed {
    path: PathBuf,
    confine: Option<PathBuf>,
    display: String,
    change: ReviewChange,
    base: Option<Vec<u8>>,
    seen: Option<Vec<u8>>,
    changed_outside: bool,
}

impl Reviewed {
    /// Both sides as text, for a modified text file.
    fn texts(&self) -> Option<(&str, &str)> {
        if self.change != ReviewChange::Modified {
            return None;
        }
        let base = std::str::from_utf8(self.base.as_deref()?).ok()?;
        let seen = std::str::from_utf8(self.seen.as_deref()?).ok()?;
        Some((base, seen))
    }

    /// What the user is shown: the hunks, or the whole file as one.
    fn offered(&self) -> ReviewFile {
        let hunks = match self.texts() {
            Some((base, seen)) => {
                let file = FileHunks::new(base, seen);
                (0..file.hunks.len())
                    .map(|k| ReviewHunk {
                        lines: file.hunks[k].lines(),
                        diff: file.shown(&self.display, k),
                        parts: self.parts(&file, k),
                    })
                    .collect()
            }
            None => {
                let text = |bytes: &Option<Vec<u8>>| bytes.as_deref().map(shown);
                let lines = match self.change {
                    ReviewChange::Created => "whole file (created)",
                    ReviewChange::Deleted => "whole file (deleted)",
                    _ => "whole file (binary)",
                };
                vec![ReviewHunk {
                    lines: lines.into(),
                    diff: FileDiff::new(self.display.clone(), text(&self.base), text(&self.seen)),
                    parts: Vec::new(),
                }]
            }
        };
        ReviewFile {
            path: self.display.clone(),
            change: self.change,
            hunks,
            changed_outside: self.changed_outside,
        }
    }

    /// Hunk `k`'s parts as the view shows them, when it has more than one.
    fn parts(&self, file: &FileHunks<'_>, k: usize) -> Vec<ReviewHunk> {
        let parts = file.parts(k);
        if parts.len() < 2 {
            return Vec::new();
        }
        parts
            .iter()
            .map(|part| ReviewHunk {
                lines: file.part_lines(part),
                diff: file.shown_part(&self.display, part),
                parts: Vec::new(),
            })
            .collect()
    }

    /// The file's content once the changes `reverted` (hunks or parts, as ranges of its diff's changes) are put back.
    fn reverted(&self, reverted: &[std::ops::Range<usize>]) -> Option<Vec<u8>> {
        match self.texts() {
            Some((base, seen)) => Some(FileHunks::new(base, seen).revert_changes(reverted).into_bytes()),
            None => self.base.clone(),
        }
    }

    /// Why reverting `reverted` is refused now that the file holds `now`: the file and the lines.
    fn conflict(&self, reverted: &[usize], now: &Option<Vec<u8>>) -> String {
        let now_text = now.as_deref().and_then(|b| std::str::from_utf8(b).ok());
        if let (Some((base, seen)), Some(now)) = (self.texts(), now_text) {
            let file = FileHunks::new(base, seen);
            let chosen: Vec<&hunks::Hunk> = reverted.iter().filter_map(|&k| file.hunks.get(k)).collect();
            if let Some(hunk) = hunks::overlapping(seen, now, &chosen) {
                return format!(
                    "{}: {} changed after the review began, so the revert no longer applies there",
                    self.display,
                    hunk.lines()
                );
            }
            let lines: Vec<String> = chosen.iter().map(|h| h.lines()).collect();
            return format!(
                "{} changed on disk after the review began (the revert of {} was not written)",
                self.display,
                lines.join(", ")
            );
        }
        format!("{} changed on disk after the review began (whole file)", self.display)
    }
}

/// A file's content as a review shows it whole.
fn shown(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => format!("[a binary file: {} bytes]\n", bytes.len()),
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The review of what the agent changed since `since` (the edit tools' files whose checkpointed content differs from
/// the work tree now), and the event that offers it; or no review and the notice that there is nothing to review.
pub(crate) async fn start(checkpoints: &Checkpoints, since: ReviewSince) -> (Option<PendingReview>, Event) {
    let records = checkpoints.records();
    let (chosen, from) = match since {
        ReviewSince::Turn => {
            let last: Vec<_> = records.last().filter(|r| r.code).cloned().into_iter().collect();
            let from = records
                .last()
                .map_or("this session began".to_string(), |r| format!("turn {}", r.turn));
            (last, from)
        }
        ReviewSince::Session => {
            let all: Vec<_> = records.iter().rev().filter(|r| r.code).cloned().collect();
            (all, "this session began".to_string())
        }
    };
    let edited: BTreeSet<PathBuf> = chosen.iter().flat_map(|r| r.edited().cloned()).collect();
    let plan = checkpoints.plan(&chosen).await;
    let outside = plan.conflicts;
    let mut files: Vec<Reviewed> = plan
        .changes
        .into_iter()
        .filter(|c| edited.contains(&c.path))
        .map(|c| {
            let binary = |b: &Option<Vec<u8>>| b.as_deref().is_some_and(|b| std::str::from_utf8(b).is_err());
            let change = match (&c.restore, &c.current) {
                (None, _) => ReviewChange::Created,
                (_, None) => ReviewChange::Deleted,
                (before, now) if binary(before) || binary(now) => ReviewChange::Binary,
                _ => ReviewChange::Modified,
            };
            Reviewed {
                changed_outside: outside.contains(&c.display),
                path: c.path,
                confine: c.confine,
                display: c.display,
                change,
                base: c.restore,
                seen: c.current,
            }
        })
        .collect();
    // A file whose only difference the line diff cannot see (none) is not offered: indexes must match.
    files.retain(|f| {
        f.texts()
            .is_none_or(|(base, seen)| !FileHunks::new(base, seen).hunks.is_empty())
    });
    let offered: Vec<ReviewFile> = files.iter().map(Reviewed::offered).collect();
    if offered.is_empty() {
        let notice = Event::Notice {
            text: format!("no changes by the agent since {from}"),
        };
        return (None, notice);
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let event = Event::ReviewHunks {
        id,
        since,
        from,
        files: offered,
    };
    (Some(PendingReview { id, files }), event)
}

/// What the user's answer to a review did.
pub(crate) struct Answered {
    /// `Event::ReviewApplied`: what was reverted, or why nothing was.
    pub(crate) event: Event,
    /// The files written, whose earlier reads no longer hold.
    pub(crate) written: Vec<PathBuf>,
    /// What the model is told in its next turn.
    pub(crate) note: Option<String>,
    /// The files reverted and their diffs, to show as a pane.
    pub(crate) shown: Option<(Vec<String>, Vec<FileDiff>)>,
}

impl PendingReview {
    /// This review's id.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Reverts the hunks the user rejected (`reverted`), all or none, with `write`.
    pub(crate) fn answer(self, reverted: &[HunkRef], write: Writer<'_>) -> Answered {
        let id = self.id;
        let done = match apply(&self, reverted, write) {
            Ok(done) => done,
            Err(why) => {
                return Answered {
                    event: Event::ReviewApplied {
                        id,
                        reverted: 0,
                        files: Vec::new(),
                        summary: format!("nothing reverted: {why} (run /review again)"),
                        refused: Some(why),
                    },
                    written: Vec::new(),
                    note: None,
                    shown: None,
                };
            }
        };
        let written = done.iter().map(|d| self.files[d.index].path.clone()).collect();
        let note = note(&self, &done);
        let hunks: usize = done.iter().map(|d| d.lines.len()).sum();
        let files: Vec<String> = done.iter().map(|d| self.files[d.index].display.clone()).collect();
        let shown = (!done.is_empty()).then(|| (files.clone(), done.into_iter().map(|d| d.diff).collect()));
        let summary = if hunks == 0 {
            "review finished: every change kept".to_string()
        } else {
            format!(
                "reverted {} in {}",
                count(hunks, "hunk", "hunks"),
                count(files.len(), "file", "files")
            )
        };
        Answered {
            event: Event::ReviewApplied {
                id,
                reverted: hunks,
                files,
                refused: None,
                summary,
            },
            written,
            note,
            shown,
        }
    }
}

/// One file reverted: which of the review's files, and the lines of each hunk put back.
struct Done {
    index: usize,
    lines: Vec<String>,
    /// The change written, as a pane shows it.
    diff: FileDiff,
}

/// Computes every file's new content, checks them all against what the review saw, then writes them all or none.
fn apply(review: &PendingReview, reverted: &[HunkRef], write: Writer<'_>) -> Result<Vec<Done>, String> {
    let mut by_file: BTreeMap<usize, Vec<(usize, Option<usize>)>> = BTreeMap::new();
    for r in reverted.iter().filter(|r| r.file < review.files.len()) {
        by_file.entry(r.file).or_default().push((r.hunk, r.part));
    }
    // The hunks each file's chosen changes lie in, for a conflict's message.
    let mut hunks_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut planned = Vec::new();
    let mut done = Vec::new();
    for (&index, chosen) in &mut by_file {
        chosen.sort_unstable();
        chosen.dedup();
        let file = &review.files[index];
        let (lines, changes) = match file.texts() {
            Some((base, seen)) => {
                let hunks = FileHunks::new(base, seen);
                let picked: Vec<(String, std::ops::Range<usize>)> = chosen
                    .iter()
                    .filter_map(|&(k, part)| {
                        let changes = hunks.selected(k, part)?;
                        let label = match part {
                            None => hunks.hunks[k].lines(),
                            Some(_) => hunks.part_lines(&changes),
                        };
                        Some((label, changes))
                    })
                    .collect();
                picked.into_iter().unzip()
            }
            None => (vec!["the whole file".to_string()], Vec::new()),
        };
        if lines.is_empty() {
            continue;
        }
        hunks_of.insert(index, chosen.iter().map(|&(k, _)| k).collect());
        let new = file.reverted(&changes);
        let diff = FileDiff::new(
            file.display.clone(),
            file.seen.as_deref().map(shown),
            new.as_deref().map(shown),
        );
        planned.push(Planned {
            path: file.path.clone(),
            confine: file.confine.clone(),
            display: file.display.clone(),
            seen: file.seen.clone(),
            new,
        });
        done.push(Done { index, lines, diff });
    }
    let conflicts: Vec<String> = commit::changed_since(&planned)
        .into_iter()
        .map(|(k, now)| {
            let index = done[k].index;
            review.files[index].conflict(&hunks_of[&index], &now)
        })
        .collect();
    if !conflicts.is_empty() {
        return Err(conflicts.join("; "));
    }
    commit::write_all(&planned, write)?;
    Ok(done)
}

/// The note the model gets with the next user message, so it does not redo what the user reverted.
fn note(review: &PendingReview, done: &[Done]) -> Option<String> {
    if done.is_empty() {
        return None;
    }
    let parts: Vec<String> = done
        .iter()
        .map(|d| {
            let file = &review.files[d.index];
            match file.change {
                ReviewChange::Created => format!("{} (your new file, removed)", file.display),
                ReviewChange::Deleted => format!("{} (restored after you deleted it)", file.display),
                _ => format!("{} ({})", file.display, d.lines.join(", ")),
            }
        })
        .collect();
    let hunks: usize = done.iter().map(|d| d.lines.len()).sum();
    Some(format!(
        "[The user reviewed your changes with /review and reverted {}: {}. Those parts are back as they were before \
         your changes; do not redo them unless asked.]",
        count(hunks, "change", "changes"),
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests;
