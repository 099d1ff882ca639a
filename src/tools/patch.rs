//! apply_patch: several edits, possibly across files, applied all or nothing. Every edit is first applied in memory
//! with the same engine as edit_file (edits to one file apply in order to the result of the previous ones); if any
//! fails, nothing is written and the error names the edit. Only then are files written, each atomically and checked
//! against what was read; if a write fails midway, the files already written are put back as they were.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

#[cfg(test)]
use super::edit::change::{commit, commit_with};
use super::edit::file::{self, PlannedFile};
use super::edit::place;
use super::edit::{EditRequest, ProposedChange, apply_edit, edit_error};
use super::{Tool, ToolContext, ToolError};
use crate::{Effects, effects};
use tern_protocol::{ToolDetails, ToolKind, ToolOutput};

pub(crate) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(ApplyPatchTool)]
}

const MAX_EDITS: usize = 50;
/// Dry-run diffs beyond this are cut; the UI still gets them whole in the details.
const MAX_DRY_RUN_DIFF_CHARS: usize = 20_000;

pub(crate) struct ApplyPatchTool;

const DESCRIPTION: &str = "Apply several edits at once, possibly across files, all or nothing: every edit is \
checked in memory first and if any fails nothing is written. Each edit is {path, action, ...}: action \"replace\" \
(default) works like edit_file with old_text/new_text and optional occurrence, line_hint, replace_all, \
expected_replacements; \"add\" creates a new file with new_text; \"delete\" removes a file. Several edits to one \
file apply in order, each to the result of the previous. Use dry_run=true to see the diffs without writing. Prefer \
this over a series of edit_file calls for a change that spans several places.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Replace,
    Add,
    Delete,
}

#[derive(Debug, Clone)]
struct PatchEdit {
    path: String,
    action: Action,
    req: EditRequest,
}

#[async_trait]
impl Tool for ApplyPatchTool {
    fn name(&self) -> &str {
        "apply_patch"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Patch)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn effects(&self, args: &Value) -> Effects {
        patch_effects(args)
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
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_EDITS,
                    "description": "The edits, applied in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": text("The file, relative to the workspace root or absolute."),
                            "action": {
                                "type": "string",
                                "enum": ["replace", "add", "delete"],
                                "description": "replace (default): replace old_text with new_text in an existing \
                                                file. add: create a new file containing new_text. delete: remove \
                                                the file."
                            },
                            "old_text": text("replace: the exact text to replace, copied from the file."),
                            "new_text": text("replace: the text to put in its place. add: the new file's content."),
                            "occurrence": count(
                                "replace: which match to replace when old_text matches several places (1 = first)."
                            ),
                            "line_hint": count(
                                "replace: a line number near the intended match, to pick among several."
                            ),
                            "replace_all": {"type": "boolean", "description": "replace: replace every match."},
                            "expected_replacements": count(
                                "replace: how many matches must be replaced, or the patch fails."
                            )
                        },
                        "required": ["path"],
                        "additionalProperties": false
                    }
                },
                "dry_run": {
                    "type": "boolean",
                    "description": "Only show what would change; write nothing. Default false."
                }
            },
            "required": ["edits"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let change = propose_patch(&args, ctx).await?;
        if args.get("dry_run").and_then(Value::as_bool).unwrap_or(false) {
            return Ok(output(&change.files, true));
        }
        change.apply(ctx).await
    }

    async fn propose(&self, args: Value, ctx: &ToolContext) -> Option<Result<ProposedChange, ToolError>> {
        Some(propose_patch(&args, ctx).await)
    }
}

/// Every edit applied in memory; nothing written.
async fn propose_patch(args: &Value, ctx: &ToolContext) -> Result<ProposedChange, ToolError> {
    let edits = parse_edits(args)?;
    let ctx = ctx.clone();
    super::run_blocking(move || {
        let files = plan_patch(&ctx, &edits)?;
        let output = output(&files, false);
        Ok(ProposedChange::new(files, output))
    })
    .await
}

