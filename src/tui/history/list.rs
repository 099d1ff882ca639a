//! The list view: one row per call, oldest at the top and newest at the bottom (the transcript's order), with the
//! selection starting on the newest and following new calls while it stays there. Only the rows on screen are laid out.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::catalog::Catalog;
use super::format;
use crate::state::calls::{CallStatus, ToolCallState};
use crate::theme::Theme;
use crate::wrap;

/// Below this width the time column goes.
const TIME_MIN_WIDTH: u16 = 70;
const TIME_W: usize = 8;
const DURATION_W: usize = 6;
const SIZE_W: usize = 9;
/// The argument column keeps at least this much before duration and size columns are dropped.
const ARG_MIN: usize = 12;

/// Selection and scroll of the list. The selection is a call index, so it survives filtering and new calls.
pub(crate) struct ListState {
    pub(crate) selected: Option<usize>,
    /// The selection is on the newest call and moves to newer ones as they arrive.
    follow: bool,
    offset: usize,
    /// Rows of the last drawn list, for PgUp/PgDn.
    pub(crate) page: usize,
}

impl Default for ListState {
    fn default() -> Self {
        Self {
            selected: None,
            follow: true,
            offset: 0,
            page: 10,
        }
    }
}

impl ListState {
    /// Keeps the selection valid after the visible list changed.
    pub(crate) fn reconcile(&mut self, visible: &[usize]) {
        let Some(&last) = visible.last() else {
            self.selected = None;
            return;
        };
        self.selected = match self.selected {
            Some(sel) if !self.follow => match visible.binary_search(&sel) {
                Ok(_) => Some(sel),
                // Gone from the filter: the nearest older call that is still there, else the oldest.
                Err(pos) => Some(visible[pos.saturating_sub(1)]),
            },
            _ => Some(last),
        };
    }

    pub(crate) fn position(&self, visible: &[usize]) -> Option<usize> {
        self.selected.and_then(|sel| visible.binary_search(&sel).ok())
    }

    pub(crate) fn move_by(&mut self, visible: &[usize], delta: isize) {
        if visible.is_empty() {
            return;
        }
        let pos = self.position(visible).unwrap_or(visible.len() - 1);
        let new = pos.saturating_add_signed(delta).min(visible.len() - 1);
        self.select_at(visible, new);
    }

    pub(crate) fn select_at(&mut self, visible: &[usize], pos: usize) {
        if let Some(&index) = visible.get(pos) {
            self.selected = Some(index);
            self.follow = pos + 1 == visible.len();
        }
    }

    /// Scrolls the least needed to keep the selection on screen, and never past the end.
    fn scroll_into_view(&mut self, len: usize, pos: Option<usize>, height: usize) {
        self.offset = self.offset.min(len.saturating_sub(height));
        if let Some(pos) = pos {
            if pos < self.offset {
                self.offset = pos;
            } else if pos >= self.offset + height {
                self.offset = pos + 1 - height;
            }
        }
    }
}

/// What the list draws besides its own state.
pub(crate) struct ListView<'a> {
    pub(crate) calls: &'a [ToolCallState],
    pub(crate) catalog: &'a Catalog,
    pub(crate) theme: &'a Theme,
    /// The filter text and whether it is being edited.
    pub(crate) filter: &'a str,
    pub(crate) editing: bool,
}

struct Columns {
    time: bool,
    tool: usize,
    arg: usize,
    duration: bool,
    size: bool,
}

impl Columns {
    fn fit(width: u16, tool_width: usize) -> Self {
        let w = usize::from(width);
        let mut c = Columns {
            time: width >= TIME_MIN_WIDTH,
            tool: tool_width.min((w / 4).max(4)),
            arg: 0,
            duration: true,
            size: true,
        };
        c.arg = w.saturating_sub(c.fixed());
        if c.arg < ARG_MIN {
            c.size = false;
            c.arg = w.saturating_sub(c.fixed());
        }
        if c.arg < ARG_MIN {
            c.duration = false;
            c.arg = w.saturating_sub(c.fixed());
        }
        c
    }

    /// Cells used by everything but the argument: margins, gaps and the fixed columns.
    fn fixed(&self) -> usize {
        let time = if self.time { TIME_W + 2 } else { 0 };
        let duration = if self.duration { DURATION_W + 2 } else { 0 };
        let size = if self.size { SIZE_W + 2 } else { 0 };
        1 + time + 2 + self.tool + 2 + duration + size + 1
    }
}

