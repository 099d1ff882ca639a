//! The detail view's document: the arguments, the full result and any diffs of one call as plain lines, each with
//! one kind (mapped to a theme style when drawn). Text is cleaned for the terminal once (tabs expanded, escape
//! sequences and control characters dropped) and very long lines are cut into segments, so the view can wrap just the
//! lines on screen. Building may read the stored full result from disk, so for stored or large results it runs on a
//! background thread.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::format;
use crate::state::calls::{CallStatus, ToolCallState};
use tern_protocol::{ToolDetails, ToolOutput};

/// Most of a stored result we load (and copy): all that exec keeps of an output (`MAX_STORED_BYTES`, 64 MB).
pub(crate) const LOAD_CAP: u64 = 64 * 1024 * 1024;
/// Inputs larger than this are built off the UI thread.
const SYNC_LIMIT: usize = 256 * 1024;
/// Longest line kept whole, in bytes; longer ones (minified JSON, base64) are cut so wrapping stays per-line cheap.
const SEGMENT_BYTES: usize = 2048;
const TAB: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Heading,
    Text,
    Dim,
    Warning,
    Error,
    Added,
    Removed,
    Hunk,
}

struct DocLine {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Default)]
pub(crate) struct Doc {
    buf: String,
    lines: Vec<DocLine>,
}

impl Doc {
    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    pub(crate) fn line(&self, i: usize) -> Option<(&str, Kind)> {
        let l = self.lines.get(i)?;
        Some((self.buf.get(l.start..l.end)?, l.kind))
    }

    /// Adds text, one doc line per text line (a final newline does not make an empty line).
    pub(crate) fn push_text(&mut self, kind: Kind, text: &str) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        for line in text.split('\n') {
            self.push_line(kind, line);
        }
    }

    pub(crate) fn push_line(&mut self, kind: Kind, line: &str) {
        let start = self.buf.len();
        clean_into(&mut self.buf, line);
        let end = self.buf.len();
        let mut a = start;
        while end - a > SEGMENT_BYTES {
            let mut b = a + SEGMENT_BYTES;
            while !self.buf.is_char_boundary(b) {
                b -= 1;
            }
            self.lines.push(DocLine { start: a, end: b, kind });
            a = b;
        }
        self.lines.push(DocLine { start: a, end, kind });
    }

    fn blank(&mut self) {
        self.push_line(Kind::Text, "");
    }

    /// A one-line document (the "loading…" placeholder).
    pub(crate) fn message(kind: Kind, text: &str) -> Self {
        let mut doc = Doc::default();
        doc.push_text(kind, text);
        doc
    }
}

/// Expands tabs and shows escape sequences and other control characters visibly (`terminal_text::clean`, the one
/// gate); a CR ending the line (CRLF text) is only a line ending.
fn clean_into(buf: &mut String, line: &str) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut col = 0;
    for c in tern_text::clean(line).chars() {
        if c == '\t' {
            let n = TAB - col % TAB;
            buf.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            buf.push(c);
            col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        }
    }
}

/// What a detail document is built from: an owned copy of the call, so building can move to a thread.
pub(crate) struct Source {
    args: Value,
    status: CallStatus,
    output: Option<ToolOutput>,
    live: String,
    stored: Option<String>,
}

impl Source {
    pub(crate) fn of(call: &ToolCallState) -> Self {
        let mut live = String::new();
        if call.output.is_none() {
            for line in &call.live {
                live.push_str(&line.text);
                live.push('\n');
            }
            live.push_str(&call.live_partial().text);
        }
        Self {
            args: call.args.clone(),
            status: call.status.clone(),
            output: call.output.clone(),
            live,
            stored: call.full_output_path.clone(),
        }
    }

    /// Stored results are read from disk and big inputs take a while to clean and diff: both go to a thread.
    pub(crate) fn needs_background(&self) -> bool {
        if self.stored.is_some() {
            return true;
        }
        let mut size = value_size(&self.args) + self.live.len();
        if let Some(output) = &self.output {
            size += output.text.len();
            if let ToolDetails::Diffs { diffs } = &output.details {
                for d in diffs {
                    size += d.old.as_ref().map_or(0, String::len) + d.new.as_ref().map_or(0, String::len);
                }
            }
        }
        size > SYNC_LIMIT
    }
}

