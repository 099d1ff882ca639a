//! Hunks of a proposed change: the one definition of a hunk both sides use. The approval prompt numbers and shows
//! these hunks, and the agent rebuilds the files from the answer (`ApprovalDecision::ApproveHunks`) with the same
//! function over the same diffs, so hunk 3 on screen is hunk 3 when it is applied.
//!
//! Lines are compared as the diff view compares them (without the line break, a `\r` before it dropped) and grouped
//! with three lines of context, as in `git diff`; hunks never overlap, so each can be taken or left on its own.

use std::ops::Range;

use similar::{Algorithm, DiffOp};

use crate::FileDiff;

/// Unchanged lines around each change, as in `git diff`.
pub const CONTEXT: usize = 3;

/// One hunk: which file (index into the diffs), its lines on each side with context (0-based, end exclusive), and
/// the changed lines alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub file: usize,
    pub path: String,
    pub old: Range<usize>,
    pub new: Range<usize>,
    pub changed_old: Range<usize>,
    pub changed_new: Range<usize>,
}

impl Hunk {
    /// Where the change is in the file as it was: `lines 10-14`, `line 3`, or `after line 7` for a pure insertion.
    pub fn location(&self) -> String {
        let (a, b) = (self.changed_old.start, self.changed_old.end);
        match b - a {
            0 if a == 0 => "at the start".to_string(),
            0 => format!("after line {a}"),
            1 => format!("line {}", a + 1),
            _ => format!("lines {}-{b}", a + 1),
        }
    }
}

/// The lines of a text with their line breaks, and the keys they are compared by.
pub fn lines(text: &str) -> (Vec<&str>, Vec<(&str, bool)>) {
    let raw: Vec<&str> = text.split_inclusive('\n').collect();
    let keys = raw
        .iter()
        .map(|l| match l.strip_suffix('\n') {
            Some(body) => (body.strip_suffix('\r').unwrap_or(body), true),
            None => (*l, false),
        })
        .collect();
    (raw, keys)
}

/// Every hunk of every diff, numbered in order (hunk `k` is `hunks(diffs)[k]`).
pub fn hunks(diffs: &[FileDiff]) -> Vec<Hunk> {
    let mut out = Vec::new();
    for (file, diff) in diffs.iter().enumerate() {
        let (_, old) = lines(diff.old.as_deref().unwrap_or(""));
        let (_, new) = lines(diff.new.as_deref().unwrap_or(""));
        let ops = similar::capture_diff_slices(Algorithm::Myers, &old, &new);
        for group in similar::group_diff_ops(ops, CONTEXT) {
            let changed: Vec<&DiffOp> = group.iter().filter(|op| !matches!(op, DiffOp::Equal { .. })).collect();
            let (Some(first), Some(last), Some(changed_first), Some(changed_last)) =
                (group.first(), group.last(), changed.first(), changed.last())
            else {
                continue;
            };
            out.push(Hunk {
                file,
                path: diff.path.clone(),
                old: first.old_range().start..last.old_range().end,
                new: first.new_range().start..last.new_range().end,
                changed_old: changed_first.old_range().start..changed_last.old_range().end,
                changed_new: changed_first.new_range().start..changed_last.new_range().end,
            });
        }
    }
    out
}

/// The new side of a hunk, context included: what `$EDITOR` opens when the user edits the hunk.
pub fn new_side(diff: &FileDiff, hunk: &Hunk) -> String {
    let (raw, _) = lines(diff.new.as_deref().unwrap_or(""));
    raw.get(hunk.new.clone()).unwrap_or_default().concat()
}