/// Draws the list in `area`: the title, the column header, the calls on screen, the filter and the key hints.
pub(crate) fn render_list(frame: &mut Frame<'_>, area: Rect, state: &mut ListState, view: ListView<'_>) {
    let theme = view.theme;
    let visible = view.catalog.visible();
    let filtered = !view.catalog.query().is_empty();
    let title = title_line(view.catalog, filtered, theme);
    let show_filter = view.editing || !view.filter.is_empty();
    let footer_rows: u16 = if show_filter { 2 } else { 1 };
    if area.height < 2 + footer_rows + 1 {
        draw_line(frame, area, 0, &title);
        return;
    }
    draw_line(frame, area, 0, &title);
    let cols = Columns::fit(area.width, view.catalog.tool_width());
    draw_line(frame, area, 1, &header_line(&cols, theme));
    let rows = area.height - 2 - footer_rows;
    state.page = usize::from(rows);
    let pos = state.position(visible);
    state.scroll_into_view(visible.len(), pos, usize::from(rows));
    draw_rows(frame, area, rows, state, &view, &cols);
    let footer = Rect {
        y: area.y + area.height - footer_rows,
        height: footer_rows,
        ..area
    };
    if show_filter {
        draw_filter(frame, footer, &view);
    }
    let hint_row = Rect {
        y: footer.y + footer_rows - 1,
        height: 1,
        ..area
    };
    draw_list_hints(frame, hint_row, view.editing, filtered, theme);
}

/// The title: how many calls there are, and how many of them the filter shows.
fn title_line(catalog: &Catalog, filtered: bool, theme: &Theme) -> Line<'static> {
    let total = catalog.total();
    let noun = if total == 1 { "call" } else { "calls" };
    let count = if filtered {
        format!("{} of {total} {noun}", catalog.visible().len())
    } else {
        format!("{total} {noun}")
    };
    Line::from(vec![Span::styled(format!(" Tool history — {count}"), theme.heading)])
}

/// The `rows` rows of calls on screen, below the title and header, the selected one highlighted; or why there are
/// none.
fn draw_rows(frame: &mut Frame<'_>, area: Rect, rows: u16, state: &ListState, view: &ListView<'_>, cols: &Columns) {
    let theme = view.theme;
    let visible = view.catalog.visible();
    if visible.is_empty() {
        let text = if view.catalog.total() == 0 {
            "No tool calls in this session yet."
        } else {
            "No calls match the filter."
        };
        draw_line(frame, area, 2, &Line::styled(format!("  {text}"), theme.dim));
    }
    for (y, &index) in visible.iter().skip(state.offset).take(usize::from(rows)).enumerate() {
        let Some(call) = view.calls.get(index) else { continue };
        let selected = state.selected == Some(index);
        let line = row_line(call, view.catalog.size(index), selected, cols, theme);
        let y = 2 + y as u16;
        draw_line(frame, area, y, &line);
        if selected {
            frame.buffer_mut().set_style(
                Rect {
                    y: area.y + y,
                    height: 1,
                    ..area
                },
                theme.selection,
            );
        }
    }
}

/// The key hints of the list, or of the filter while it is being edited.
fn draw_list_hints(frame: &mut Frame<'_>, row: Rect, editing: bool, filtered: bool, theme: &Theme) {
    if editing {
        let hints = [
            ("Enter", "apply"),
            ("Ctrl+U", "clear"),
            ("tool:NAME", "by tool"),
            ("is:error|running|done", "by status"),
        ];
        draw_hints(frame, row, &hints, ("Esc", "cancel"), "", theme);
    } else {
        let hints = [
            ("↑↓", "move"),
            ("Enter", "details"),
            ("/", "filter"),
            ("o", "jump to call"),
            ("y", "copy result"),
        ];
        let close = if filtered {
            ("Esc", "clear filter")
        } else {
            ("Esc", "close")
        };
        draw_hints(frame, row, &hints, close, "", theme);
    }
}

fn header_line(cols: &Columns, theme: &Theme) -> Line<'static> {
    let mut s = String::from(" ");
    if cols.time {
        s.push_str(&format!("{:<TIME_W$}  ", "UTC time"));
    }
    s.push_str(&format!(
        "  {:<w$}  {:<a$}",
        "tool",
        "argument",
        w = cols.tool,
        a = cols.arg
    ));
    if cols.duration {
        s.push_str(&format!("  {:>DURATION_W$}", "took"));
    }
    if cols.size {
        s.push_str(&format!("  {:>SIZE_W$}", "size"));
    }
    Line::styled(s, theme.dim)
}

