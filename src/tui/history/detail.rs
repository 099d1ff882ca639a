//! The detail view of one call: a fixed header (tool, call id, status, duration, size, time, stored path) over the
//! scrollable document. Only the document lines on screen are wrapped; wrapped lines are cached per line for the
//! current width and document, so a 20 MB result scrolls as cheaply as a short one.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::doc::{Doc, Kind};
use super::format;
use super::list::{draw_hints, draw_line};
use crate::state::calls::{CallStatus, ToolCallState};
use crate::theme::Theme;
use crate::wrap;
use tern_protocol::ToolDetails;

/// Wrapped lines kept before the cache is cleared (a few screens' worth many times over).
const CACHE_LINES: usize = 4096;

/// A position in the document: a doc line and a row within its wrapped rows.
type Pos = (usize, usize);

pub(crate) struct DetailView {
    pub(crate) call_index: usize,
    pub(crate) call_id: String,
    top: Pos,
    /// Follows the end of the document when it grows (a running call's live output).
    at_bottom: bool,
    width: u16,
    height: u16,
    generation: u64,
    wrapped: HashMap<usize, Vec<Line<'static>>>,
}

impl DetailView {
    pub(crate) fn new(call_index: usize, call_id: String) -> Self {
        Self {
            call_index,
            call_id,
            top: (0, 0),
            at_bottom: false,
            width: 80,
            height: 20,
            generation: 0,
            wrapped: HashMap::new(),
        }
    }

    /// Points the view at `doc` (identified by `generation`) laid out in `width` x `height`, dropping stale layout.
    pub(crate) fn prepare(&mut self, doc: &Doc, generation: u64, width: u16, height: u16) {
        let width = width.max(1);
        if width != self.width || generation != self.generation {
            self.wrapped.clear();
        }
        let relayout = width != self.width || height != self.height || generation != self.generation;
        self.width = width;
        self.height = height.max(1);
        self.generation = generation;
        if relayout {
            if self.at_bottom {
                self.top = self.max_top(doc);
            } else {
                self.clamp(doc);
            }
        }
    }

    pub(crate) fn page(&self) -> usize {
        usize::from(self.height).saturating_sub(1).max(1)
    }

    pub(crate) fn scroll_down(&mut self, doc: &Doc, rows: usize) {
        let max = self.max_top(doc);
        for _ in 0..rows {
            if self.top >= max {
                break;
            }
            let (line, row) = self.top;
            self.top = if row + 1 < self.rows(doc, line) {
                (line, row + 1)
            } else {
                (line + 1, 0)
            };
        }
        self.top = self.top.min(max);
        self.at_bottom = self.top == max;
    }

    pub(crate) fn scroll_up(&mut self, doc: &Doc, rows: usize) {
        for _ in 0..rows {
            let (line, row) = self.top;
            if row > 0 {
                self.top = (line, row - 1);
            } else if line > 0 {
                self.top = (line - 1, self.rows(doc, line - 1) - 1);
            } else {
                break;
            }
        }
        let max = self.max_top(doc);
        self.at_bottom = self.top == max;
    }

    pub(crate) fn home(&mut self, doc: &Doc) {
        self.top = (0, 0);
        let max = self.max_top(doc);
        self.at_bottom = self.top == max;
    }

    pub(crate) fn end(&mut self, doc: &Doc) {
        self.top = self.max_top(doc);
        self.at_bottom = true;
    }

    fn clamp(&mut self, doc: &Doc) {
        let max = self.max_top(doc);
        let (line, row) = self.top;
        self.top = if line >= doc.len() {
            max
        } else {
            (line, row.min(self.rows(doc, line) - 1)).min(max)
        };
        self.at_bottom = self.top == max;
    }

    /// The last top position that still fills the screen.
    fn max_top(&mut self, doc: &Doc) -> Pos {
        let mut remaining = usize::from(self.height);
        let mut line = doc.len();
        while line > 0 {
            line -= 1;
            let rows = self.rows(doc, line);
            if rows >= remaining {
                return (line, rows - remaining);
            }
            remaining -= rows;
        }
        (0, 0)
    }

    fn rows(&mut self, doc: &Doc, line: usize) -> usize {
        self.wrapped_line(doc, line).len().max(1)
    }

    fn wrapped_line(&mut self, doc: &Doc, line: usize) -> &[Line<'static>] {
        if self.wrapped.len() >= CACHE_LINES && !self.wrapped.contains_key(&line) {
            self.wrapped.clear();
        }
        let width = self.width;
        self.wrapped.entry(line).or_insert_with(|| match doc.line(line) {
            Some((text, _)) => wrap::wrap_line(Line::raw(text.to_string()), width, ""),
            None => Vec::new(),
        })
    }

    /// Where the view is: `All`, `Top`, `Bot` or a percentage of the document lines.
    fn position(&mut self, doc: &Doc) -> String {
        let max = self.max_top(doc);
        if max == (0, 0) {
            "All".into()
        } else if self.top == (0, 0) {
            "Top".into()
        } else if self.top >= max {
            "Bot".into()
        } else {
            format!("{}%", self.top.0 * 100 / doc.len().max(1))
        }
    }

