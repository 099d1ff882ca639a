//! Hunk-by-hunk review inside the approval prompt: which hunk is under review, what the user chose for each one
//! before it, and the answer once every hunk has a choice. The hunks are `tern_protocol::hunks::hunks` over the
//! request's diffs, the same numbering the agent applies the answer with.

use tern_protocol::hunks::{self, Hunk};
use tern_protocol::{ApprovalDecision, EditedHunk, FileDiff};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    Accept,
    Reject,
    Edited(String),
}

pub(crate) struct HunkReview {
    pub(crate) hunks: Vec<Hunk>,
    /// One per hunk decided so far, in order; the hunk under review is `choices.len()`.
    pub(crate) choices: Vec<Choice>,
}

impl HunkReview {
    pub(crate) fn new(diffs: &[FileDiff]) -> Self {
        Self {
            hunks: hunks::hunks(diffs),
            choices: Vec::new(),
        }
    }

    pub(crate) fn current(&self) -> Option<&Hunk> {
        self.hunks.get(self.choices.len())
    }

    /// "hunk 2/5".
    pub(crate) fn counter(&self) -> String {
        format!(
            "hunk {}/{}",
            (self.choices.len() + 1).min(self.hunks.len()),
            self.hunks.len()
        )
    }

    /// Records a choice for the hunk under review; the answer once every hunk has one.
    pub(crate) fn choose(&mut self, choice: Choice) -> Option<ApprovalDecision> {
        if self.current().is_some() {
            self.choices.push(choice);
        }
        self.finished()
    }

    /// Accepts the hunk under review and every one after it.
    pub(crate) fn accept_rest(&mut self) -> Option<ApprovalDecision> {
        while self.current().is_some() {
            self.choices.push(Choice::Accept);
        }
        self.finished()
    }

    /// The new side of the hunk under review, for `$EDITOR`.
    pub(crate) fn current_text(&self, diffs: &[FileDiff]) -> Option<String> {
        let hunk = self.current()?;
        Some(hunks::new_side(diffs.get(hunk.file)?, hunk))
    }

    fn finished(&self) -> Option<ApprovalDecision> {
        if self.choices.len() < self.hunks.len() {
            return None;
        }
        let mut accepted = Vec::new();
        let mut edited = Vec::new();
        for (k, choice) in self.choices.iter().enumerate() {
            match choice {
                Choice::Accept => accepted.push(k),
                Choice::Reject => {}
                Choice::Edited(text) => edited.push(EditedHunk {
                    hunk: k,
                    text: text.clone(),
                }),
            }
        }
        Some(ApprovalDecision::Hunks { accepted, edited })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_hunks() -> Vec<FileDiff> {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "line eighteen\n");
        vec![FileDiff::new("a.txt", Some(old), Some(new))]
    }

    #[test]
    fn choices_become_the_answer_in_hunk_order() {
        let diffs = two_hunks();
        let mut review = HunkReview::new(&diffs);
        assert_eq!(review.hunks.len(), 2);
        assert_eq!(review.counter(), "hunk 1/2");
        assert!(review.current_text(&diffs).unwrap().contains("line two\n"));
        assert_eq!(review.choose(Choice::Reject), None);
        assert_eq!(review.counter(), "hunk 2/2");
        assert_eq!(
            review.choose(Choice::Edited("x\n".into())),
            Some(ApprovalDecision::Hunks {
                accepted: vec![],
                edited: vec![EditedHunk {
                    hunk: 1,
                    text: "x\n".into()
                }]
            })
        );
        let mut review = HunkReview::new(&diffs);
        assert_eq!(
            review.accept_rest(),
            Some(ApprovalDecision::Hunks {
                accepted: vec![0, 1],
                edited: vec![]
            })
        );
    }
}
