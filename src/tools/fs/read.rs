//! read_file: a window of a text file as numbered lines, or an image for the model to look at.
//!
//! The file is streamed: lines before `offset` are skipped without being kept, the window is read line by line with
//! each line capped, and after it at most a few MiB more are scanned to learn the total line count. A multi-GB file
//! costs the same memory as a small one. A repeat read of the same window of an unchanged file gets a short stub.

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::fs::File;
use std::hash::Hasher;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::lines::{LineError, LineReader, Utf16, Utf16Reader};
use super::sniff::{ImageKind, SNIFF_LEN, binary_kind, binary_reason};
use super::{human_size, int_arg, run_blocking, str_arg};
use crate::file_state::{FileStamp, FileTracker, ReadRecord, hash_bytes};
use crate::{Effects, effects};
use crate::{PathPolicy, Tool, ToolContext, ToolError};
use tern_protocol::{Image, ToolDetails, ToolKind, ToolOutput};

const DEFAULT_LIMIT: u64 = 2000;
const MAX_LIMIT: u64 = 10_000;
/// The whole result, footer included, stays under this many characters.
const MAX_OUTPUT_CHARS: usize = 128_000;
/// Room kept for the footer and notes.
const FOOTER_RESERVE: usize = 400;
const MAX_LINE_CHARS: usize = 2000;
/// After the window, how much more is scanned to tell the total number of lines.
const COUNT_BUDGET: u64 = 8 * 1024 * 1024;
/// The largest image file read: a larger one is decoded only to be scaled down, and decoding is bounded by pixels.
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;
const READ_BUFFER: usize = 64 * 1024;

pub(super) struct ReadFileTool;

#[async_trait]
impl Tool for ReadFileTool {
    fn name(&self) -> &str {
        "read_file"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Read)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn effects(&self, args: &Value) -> Effects {
        Effects::reads(effects::text(args, "path"))
    }

    fn description(&self) -> &str {
        "Read a text file, or look at an image (PNG, JPEG, GIF, WebP). Text comes back as numbered lines `N| text`; \
         the number and `| ` are not part of the file. Returns up to `limit` lines (default 2000) starting at line \
         `offset`; a footer says how to continue. Files of any size can be paged this way. Lines over 2,000 \
         characters are cut. Reading the same range of an unchanged file again returns a short notice instead of the \
         content. Prefer this over cat/head/tail/sed in a shell; use list_dir for directories and grep to find where \
         something is."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file to read: relative to the workspace root, or absolute."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "1-based line number to start reading from (default 1)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "Maximum number of lines to return (default 2000, at most 10000)."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = str_arg(&args, "path")?;
        let offset = int_arg(&args, "offset", 1, 1, u64::MAX / 2)?;
        let limit = int_arg(&args, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)?;
        let resolved = ctx.policy.resolve_read(path)?;
        let request = Request {
            display: ctx.policy.display(&resolved),
            resolved,
            offset,
            limit,
            policy: Arc::clone(&ctx.policy),
            files: Arc::clone(&ctx.files),
            cancel: ctx.cancel.clone(),
        };
        // The editor's buffer, when an editor drives the session: what the user sees, saved or not.
        if let Some(buffers) = &ctx.buffers
            && let Some(text) = buffers.text(&request.resolved).await
            && !text.contains('\0')
        {
            return run_blocking(move || request.run_text(text)).await;
        }
        run_blocking(move || request.run()).await
    }
}

pub(super) struct Request {
    pub(super) resolved: PathBuf,
    pub(super) display: String,
    pub(super) offset: u64,
    pub(super) limit: u64,
    pub(super) policy: Arc<PathPolicy>,
    pub(super) files: Arc<FileTracker>,
    pub(super) cancel: CancellationToken,
}

/// The window read from a text file.
struct Window {
    lines: Vec<(u64, String)>,
    /// At least one line follows the last one shown.
    more: bool,
    total: Option<u64>,
    hash: u64,
    invalid_utf8: bool,
}

