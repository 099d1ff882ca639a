//! Hunks of one file's change and putting some of them back: the diff between what a file was before the reviewed
//! turns (`base`) and what the review saw (`seen`), grouped into hunks as `git add -p` shows them, and the content the
//! file gets when a chosen set of hunks is reverted. Pure: no I/O. The same line diff serves both, so a hunk shown is
//! exactly the hunk reverted. A hunk splits into its parts (each run of changed lines between unchanged ones, by
//! `tern_protocol::hunks::runs`, the approval prompt's rule too), which are reverted the same way: a part is a range of the diff's changes, as a hunk is.

use std::ops::Range;

use similar::{DiffOp, DiffTag, TextDiff};

use tern_protocol::FileDiff;

/// Unchanged lines shown (and required to still match) around each change.
pub(crate) const CONTEXT: usize = 3;

/// One hunk: the lines it spans in `base` and in `seen` (context included, 0-based), and which of the diff's changes
/// it holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hunk {
    pub old: Range<usize>,
    pub new: Range<usize>,
    /// Indexes into the diff's changed ops (equal ops left out), in order.
    changes: Range<usize>,
}

impl Hunk {
    /// "lines 3-7" (1-based, in the file as the review saw it); a hunk that only removed lines names where they were.
    pub(crate) fn lines(&self) -> String {
        lines_label(&self.new)
    }
}

/// "lines 3-7" or "line 3" for lines `new` (0-based) of the file as the review saw it.
fn lines_label(new: &Range<usize>) -> String {
    let (start, end) = (new.start + 1, new.end.max(new.start + 1));
    if start == end {
        format!("line {start}")
    } else {
        format!("lines {start}-{end}")
    }
}

/// The changes between `base` and `seen`, as hunks.
pub(crate) struct FileHunks<'a> {
    base: &'a str,
    seen: &'a str,
    ops: Vec<DiffOp>,
    pub hunks: Vec<Hunk>,
}

fn changed(op: &DiffOp) -> bool {
    op.tag() != DiffTag::Equal
}

impl<'a> FileHunks<'a> {
    pub(crate) fn new(base: &'a str, seen: &'a str) -> Self {
        let diff = TextDiff::configure()
            .timeout(std::time::Duration::from_secs(2))
            .diff_lines(base, seen);
        let ops: Vec<DiffOp> = diff.ops().to_vec();
        let mut hunks = Vec::new();
        let mut next_change = 0;
        for group in diff.grouped_ops(CONTEXT) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let count = group.iter().filter(|op| changed(op)).count();
            if count == 0 {
                continue;
            }
            hunks.push(Hunk {
                old: first.old_range().start..last.old_range().end,
                new: first.new_range().start..last.new_range().end,
                changes: next_change..next_change + count,
            });
            next_change += count;
        }
        Self { base, seen, ops, hunks }
    }

    /// The file's content with the hunks `reverted` (indexes into `hunks`) put back as they were in `base`.
    pub(crate) fn revert(&self, reverted: &[usize]) -> String {
        let changes: Vec<Range<usize>> = reverted
            .iter()
            .filter_map(|&k| self.hunks.get(k))
            .map(|h| h.changes.clone())
            .collect();
        self.revert_changes(&changes)
    }

    /// The parts of hunk `k`: its runs of changes with no unchanged line between them, as ranges of the diff's
    /// changes (one part when the hunk is one run).
    pub(crate) fn parts(&self, k: usize) -> Vec<Range<usize>> {
        let Some(hunk) = self.hunks.get(k) else {
            return Vec::new();
        };
        // The approval prompt splits its hunks by the same rule: runs of changes are numbered over the whole file,
        // as `changes` are, and a hunk never shares a run with another (context lies between them).
        tern_protocol::hunks::runs(&self.ops)
            .into_iter()
            .filter(|run| hunk.changes.contains(&run.start))
            .collect()
    }

    /// Where changes `part` are in the file as the review saw it: "lines 3-4" (no context).
    pub(crate) fn part_lines(&self, part: &Range<usize>) -> String {
        let mut new: Option<Range<usize>> = None;
        for (i, op) in self.ops.iter().filter(|op| changed(op)).enumerate() {
            if part.contains(&i) {
                let r = op.new_range();
                new = Some(new.map_or(r.clone(), |n| n.start..r.end));
            }
        }
        lines_label(&new.unwrap_or_default())
    }

    /// The file's content with the changes in `reverted` (ranges of the diff's changes: hunks or parts of them) put
    /// back as they were in `base`.
    pub(crate) fn revert_changes(&self, reverted: &[Range<usize>]) -> String {
        let base: Vec<&str> = split_lines(self.base);
        let seen: Vec<&str> = split_lines(self.seen);
        let undo: Vec<bool> = {
            let total = self.hunks.last().map_or(0, |h| h.changes.end);
            let mut undo = vec![false; total];
            for range in reverted {
                if let Some(flags) = undo.get_mut(range.clone()) {
                    flags.iter_mut().for_each(|u| *u = true);
                }
            }
            undo
        };
        let mut out = String::with_capacity(self.seen.len());
        // One flag per changed op, in order: taken only as changed ops come.
        let mut flags = undo.iter();
        for op in &self.ops {
            let from_base = changed(op) && flags.next().copied().unwrap_or(false);
            let lines = if from_base {
                &base[op.old_range()]
            } else {
                &seen[op.new_range()]
            };
            lines.iter().for_each(|l| out.push_str(l));
        }
        out
    }

    /// What the view shows for hunk `k`: the file with only that hunk reverted against the file as seen, so the
    /// renderer draws exactly that hunk, with the seen file's line numbers on its new side.
    pub(crate) fn shown(&self, path: &str, k: usize) -> FileDiff {
        FileDiff::new(path, Some(self.revert(&[k])), Some(self.seen.to_string()))
    }

    /// What the view shows for a part of a hunk (see `shown`).
    pub(crate) fn shown_part(&self, path: &str, part: &Range<usize>) -> FileDiff {
        FileDiff::new(
            path,
            Some(self.revert_changes(std::slice::from_ref(part))),
            Some(self.seen.to_string()),
        )
    }

    /// The changes of hunk `k`, or of its part `part`.
    pub(crate) fn selected(&self, k: usize, part: Option<usize>) -> Option<Range<usize>> {
        match part {
            None => self.hunks.get(k).map(|h| h.changes.clone()),
            Some(p) => self.parts(k).get(p).cloned(),
        }
    }
}

/// Lines with their endings, as `similar` splits them (the last may lack one).
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Where `now` differs from `seen` that the `hunks` need unchanged (their lines in `seen`, context included): the
/// first such hunk, if any. A line inserted right at a hunk's edge counts as touching it.
pub(crate) fn overlapping<'h>(seen: &str, now: &str, hunks: &[&'h Hunk]) -> Option<&'h Hunk> {
    let diff = TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(seen, now);
    let touched: Vec<Range<usize>> = diff
        .ops()
        .iter()
        .filter(|op| changed(op))
        .map(|op| op.old_range())
        .collect();
    hunks.iter().copied().find(|hunk| {
        touched.iter().any(|t| {
            if t.is_empty() {
                hunk.new.start <= t.start && t.start <= hunk.new.end
            } else {
                t.start < hunk.new.end && hunk.new.start < t.end
            }
        })
    })
}
