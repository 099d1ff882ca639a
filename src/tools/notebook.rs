//! notebook_edit: edits one cell of a Jupyter notebook (nbformat 4) — replace its source, insert a new cell, or delete
//! one — and leaves the rest of the file as it was, key order and layout included (see `json_style`).
//!
//! Choice: replacing a code cell's source clears its outputs and execution count. Jupyter keeps them until the cell
//! is run again, but a model reading the notebook later would take the old outputs for results of the new code.

mod json_style;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::edit::ProposedChange;
use super::edit::file::PlannedFile;
use super::edit::place::{self, Place};
use super::fs::{int_arg, opt_str_arg, run_blocking, str_arg};
use super::{Buffers, Tool, ToolContext, ToolError};
use crate::{Effects, effects};
use json_style::JsonStyle;
use tern_protocol::{FileDiff, ToolDetails, ToolKind, ToolOutput};

pub(crate) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(NotebookEditTool)]
}

struct NotebookEditTool;

#[async_trait]
impl Tool for NotebookEditTool {
    fn name(&self) -> &str {
        "notebook_edit"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::NotebookEdit)
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
        "Edit one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell, or delete it. Cells are \
         numbered from 0; read the notebook with read_file first. Only that cell changes; everything else in the file \
         is kept as it was. Replacing a code cell's source clears its outputs and execution count, which described \
         the old code. Use this instead of edit_file or write_file on notebooks."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The notebook (.ipynb), relative to the workspace root or absolute."
                },
                "cell_index": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "0-based index of the cell to replace or delete. For insert: the index the new \
                                    cell will have (the number of cells appends it at the end)."
                },
                "new_source": {
                    "type": "string",
                    "description": "The cell's complete new source. Required for replace and insert; ignored \
                                    for delete."
                },
                "cell_type": {
                    "type": "string",
                    "enum": ["code", "markdown"],
                    "description": "Type of the cell. Required for insert; for replace, changes the cell's type \
                                    when it differs."
                },
                "edit_mode": {
                    "type": "string",
                    "enum": ["replace", "insert", "delete"],
                    "description": "replace (default) the cell's source, insert a new cell at cell_index, or \
                                    delete the cell."
                }
            },
            "required": ["path", "cell_index"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        propose_notebook(&args, ctx).await?.apply(ctx).await
    }

    async fn propose(&self, args: Value, ctx: &ToolContext) -> Option<Result<ProposedChange, ToolError>> {
        Some(propose_notebook(&args, ctx).await)
    }
}

/// The cell edit computed in memory; nothing written.
async fn propose_notebook(args: &Value, ctx: &ToolContext) -> Result<ProposedChange, ToolError> {
    let path = str_arg(args, "path")?;
    // No default: editing cell 0 because the index went missing would hit the wrong cell.
    if args.get("cell_index").is_none_or(Value::is_null) {
        return Err(ToolError::Invalid("missing required argument 'cell_index'".into()));
    }
    let index = usize::try_from(int_arg(args, "cell_index", 0, 0, u64::MAX)?).unwrap_or(usize::MAX);
    let source = opt_str_arg(args, "new_source")?.map(str::to_string);
    let cell_type = match opt_str_arg(args, "cell_type")? {
        None => None,
        Some(t @ ("code" | "markdown")) => Some(t.to_string()),
        Some(other) => {
            return Err(ToolError::Invalid(format!(
                "cell_type must be \"code\" or \"markdown\", got \"{other}\""
            )));
        }
    };
    let edit = match opt_str_arg(args, "edit_mode")?.unwrap_or("replace") {
        "replace" => Edit::Replace {
            source: source.ok_or_else(|| need_source("replace"))?,
            cell_type,
        },
        "insert" => Edit::Insert {
            source: source.ok_or_else(|| need_source("insert"))?,
            cell_type: cell_type.ok_or_else(|| {
                ToolError::Invalid("edit_mode \"insert\" needs cell_type (\"code\" or \"markdown\")".into())
            })?,
        },
        "delete" => Edit::Delete,
        other => {
            return Err(ToolError::Invalid(format!(
                "edit_mode must be \"replace\", \"insert\" or \"delete\", got \"{other}\""
            )));
        }
    };
    let resolved = ctx.policy.resolve_write(path)?;
    let job = Job {
        display: ctx.policy.display(&resolved),
        resolved,
        index,
        editor: place::editor(ctx),
    };
    run_blocking(move || job.plan(edit)).await
}

fn need_source(mode: &str) -> ToolError {
    ToolError::Invalid(format!(
        "edit_mode \"{mode}\" needs new_source (the cell's complete source)"
    ))
}

enum Edit {
    Replace { source: String, cell_type: Option<String> },
    Insert { source: String, cell_type: String },
    Delete,
}

