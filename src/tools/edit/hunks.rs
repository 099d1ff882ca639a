//! The change rebuilt from the hunks the user accepted. What a hunk is (and how they are numbered) is the protocol's
//! (`tern_protocol::hunks`): the approval prompt shows those hunks, and this rebuilds the files from the answer.

use super::change::ProposedChange;
use tern_protocol::hunks::lines;
pub use tern_protocol::hunks::{CONTEXT, Hunk, hunks, new_side};
use tern_protocol::{EditedHunk, FileDiff, ToolDetails, ToolOutput};

/// What the user chose for one hunk.
enum Choice<'a> {
    Accept,
    Reject,
    Edited(&'a str),
}

/// One file rebuilt from the choices for its hunks (in order). `None`: the file is absent (not created, or deleted).
fn rebuild(diff: &FileDiff, hunks: &[(&Hunk, Choice<'_>)]) -> Option<String> {
    if hunks.iter().all(|(_, c)| matches!(c, Choice::Accept)) {
        return diff.new.clone();
    }
    if hunks.iter().all(|(_, c)| matches!(c, Choice::Reject)) {
        return diff.old.clone();
    }
    let (old, _) = lines(diff.old.as_deref().unwrap_or(""));
    let (new, _) = lines(diff.new.as_deref().unwrap_or(""));
    let mut out = String::new();
    let mut cursor = 0;
    for (hunk, choice) in hunks {
        out.push_str(&old.get(cursor..hunk.old.start).unwrap_or_default().concat());
        match choice {
            Choice::Accept => out.push_str(&new.get(hunk.new.clone()).unwrap_or_default().concat()),
            Choice::Reject => out.push_str(&old.get(hunk.old.clone()).unwrap_or_default().concat()),
            Choice::Edited(text) => {
                out.push_str(text);
                // A hunk that ended a line keeps ending one, whether or not the editor saved a final newline.
                let ended = new
                    .get(hunk.new.clone())
                    .and_then(|l| l.last())
                    .is_some_and(|l| l.ends_with('\n'));
                if ended && !text.is_empty() && !text.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        cursor = hunk.old.end;
    }
    out.push_str(&old.get(cursor..).unwrap_or_default().concat());
    Some(out)
}

impl ProposedChange {
    /// The change with only the hunks the user accepted (`edited` hunks count as accepted, with the user's text as
    /// their new side). `Ok(None)`: every hunk was rejected, so nothing is to be written. The result text tells the
    /// model exactly which hunks were rejected, by file and line range, so it does not redo them blindly.
    pub fn select(mut self, accepted: &[usize], edited: &[EditedHunk]) -> Result<Option<ProposedChange>, String> {
        if !self.reviewable() {
            return Err("this change cannot be reviewed hunk by hunk".to_string());
        }
        let diffs = self.diffs().to_vec();
        let all = hunks(&diffs);
        if let Some(bad) = accepted
            .iter()
            .chain(edited.iter().map(|e| &e.hunk))
            .find(|&&k| k >= all.len())
        {
            return Err(format!(
                "hunk {bad} does not exist (the change has {} hunks)",
                all.len()
            ));
        }
        let choice = |k: usize| match edited.iter().find(|e| e.hunk == k) {
            Some(e) => Choice::Edited(&e.text),
            None if accepted.contains(&k) => Choice::Accept,
            None => Choice::Reject,
        };
        let kept = (0..all.len()).filter(|&k| !matches!(choice(k), Choice::Reject)).count();
        if kept == 0 {
            return Ok(None);
        }
        if kept == all.len() && edited.is_empty() {
            return Ok(Some(self));
        }
        let mut changed = self.files.iter_mut().filter(|f| f.changed()).collect::<Vec<_>>();
        for (index, diff) in diffs.iter().enumerate() {
            let mine: Vec<(&Hunk, Choice<'_>)> = all
                .iter()
                .enumerate()
                .filter(|(_, h)| h.file == index)
                .map(|(k, h)| (h, choice(k)))
                .collect();
            if let Some(file) = changed.get_mut(index) {
                file.new = rebuild(diff, &mine);
            }
        }
        let mut text = format!(
            "Applied {kept} of {} hunks: the user reviewed this change hunk by hunk.",
            all.len()
        );
        let rejected: Vec<String> = (0..all.len())
            .filter(|&k| matches!(choice(k), Choice::Reject))
            .filter_map(|k| {
                all.get(k)
                    .map(|h| format!("- {} {} (hunk {} of {})", h.path, h.location(), k + 1, all.len()))
            })
            .collect();
        if !rejected.is_empty() {
            text.push_str("\nRejected by the user and NOT applied (do not redo them unless asked):\n");
            text.push_str(&rejected.join("\n"));
        }
        let rewritten: Vec<String> = edited
            .iter()
            .filter_map(|e| {
                all.get(e.hunk)
                    .map(|h| format!("- {} {} (hunk {})", h.path, h.location(), e.hunk + 1))
            })
            .collect();
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
