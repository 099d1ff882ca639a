//! Where a `/review` walk stands: the files and hunks the agent offered, the user's decision on each (keep or
//! revert), and the hunk shown. Keys map to `Step`s here so the walk is testable without a terminal; the layer in
//! `view/review.rs` draws it.

use tern_protocol::{HunkRef, ReviewFile};

/// One step of the walk, as `git add -p` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Keep this hunk (`y`).
    Keep,
    /// Revert this hunk (`n`).
    Revert,
    /// Keep this hunk and the rest of the file (`a`).
    KeepFile,
    /// Revert this hunk and the rest of the file (`d`).
    RevertFile,
    /// Back to the hunk before.
    Back,
    /// Split this hunk into its smallest changes, each then decided on its own (`s`).
    Split,
}

pub(crate) struct ReviewWalk {
    pub(crate) id: u64,
    /// Since when, e.g. "turn 3".
    pub(crate) from: String,
    pub(crate) files: Vec<ReviewFile>,
    /// Per file, per hunk shown: the hunk of the review it is, and which part of it when it was split.
    origins: Vec<Vec<(usize, Option<usize>)>>,
    /// Per file, per hunk: `Some(true)` revert, `Some(false)` keep, `None` not decided (kept at the end).
    decisions: Vec<Vec<Option<bool>>>,
    /// The hunk shown: (file, hunk).
    pub(crate) at: (usize, usize),
    /// Every hunk was decided.
    pub(crate) done: bool,
}

impl ReviewWalk {
    pub(crate) fn new(id: u64, from: String, files: Vec<ReviewFile>) -> Self {
        let decisions = files.iter().map(|f| vec![None; f.hunks.len()]).collect();
        let origins = files
            .iter()
            .map(|f| (0..f.hunks.len()).map(|k| (k, None)).collect())
            .collect();
        let done = files.iter().all(|f| f.hunks.is_empty());
        Self {
            id,
            from,
            files,
            origins,
            decisions,
            at: (0, 0),
            done,
        }
    }

    /// All hunks, and the 1-based number of the one shown among them.
    pub(crate) fn overall(&self) -> (usize, usize) {
        let total = self.files.iter().map(|f| f.hunks.len()).sum();
        let before: usize = self.files[..self.at.0].iter().map(|f| f.hunks.len()).sum();
        (before + self.at.1 + 1, total)
    }

    pub(crate) fn decision(&self, file: usize, hunk: usize) -> Option<bool> {
        self.decisions.get(file).and_then(|d| d.get(hunk)).copied().flatten()
    }

    pub(crate) fn apply(&mut self, step: Step) {
        if self.done {
            return;
        }
        let (file, hunk) = self.at;
        let Some(decisions) = self.decisions.get_mut(file) else {
            return;
        };
        match step {
            Step::Keep | Step::Revert => {
                decisions[hunk] = Some(step == Step::Revert);
                self.advance();
            }
            Step::KeepFile | Step::RevertFile => {
                let revert = step == Step::RevertFile;
                decisions[hunk..].iter_mut().for_each(|d| *d = Some(revert));
                self.next_file();
            }
            Step::Split => self.split(),
            Step::Back => {
                if hunk > 0 {
                    self.at.1 -= 1;
                } else if let Some(prev) = (0..file).rev().find(|&f| !self.files[f].hunks.is_empty()) {
                    self.at = (prev, self.files[prev].hunks.len() - 1);
                }
            }
        }
    }

    /// Whether the hunk shown can be split.
    pub(crate) fn can_split(&self) -> bool {
        let (file, hunk) = self.at;
        self.files
            .get(file)
            .and_then(|f| f.hunks.get(hunk))
            .is_some_and(|h| h.parts.len() > 1)
    }

    /// Puts the hunk shown's parts in its place, the first of them shown, none decided.
    fn split(&mut self) {
        if !self.can_split() {
            return;
        }
        let (file, hunk) = self.at;
        let parts = std::mem::take(&mut self.files[file].hunks[hunk].parts);
        let (origin, _) = self.origins[file][hunk];
        let n = parts.len();
        self.files[file].hunks.splice(hunk..=hunk, parts);
        self.origins[file].splice(hunk..=hunk, (0..n).map(|p| (origin, Some(p))));
        self.decisions[file].splice(hunk..=hunk, std::iter::repeat_n(None, n));
    }

