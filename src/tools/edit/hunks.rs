//! The change rebuilt from the hunks the user accepted. What a hunk is (and how they are numbered) is the protocol's
//! (`tern_protocol::hunks`): the approval prompt shows those hunks, and this rebuilds the files from the answer.

use std::ops::Range;

use super::change::ProposedChange;
use tern_protocol::hunks::lines;
pub use tern_protocol::hunks::{CONTEXT, Hunk, hunks, new_side};
use tern_protocol::{EditedHunk, FileDiff, SplitHunk, ToolDetails, ToolOutput};

/// What the user chose for one hunk or part.
#[derive(Clone, Copy)]
enum Choice<'a> {
    Accept,
    Reject,
    Edited(&'a str),
}

/// One piece of a file's change the user answered: a whole hunk (its lines with context) or a part of a split hunk
/// (its changed lines alone); pieces never overlap, and the lines between them are the same on both sides.
struct Piece<'a> {
    old: Range<usize>,
    new: Range<usize>,
    choice: Choice<'a>,
    /// "n.txt line 15 (hunk 2 of 4)", for the model's result text.
    label: String,
}

/// One file rebuilt from the choices for its pieces (in order). `None`: the file is absent (not created, or deleted).
fn rebuild(diff: &FileDiff, pieces: &[&Piece<'_>]) -> Option<String> {
    if pieces.iter().all(|p| matches!(p.choice, Choice::Accept)) {
        return diff.new.clone();
    }
    if pieces.iter().all(|p| matches!(p.choice, Choice::Reject)) {
        return diff.old.clone();
    }
    let (old, _) = lines(diff.old.as_deref().unwrap_or(""));
    let (new, _) = lines(diff.new.as_deref().unwrap_or(""));
    let mut out = String::new();
    let mut cursor = 0;
    for piece in pieces {
        out.push_str(&old.get(cursor..piece.old.start).unwrap_or_default().concat());
        match piece.choice {
            Choice::Accept => out.push_str(&new.get(piece.new.clone()).unwrap_or_default().concat()),
            Choice::Reject => out.push_str(&old.get(piece.old.clone()).unwrap_or_default().concat()),
            Choice::Edited(text) => {
                out.push_str(text);
                // A piece that ended a line keeps ending one, whether or not the editor saved a final newline (a
                // part that only removed lines ended one if its old lines did).
                let last = new
                    .get(piece.new.clone())
                    .and_then(|l| l.last())
                    .or_else(|| old.get(piece.old.clone()).and_then(|l| l.last()));
                let ended = last.is_some_and(|l| l.ends_with('\n'));
                if ended && !text.is_empty() && !text.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        cursor = piece.old.end;
    }
    out.push_str(&old.get(cursor..).unwrap_or_default().concat());
    Some(out)
}

/// The pieces of every file's change as the user answered them, in order: a hunk whole, or its parts when it was
/// split. `Err`: the answer names a hunk or part the change does not have, or a split hunk also whole.
fn pieces<'a>(
    all: &[Hunk],
    accepted: &[usize],
    edited: &'a [EditedHunk],
    split: &'a [SplitHunk],
) -> Result<Vec<(usize, Piece<'a>)>, String> {
    let whole = accepted.iter().chain(edited.iter().map(|e| &e.hunk));
    if let Some(bad) = whole
        .clone()
        .chain(split.iter().map(|s| &s.hunk))
        .find(|&&k| k >= all.len())
    {
        return Err(format!(
            "hunk {bad} does not exist (the change has {} hunks)",
            all.len()
        ));
    }
    if let Some(both) = whole.clone().find(|k| split.iter().any(|s| s.hunk == **k)) {
        return Err(format!("hunk {both} is answered both whole and split"));
    }
    let total = all.len();
    let mut out = Vec::new();
    for (k, hunk) in all.iter().enumerate() {
        let Some(answer) = split.iter().find(|s| s.hunk == k) else {
            let choice = match edited.iter().find(|e| e.hunk == k) {
                Some(e) => Choice::Edited(&e.text),
                None if accepted.contains(&k) => Choice::Accept,
                None => Choice::Reject,
            };
            let label = format!("{} {} (hunk {} of {total})", hunk.path, hunk.location(), k + 1);
            out.push((
                hunk.file,
                Piece {
                    old: hunk.old.clone(),
                    new: hunk.new.clone(),
                    choice,
                    label,
                },
            ));
            continue;
        };
        let count = hunk.parts.len();
        let named = answer.accepted.iter().chain(answer.edited.iter().map(|e| &e.part));
        if let Some(bad) = named.clone().find(|&&p| p >= count) {
            return Err(format!("hunk {k} has no part {bad} (it has {count})"));
        }
        for (p, part) in hunk.parts.iter().enumerate() {
            let choice = match answer.edited.iter().find(|e| e.part == p) {
                Some(e) => Choice::Edited(&e.text),
                None if answer.accepted.contains(&p) => Choice::Accept,
                None => Choice::Reject,
            };
            let label = format!(
                "{} {} (part {} of {count} of hunk {} of {total})",
                hunk.path,
                part.location(),
                p + 1,
                k + 1
            );
            out.push((
                hunk.file,
                Piece {
                    old: part.old.clone(),
                    new: part.new.clone(),
                    choice,
                    label,
                },
            ));
        }
    }
    Ok(out)
}

impl ProposedChange {
    /// The change with only the hunks the user accepted (`edited` hunks count as accepted, with the user's text as
    /// their new side), and of each `split` hunk only its accepted parts. `Ok(None)`: everything was rejected, so
    /// nothing is to be written. The result text tells the model exactly what was rejected, by file and line range,
    /// so it does not redo it blindly.
    pub fn select(
        mut self,
        accepted: &[usize],
        edited: &[EditedHunk],
        split: &[SplitHunk],
    ) -> Result<Option<ProposedChange>, String> {
        if !self.reviewable() {
            return Err("this change cannot be reviewed hunk by hunk".to_string());
        }
        let diffs = self.diffs().to_vec();
        let all = hunks(&diffs);
        let pieces = pieces(&all, accepted, edited, split)?;
        let kept = pieces
            .iter()
            .filter(|(_, p)| !matches!(p.choice, Choice::Reject))
            .count();
        if kept == 0 {
            return Ok(None);
        }
        let rewritten_any = pieces.iter().any(|(_, p)| matches!(p.choice, Choice::Edited(_)));
        if kept == pieces.len() && !rewritten_any {
            return Ok(Some(self));
        }
        let mut changed = self.files.iter_mut().filter(|f| f.changed()).collect::<Vec<_>>();
        for (index, diff) in diffs.iter().enumerate() {
            let mine: Vec<&Piece<'_>> = pieces.iter().filter(|(f, _)| *f == index).map(|(_, p)| p).collect();
            if let Some(file) = changed.get_mut(index) {
                file.new = rebuild(diff, &mine);
            }
        }
        let noun = if split.is_empty() {
            "hunks"
        } else {
            "changes (hunks and parts of split hunks)"
        };
        let mut text = format!(
            "Applied {kept} of {} {noun}: the user reviewed this change hunk by hunk.",
            pieces.len()
        );
        let listed = |wanted: fn(&Choice<'_>) -> bool| -> Vec<String> {
            pieces
                .iter()
                .filter(|(_, p)| wanted(&p.choice))
                .map(|(_, p)| format!("- {}", p.label))
                .collect()
        };
        let rejected = listed(|c| matches!(c, Choice::Reject));
        if !rejected.is_empty() {
            text.push_str("\nRejected by the user and NOT applied (do not redo them unless asked):\n");
            text.push_str(&rejected.join("\n"));
        }
        let rewritten = listed(|c| matches!(c, Choice::Edited(_)));
        if !rewritten.is_empty() {
            text.push_str("\nApplied as the user rewrote them (read the file to see the result):\n");
            text.push_str(&rewritten.join("\n"));
        }
        let diffs: Vec<FileDiff> = self.files.iter().filter(|f| f.changed()).map(|f| f.diff()).collect();
        for d in &diffs {
            text.push_str(&format!("\n{}: +{} -{}", d.path, d.added, d.removed));
        }
        self.output = ToolOutput::text(text).with_details(ToolDetails::Diffs { diffs });
        Ok(Some(self))
    }
}