fn value_size(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(value_size).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + value_size(v)).sum(),
        _ => 8,
    }
}

/// A built detail: the document and the text `y` copies.
pub(crate) struct Built {
    pub(crate) doc: Doc,
    /// The full result (loaded from the store when there is one), or the live output so far.
    pub(crate) full_text: String,
    /// Said when copying: the copy is cut or is only the preview.
    pub(crate) copy_note: Option<String>,
}

/// Builds the document. Reads the stored result when there is one; `cancel` stops a long read early.
pub(crate) fn build(source: Source, cancel: &AtomicBool) -> Built {
    let mut doc = Doc::default();
    doc.push_line(Kind::Heading, "Arguments");
    doc.push_text(Kind::Text, &pretty_args(&source.args));
    doc.blank();
    let (full_text, copy_note) = match (&source.status, source.output) {
        (status, None) => {
            if *status != CallStatus::Running {
                doc.push_line(Kind::Heading, "Result");
                doc.push_line(Kind::Dim, "(no result was recorded)");
                return Built {
                    doc,
                    full_text: String::new(),
                    copy_note: None,
                };
            }
            doc.push_line(Kind::Heading, "Live output (so far)");
            if source.live.is_empty() {
                doc.push_line(Kind::Dim, "(no output yet)");
            } else {
                doc.push_text(Kind::Text, &source.live);
            }
            let copy_note = Some("Copied the output so far (the call is still running).".to_string());
            (source.live, copy_note)
        }
        (status, Some(output)) => {
            let failed = *status == CallStatus::Failed;
            doc.push_line(
                if failed { Kind::Error } else { Kind::Heading },
                if failed { "Error" } else { "Result" },
            );
            let (text, copy_note) = result_text(&mut doc, &output, source.stored.as_deref(), cancel);
            push_result(&mut doc, &output, &text);
            (text, copy_note)
        }
    };
    Built {
        doc,
        full_text,
        copy_note,
    }
}

/// The result's full text: the stored result at `stored` when there is one (with a warning in `doc` when it is cut
/// or cannot be read), else the output's own text; and what copying it should say.
fn result_text(
    doc: &mut Doc,
    output: &ToolOutput,
    stored: Option<&str>,
    cancel: &AtomicBool,
) -> (String, Option<String>) {
    let Some(path) = stored else {
        return (output.text.clone(), None);
    };
    match load(path, LOAD_CAP, cancel) {
        Ok(loaded) => {
            let mut copy_note = None;
            if loaded.total > LOAD_CAP {
                let note = format!(
                    "Showing the first {} of {} (the stored result is larger).",
                    format::size(LOAD_CAP),
                    format::size(loaded.total)
                );
                doc.push_line(Kind::Warning, &note);
                copy_note = Some(format!("Copied the first {} of the result.", format::size(LOAD_CAP)));
            }
            (loaded.text, copy_note)
        }
        Err(e) => {
            let note = format!("Could not read the stored result at {path}: {e}. Showing the preview the model got.");
            doc.push_line(Kind::Warning, &note);
            let copy_note = Some("Could not read the stored result: copied the preview.".to_string());
            (output.text.clone(), copy_note)
        }
    }
}

/// The result's `text`, then a line for each image and the diffs it carries.
fn push_result(doc: &mut Doc, output: &ToolOutput, text: &str) {
    if text.is_empty() {
        doc.push_line(Kind::Dim, "(no output)");
    } else {
        doc.push_text(Kind::Text, text);
    }
    for image in &output.images {
        let bytes = image.data_base64.len() as u64 * 3 / 4;
        doc.push_line(
            Kind::Dim,
            &format!("[image: {}, {}]", image.media_type, format::size(bytes)),
        );
    }
    if let ToolDetails::Diffs { diffs } = &output.details {
        for diff in diffs {
            doc.blank();
            let title = format!("Diff {}  +{} -{}", diff.path, diff.added, diff.removed);
            doc.push_line(Kind::Heading, &title);
            push_diff(doc, &diff.unified(3));
        }
    }
}

