//! A live process's emulated screen (`state::processes`) as ratatui lines: each cell's character with its colours and
//! attributes. Every character passes the terminal gate (`tern_text::one_cell`, the cell form of `tern_text::clean`)
//! even though the emulator only keeps printable ones, and colours follow the rule of a command's coloured output
//! (`output_line::ratatui_style`: text in its own background colour shows in the terminal's colours).
//!
//! Used by the pane under the call that started the process, the focused view and nothing else; it draws, and
//! changes nothing.

use std::borrow::Cow;
use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::output_line::ratatui_style;
use crate::state::processes::LiveProcess;
use crate::theme::Theme;
use crate::wrap::{truncate, width as text_width};
use tern_protocol::process::ProcessEnd;
use tern_text::ansi::{self, Colour};

/// Screen rows a pane in the transcript shows at most (the last ones written).
pub(crate) const PANE_ROWS: u16 = 12;

fn colour(c: vt100::Color) -> Option<Colour> {
    match c {
        vt100::Color::Default => None,
        vt100::Color::Idx(i) => Some(Colour::Indexed(i)),
        vt100::Color::Rgb(r, g, b) => Some(Colour::Rgb(r, g, b)),
    }
}

/// A cell's style: its SGR state mapped as a command's coloured output is.
fn style_of(cell: &vt100::Cell) -> Style {
    ratatui_style(ansi::Style {
        fg: colour(cell.fgcolor()),
        bg: colour(cell.bgcolor()),
        bold: cell.bold(),
        dim: cell.dim(),
        italic: cell.italic(),
        underline: cell.underline(),
        reverse: cell.inverse(),
    })
}

/// What one cell shows: its character (with its combining marks) when the gate leaves it as it is; else the picture
/// of the first character a terminal would act on, alone, so the cell keeps its one column.
fn symbol(contents: &str) -> Cow<'_, str> {
    if contents.is_empty() {
        return Cow::Borrowed(" ");
    }
    match tern_text::one_cell(contents) {
        Cow::Borrowed(clean) => Cow::Borrowed(clean),
        Cow::Owned(shown) => {
            let picture = shown
                .chars()
                .zip(contents.chars())
                .find(|(shown, raw)| shown != raw)
                .map_or('\u{fffd}', |(shown, _)| shown);
            Cow::Owned(picture.to_string())
        }
    }
}

/// Row `row` of `screen` as spans of equal style, `cols` columns at most; blank default cells at its end left out.
pub(crate) fn row_spans(screen: &vt100::Screen, row: u16, cols: u16) -> Vec<Span<'static>> {
    let (_, screen_cols) = screen.size();
    let cols = cols.min(screen_cols.get());
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = Style::default();
    let mut used = 0u16;
    let mut col = 0u16;
    while col < cols {
        let Some(cell) = screen.cell(row, col) else {
            break;
        };
        let wide = cell.is_wide();
        if wide && col + 1 >= cols {
            // Half a wide character does not fit: the row ends here.
            break;
        }
        let shown = symbol(cell.contents());
        let cell_style = style_of(cell);
        if cell_style != style && !text.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut text), style));
        }
        style = cell_style;
        text.push_str(&shown);
        // A wide character replaced by a one-column picture keeps its second column.
        if wide && text_width(&shown) < 2 {
            text.push(' ');
        }
        col += if wide { 2 } else { 1 };
        if cell.has_contents() || cell_style != Style::default() {
            used = col;
        }
    }
    if !text.is_empty() {
        spans.push(Span::styled(text, style));
    }
    keep_columns(spans, usize::from(used))
}

