//! Hunks of a proposed change: the one definition of a hunk both sides use. The approval prompt numbers and shows
//! these hunks, and the agent rebuilds the files from the answer (`ApprovalDecision::Hunks`) with the same
//! function over the same diffs, so hunk 3 on screen is hunk 3 when it is applied.
//!
//! Lines are compared as the diff view compares them (without the line break, a `\r` before it dropped) and grouped
//! with three lines of context, as in `git diff`; hunks never overlap, so each can be taken or left on its own.

use std::ops::Range;

use similar::{Algorithm, DiffOp};

use crate::FileDiff;

/// Unchanged lines around each change, as in `git diff`.
pub const CONTEXT: usize = 3;

/// One hunk: which file (index into the diffs), its lines on each side with context (0-based, end exclusive), the
/// changed lines alone, and its parts (one when the hunk is one run of changed lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub file: usize,
    pub path: String,
    pub old: Range<usize>,
    pub new: Range<usize>,
    pub changed_old: Range<usize>,
    pub changed_new: Range<usize>,
    pub parts: Vec<Part>,
}

/// The smallest change a hunk splits into (`s`, as in `git add -p`): a run of changed lines with no unchanged line
/// inside, its lines on each side (0-based, end exclusive, no context). Unchanged lines separate the parts of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

impl Part {
    /// Where the part is in the file as it was (as `Hunk::location`).
    pub fn location(&self) -> String {
        location(&self.old)
    }
}

/// The runs of changed ops in `ops`: each a range of indexes counted among the changed ops alone (equal ops not
/// counted), a run ending at an equal op. The one rule for splitting a hunk, used by the approval prompt and by
/// `/review`.
pub fn runs(ops: &[DiffOp]) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    let mut change = 0;
    let mut joined = false;
    for op in ops {
        if matches!(op, DiffOp::Equal { .. }) {
            joined = false;
            continue;
        }
        match runs.last_mut() {
            Some(last) if joined => last.end = change + 1,
            _ => runs.push(change..change + 1),
        }
        joined = true;
        change += 1;
    }
    runs
}

impl Hunk {
    /// Where the change is in the file as it was: `lines 10-14`, `line 3`, or `after line 7` for a pure insertion.
    pub fn location(&self) -> String {
        location(&self.changed_old)
    }

    /// The hunk can be split (it has more than one part).
    pub fn splits(&self) -> bool {
        self.parts.len() > 1
    }
}

fn location(old: &Range<usize>) -> String {
    let (a, b) = (old.start, old.end);
    match b - a {
        0 if a == 0 => "at the start".to_string(),
        0 => format!("after line {a}"),
        1 => format!("line {}", a + 1),
        _ => format!("lines {}-{b}", a + 1),
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
            let parts = runs(&group)
                .into_iter()
                .filter_map(|run| {
                    let (first, last) = (changed.get(run.start)?, changed.get(run.end - 1)?);
                    Some(Part {
                        old: first.old_range().start..last.old_range().end,
                        new: first.new_range().start..last.new_range().end,
                    })
                })
                .collect();
            out.push(Hunk {
                file,
                path: diff.path.clone(),
                old: first.old_range().start..last.old_range().end,
                new: first.new_range().start..last.new_range().end,
                changed_old: changed_first.old_range().start..changed_last.old_range().end,
                changed_new: changed_first.new_range().start..changed_last.new_range().end,
                parts,
            });
        }
    }
    out
}

/// The new side of a hunk, context included: what `$EDITOR` opens when the user edits the hunk.
pub fn new_side(diff: &FileDiff, hunk: &Hunk) -> String {
    new_lines(diff, &hunk.new)
}

/// The new side of a part (its changed lines, no context): what `$EDITOR` opens when the user edits the part.
pub fn part_new_side(diff: &FileDiff, part: &Part) -> String {
    new_lines(diff, &part.new)
}

fn new_lines(diff: &FileDiff, new: &Range<usize>) -> String {
    let (raw, _) = lines(diff.new.as_deref().unwrap_or(""));
    raw.get(new.clone()).unwrap_or_default().concat()
}