fn row_line(call: &ToolCallState, size: Option<u64>, selected: bool, cols: &Columns, theme: &Theme) -> Line<'static> {
    let (mark, mark_style) = format::status_mark(&call.status, theme);
    // A marker besides the highlight, for terminals (and snapshots) without reverse video.
    let mut spans = vec![if selected {
        Span::styled("›", theme.accent)
    } else {
        Span::raw(" ")
    }];
    if cols.time {
        spans.push(Span::styled(format::utc_clock(call.started_at), theme.dim));
        spans.push(Span::raw("  "));
    }
    spans.push(Span::styled(mark, mark_style));
    spans.push(Span::raw(" "));
    spans.push(Span::styled(
        pad(&wrap::truncate(&call.name, cols.tool), cols.tool),
        theme.tool_name,
    ));
    spans.push(Span::raw("  "));
    let arg = crate::view::summary::call_label(call).replace(['\t', '\r', '\n'], " ");
    spans.push(Span::styled(pad(&wrap::truncate(&arg, cols.arg), cols.arg), theme.text));
    if cols.duration {
        let took = if call.status == CallStatus::Running {
            format::elapsed(call.elapsed())
        } else {
            format::duration(call.elapsed())
        };
        spans.push(Span::styled(format!("  {took:>DURATION_W$}"), theme.dim));
    }
    if cols.size {
        let size = size.map_or_else(|| "…".to_string(), format::size);
        spans.push(Span::styled(format!("  {size:>SIZE_W$}"), theme.dim));
    }
    Line::from(spans)
}

/// Pads with spaces to `width` cells (format's padding counts chars, not cells).
fn pad(s: &str, width: usize) -> String {
    let w = wrap::width(s);
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}

fn draw_filter(frame: &mut Frame<'_>, footer: Rect, view: &ListView<'_>) {
    let theme = view.theme;
    let prefix = if view.editing { " /" } else { " filter: " };
    let mut spans = vec![
        Span::styled(prefix, theme.accent),
        Span::styled(view.filter.to_string(), theme.text),
    ];
    let unknown = &view.catalog.query().unknown;
    if !unknown.is_empty() {
        spans.push(Span::styled(
            format!("   not understood: {}", unknown.join(" ")),
            theme.warning,
        ));
    }
    let line = Line::from(spans);
    draw_line(frame, footer, 0, &line);
    if view.editing {
        let x = footer.x + (wrap::width(prefix) + wrap::width(view.filter)) as u16;
        if x < footer.x + footer.width {
            frame.set_cursor_position((x, footer.y));
        }
    }
}

/// Draws `line` on row `y` of `area`, cut to its width.
pub(crate) fn draw_line(frame: &mut Frame<'_>, area: Rect, y: u16, line: &Line<'_>) {
    if y < area.height {
        frame.buffer_mut().set_line(area.x, area.y + y, line, area.width);
    }
}

/// Key hints on one row: as many `(key, what)` pairs as fit, the last pair always, and `right` flush right.
pub(crate) fn draw_hints(
    frame: &mut Frame<'_>,
    row: Rect,
    hints: &[(&str, &str)],
    last: (&str, &str),
    right: &str,
    theme: &Theme,
) {
    let width = usize::from(row.width);
    let right_w = if right.is_empty() { 0 } else { wrap::width(right) + 2 };
    let pair_w = |(k, v): &(&str, &str)| wrap::width(k) + 1 + wrap::width(v) + 2;
    let mut budget = width.saturating_sub(1 + right_w + pair_w(&last));
    let mut spans = vec![Span::raw(" ")];
    let push = |spans: &mut Vec<Span<'static>>, (k, v): (&str, &str)| {
        spans.push(Span::styled(k.to_string(), theme.accent));
        spans.push(Span::styled(format!(" {v}  "), theme.dim));
    };
    for hint in hints {
        let w = pair_w(hint);
        if w > budget {
            break;
        }
        budget -= w;
        push(&mut spans, *hint);
    }
    push(&mut spans, last);
    draw_line(frame, row, 0, &Line::from(spans));
    if right_w > 0 && right_w <= width {
        let x = row.x + (width - right_w + 1) as u16;
        frame.buffer_mut().set_line(
            x,
            row.y,
            &Line::styled(right.to_string(), theme.dim),
            (right_w - 1) as u16,
        );
    }
}