/// `spans` cut to their first `cols` columns (the row's blank end left out).
fn keep_columns(spans: Vec<Span<'static>>, cols: usize) -> Vec<Span<'static>> {
    let mut out = Vec::with_capacity(spans.len());
    let mut left = cols;
    for span in spans {
        if left == 0 {
            break;
        }
        let w = text_width(&span.content);
        if w <= left {
            left -= w;
            out.push(span);
        } else {
            // Only blank default cells follow `cols`, and they are one column each.
            let cut: String = span.content.chars().take(left).collect();
            out.push(Span::styled(cut, span.style));
            left = 0;
        }
    }
    out
}

/// The rows a pane shows: the last `max` up to the lowest written row or the cursor, whichever is lower.
pub(crate) fn shown_rows(screen: &vt100::Screen, max: u16) -> std::ops::Range<u16> {
    let (rows, cols) = screen.size();
    let written = (0..rows.get())
        .rev()
        .find(|&r| (0..cols.get()).any(|c| screen.cell(r, c).is_some_and(vt100::Cell::has_contents)))
        .map_or(0, |r| r + 1);
    let cursor = if screen.hide_cursor() {
        0
    } else {
        screen.cursor_position().0 + 1
    };
    let end = written.max(cursor).min(rows.get());
    end.saturating_sub(max)..end
}

/// Draws the whole screen into `area` of `buf`, with the cursor (reversed) where the process left it visible.
pub(crate) fn draw(screen: &vt100::Screen, area: Rect, buf: &mut Buffer) {
    let (rows, _) = screen.size();
    for row in 0..rows.get().min(area.height) {
        let line = Line::from(row_spans(screen, row, area.width));
        buf.set_line(area.x, area.y + row, &line, area.width);
    }
    let (row, col) = screen.cursor_position();
    if !screen.hide_cursor()
        && row < area.height
        && col < area.width
        && let Some(cell) = buf.cell_mut((area.x + col, area.y + row))
    {
        cell.set_style(Style::default().add_modifier(Modifier::REVERSED));
    }
}

/// How a process stands: `running`, `exited 0`, `stopped by user`, ...
pub(crate) fn state_text(process: &LiveProcess) -> String {
    let text = match &process.end {
        None => return "running".to_string(),
        Some(ProcessEnd::Exited { code }) => format!("exited {code}"),
        Some(ProcessEnd::Signalled { signal }) => format!("killed by signal {signal}"),
        Some(ProcessEnd::Stopped { by }) => format!("stopped by {by}"),
        Some(ProcessEnd::Lost { reason }) => format!("lost: {reason}"),
    };
    tern_text::one_line(&text).into_owned()
}

/// The header line of a process: its id, its command, and how it stands (`extra` after that).
pub(crate) fn header(process: &LiveProcess, width: u16, theme: &Theme, extra: &str) -> Line<'static> {
    let (mark, mark_style) = match &process.end {
        None => ("▶", theme.accent),
        Some(ProcessEnd::Exited { code: 0 }) => ("■", theme.success),
        Some(_) => ("■", theme.error),
    };
    let right = format!("  {}{extra}", state_text(process));
    let id = tern_text::one_line(&process.info.id).into_owned();
    let room = usize::from(width).saturating_sub(text_width(&id) + text_width(&right) + 4);
    let command = truncate(&tern_text::one_line(&process.info.command), room);
    Line::from(vec![
        Span::styled(format!("{mark} "), mark_style),
        Span::styled(id, theme.tool_name),
        Span::raw("  "),
        Span::styled(command, theme.text),
        Span::styled(right, theme.dim),
    ])
}

/// A process's pane under the call that started it: its header, then the last rows of its screen that fit
/// `PANE_ROWS`, behind a bar.
pub(crate) fn pane(process: &LiveProcess, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let ended = if process.running() { "" } else { " · last screen" };
    let mut out = vec![header(process, width, theme, ended)];
    let screen = process.screen();
    let cols = width.saturating_sub(4);
    for row in shown_rows(screen, PANE_ROWS) {
        let mut spans = vec![Span::styled("  │ ", theme.border)];
        spans.extend(row_spans(screen, row, cols));
        out.push(Line::from(spans));
    }
    out
}

/// How long ago a process started, for `/ps`.
pub(crate) fn age(process: &LiveProcess, now: Instant) -> String {
    tern_text::units::elapsed(now.saturating_duration_since(process.started))
}

#[cfg(test)]
mod tests;
