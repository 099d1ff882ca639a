//! edit_file: replace text in a file. The matching and replacing is a pure engine (`apply_edit`) shared with
//! apply_patch; this module adds the file around it: path policy, reading (UTF-8 text only), a checked atomic write,
//! and a result with the changed lines and a diff for the UI.

pub(crate) mod change;
mod diagnose;
mod engine;
pub(crate) mod file;
pub mod hunks;
mod matching;
pub(crate) mod place;
mod text;

#[cfg(test)]
mod editor_tests;
#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod hunks_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tool_tests;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

pub use change::ProposedChange;
pub(crate) use engine::{EditError, EditOutcome, EditRequest, apply_edit};
pub(crate) use matching::Strategy;

use self::file::PlannedFile;
use super::{Tool, ToolContext, ToolError};
use crate::{Effects, effects};
use tern_protocol::{ToolDetails, ToolKind, ToolOutput};

pub(crate) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(EditFileTool)]
}

pub struct EditFileTool;

const DESCRIPTION: &str = "Edit a text file by replacing old_text with new_text. Copy old_text exactly from \
read_file output (without the line-number prefixes) and include enough surrounding lines to make it unique. If \
the exact text is not found, whole lines equal apart from indentation/trailing whitespace or typographic quotes \
still match, and new_text is re-indented to the file's indentation. When old_text matches several places the call \
fails and lists them: add context, or set occurrence or line_hint to pick one, or replace_all=true. An empty \
old_text creates a new file (or fills an empty one). Line endings (CRLF/LF) are kept. Prefer this over sed/awk in \
the shell or rewriting whole files with write_file; for several related edits, possibly across files, use \
apply_patch.";

#[async_trait]
impl Tool for EditFileTool {
    fn name(&self) -> &str {
        "edit_file"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Edit)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn effects(&self, args: &Value) -> Effects {
        Effects {
            writes: effects::text(args, "path").map(str::to_string).into_iter().collect(),
            ..Effects::default()
        }
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        let text = |d: &str| json!({"type": "string", "description": d});
        let count = |d: &str| json!({"type": "integer", "minimum": 1, "description": d});
        json!({
            "type": "object",
            "properties": {
                "path": text("The file to edit, relative to the workspace root or absolute."),
                "old_text": text(
                    "The exact text to replace, copied from the file. Empty to create a new file or fill an empty one."
                ),
                "new_text": text(
                    "The text to put in its place. Empty to delete old_text (whole lines go with their line break)."
                ),
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every match of old_text instead of exactly one. Default false."
                },
                "occurrence": count(
                    "Which match to replace when old_text matches several places (1 = first in the file)."
                ),
                "line_hint": count(
                    "A line number at or near the intended match; the nearest match is replaced when there are several."
                ),
                "expected_replacements": count(
                    "How many matches you expect to replace; the edit fails if the number differs. With several \
                     matches and no occurrence/line_hint, all of them are replaced when the count agrees."
                )
            },
            "required": ["path", "old_text", "new_text"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.propose_edit(args, ctx).await?.apply(ctx).await
    }

    async fn propose(&self, args: Value, ctx: &ToolContext) -> Option<Result<ProposedChange, ToolError>> {
        Some(self.propose_edit(args, ctx).await)
    }
}

impl EditFileTool {
    async fn propose_edit(&self, args: Value, ctx: &ToolContext) -> Result<ProposedChange, ToolError> {
        let path = args
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::Invalid("path is required".to_string()))?
            .to_string();
        let req = EditRequest::from_args(&args).map_err(ToolError::Invalid)?;
        let resolved = ctx.policy.resolve_write(&path)?;
        let display = ctx.policy.display(&resolved);
        let ctx = ctx.clone();
        crate::run_blocking(move || {
            let (plan, outcome) = plan_edit(&ctx, resolved, display, &req)?;
            let output = result(&plan, &outcome);
            Ok(ProposedChange::new(vec![plan], output))
        })
        .await
    }
}

/// Reads the file and computes the edit in memory. Nothing is written.
pub(crate) fn plan_edit(
    ctx: &ToolContext,
    path: PathBuf,
    display: String,
    req: &EditRequest,
) -> Result<(PlannedFile, EditOutcome), ToolError> {
    let (original, place) = place::read(place::editor(ctx).as_ref(), &path, &display)?;
    let mut plan = PlannedFile::new(path, display, original);
    plan.place = place;
    let outcome = match &plan.original {
        None if !req.old_text.is_empty() => {
            return Err(ToolError::Failed(format!(
                "{} To create it, call edit_file with an empty old_text (or use write_file).",
                file::missing_file(&plan.path, &plan.display)
            )));
        }
        None => apply_edit("", req),
        Some(text) => apply_edit(text, req),
    }
    .map_err(|e| edit_error(ctx, &plan.display, &plan, e))?;
    plan.new = Some(outcome.content.clone());
    Ok((plan, outcome))
}

/// An engine error as a tool error labelled with the file (or the patch edit); a failed match also says when the
/// file changed on disk since the session last read it (the usual reason the model's copy of the text is stale).
/// Modification time and size decide that: read_file's recorded hash covers only the lines it showed.
pub(crate) fn edit_error(ctx: &ToolContext, label: &str, plan: &PlannedFile, err: EditError) -> ToolError {
    let mut msg = format!("{label}: {err}");
    match err {
        EditError::Unchanged | EditError::Invalid(_) | EditError::NotEmpty { .. } => ToolError::Invalid(msg),
        EditError::NotFound(_) => {
            let changed = match (ctx.files.last_read(&plan.path), tern_fs::metadata(&plan.path)) {
                (Some(read), Ok(meta)) => read.stamp.modified != meta.modified().ok() || read.stamp.len != meta.len(),
                _ => false,
            };
            if changed {
                msg.push_str("\nThe file has changed on disk since you last read it.");
            }
            ToolError::Failed(msg)
        }
        EditError::Ambiguous(_) | EditError::Count(_) => ToolError::Failed(msg),
    }
}

/// `Edited P: replaced 1 occurrence at line 42 (+3 -1)`, with the diff as details.
fn result(plan: &PlannedFile, outcome: &EditOutcome) -> ToolOutput {
    let diff = plan.diff();
    let text = match (&plan.original, outcome.strategy) {
        (None, _) => format!("Created {} (+{})", plan.display, diff.added),
        (Some(_), Strategy::Fill) => format!("Wrote {} (it was empty) (+{})", plan.display, diff.added),
        (Some(_), strategy) => {
            let n = outcome.lines.len();
            let lines: Vec<String> = outcome.lines.iter().take(20).map(ToString::to_string).collect();
            let more = if n > 20 {
                format!(" and {} more", n - 20)
            } else {
                String::new()
            };
            let mut text = format!(
                "Edited {}: replaced {n} occurrence{} at line{} {}{more} (+{} -{})",
                plan.display,
                if n == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" },
                lines.join(", "),
                diff.added,
                diff.removed
            );
            if let Some(note) = strategy.note() {
                text.push_str(&format!("\nNote: {note}."));
            }
            text
        }
    };
    ToolOutput::text(text).with_details(ToolDetails::Diffs { diffs: vec![diff] })
}
