//! A change an edit tool proposes: the files it would write and the result it would report, computed without
//! writing anything. Every edit tool (edit_file, write_file, apply_patch, notebook_edit) works in two steps through
//! this type: `Tool::propose` computes the change, `ProposedChange::apply` writes it. A plain run does both at once;
//! the approval gate does the first before it asks (so an edit that cannot apply fails without asking, and the
//! prompt shows the diff) and the second after the yes, so what is written is exactly what was shown.

use std::io;

use super::file::PlannedFile;
use crate::{ToolContext, ToolError};
use tern_protocol::{FileDiff, ToolDetails, ToolOutput};

/// What an edit tool would write, and what it would answer once written.
#[derive(Debug)]
pub struct ProposedChange {
    pub(crate) files: Vec<PlannedFile>,
    /// The result on success: text for the model, the diffs as details.
    pub(crate) output: ToolOutput,
}

impl ProposedChange {
    pub(crate) fn new(files: Vec<PlannedFile>, output: ToolOutput) -> Self {
        Self { files, output }
    }

    /// The diffs the result carries (what the user is shown), one per changed file.
    pub fn diffs(&self) -> &[FileDiff] {
        match &self.output.details {
            ToolDetails::Diffs { diffs } => diffs,
            _ => &[],
        }
    }

    /// Whether hunk-by-hunk review can apply to this change: each shown diff is exactly the change of one planned
    /// file (not a placeholder for a file too large or not text), in order.
    pub fn reviewable(&self) -> bool {
        let changed: Vec<&PlannedFile> = self.files.iter().filter(|f| f.changed()).collect();
        let diffs = self.diffs();
        !diffs.is_empty()
            && changed.len() == diffs.len()
            && changed
                .iter()
                .zip(diffs)
                .all(|(f, d)| f.reviewable && f.original == d.old && f.new == d.new)
    }

    /// Writes the change: first checks that no file changed since it was read (so nothing is written over a change
    /// made meanwhile, for instance while the user looked at the prompt), then writes every file, putting back the
    /// ones already written when one fails.
    pub(crate) async fn apply(mut self, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let files = std::sync::Arc::clone(&ctx.files);
        let cancel = ctx.cancel.clone();
        crate::run_blocking(move || {
            for file in &self.files {
                if file.changed() && !file.still_as_read() {
                    return Err(ToolError::Failed(format!(
                        "{} changed on disk after this change was computed (and shown for approval); nothing was \
                         written. Read it again and redo the edit.",
                        file.display
                    )));
                }
            }
            if cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            commit(&mut self.files)?;
            for f in &self.files {
                files.forget(&f.path);
            }
            Ok(self.output)
        })
        .await
    }
}

/// Writes every changed file. On the first failure the files already written are undone, newest first, and the
/// error says what happened to each.
pub(crate) fn commit(files: &mut [PlannedFile]) -> Result<(), ToolError> {
    commit_with(files, |_| {})
}

/// `commit`, calling `before_write` with each file's index just before writing it (tests use it to interfere).
pub(crate) fn commit_with(files: &mut [PlannedFile], mut before_write: impl FnMut(usize)) -> Result<(), ToolError> {
    let mut written: Vec<usize> = Vec::new();
    for k in 0..files.len() {
        let Some(file) = files.get_mut(k) else { break };
        if !file.changed() {
            continue;
        }
        before_write(k);
        if let Err(err) = file.write() {
            return Err(ToolError::Failed(rollback(files, k, &written, &err)));
        }
        written.push(k);
    }
    Ok(())
}

/// Undoes the files already written after file `failed` could not be, and says what happened to each.
fn rollback(files: &[PlannedFile], failed: usize, written: &[usize], err: &io::Error) -> String {
    let name = files.get(failed).map(|f| f.display.as_str()).unwrap_or("a file");
    let mut msg = format!("writing {name} failed: {err}. ");
    let mut failed_undo = Vec::new();
    for &w in written.iter().rev() {
        if let Some(done) = files.get(w)
            && let Err(e) = done.undo()
        {
            failed_undo.push(format!("{} ({e})", done.display));
        }
    }
    let restored: Vec<&str> = written
        .iter()
        .filter_map(|&w| files.get(w))
        .map(|f| f.display.as_str())
        .collect();
    if written.is_empty() {
        msg.push_str("Nothing was written.");
    } else if failed_undo.is_empty() {
        msg.push_str(&format!(
            "The files already written were restored to their original content: {}. Nothing was changed.",
            restored.join(", ")
        ));
    } else {
        msg.push_str(&format!(
            "Some files already written could NOT be restored and now hold the patched content: {}. Check them \
             before retrying.",
            failed_undo.join(", ")
        ));
    }
    msg
}
