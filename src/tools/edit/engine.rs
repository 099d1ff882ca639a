//! The edit engine: one pure function from a file's text and an edit request to the new text, shared by edit_file
//! and apply_patch. It never touches the disk. Matching happens on LF-normalised text; the result is assembled from
//! the original bytes, so line endings (CRLF, LF, or a mix), a BOM and everything outside the replaced ranges come
//! through byte for byte.

use serde_json::Value;

use super::diagnose;
use super::matching::{self, Found, FoundKind, Lines, ModelLines, Strategy};
use super::text::{Normalized, keep_file_style, lf, reindent, with_ending};

/// What to replace and how to choose among several matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EditRequest {
    pub old_text: String,
    pub new_text: String,
    /// Replace every match.
    pub replace_all: bool,
    /// 1-based: which match to replace.
    pub occurrence: Option<usize>,
    /// A line number near the intended match; the nearest match wins.
    pub line_hint: Option<usize>,
    /// The number of matches that must be replaced, or the edit fails.
    pub expected_replacements: Option<usize>,
}

impl EditRequest {
    #[cfg(test)]
    pub(crate) fn new(old_text: impl Into<String>, new_text: impl Into<String>) -> Self {
        Self {
            old_text: old_text.into(),
            new_text: new_text.into(),
            ..Self::default()
        }
    }

    /// Reads the request fields from tool arguments (edit_file's, or one apply_patch edit). Missing texts are empty.
    pub(crate) fn from_args(args: &Value) -> Result<Self, String> {
        let text = |key: &str| -> Result<String, String> {
            match args.get(key) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(format!("{key} must be a string, got {other}")),
            }
        };
        let count = |key: &str| -> Result<Option<usize>, String> {
            match args.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| format!("{key} must be a non-negative integer, got {v}")),
            }
        };
        Ok(Self {
            old_text: text("old_text")?,
            new_text: text("new_text")?,
            replace_all: args.get("replace_all").and_then(Value::as_bool).unwrap_or(false),
            occurrence: count("occurrence")?,
            line_hint: count("line_hint")?,
            expected_replacements: count("expected_replacements")?,
        })
    }
}

/// The edited text and where it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditOutcome {
    /// The whole new text, in the file's own line endings.
    pub content: String,
    pub strategy: Strategy,
    /// 1-based first line (in the old text) of each replaced match, ascending.
    pub lines: Vec<usize>,
}

/// Why an edit was refused. The messages are written for the model and name no path (callers prefix it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EditError {
    #[error("old_text and new_text are identical; there is nothing to change")]
    Unchanged,
    /// Arguments that contradict each other or make no sense.
    #[error("{0}")]
    Invalid(String),
    #[error(
        "old_text is empty, which only creates a new file or fills an empty one, but this file has {lines} line(s). \
         Give the text to replace as old_text, or use write_file to replace the whole file"
    )]
    NotEmpty { lines: usize },
    /// No strategy matched; the message shows the closest text and hints.
    #[error("{0}")]
    NotFound(String),
    /// Several matches and nothing to choose with; the message lists them.
    #[error("{0}")]
    Ambiguous(String),
    /// occurrence past the last match, or expected_replacements not met.
    #[error("{0}")]
    Count(String),
}

/// Applies one edit to `content` (a whole file's text) and returns the new text.
pub(crate) fn apply_edit(content: &str, req: &EditRequest) -> Result<EditOutcome, EditError> {
    let old = lf(&req.old_text);
    let new = lf(&req.new_text);
    if old == new {
        return Err(EditError::Unchanged);
    }
    check_selectors(req)?;
    let norm = Normalized::new(content);
    if old.is_empty() {
        if !norm.text.is_empty() {
            return Err(EditError::NotEmpty {
                lines: Lines::new(&norm.text).count(),
            });
        }
        return Ok(EditOutcome {
            content: format!("{}{}", norm.bom(), req.new_text),
            strategy: Strategy::Fill,
            lines: vec![1],
        });
    }
    let lines = Lines::new(&norm.text);
    let (strategy, found) = matching::find(&norm.text, &lines, &old);
    if found.is_empty() {
        return Err(EditError::NotFound(diagnose::not_found(&norm.text, &lines, &old, &new)));
    }
    let chosen = select(&found, &lines, req)?;
    let model = ModelLines::new(&old);
    // In a file without any line break, new_text's own line breaks are the only guide.
    let model_ending = if req.new_text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(content.len() + new.len());
    let mut copied = 0; // original offset up to which `content` has been copied
    let mut floor = 0; // normalised offset where the previous replaced range ended
    for f in &chosen {
        let replacement = replacement(&norm.text, &lines, &model, &old, &new, f);
        let (start, end) = if new.is_empty() {
            widen_deletion(&norm.text, f.start, f.end, floor)
        } else {
            (f.start, f.end)
        };
        let start = start.max(floor);
        let end = end.max(start);
        let (orig_start, orig_end) = (norm.to_original(start), norm.to_original(end));
        out.push_str(&content[copied..orig_start]);
        out.push_str(&with_ending(
            &replacement,
            norm.ending_for(f.start, f.end).unwrap_or(model_ending),
        ));
        copied = orig_end;
        floor = end;
    }
    out.push_str(&content[copied..]);
    Ok(EditOutcome {
        content: out,
        strategy,
        lines: chosen.iter().map(|f| f.line + 1).collect(),
    })
}