impl Request {
    pub(super) fn run(&self) -> Result<ToolOutput, ToolError> {
        let meta = match tern_fs::metadata(&self.resolved) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(self.not_found()),
            Err(e) => return Err(self.io(e)),
        };
        if meta.is_dir() {
            return Err(ToolError::Invalid(format!(
                "'{}' is a directory, not a file. Use list_dir to see what it contains.",
                self.display
            )));
        }
        let file = tern_fs::open(&self.resolved).map_err(|e| self.io(e))?;
        // The handle's own metadata: what was checked is what is read, even if the path was swapped meanwhile.
        let meta = file.metadata().map_err(|e| self.io(e))?;
        if !meta.is_file() {
            return Err(ToolError::Invalid(format!(
                "'{}' is not a regular file; refusing to read it.",
                self.display
            )));
        }
        // A file holding a known key is refused whole: a window, a cut long line or an offset would show the key in
        // pieces that masking (which matches the whole value) cannot catch. Checked on the handle that is read.
        if tern_secrets::holds_key(&file).map_err(|e| self.io(e))? {
            return Err(self.holds_key());
        }
        let mut reader = BufReader::with_capacity(READ_BUFFER, file);
        let head = sniff_head(&mut reader).map_err(|e| self.io(e))?;
        // A byte-order mark alone is no content either.
        let bom_only = matches!(head.as_slice(), b"\xEF\xBB\xBF" | b"\xFF\xFE" | b"\xFE\xFF");
        if head.is_empty() || bom_only {
            let what = if bom_only { "only a byte-order mark" } else { "0 bytes" };
            return Ok(
                ToolOutput::text(format!("(File {} is empty: {what}.)", self.display)).with_details(
                    ToolDetails::Read {
                        path: self.display.clone(),
                        first_line: 0,
                        last_line: 0,
                        total_lines: Some(0),
                    },
                ),
            );
        }
        if let Some(kind) = ImageKind::detect(&head) {
            return self.image(kind, reader, &meta);
        }
        let utf16 = Utf16::detect(&head);
        if utf16.is_none()
            && let Some(reason) = binary_reason(&head)
        {
            return Err(self.binary(&head, reason, meta.len()));
        }
        let source: Box<dyn BufRead> = match utf16 {
            Some(order) => Box::new(BufReader::with_capacity(READ_BUFFER, Utf16Reader::new(reader, order))),
            None => {
                if head.starts_with(b"\xEF\xBB\xBF") {
                    reader.consume(3);
                }
                Box::new(reader)
            }
        };
        let window = self.window(LineReader::new(source, self.cancel.clone()))?;
        let stamp = FileStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            hash: window.hash,
        };
        Ok(self.text_output(window, stamp, utf16))
    }

    /// `run` over the text an editor has for the file (its unsaved buffer): the same window, the same refusal of a
    /// known key. Its stamp has no modification time, so a later read of the file on disk is never taken for it.
    pub(super) fn run_text(&self, text: String) -> Result<ToolOutput, ToolError> {
        if matches!(tern_secrets::mask(&text), std::borrow::Cow::Owned(_)) {
            return Err(self.holds_key());
        }
        if text.is_empty() {
            let empty = ToolDetails::Read {
                path: self.display.clone(),
                first_line: 0,
                last_line: 0,
                total_lines: Some(0),
            };
            let shown = format!("(File {} is empty in the editor: 0 bytes.)", self.display);
            return Ok(ToolOutput::text(shown).with_details(empty));
        }
        let len = text.len() as u64;
        let window = self.window(LineReader::new(
            std::io::Cursor::new(text.into_bytes()),
            self.cancel.clone(),
        ))?;
        let stamp = FileStamp {
            modified: None,
            len,
            hash: window.hash,
        };
        Ok(self.text_output(window, stamp, None))
    }

    /// Skips to `offset`, reads the window, then looks a little further to know what follows.
    fn window<R: BufRead>(&self, mut lines: LineReader<R>) -> Result<Window, ToolError> {
        let map = |e: LineError| match e {
            LineError::Cancelled => ToolError::Cancelled,
            LineError::Io(e) => self.io(e),
        };
        for skipped in 0..self.offset - 1 {
            if !lines.skip_line().map_err(map)? {
                return Err(self.past_end(skipped));
            }
        }
        let width = digits(self.offset + self.limit - 1);
        let budget = MAX_OUTPUT_CHARS - FOOTER_RESERVE;
        let mut used = 0;
        let mut window = Window {
            lines: Vec::new(),
            more: false,
            total: None,
            hash: 0,
            invalid_utf8: false,
        };
        let mut hasher = DefaultHasher::new();
        let mut keep = Vec::with_capacity(MAX_LINE_CHARS * 4);
        while (window.lines.len() as u64) < self.limit {
            let Some(info) = lines
                .read_line(&mut keep, MAX_LINE_CHARS * 4, &mut hasher)
                .map_err(map)?
            else {
                break;
            };
            let text = render_line(&keep, info.chars, info.complete, &mut window.invalid_utf8);
            // Upper bound of the formatted line: number padded to the widest possible, "| ", text, newline.
            let cost = width + 3 + text.chars().count();
            if used + cost > budget {
                window.more = true;
                break;
            }
            used += cost;
            window.lines.push((self.offset + window.lines.len() as u64, text));
        }
        let last = self.offset - 1 + window.lines.len() as u64;
        if window.lines.is_empty() {
            return Err(self.past_end(last));
        }
        window.hash = hasher.finish();
        // A line read but not shown (output cap) still counts towards the total.
        let pending = u64::from(window.more);
        window.more = window.more || !lines.at_eof().map_err(map)?;
        window.total = match window.more {
            false => Some(last),
            true => lines
                .count_rest(COUNT_BUDGET)
                .map_err(map)?
                .map(|rest| last + pending + rest),
        };
        Ok(window)
    }

    fn text_output(&self, window: Window, stamp: FileStamp, utf16: Option<Utf16>) -> ToolOutput {
        let first = self.offset;
        let last = self.offset - 1 + window.lines.len() as u64;
        let details = ToolDetails::Read {
            path: self.display.clone(),
            first_line: first,
            last_line: last,
            total_lines: window.total,
        };
        if self.unchanged(stamp) {
            return ToolOutput::text(self.stub()).with_details(details);
        }
        let width = digits(last);
        let mut out = String::new();
        for (n, text) in &window.lines {
            let _ = writeln!(out, "{n:>width$}| {text}");
        }
        out.push('\n');
        match (window.more, window.total) {
            (false, _) => {
                let _ = write!(
                    out,
                    "(End of file — {last} line{} total)",
                    if last == 1 { "" } else { "s" }
                );
            }
            (true, Some(total)) => {
                let _ = write!(
                    out,
                    "(Showing lines {first}-{last} of {total}. Use offset={} to continue.)",
                    last + 1
                );
            }
            (true, None) => {
                let _ = write!(
                    out,
                    "(Showing lines {first}-{last}. Use offset={} to continue.)",
                    last + 1
                );
            }
        }
        if let Some(order) = utf16 {
            let _ = write!(out, "\n(The file is {} text, shown here as UTF-8.)", order.name());
        }
        if window.invalid_utf8 {
            out.push_str(
                "\n(Some bytes are not valid UTF-8 and are shown as \u{FFFD}; the file itself holds other bytes.)",
            );
        }
        self.record(stamp);
        ToolOutput::text(out).with_details(details)
    }

    fn image(
        &self,
        kind: ImageKind,
        reader: BufReader<File>,
        meta: &std::fs::Metadata,
    ) -> Result<ToolOutput, ToolError> {
        if meta.len() > MAX_IMAGE_BYTES {
            return Err(ToolError::Invalid(format!(
                "'{}' is a {} image of {}; images over {} are not sent to the model. Make a smaller copy (for \
                 example with ImageMagick's `convert -resize`) and read that.",
                self.display,
                kind.name(),
                human_size(meta.len()),
                human_size(MAX_IMAGE_BYTES)
            )));
        }
        let mut data = Vec::with_capacity(meta.len() as usize);
        reader
            .take(MAX_IMAGE_BYTES + 1)
            .read_to_end(&mut data)
            .map_err(|e| self.io(e))?;
        if data.len() as u64 > MAX_IMAGE_BYTES {
            return Err(ToolError::Invalid(format!(
                "'{}' grew past {} while being read; images that large are not sent to the model.",
                self.display,
                human_size(MAX_IMAGE_BYTES)
            )));
        }
        let stamp = FileStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            hash: hash_bytes(&data),
        };
        if self.unchanged(stamp) {
            return Ok(ToolOutput::text(self.stub()));
        }
        // Checked by decoding and scaled down when too large for the models, in the one place attachments use too.
        let fitted = tern_image::fit(&data)
            .map_err(|reason| ToolError::Invalid(format!("'{}' is not sent to the model: {reason}.", self.display)))?;
        let mut out = ToolOutput::text(image_summary(&self.display, kind, &fitted));
        out.images.push(Image {
            media_type: fitted.media_type.to_string(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(&fitted.data),
        });
        self.record(stamp);
        Ok(out)
    }

    fn unchanged(&self, stamp: FileStamp) -> bool {
        self.files.last_read(&self.resolved) == Some(self.record_for(stamp))
    }

    fn record(&self, stamp: FileStamp) {
        self.files.record_read(&self.resolved, self.record_for(stamp));
    }

    fn record_for(&self, stamp: FileStamp) -> ReadRecord {
        ReadRecord {
            stamp,
            offset: self.offset,
            limit: self.limit,
        }
    }

    fn stub(&self) -> String {
        format!(
            "[File unchanged since last read: {} — the content shown earlier is still current.]",
            self.display
        )
    }

    fn holds_key(&self) -> ToolError {
        ToolError::Invalid(format!(
            "'{}' holds a key tern knows (an API key or another secret it was given), so it is not shown, whole or in \
             part. If you need its other contents, ask the user.",
            self.display
        ))
    }

    fn io(&self, e: std::io::Error) -> ToolError {
        ToolError::io(self.display.clone(), e)
    }

    fn past_end(&self, lines: u64) -> ToolError {
        ToolError::Invalid(format!(
            "offset {} is past the end of '{}', which has {lines} line{}. Use an offset from 1 to {lines}.",
            self.offset,
            self.display,
            if lines == 1 { "" } else { "s" },
        ))
    }

    fn binary(&self, head: &[u8], reason: &str, len: u64) -> ToolError {
        let ext = self.resolved.extension().and_then(|e| e.to_str());
        let what = match binary_kind(head, ext) {
            Some(kind) => format!("{kind}, {}", human_size(len)),
            None => format!("{}, {reason} in its first bytes", human_size(len)),
        };
        ToolError::Invalid(format!(
            "'{}' is a binary file ({what}). read_file shows text and PNG/JPEG/GIF/WebP images only; inspect it with \
             a command that understands the format instead (for example `file`, `unzip -l`, `pdftotext`, or `xxd | \
             head`).",
            self.display
        ))
    }

    /// "not found", with names from the same directory that look like what was meant.
    fn not_found(&self) -> ToolError {
        let mut msg = format!("File not found: '{}'.", self.display);
        let parent = self.resolved.parent().unwrap_or(Path::new("/"));
        let wanted = self
            .resolved
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        match std::fs::read_dir(parent) {
            Ok(entries) => {
                let mut similar: Vec<String> = entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| looks_like(&name.to_lowercase(), &wanted))
                    .take(50)
                    .collect();
                similar.sort();
                similar.truncate(3);
                if !similar.is_empty() {
                    let shown: Vec<String> = similar
                        .iter()
                        .map(|n| format!("'{}'", self.policy.display(&parent.join(n))))
                        .collect();
                    let _ = write!(msg, " Did you mean {}?", shown.join(" or "));
                }
            }
            Err(_) => {
                let _ = write!(
                    msg,
                    " Its directory '{}' does not exist either.",
                    self.policy.display(parent)
                );
            }
        }
        ToolError::Invalid(msg)
    }
}