struct Job {
    resolved: PathBuf,
    display: String,
    index: usize,
    /// The editor whose buffer is edited, when one takes writes.
    editor: Option<Arc<dyn Buffers>>,
}

impl Job {
    /// Plans `edit` on the notebook: the change to write, with its diff and a summary for the model.
    fn plan(&self, edit: Edit) -> Result<ProposedChange, ToolError> {
        let display = &self.display;
        let (text, place) = self.read()?;
        let mut doc: Value = serde_json::from_str(&text)
            .map_err(|e| ToolError::Invalid(format!("'{display}' is not a valid notebook: invalid JSON ({e}).")))?;
        let minor = check_format(&doc, display)?;
        let cells = doc.get_mut("cells").and_then(Value::as_array_mut).ok_or_else(|| {
            ToolError::Invalid(format!(
                "'{display}' is not a valid notebook: it has no \"cells\" list."
            ))
        })?;
        let Some(summary) = self.apply(edit, cells, minor)? else {
            let text = format!(
                "Cell {} of {display} already has this source and type; nothing changed.",
                self.index
            );
            return Ok(ProposedChange::new(Vec::new(), ToolOutput::text(text)));
        };

        let new_text = JsonStyle::detect(&text)
            .render(&doc)
            .map_err(|e| ToolError::Failed(format!("could not serialise '{display}': {e}")))?;
        let diff = FileDiff::new(display.clone(), Some(text.clone()), Some(new_text.clone()));
        let mut file = PlannedFile::new(self.resolved.clone(), display.clone(), Some(text));
        file.new = Some(new_text);
        file.place = place;
        let output = ToolOutput::text(summary).with_details(ToolDetails::Diffs { diffs: vec![diff] });
        Ok(ProposedChange::new(vec![file], output))
    }

    /// The notebook's text (the editor's, when it has it) and where it lives, or an error for a file that is not a
    /// notebook, is missing, or is not UTF-8.
    fn read(&self) -> Result<(String, Place), ToolError> {
        let display = &self.display;
        if self.resolved.extension().and_then(|e| e.to_str()) != Some("ipynb") {
            return Err(ToolError::Invalid(format!(
                "'{display}' is not a Jupyter notebook (.ipynb). Use edit_file or write_file for other files."
            )));
        }
        if let Some(editor) = &self.editor
            && let Some(text) = place::editor_text(editor, &self.resolved)
        {
            return Ok((text, Place::Editor(Arc::clone(editor))));
        }
        let bytes = match tern_fs::read(&self.resolved) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ToolError::Invalid(format!(
                    "Notebook not found: '{display}'. To create a notebook, write its JSON with write_file."
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                return Err(ToolError::Invalid(format!(
                    "'{display}' is a directory, not a notebook."
                )));
            }
            Err(e) => return Err(ToolError::io(display.clone(), e)),
        };
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::Invalid(format!("'{display}' is not a valid notebook: it is not UTF-8 text.")))?;
        Ok((text, Place::Disk))
    }

    /// Applies `edit` to `cells` (of a notebook of format minor version `minor`); what changed, in words, or `None`
    /// when a replacement changed nothing.
    fn apply(&self, edit: Edit, cells: &mut Vec<Value>, minor: u64) -> Result<Option<String>, ToolError> {
        let display = &self.display;
        let summary = match edit {
            Edit::Replace { source, cell_type } => {
                let cell = self.cell_mut(cells)?;
                match replace(cell, &source, cell_type.as_deref()) {
                    Some(summary) => format!("Updated cell {} in {display}: {summary}.", self.index),
                    None => return Ok(None),
                }
            }
            Edit::Insert { source, cell_type } => {
                if self.index > cells.len() {
                    return Err(self.out_of_range(cells.len(), true));
                }
                let id = (minor >= 5).then(|| new_cell_id(cells));
                cells.insert(self.index, new_cell(&cell_type, &source, id));
                format!(
                    "Inserted a new {cell_type} cell at index {} in {display} ({} now).",
                    self.index,
                    count_cells(cells.len())
                )
            }
            Edit::Delete => {
                self.cell_mut(cells)?;
                let removed = cells.remove(self.index);
                let kind = removed
                    .get("cell_type")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_string();
                format!(
                    "Deleted cell {} ({kind}) from {display} ({} left).",
                    self.index,
                    count_cells(cells.len())
                )
            }
        };
        Ok(Some(summary))
    }

    /// The target cell, as an object, or an error naming the valid range.
    fn cell_mut<'a>(&self, cells: &'a mut [Value]) -> Result<&'a mut Map<String, Value>, ToolError> {
        let count = cells.len();
        match cells.get_mut(self.index) {
            None => Err(self.out_of_range(count, false)),
            Some(Value::Object(cell)) => Ok(cell),
            Some(_) => Err(ToolError::Invalid(format!(
                "cell {} of '{}' is not a JSON object; the notebook is malformed.",
                self.index, self.display
            ))),
        }
    }

    fn out_of_range(&self, count: usize, insert: bool) -> ToolError {
        let valid = match (count, insert) {
            (0, false) => "it has no cells; use edit_mode \"insert\" with cell_index 0".to_string(),
            (n, false) => format!("it has {} (indexes 0 to {})", count_cells(n), n - 1),
            (n, true) => format!("it has {}; insert at 0 to {n} ({n} appends)", count_cells(n)),
        };
        ToolError::Invalid(format!(
            "cell_index {} is out of range for '{}': {valid}.",
            self.index, self.display
        ))
    }
}