fn check_selectors(req: &EditRequest) -> Result<(), EditError> {
    let invalid = |msg: &str| Err(EditError::Invalid(msg.to_string()));
    if req.occurrence == Some(0) {
        return invalid("occurrence is 1-based: use 1 for the first match");
    }
    if req.line_hint == Some(0) {
        return invalid("line_hint is a 1-based line number");
    }
    if req.expected_replacements == Some(0) {
        return invalid("expected_replacements must be at least 1");
    }
    if req.replace_all && (req.occurrence.is_some() || req.line_hint.is_some()) {
        return invalid(
            "replace_all replaces every match, while occurrence and line_hint pick one: set only one of them",
        );
    }
    if req.occurrence.is_some() && req.line_hint.is_some() {
        return invalid("set either occurrence or line_hint to pick a match, not both");
    }
    Ok(())
}

/// The matches to replace, ascending.
fn select<'f>(found: &'f [Found], lines: &Lines, req: &EditRequest) -> Result<Vec<&'f Found>, EditError> {
    let count = found.len();
    let at = || line_list(found);
    let chosen: Vec<&Found> = if let Some(k) = req.occurrence {
        match found.get(k - 1) {
            Some(f) => vec![f],
            None => {
                return Err(EditError::Count(format!(
                    "occurrence {k} is out of range: old_text matches {} at {}",
                    times(count),
                    at()
                )));
            }
        }
    } else if let (Some(hint), true) = (req.line_hint, count > 1) {
        let distance = |f: &Found| {
            let (first, last) = (f.line + 1, lines.line_of(f.end.saturating_sub(1).max(f.start)) + 1);
            if hint < first {
                first - hint
            } else {
                hint.saturating_sub(last)
            }
        };
        let best = found.iter().map(distance).min().unwrap_or(0);
        let nearest: Vec<&Found> = found.iter().filter(|f| distance(f) == best).collect();
        if nearest.len() > 1 {
            return Err(EditError::Ambiguous(ambiguous(
                &format!("line_hint {hint} is equally close to several of them."),
                found,
                lines,
            )));
        }
        nearest
    } else if req.replace_all || count == 1 || req.expected_replacements == Some(count) {
        found.iter().collect()
    } else if let Some(expected) = req.expected_replacements {
        return Err(EditError::Count(format!(
            "expected_replacements is {expected}, but old_text matches {} at {}",
            times(count),
            at()
        )));
    } else {
        return Err(EditError::Ambiguous(ambiguous("", found, lines)));
    };
    if let Some(expected) = req.expected_replacements
        && expected != chosen.len()
    {
        let how = if req.occurrence.is_some() || req.line_hint.is_some() {
            format!(
                "{} selects 1 match",
                if req.occurrence.is_some() {
                    "occurrence"
                } else {
                    "line_hint"
                }
            )
        } else {
            format!("old_text matches {} at {}", times(count), at())
        };
        return Err(EditError::Count(format!(
            "expected_replacements is {expected}, but {how}"
        )));
    }
    Ok(chosen)
}

fn times(n: usize) -> String {
    if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    }
}

fn line_list(found: &[Found]) -> String {
    let nums: Vec<String> = found.iter().take(20).map(|f| (f.line + 1).to_string()).collect();
    let more = if found.len() > 20 {
        format!(" and {} more", found.len() - 20)
    } else {
        String::new()
    };
    format!(
        "{} {}{more}",
        if found.len() == 1 { "line" } else { "lines" },
        nums.join(", ")
    )
}

