//! Hunk-by-hunk review inside the approval prompt: which hunk is under review, what the user chose for each one
//! before it, and the answer once every hunk has a choice. `s` splits the hunk under review into its parts
//! (`Hunk::parts`, the rule `/review` splits by), each then answered on its own. The hunks are `tern_protocol::hunks::hunks` over the
//! request's diffs, the same numbering the agent applies the answer with.

use tern_protocol::hunks::{self, Hunk, Part};
use tern_protocol::{ApprovalDecision, EditedHunk, EditedPart, FileDiff, SplitHunk};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    Accept,
    Reject,
    Edited(String),
}

/// One thing the user answers: hunk `hunk` whole, or its part `part` once the user split it (`s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Item {
    pub(crate) hunk: usize,
    pub(crate) part: Option<usize>,
}

pub(crate) struct HunkReview {
    pub(crate) hunks: Vec<Hunk>,
    /// What is answered, in order: each hunk, or its parts where it was split.
    items: Vec<Item>,
    /// One per item decided so far, in order; the item under review is `choices.len()`.
    choices: Vec<Choice>,
}

impl HunkReview {
    pub(crate) fn new(diffs: &[FileDiff]) -> Self {
        let hunks = hunks::hunks(diffs);
        let items = (0..hunks.len()).map(|hunk| Item { hunk, part: None }).collect();
        Self {
            hunks,
            items,
            choices: Vec::new(),
        }
    }

    /// The item under review.
    pub(crate) fn current_item(&self) -> Option<Item> {
        self.items.get(self.choices.len()).copied()
    }

    /// The hunk under review (whole or split).
    pub(crate) fn current(&self) -> Option<&Hunk> {
        self.hunks.get(self.current_item()?.hunk)
    }

    /// The part under review, when its hunk was split.
    pub(crate) fn current_part(&self) -> Option<&Part> {
        let item = self.current_item()?;
        self.hunks.get(item.hunk)?.parts.get(item.part?)
    }

    /// What the user chose for `item`, if they did.
    pub(crate) fn choice(&self, item: Item) -> Option<&Choice> {
        let at = self.items.iter().position(|i| *i == item)?;
        self.choices.get(at)
    }

    /// Whether hunk `k` was split.
    pub(crate) fn is_split(&self, k: usize) -> bool {
        self.items.iter().any(|i| i.hunk == k && i.part.is_some())
    }

    /// "hunk 2/5", or "hunk 2/5 part 1/3" once it is split.
    pub(crate) fn counter(&self) -> String {
        let Some(item) = self.current_item() else {
            return format!("hunk {0}/{0}", self.hunks.len());
        };
        let hunk = format!("hunk {}/{}", item.hunk + 1, self.hunks.len());
        match (item.part, self.hunks.get(item.hunk)) {
            (Some(p), Some(h)) => format!("{hunk} part {}/{}", p + 1, h.parts.len()),
            _ => hunk,
        }
    }

    /// The hunk under review is whole and has more than one part.
    pub(crate) fn can_split(&self) -> bool {
        self.current_item().is_some_and(|i| i.part.is_none()) && self.current().is_some_and(Hunk::splits)
    }

    /// Splits the hunk under review into its parts, the first of them then under review.
    pub(crate) fn split(&mut self) {
        if !self.can_split() {
            return;
        }
        let (Some(item), Some(count)) = (self.current_item(), self.current().map(|h| h.parts.len())) else {
            return;
        };
        let at = self.choices.len();
        let parts = (0..count).map(|p| Item {
            hunk: item.hunk,
            part: Some(p),
        });
        self.items.splice(at..=at, parts);
    }

    /// Records a choice for the item under review; the answer once every item has one.
    pub(crate) fn choose(&mut self, choice: Choice) -> Option<ApprovalDecision> {
        if self.current_item().is_some() {
            self.choices.push(choice);
        }
        self.finished()
    }

    /// Accepts the item under review and every one after it.
    pub(crate) fn accept_rest(&mut self) -> Option<ApprovalDecision> {
        while self.current_item().is_some() {
            self.choices.push(Choice::Accept);
        }
        self.finished()
    }

    /// The new side of the hunk (context included) or part (its lines alone) under review, for `$EDITOR`.
    pub(crate) fn current_text(&self, diffs: &[FileDiff]) -> Option<String> {
        let hunk = self.current()?;
        let diff = diffs.get(hunk.file)?;
        Some(match self.current_part() {
            Some(part) => hunks::part_new_side(diff, part),
            None => hunks::new_side(diff, hunk),
        })
    }

    fn finished(&self) -> Option<ApprovalDecision> {
        if self.choices.len() < self.items.len() {
            return None;
        }
        let mut accepted = Vec::new();
        let mut edited = Vec::new();
        let mut split: Vec<SplitHunk> = Vec::new();
        for (item, choice) in self.items.iter().zip(&self.choices) {
            let Some(part) = item.part else {
                match choice {
                    Choice::Accept => accepted.push(item.hunk),
                    Choice::Reject => {}
                    Choice::Edited(text) => edited.push(EditedHunk {
                        hunk: item.hunk,
                        text: text.clone(),
                    }),
                }
                continue;
            };
            if split.last().is_none_or(|s| s.hunk != item.hunk) {
                split.push(SplitHunk {
                    hunk: item.hunk,
                    accepted: Vec::new(),
                    edited: Vec::new(),
                });
            }
            let Some(answer) = split.last_mut() else {
                continue;
            };
            match choice {
                Choice::Accept => answer.accepted.push(part),
                Choice::Reject => {}
                Choice::Edited(text) => answer.edited.push(EditedPart {
                    part,
                    text: text.clone(),
                }),
            }
        }
        Some(ApprovalDecision::Hunks {
            accepted,
            edited,
            split,
        })
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
        assert!(!review.can_split());
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
                }],
                split: vec![]
            })
        );
        let mut review = HunkReview::new(&diffs);
        assert_eq!(
            review.accept_rest(),
            Some(ApprovalDecision::Hunks {
                accepted: vec![0, 1],
                edited: vec![],
                split: vec![]
            })
        );
    }

    /// Three changes within six lines: one hunk that splits into three parts, answered one by one.
    #[test]
    fn a_split_hunk_is_answered_part_by_part() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 10\n", "line ten\n")
            .replace("line 12\n", "line twelve\n")
            .replace("line 15\n", "");
        let diffs = vec![FileDiff::new("a.txt", Some(old), Some(new))];
        let mut review = HunkReview::new(&diffs);
        assert_eq!(review.counter(), "hunk 1/1");
        assert!(review.can_split());
        review.split();
        assert!(!review.can_split());
        assert_eq!(review.counter(), "hunk 1/1 part 1/3");
        assert_eq!(review.current_text(&diffs).as_deref(), Some("line ten\n"));
        assert_eq!(review.choose(Choice::Accept), None);
        assert_eq!(review.choose(Choice::Reject), None);
        assert_eq!(review.counter(), "hunk 1/1 part 3/3");
        assert_eq!(review.current_text(&diffs).as_deref(), Some(""));
        assert_eq!(
            review.choose(Choice::Edited("line 15!\n".into())),
            Some(ApprovalDecision::Hunks {
                accepted: vec![],
                edited: vec![],
                split: vec![SplitHunk {
                    hunk: 0,
                    accepted: vec![0],
                    edited: vec![EditedPart {
                        part: 2,
                        text: "line 15!\n".into()
                    }]
                }]
            })
        );
    }
}