fn count_cells(n: usize) -> String {
    format!("{n} cell{}", if n == 1 { "" } else { "s" })
}

/// nbformat 4 is required (3 keeps cells under worksheets); returns nbformat_minor.
fn check_format(doc: &Value, display: &str) -> Result<u64, ToolError> {
    if !doc.is_object() {
        return Err(ToolError::Invalid(format!(
            "'{display}' is not a valid notebook: the JSON is not an object."
        )));
    }
    match doc.get("nbformat").and_then(Value::as_u64) {
        Some(4) => Ok(doc.get("nbformat_minor").and_then(Value::as_u64).unwrap_or(0)),
        Some(n) => Err(ToolError::Invalid(format!(
            "'{display}' uses nbformat {n}; only nbformat 4 is supported (convert it with `jupyter nbconvert --to \
             notebook`)."
        ))),
        None => Err(ToolError::Invalid(format!(
            "'{display}' is not a valid notebook: it has no \"nbformat\" version."
        ))),
    }
}

/// Sets a cell's source (and type). Returns what changed, or `None` when nothing did.
fn replace(cell: &mut Map<String, Value>, source: &str, cell_type: Option<&str>) -> Option<String> {
    let old_type = cell
        .get("cell_type")
        .and_then(Value::as_str)
        .unwrap_or("code")
        .to_string();
    let new_type = cell_type.unwrap_or(&old_type).to_string();
    let source_changed = source_text(cell.get("source")) != source;
    if !source_changed && new_type == old_type {
        return None;
    }
    cell.insert("source".into(), source_lines(source));
    let mut notes = Vec::new();
    if new_type != old_type {
        let sorted = cell.keys().zip(cell.keys().skip(1)).all(|(a, b)| a <= b);
        cell.insert("cell_type".into(), Value::String(new_type.clone()));
        if new_type == "code" {
            cell.remove("attachments");
            cell.insert("execution_count".into(), Value::Null);
            cell.insert("outputs".into(), Value::Array(Vec::new()));
        } else {
            cell.remove("outputs");
            cell.remove("execution_count");
        }
        // Jupyter writes keys sorted; keep it that way if the cell was.
        if sorted {
            cell.sort_keys();
        }
        notes.push(format!("now a {new_type} cell (was {old_type})"));
    } else {
        notes.push(format!("replaced the source of this {new_type} cell"));
        if new_type == "code" {
            let had_outputs = cell
                .get("outputs")
                .and_then(Value::as_array)
                .is_some_and(|o| !o.is_empty());
            cell.insert("execution_count".into(), Value::Null);
            cell.insert("outputs".into(), Value::Array(Vec::new()));
            if had_outputs {
                notes.push("cleared its outputs, which came from the old code".into());
            }
        }
    }
    Some(notes.join("; "))
}

/// A cell's source as one string: nbformat allows a string or a list of lines.
fn source_text(source: Option<&Value>) -> String {
    match source {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// Source as Jupyter writes it: a list of lines, each ending in `\n` except the last.
fn source_lines(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

/// A new nbformat 4 cell, keys in Jupyter's (sorted) order.
fn new_cell(cell_type: &str, source: &str, id: Option<String>) -> Value {
    let mut cell = Map::new();
    cell.insert("cell_type".into(), Value::String(cell_type.into()));
    if cell_type == "code" {
        cell.insert("execution_count".into(), Value::Null);
    }
    if let Some(id) = id {
        cell.insert("id".into(), Value::String(id));
    }
    cell.insert("metadata".into(), Value::Object(Map::new()));
    if cell_type == "code" {
        cell.insert("outputs".into(), Value::Array(Vec::new()));
    }
    cell.insert("source".into(), source_lines(source));
    Value::Object(cell)
}

/// An 8-hex-digit cell id (as Jupyter makes them) that no other cell has.
fn new_cell_id(cells: &[Value]) -> String {
    loop {
        let id = format!("{:08x}", fastrand::u32(..));
        if !cells
            .iter()
            .any(|c| c.get("id").and_then(Value::as_str) == Some(id.as_str()))
        {
            return id;
        }
    }
}

#[cfg(test)]
mod tests;