    pub(crate) fn render(&mut self, frame: &mut Frame<'_>, area: Rect, detail: Detail<'_>) {
        let theme = detail.theme;
        let call = detail.call;
        let mut header = vec![title_line(call, theme), status_line(call, detail.size, theme)];
        if let Some(path) = &call.full_output_path {
            header.push(Line::from(vec![
                Span::styled(" stored ", theme.dim),
                Span::styled(path.clone(), theme.dim),
            ]));
        }
        header.push(Line::styled("─".repeat(usize::from(area.width)), theme.border));
        let header_rows = (header.len() as u16).min(area.height);
        for (y, line) in header.iter().take(usize::from(header_rows)).enumerate() {
            draw_line(frame, area, y as u16, line);
        }
        let footer_rows = u16::from(area.height > header_rows);
        let body = Rect {
            x: area.x + 1,
            y: area.y + header_rows,
            width: area.width.saturating_sub(2),
            height: area.height - header_rows - footer_rows,
        };
        self.prepare(detail.doc, detail.generation, body.width, body.height);
        let (mut line, mut row) = self.top;
        for y in 0..body.height {
            if line >= detail.doc.len() {
                break;
            }
            let style = kind_style(detail.doc.line(line).map_or(Kind::Text, |(_, k)| k), theme);
            let rows = self.wrapped_line(detail.doc, line);
            if let Some(text) = rows.get(row) {
                frame
                    .buffer_mut()
                    .set_line(body.x, body.y + y, &text.clone().style(style), body.width);
            }
            if row + 1 < rows.len() {
                row += 1;
            } else {
                line += 1;
                row = 0;
            }
        }
        if footer_rows == 1 {
            let mut right = self.position(detail.doc);
            if detail.loading {
                right = format!("loading…  {right}");
            }
            let hints = [
                ("↑↓", "scroll"),
                ("PgUp/PgDn", "page"),
                ("g/G", "top/end"),
                ("y", "copy"),
                ("o", "jump to call"),
            ];
            let y = area.y + area.height - 1;
            draw_hints(
                frame,
                Rect { y, height: 1, ..area },
                &hints,
                ("Esc", "back"),
                &right,
                theme,
            );
        }
    }
}

/// What the detail view draws besides its own state.
pub(crate) struct Detail<'a> {
    pub(crate) call: &'a ToolCallState,
    pub(crate) doc: &'a Doc,
    pub(crate) generation: u64,
    pub(crate) loading: bool,
    pub(crate) size: Option<u64>,
    pub(crate) theme: &'a Theme,
}

fn kind_style(kind: Kind, theme: &Theme) -> Style {
    match kind {
        Kind::Heading => theme.heading,
        Kind::Text => theme.text,
        Kind::Dim => theme.dim,
        Kind::Warning => theme.warning,
        Kind::Error => theme.error,
        Kind::Added => theme.diff_added,
        Kind::Removed => theme.diff_removed,
        Kind::Hunk => theme.diff_hunk,
    }
}

fn title_line(call: &ToolCallState, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::raw(" "),
        Span::styled(call.name.clone(), theme.tool_name),
        Span::raw("  "),
        Span::styled(call.call_id.clone(), theme.dim),
    ])
}

/// `✓ done · exit 0 · 2.5s · 1.2 KB · 12:00:01 UTC` plus what the tool's details say (matches, lines read).
fn status_line(call: &ToolCallState, size: Option<u64>, theme: &Theme) -> Line<'static> {
    let (mark, mark_style) = format::status_mark(&call.status, theme);
    let mut parts = vec![format::status_word(&call.status).to_string()];
    let details = call.output.as_ref().map(|o| &o.details);
    match details {
        Some(ToolDetails::Exec {
            exit_code,
            timed_out,
            sandboxed,
            ..
        }) => {
            if let Some(code) = exit_code {
                parts.push(format!("exit {code}"));
            }
            if *timed_out {
                parts.push("timed out".into());
            }
            if !*sandboxed {
                parts.push("unsandboxed".into());
            }
        }
        Some(ToolDetails::Search {
            matches,
            files,
            truncated,
            ..
        }) => {
            let files = format::count(*files, "file", "files", false);
            parts.push(format!(
                "{} in {files}",
                format::count(*matches, "match", "matches", *truncated)
            ));
        }
        Some(ToolDetails::Read {
            first_line,
            last_line,
            total_lines,
            ..
        }) => parts.push(match total_lines {
            Some(total) => format!("lines {first_line}-{last_line} of {total}"),
            None => format!("lines {first_line}-{last_line}"),
        }),
        Some(ToolDetails::List { entries, truncated }) => {
            parts.push(format::count(*entries, "entry", "entries", *truncated))
        }
        Some(ToolDetails::Diffs { diffs }) => {
            let (added, removed) = diffs.iter().fold((0, 0), |(a, r), d| (a + d.added, r + d.removed));
            let files = format::count(diffs.len() as u64, "file", "files", false);
            parts.push(format!("{files} +{added} -{removed}"));
        }
        Some(ToolDetails::Plan { items }) => {
            let (done, total) = tern_protocol::plan_progress(items);
            parts.push(format!("{done}/{total} done"));
        }
        Some(ToolDetails::None) | None => {}
    }
    parts.push(if call.status == CallStatus::Running {
        format::elapsed(call.elapsed())
    } else {
        format::duration(call.elapsed())
    });
    parts.push(size.map_or_else(|| "…".to_string(), format::size));
    parts.push(format!("{} UTC", format::utc_clock(call.started_at)));
    // A command's or a failure's summary (its error line, its line count) as the pane shows it; last, as the longest.
    if let Some(output) = &call.output
        && (output.is_error || matches!(output.details, ToolDetails::Exec { .. }))
    {
        parts.push(crate::view::summary::summary(output));
    }
    Line::from(vec![
        Span::raw(" "),
        Span::styled(mark, mark_style),
        Span::raw(" "),
        Span::styled(parts.join(" · "), theme.dim),
    ])
}