/// The ambiguity error: every candidate line with a neighbouring line for context (the matched lines themselves
/// are the same text at every candidate, so they would not tell them apart).
fn ambiguous(note: &str, found: &[Found], lines: &Lines) -> String {
    let note = if note.is_empty() {
        String::new()
    } else {
        format!(" {note}")
    };
    let mut msg = format!(
        "old_text matches {} times, at {}.{note}\n",
        found.len(),
        line_list(found)
    );
    for f in found.iter().take(20) {
        let context = (0..f.line)
            .rev()
            .find(|&i| !lines.get(i).trim().is_empty())
            .map(|i| ("after", i))
            .or_else(|| {
                let last = lines.line_of(f.end.saturating_sub(1).max(f.start));
                (last + 1..lines.count())
                    .find(|&i| !lines.get(i).trim().is_empty())
                    .map(|i| ("before", i))
            });
        match context {
            Some((rel, i)) => msg.push_str(&format!(
                "  - line {}, {rel} line {}: {}\n",
                f.line + 1,
                i + 1,
                clip(lines.get(i).trim(), 100)
            )),
            None => msg.push_str(&format!("  - line {}\n", f.line + 1)),
        }
    }
    msg.push_str(&format!(
        "Make old_text unique by adding surrounding lines, or set occurrence (1-{}) or line_hint to pick one, or set \
         replace_all=true to replace all {}.",
        found.len(),
        found.len()
    ));
    msg
}

pub(crate) fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// new_text as it goes in at one match (LF line endings): verbatim for an exact match; for a line match re-indented
/// to the file's indentation, and without its final newline where the file's last line has none.
fn replacement(text: &str, lines: &Lines, model: &ModelLines, old: &str, new: &str, f: &Found) -> String {
    match f.kind {
        FoundKind::Substring { plain: false } => new.to_string(),
        FoundKind::Substring { plain: true } => keep_file_style(old, new, &text[f.start..f.end]),
        FoundKind::Lines {
            first,
            count,
            eof_short,
            plain,
        } => {
            let file_lines: Vec<&str> = (first..first + count).map(|i| lines.get(i)).collect();
            let styled = if plain {
                keep_file_style(old, new, &file_view(model, &file_lines))
            } else {
                new.to_string()
            };
            let mut out = reindent(&styled, &model.lines, &file_lines);
            if eof_short && out.ends_with('\n') {
                out.pop();
            }
            out
        }
    }
}

/// old_text with each line's trimmed content taken from the file: the same chars as old_text where they agree, the
/// file's typographic quotes and dashes where they differ.
fn file_view(model: &ModelLines, file_lines: &[&str]) -> String {
    let mut view: Vec<String> = Vec::with_capacity(model.lines.len());
    for (m, f) in model.lines.iter().zip(file_lines) {
        let lead = &m[..m.len() - m.trim_start().len()];
        // A blank line is all lead: counting it as trail too would make the view longer than old_text.
        let trail = if m.trim().is_empty() {
            ""
        } else {
            &m[m.trim_end().len()..]
        };
        view.push(format!("{lead}{}{trail}", f.trim()));
    }
    let mut view = view.join("\n");
    if model.ends_with_newline {
        view.push('\n');
    }
    view
}

/// For a deletion of whole lines (nothing but whitespace around the match on its lines), widens the range to take
/// the line's indentation and its newline too, so no blank line is left behind. At the end of a file without a final
/// newline the newline before the line goes instead. Inline deletions are left exactly as matched. `floor`: the
/// range may not reach back before the previous replaced range's end.
fn widen_deletion(text: &str, start: usize, end: usize, floor: usize) -> (usize, usize) {
    let is_ws = |s: &str| s.bytes().all(|b| b == b' ' || b == b'\t');
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    if !is_ws(&text[line_start..start]) {
        return (start, end);
    }
    if end > start && text[..end].ends_with('\n') {
        return (line_start.max(floor), end);
    }
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    if !is_ws(&text[end..line_end]) {
        return (start, end);
    }
    if line_end < text.len() {
        (line_start.max(floor), line_end + 1)
    } else if line_start > floor {
        (line_start - 1, line_end)
    } else {
        (line_start.max(floor), line_end)
    }
}