/// Same name ignoring case, or the same stem with another extension, or one containing the other.
fn looks_like(candidate: &str, wanted: &str) -> bool {
    let stem = |s: &str| s.split('.').next().unwrap_or("").to_string();
    if wanted.is_empty() {
        return false;
    }
    let same_stem = !stem(wanted).is_empty() && stem(candidate) == stem(wanted);
    let contains =
        wanted.len() >= 4 && candidate.len() >= 4 && (candidate.contains(wanted) || wanted.contains(candidate));
    candidate == wanted || same_stem || contains
}

/// The first bytes of the file, without consuming them. One fill is enough: a regular file's first read returns all it
/// can up to the buffer size.
fn sniff_head(reader: &mut BufReader<File>) -> std::io::Result<Vec<u8>> {
    let head = reader.fill_buf()?;
    Ok(head.get(..SNIFF_LEN.min(head.len())).unwrap_or_default().to_vec())
}

/// One line as shown: lossily decoded, NUL made visible, cut at `MAX_LINE_CHARS` with a marker naming its length.
fn render_line(bytes: &[u8], chars: u64, complete: bool, invalid: &mut bool) -> String {
    let mut bytes = bytes;
    if !complete
        && let Err(e) = std::str::from_utf8(bytes)
        && e.error_len().is_none()
    {
        // The kept prefix ends inside a character: drop the partial character rather than show it as invalid.
        bytes = bytes.get(..e.valid_up_to()).unwrap_or_default();
    }
    let decoded = String::from_utf8_lossy(bytes);
    if matches!(decoded, std::borrow::Cow::Owned(_)) {
        *invalid = true;
    }
    let mut text = if decoded.contains('\0') {
        decoded.replace('\0', "\u{2400}")
    } else {
        decoded.into_owned()
    };
    let mut cut = !complete;
    if let Some((at, _)) = text.char_indices().nth(MAX_LINE_CHARS) {
        text.truncate(at);
        cut = true;
    }
    if cut {
        let _ = write!(text, " … [line truncated, {chars} chars]");
    }
    text
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

#[cfg(test)]
mod buffer_tests;
#[cfg(test)]
mod tests;

/// `Image shot.png (PNG, 640×480, 84 KB)`, or `Image shot.png (PNG, 1568×882, scaled down from 4000×2250, sent as
/// JPEG, 312 KB)` for one tern scaled down.
pub(super) fn image_summary(display: &str, kind: ImageKind, fitted: &tern_image::Fitted) -> String {
    let sent_as = match fitted.media_type {
        t if t == kind.media_type() => String::new(),
        "image/png" => ", sent as PNG".to_string(),
        _ => ", sent as JPEG".to_string(),
    };
    format!(
        "Image {display} ({}, {}{sent_as}, {})",
        kind.name(),
        fitted.pixels(),
        human_size(fitted.data.len() as u64)
    )
}