    fn advance(&mut self) {
        let (file, hunk) = self.at;
        if hunk + 1 < self.files[file].hunks.len() {
            self.at.1 += 1;
        } else {
            self.next_file();
        }
    }

    fn next_file(&mut self) {
        match (self.at.0 + 1..self.files.len()).find(|&f| !self.files[f].hunks.is_empty()) {
            Some(next) => self.at = (next, 0),
            None => self.done = true,
        }
    }

    /// The hunks to revert (undecided ones are kept).
    pub(crate) fn reverted(&self) -> Vec<HunkRef> {
        self.decisions
            .iter()
            .zip(&self.origins)
            .enumerate()
            .flat_map(|(file, (hunks, origins))| {
                hunks
                    .iter()
                    .zip(origins)
                    .filter(|(d, _)| **d == Some(true))
                    .map(move |(_, &(hunk, part))| HunkRef { file, hunk, part })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_protocol::{FileDiff, ReviewChange, ReviewHunk};

    fn file(path: &str, hunks: usize) -> ReviewFile {
        ReviewFile {
            path: path.into(),
            change: ReviewChange::Modified,
            hunks: (0..hunks)
                .map(|k| ReviewHunk {
                    lines: format!("line {k}"),
                    diff: FileDiff::new(path, Some("a\n".into()), Some("b\n".into())),
                    parts: Vec::new(),
                })
                .collect(),
            changed_outside: false,
        }
    }

    fn refs(list: &[(usize, usize)]) -> Vec<HunkRef> {
        list.iter()
            .map(|&(file, hunk)| HunkRef { file, hunk, part: None })
            .collect()
    }

    #[test]
    fn keys_walk_file_by_file_like_git_add_p() {
        let mut walk = ReviewWalk::new(1, "x".into(), vec![file("a", 3), file("b", 2)]);
        walk.apply(Step::Keep);
        walk.apply(Step::Revert);
        assert_eq!(walk.at, (0, 2));
        assert_eq!(walk.overall(), (3, 5));
        walk.apply(Step::Back);
        walk.apply(Step::RevertFile);
        assert_eq!(walk.at, (1, 0));
        walk.apply(Step::KeepFile);
        assert!(walk.done);
        assert_eq!(walk.reverted(), refs(&[(0, 1), (0, 2)]));
    }

    #[test]
    fn undecided_hunks_are_kept_and_empty_files_skipped() {
        let mut walk = ReviewWalk::new(1, "x".into(), vec![file("a", 1), file("b", 0), file("c", 2)]);
        walk.apply(Step::Revert);
        assert_eq!(walk.at, (2, 0));
        walk.apply(Step::Back);
        assert_eq!(walk.at, (0, 0));
        assert_eq!(walk.decision(0, 0), Some(true));
        assert_eq!(walk.reverted(), refs(&[(0, 0)]));
        assert!(!walk.done);
    }

    #[test]
    fn a_split_hunk_is_decided_part_by_part() {
        let mut three = file("a", 2);
        three.hunks[0].parts = (0..3)
            .map(|p| ReviewHunk {
                lines: format!("line {p}"),
                diff: FileDiff::new("a", Some("a\n".into()), Some("b\n".into())),
                parts: Vec::new(),
            })
            .collect();
        let mut walk = ReviewWalk::new(1, "x".into(), vec![three]);
        assert!(walk.can_split());
        walk.apply(Step::Split);
        assert!(!walk.can_split());
        assert_eq!(walk.overall(), (1, 4));
        walk.apply(Step::Keep);
        walk.apply(Step::Revert);
        walk.apply(Step::Keep);
        walk.apply(Step::Revert);
        assert!(walk.done);
        assert_eq!(
            walk.reverted(),
            [
                HunkRef {
                    file: 0,
                    hunk: 0,
                    part: Some(1)
                },
                HunkRef {
                    file: 0,
                    hunk: 1,
                    part: None
                },
            ]
        );
    }
}