fn push_diff(doc: &mut Doc, unified: &str) {
    let unified = unified.strip_suffix('\n').unwrap_or(unified);
    if unified.is_empty() {
        doc.push_line(Kind::Dim, "(no changes)");
        return;
    }
    for line in unified.split('\n') {
        let kind = if line.starts_with("+++") || line.starts_with("---") {
            Kind::Dim
        } else if line.starts_with("@@") {
            Kind::Hunk
        } else if line.starts_with('+') {
            Kind::Added
        } else if line.starts_with('-') {
            Kind::Removed
        } else {
            Kind::Text
        };
        doc.push_line(kind, line);
    }
}

/// Arguments as indented JSON; a raw string argument is parsed if it is JSON, else shown as it is.
fn pretty_args(args: &Value) -> String {
    let parsed;
    let value = match args {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v) => {
                parsed = v;
                &parsed
            }
            Err(_) => return s.clone(),
        },
        other => other,
    };
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

struct Loaded {
    text: String,
    /// The file's size; more than the cap means `text` is cut.
    total: u64,
}

/// Reads up to `cap` bytes of `path` (a cut inside a UTF-8 character drops that character).
fn load(path: &str, cap: u64, cancel: &AtomicBool) -> Result<Loaded, String> {
    // Only regular files: opening a FIFO would block this thread for good.
    if !std::fs::metadata(path).map_err(|e| e.to_string())?.is_file() {
        return Err("not a regular file".into());
    }
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let total = file.metadata().map_err(|e| e.to_string())?.len();
    let mut bytes = Vec::with_capacity(total.min(cap) as usize);
    let mut chunk = vec![0u8; 1 << 20];
    while (bytes.len() as u64) < cap {
        if cancel.load(Ordering::Relaxed) {
            return Err("cancelled".into());
        }
        let want = chunk.len().min((cap - bytes.len() as u64) as usize);
        let n = file.read(&mut chunk[..want]).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    let total = total.max(bytes.len() as u64);
    if total > bytes.len() as u64
        && let Err(e) = std::str::from_utf8(&bytes)
        && e.error_len().is_none()
    {
        // The cut fell inside a character: drop its first bytes rather than show a replacement mark.
        bytes.truncate(e.valid_up_to());
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Ok(Loaded { text, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(doc: &Doc) -> Vec<String> {
        (0..doc.len())
            .filter_map(|i| doc.line(i))
            .map(|(t, _)| t.to_string())
            .collect()
    }

    #[test]
    fn cleans_tabs_escapes_and_controls() {
        let mut doc = Doc::default();
        doc.push_text(
            Kind::Text,
            "a\tb\r\n\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}x\u{8}y\n",
        );
        assert_eq!(lines(&doc), ["a   b", "␛[31mred␛[0m ␛]0;title␇x␈y"]);
    }

    #[test]
    fn long_lines_become_segments_at_char_boundaries() {
        let mut doc = Doc::default();
        let long = "é".repeat(3000); // 6000 bytes
        doc.push_line(Kind::Text, &long);
        assert_eq!(doc.len(), 3);
        assert_eq!(lines(&doc).concat(), long);
    }

    #[test]
    fn load_caps_and_keeps_utf8_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.txt");
        std::fs::write(&path, "ok\n").unwrap();
        let no = AtomicBool::new(false);
        let loaded = load(path.to_str().unwrap(), LOAD_CAP, &no).unwrap();
        assert_eq!((loaded.text.as_str(), loaded.total), ("ok\n", 3));
        // "abé" is 4 bytes; a cap of 3 cuts inside "é", which is dropped whole.
        std::fs::write(&path, "abé-and more").unwrap();
        let loaded = load(path.to_str().unwrap(), 3, &no).unwrap();
        assert_eq!((loaded.text.as_str(), loaded.total), ("ab", 13));
        let loaded = load(path.to_str().unwrap(), 4, &no).unwrap();
        assert_eq!(loaded.text, "abé");
        let cancelled = load(path.to_str().unwrap(), LOAD_CAP, &AtomicBool::new(true));
        assert_eq!(cancelled.err().as_deref(), Some("cancelled"));
        let err = load(dir.path().join("missing").to_str().unwrap(), LOAD_CAP, &no);
        assert!(err.is_err());
    }
}