fn parse_edits(args: &Value) -> Result<Vec<PatchEdit>, ToolError> {
    let items = args.get("edits").and_then(Value::as_array).ok_or_else(|| {
        ToolError::Invalid("edits is required: an array of {path, action, old_text, new_text}".into())
    })?;
    if items.is_empty() || items.len() > MAX_EDITS {
        return Err(ToolError::Invalid(format!(
            "edits must hold 1 to {MAX_EDITS} edits, got {}",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let bad = |msg: String| ToolError::Invalid(format!("edits[{i}]: {msg}"));
            let path = item
                .get("path")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("path is required".into()))?
                .to_string();
            let action = match item.get("action").and_then(Value::as_str).unwrap_or("replace") {
                "replace" => Action::Replace,
                "add" => Action::Add,
                "delete" => Action::Delete,
                other => return Err(bad(format!("action must be replace, add or delete, got '{other}'"))),
            };
            let req = EditRequest::from_args(item).map_err(bad)?;
            Ok(PatchEdit { path, action, req })
        })
        .collect()
}

/// Applies every edit in memory, in order. Returns one planned change per file, in order of first mention.
fn plan_patch(ctx: &ToolContext, edits: &[PatchEdit]) -> Result<Vec<PlannedFile>, ToolError> {
    let mut files: Vec<PlannedFile> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    let mut touched: Vec<usize> = Vec::new();
    let editor = place::editor(ctx);
    for (i, edit) in edits.iter().enumerate() {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let resolved = ctx
            .policy
            .resolve_write(&edit.path)
            .map_err(|e| ToolError::Invalid(format!("edits[{i}]: {e}")))?;
        let slot = match index.get(&resolved) {
            Some(&slot) => slot,
            None => {
                let display = ctx.policy.display(&resolved);
                let (original, place) =
                    place::read(editor.as_ref(), &resolved, &display).map_err(|e| prefixed(i, e))?;
                let mut plan = PlannedFile::new(resolved.clone(), display, original);
                plan.place = place;
                files.push(plan);
                touched.push(0);
                index.insert(resolved, files.len() - 1);
                files.len() - 1
            }
        };
        let (Some(plan), Some(earlier)) = (files.get_mut(slot), touched.get_mut(slot)) else {
            return Err(ToolError::Failed(format!(
                "edits[{i}]: internal error: lost track of the file"
            )));
        };
        let label = format!("edits[{i}] ({})", plan.display);
        let fail = |msg: &str| Err(ToolError::Failed(format!("{label}: {msg}")));
        match edit.action {
            Action::Add => {
                if !edit.req.old_text.is_empty() {
                    return fail("action add creates a new file from new_text; old_text must be empty");
                }
                if plan.new.as_deref().is_some_and(|c| !c.is_empty()) {
                    return fail("the file already exists; use action replace to change it");
                }
                plan.new = Some(edit.req.new_text.clone());
            }
            Action::Delete => {
                if !edit.req.old_text.is_empty() || !edit.req.new_text.is_empty() {
                    return fail("action delete removes the whole file and takes no old_text or new_text");
                }
                if plan.new.is_none() {
                    return fail("the file does not exist, so it cannot be deleted");
                }
                plan.new = None;
            }
            Action::Replace => {
                let Some(current) = plan.new.as_deref() else {
                    let why = if plan.original.is_some() {
                        "the file was deleted by an earlier edit in this patch".to_string()
                    } else {
                        format!(
                            "{} To create a new file use action add.",
                            file::missing_file(&plan.path, &plan.display)
                        )
                    };
                    return fail(&why);
                };
                let outcome = apply_edit(current, &edit.req).map_err(|e| {
                    let label = if *earlier > 0 {
                        format!(
                            "edits[{i}] ({}, after the {earlier} earlier edit(s) to it in this patch)",
                            plan.display
                        )
                    } else {
                        label.clone()
                    };
                    edit_error(ctx, &label, plan, e)
                })?;
                plan.new = Some(outcome.content);
            }
        }
        *earlier += 1;
    }
    Ok(files)
}

fn prefixed(i: usize, err: ToolError) -> ToolError {
    match err {
        ToolError::Invalid(m) => ToolError::Invalid(format!("edits[{i}]: {m}")),
        ToolError::Failed(m) => ToolError::Failed(format!("edits[{i}]: {m}")),
        ToolError::Io { path, source } => ToolError::Io {
            path: format!("edits[{i}]: {path}"),
            source,
        },
        other => other,
    }
}

/// `Patch applied:` (or `Dry run — nothing written:`) and one line per file, with the diffs as details. A dry run
/// also shows the diffs as text, since that is what the model asked to see.
fn output(files: &[PlannedFile], dry_run: bool) -> ToolOutput {
    let mut text = String::from(if dry_run {
        "Dry run — nothing written:\n"
    } else {
        "Patch applied:\n"
    });
    let mut diffs = Vec::new();
    for f in files {
        let diff = f.diff();
        let line = match (&f.original, &f.new) {
            _ if !f.changed() => format!("- unchanged {} (its edits cancel out)", f.display),
            (None, Some(_)) => format!("- add {} (+{})", f.display, diff.added),
            (Some(_), None) => format!("- delete {} (-{})", f.display, diff.removed),
            _ => format!("- update {} (+{} -{})", f.display, diff.added, diff.removed),
        };
        text.push_str(&line);
        text.push('\n');
        if f.changed() {
            diffs.push(diff);
        }
    }
    if dry_run {
        let mut shown = String::new();
        for d in &diffs {
            shown.push_str(&d.unified(3));
        }
        if shown.len() > MAX_DRY_RUN_DIFF_CHARS {
            let cut = (0..=MAX_DRY_RUN_DIFF_CHARS)
                .rev()
                .find(|&i| shown.is_char_boundary(i))
                .unwrap_or(0);
            shown.truncate(cut);
            shown.push_str("\n... (diff cut)\n");
        }
        text.push('\n');
        text.push_str(&shown);
    }
    ToolOutput::text(text.trim_end().to_string()).with_details(ToolDetails::Diffs { diffs })
}

#[cfg(test)]
mod prop_tests;
/// The files a patch writes (every edit's `path`; any other key naming a path counts too, though the schema allows
/// none), or, for a dry run, reads.
fn patch_effects(args: &Value) -> Effects {
    let mut paths: Vec<String> = Vec::new();
    for edit in args
        .get("edits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        let named = edit
            .iter()
            .filter(|(key, _)| *key == "path" || key.ends_with("_path") || *key == "move_to")
            .filter_map(|(_, value)| value.as_str());
        for path in named {
            if !paths.iter().any(|p| p == path) {
                paths.push(path.to_string());
            }
        }
    }
    if effects::flag(args, "dry_run") {
        Effects {
            reads: paths,
            dry_run: true,
            ..Effects::default()
        }
    } else {
        Effects {
            writes: paths,
            ..Effects::default()
        }
    }
}

#[cfg(test)]
mod tests;
