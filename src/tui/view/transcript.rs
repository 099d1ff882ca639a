//! The transcript view, virtualised. Following the tail, a frame lays out only the cells from the bottom up to the top
//! of the viewport; scrolled up, the view is anchored at a line of a cell and lays out only the cells from there down,
//! so new output below does not move what you are reading. Each cell's lines are cached per (cell id, revision, width,
//! selection): a frame while streaming lays out just the streaming cell, and cells never seen keep no layout at all.
//! A layout that drew code plain for now (before syntax highlighting was ready, or while a large block is highlighted
//! in the background, so no frame waits for it) is made again once `highlight::epoch` moves.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState};

use super::cells::{is_live, render_cell};
use super::stream::StreamLayout;
use crate::graphics::Placement;
use crate::highlight;
use crate::line::{encode, put_line};
use crate::screen::Reuse;
use crate::state::thumbnails::Thumbnails;
use crate::state::{AppState, CellKind};
use crate::theme::Theme;

struct Cached {
    rev: u64,
    width: u16,
    selected: Option<usize>,
    /// The `highlight::epoch` at which these lines drew code plain for now; `None` when they drew it finished.
    provisional: Option<u64>,
    lines: Vec<Line<'static>>,
    /// The thumbnails drawn over blank rows of these lines: (first row, picture).
    thumbs: Vec<(usize, Placement)>,
}

/// Where the viewport is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Position {
    /// The bottom of the viewport is the end of the transcript.
    #[default]
    Follow,
    /// The top of the viewport is line `line` of cell `cell`.
    Anchored { cell: usize, line: usize },
}

/// Cells whose layout is kept beyond this are dropped when far from the viewport (their heights stay known).
const MAX_CACHED_CELLS: usize = 600;
/// Cells on each side of the viewport whose layout is always kept.
const KEEP_AROUND: usize = 150;

#[derive(Default)]
pub struct TranscriptView {
    cache: HashMap<u64, Cached>,
    /// Each cell's height (id, lines): exact once laid out, estimated before. Summed for the scrollbar.
    heights: Vec<(u64, usize)>,
    /// The layout of the newest answer, kept in pieces while it streams and after (`stream`).
    stream: Option<StreamLayout>,
    position: Position,
    /// Scrolling asked for since the last frame (negative = up), applied when the layout is at hand.
    pending: isize,
    /// A jump asked for since the last frame.
    jump: Option<Jump>,
    /// The last viewport height, for paging.
    height: u16,
    /// The tool call picked with next/previous (index into `AppState::calls`).
    pub(crate) selected_call: Option<usize>,
    /// The end of the transcript as it was when the view stopped following: (cells, last cell's id and revision).
    seen_end: Option<(usize, u64, u64)>,
    /// Output arrived below since the view stopped following: the "new output below" marker shows until the user
    /// is back at the bottom.
    new_below: bool,
    /// What the rows showed in the last frame and show in this one (`plan`).
    rows: Rows,
    /// This frame's viewport and the rows it takes from the last frame, worked out by `plan` before it is drawn.
    planned: Option<Planned>,
    /// Where the last frame drew the thumbnails it showed whole (`graphics.rs` draws them).
    pub(crate) placements: Vec<Placement>,
}

/// Each row's line, encoded (`encode`), in the last frame drawn whole and in this one: a row whose line is the one
/// some row of the last frame showed, at the same place and width, shows the same cells.
#[derive(Default)]
struct Rows {
    /// The transcript's area and the frame's in the last frame, when its rows are known (nothing drew over them).
    last_at: Option<(Rect, Rect)>,
    last: Vec<Row>,
    now: Vec<Row>,
}

/// One row's line, encoded, and its hash for finding moved rows, made once when the row is planned (None: the row
/// matches no other).
#[derive(Default)]
struct Row {
    bytes: Vec<u8>,
    hash: Option<u64>,
}

impl Row {
    /// Hashes the bytes encoded into it.
    fn rehash(&mut self) {
        self.hash = (self.bytes.first() != Some(&COVERED)).then(|| {
            let words = self.bytes.chunks_exact(8);
            let mut last = [0u8; 8];
            last[..words.remainder().len()].copy_from_slice(words.remainder());
            let h = words.fold(self.bytes.len() as u64, |h, word| {
                crate::screen::mix(h, u64::from_le_bytes(word.try_into().unwrap_or_default()))
            });
            crate::screen::mix(h, u64::from_le_bytes(last))
        });
    }
}

/// An encoded row that matches no other: the "new output below" marker covers it.
const COVERED: u8 = 0xff;

struct Planned {
    area: Rect,
    /// The viewport's top: a cell and a line of it.
    start: (usize, usize),
    /// Rows (from the top of `area`) that show what the last frame's row `r + by` showed.
    reused: Option<(std::ops::Range<usize>, isize)>,
}

impl TranscriptView {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// True when output arrived below a scrolled-up view (the marker is on screen).
    #[cfg(test)]
    pub(crate) fn new_output_below(&self) -> bool {
        self.new_below
    }

    /// Notes whether the end of the transcript changed while the view is scrolled up.
    fn track_end(&mut self, state: &AppState) {
        if self.position == Position::Follow {
            self.seen_end = None;
            self.new_below = false;
            return;
        }
        let end = (
            state.cells.len(),
            state.cells.last().map_or(0, |c| c.id),
            state.cells.last().map_or(0, |c| c.rev),
        );
        match self.seen_end {
            None => self.seen_end = Some(end),
            Some(seen) if seen != end => self.new_below = true,
            Some(_) => {}
        }
    }

    /// True when the view follows new output.
    pub fn following(&self) -> bool {
        self.position == Position::Follow && self.pending >= 0 && self.jump.is_none()
    }

    pub(crate) fn scroll_up(&mut self, lines: usize) {
        self.pending = self.pending.saturating_sub(lines as isize);
    }

    pub(crate) fn scroll_down(&mut self, lines: usize) {
        self.pending = self.pending.saturating_add(lines as isize);
    }

    pub(crate) fn page_up(&mut self) {
        self.scroll_up(usize::from(self.height.saturating_sub(2)).max(1));
    }

    pub(crate) fn page_down(&mut self) {
        self.scroll_down(usize::from(self.height.saturating_sub(2)).max(1));
    }

    pub(crate) fn scroll_to_bottom(&mut self) {
        self.position = Position::Follow;
        self.pending = 0;
        self.jump = None;
    }

    /// Scrolls to the very top.
    pub(crate) fn scroll_to_top(&mut self) {
        self.show_cell(0);
    }

    /// Scrolls so that cell `index` starts at the top of the viewport (or as near as the end allows).
    pub(crate) fn show_cell(&mut self, index: usize) {
        self.pending = 0;
        self.jump = Some(Jump::Cell(index));
    }

    /// Selects the next (`forward`) or previous tool call and scrolls to it.
    pub(crate) fn select_call(&mut self, state: &AppState, forward: bool) {
        if state.calls.is_empty() {
            return;
        }
        let last = state.calls.len() - 1;
        let next = match (self.selected_call, forward) {
            (None, _) => last,
            (Some(i), true) => (i + 1).min(last),
            (Some(i), false) => i.saturating_sub(1),
        };
        self.selected_call = Some(next);
        if let Some(call) = state.calls.get(next)
            && let Some(cell) = state.cell_of_call(&call.call_id)
        {
            self.show_cell(cell);
        }
    }

    /// The lines of cell `index`, from the cache when its revision, the width and the selection are unchanged.
    fn lines_of(&mut self, state: &AppState, index: usize, width: u16, theme: &Theme) -> &[Line<'static>] {
        let cell = &state.cells[index];
        let selected = match &cell.kind {
            CellKind::Tools(group) => self.selected_call.filter(|s| group.contains(s)),
            _ => None,
        };
        let live = is_live(cell, &state.calls);
        let epoch = highlight::epoch();
        let fresh = match self.cache.get(&cell.id) {
            Some(c) => {
                live || c.rev != cell.rev
                    || c.width != width
                    || c.selected != selected
                    || c.provisional.is_some_and(|e| e != epoch)
            }
            None => true,
        };
        if fresh {
            let (lines, provisional) = highlight::track(|| match &cell.kind {
                CellKind::Assistant { text, streaming } => self
                    .answer_lines(cell.id, text, *streaming, width, theme)
                    .unwrap_or_else(|| {
                        render_cell(cell, &state.calls, &state.processes, width, theme, self.selected_call)
                    }),
                _ => render_cell(cell, &state.calls, &state.processes, width, theme, self.selected_call),
            });
            let provisional = provisional.then_some(epoch);
            let (lines, thumbs) = with_thumbnails(&cell.kind, lines, &state.thumbnails);
            if let Some(h) = self.heights.get_mut(index) {
                h.1 = lines.len();
            }
            self.cache.insert(
                cell.id,
                Cached {
                    rev: cell.rev,
                    width,
                    selected,
                    provisional,
                    lines,
                    thumbs,
                },
            );
        }
        self.cache.get(&cell.id).map(|c| c.lines.as_slice()).unwrap_or(&[])
    }

    /// An answer's lines from the kept layout of the newest answer (`stream`): a streaming answer starts one, and
    /// the answer it was made for keeps using it once finished. None for other answers, laid out whole.
    fn answer_lines(
        &mut self,
        id: u64,
        text: &str,
        streaming: bool,
        width: u16,
        theme: &Theme,
    ) -> Option<Vec<Line<'static>>> {
        if streaming && self.stream.as_ref().is_none_or(|s| s.id() != id) {
            self.stream = Some(StreamLayout::new(id));
        }
        let stream = self.stream.as_mut().filter(|s| s.id() == id)?;
        let old = self.cache.remove(&id).map(|c| c.lines);
        let lines = stream.lines(text, !streaming, width, theme, old);
        if lines.is_none() {
            self.stream = None;
        }
        lines
    }

    /// Keeps `heights` in step with the cells: estimates for new cells, a rebuild when cells were removed.
    fn sync_heights(&mut self, state: &AppState) {
        let stale = self.heights.len() > state.cells.len()
            || self
                .heights
                .last()
                .is_some_and(|(id, _)| state.cells.get(self.heights.len() - 1).is_none_or(|c| c.id != *id));
        if stale {
            self.heights.clear();
        }
        for cell in &state.cells[self.heights.len()..] {
            let height = self.cache.get(&cell.id).map_or(estimate(&cell.kind), |c| c.lines.len());
            self.heights.push((cell.id, height));
        }
    }

    /// Drops the layout of cells far from the viewport once many are cached, so memory stays bounded however long
    /// the session runs.
    fn evict(&mut self, state: &AppState, first_visible: usize) {
        if self.cache.len() <= MAX_CACHED_CELLS {
            return;
        }
        let from = first_visible.saturating_sub(KEEP_AROUND);
        let to = (first_visible + KEEP_AROUND * 2).min(state.cells.len());
        let keep: std::collections::HashSet<u64> = state.cells[from..to].iter().map(|c| c.id).collect();
        self.cache.retain(|id, _| keep.contains(id));
    }

    /// Works out this frame's viewport in `area` (of a frame of `frame_area`) before anything is drawn, and which of
    /// its rows show what a row of the last frame showed: those `Screen` can take over from the last frame
    /// (`render` is then told not to draw them).
    pub(crate) fn plan(&mut self, frame_area: Rect, area: Rect, state: &AppState, theme: &Theme) -> Option<Reuse> {
        self.planned = None;
        let start = self.viewport(area, state, theme)?;
        let width = area.width - 1; // the scrollbar column
        let height = usize::from(area.height);
        self.rows.now.resize_with(height, Row::default);
        self.rows.now.iter_mut().for_each(|row| row.bytes.clear());
        let mut row = 0;
        let mut skip = start.1;
        'cells: for i in start.0..state.cells.len() {
            self.lines_of(state, i, width, theme);
            let Some(cached) = self.cache.get(&state.cells[i].id) else {
                break;
            };
            for line in &cached.lines {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                encode(line, &mut self.rows.now[row].bytes);
                row += 1;
                if row == height {
                    break 'cells;
                }
            }
        }
        if self.new_below {
            self.rows.now[height - 1].bytes = vec![COVERED];
        }
        self.rows.now.iter_mut().for_each(Row::rehash);
        let reused = (self.rows.last_at == Some((area, frame_area)))
            .then(|| same_rows(&self.rows.now, &self.rows.last))
            .flatten();
        self.planned = Some(Planned {
            area,
            start,
            reused: reused.clone(),
        });
        reused.map(|(rows, by)| Reuse {
            frame: frame_area,
            rows: area.y + rows.start as u16..area.y + rows.end as u16,
            by: by as i16,
            cols: area.x..area.x + width,
            kept: 0..0,
        })
    }

    /// The rows drawn are not what the terminal shows next frame (something drew over them, or the transcript was
    /// not drawn): no row is taken from this frame.
    pub(crate) fn forget_rows(&mut self) {
        self.rows.last_at = None;
    }

    /// Draws the transcript into `area`, the viewport `plan` worked out (planned now, when it was not). `reused`:
    /// `Screen` took the rows `plan` named from the last frame, so they are not drawn.
    pub(crate) fn render(&mut self, frame: &mut Frame<'_>, area: Rect, state: &AppState, theme: &Theme, reused: bool) {
        self.height = area.height;
        let planned = match self.planned.take() {
            Some(planned) if planned.area == area => planned,
            _ => {
                // Not planned for this area (a view drawn without `App::plan`): every row is drawn. `Screen` takes
                // rows only for a frame of the area they were planned for, and the app lays that frame out from the
                // same state both times, so rows it took were always planned here.
                debug_assert!(!reused, "rows were taken for a transcript area that was not planned");
                self.plan(frame.area(), area, state, theme);
                match self.planned.take() {
                    Some(mut planned) => {
                        planned.reused = None;
                        planned
                    }
                    None => return,
                }
            }
        };
        let width = area.width - 1;
        let height = usize::from(area.height);
        let skipped = planned.reused.as_ref().filter(|_| reused).map(|(rows, _)| rows.clone());
        let (start_cell, start_line) = planned.start;
        // The cached lines are already wrapped to `width`: each is written straight into the buffer, with no copy
        // and no second wrapping pass (what `Paragraph` would do every frame). `plan` laid them out.
        let mut row = 0usize;
        let mut skip = start_line;
        self.placements.clear();
        // A thumbnail is drawn only whole, above the "new output below" marker.
        let room = height - usize::from(self.new_below);
        'cells: for cell in &state.cells[start_cell..] {
            let Some(cached) = self.cache.get(&cell.id) else {
                break;
            };
            let first = row as isize - skip as isize;
            for (line, thumb) in &cached.thumbs {
                let top = first + *line as isize;
                if top >= 0 && top as usize + usize::from(thumb.rows) <= room && thumb.x + thumb.cols <= width {
                    self.placements.push(Placement {
                        x: area.x + thumb.x,
                        y: area.y + top as u16,
                        ..thumb.clone()
                    });
                }
            }
            for line in &cached.lines {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                if !skipped.as_ref().is_some_and(|rows| rows.contains(&row)) {
                    put_line(frame.buffer_mut(), Rect { width, ..area }, row as u16, line);
                }
                row += 1;
                if row == height {
                    break 'cells;
                }
            }
        }
        self.render_scrollbar(frame, area, start_cell, start_line, height, theme);
        if self.new_below {
            render_marker(frame, Rect { width, ..area }, theme);
        }
        std::mem::swap(&mut self.rows.last, &mut self.rows.now);
        self.rows.last_at = Some((area, frame.area()));
        self.evict(state, start_cell);
    }

    /// Applies the scrolling and jumps asked for since the last frame and returns the viewport's top (a cell and a
    /// line of it); None when `area` is too small to show anything.
    fn viewport(&mut self, area: Rect, state: &AppState, theme: &Theme) -> Option<(usize, usize)> {
        self.height = area.height;
        if area.width < 4 || area.height == 0 {
            return None;
        }
        self.sync_heights(state);
        let width = area.width - 1; // the scrollbar column
        let height = usize::from(area.height);
        if let Position::Anchored { cell, .. } = self.position
            && cell >= state.cells.len()
        {
            self.position = Position::Follow;
        }
        if let Some(Jump::Cell(cell)) = self.jump.take() {
            self.position = if state.cells.is_empty() {
                Position::Follow
            } else {
                Position::Anchored {
                    cell: cell.min(state.cells.len() - 1),
                    line: 0,
                }
            };
        }
        let pending = std::mem::take(&mut self.pending);
        if pending < 0 && self.position == Position::Follow {
            self.position = self.tail_top(state, width, theme, height);
        }
        if pending != 0 {
            self.position = self.moved(state, width, theme, pending);
        }
        // Anchored with less than a screen below: follow again.
        if let Position::Anchored { cell, line } = self.position {
            let mut below = 0usize;
            for i in cell..state.cells.len() {
                below += self.lines_of(state, i, width, theme).len();
                if below >= line + height {
                    break;
                }
            }
            if below < line + height {
                self.position = Position::Follow;
            }
        }
        let (start_cell, start_line) = match self.position {
            Position::Follow => match self.tail_top(state, width, theme, height) {
                Position::Anchored { cell, line } => (cell, line),
                Position::Follow => (0, 0),
            },
            Position::Anchored { cell, line } => (cell, line),
        };
        self.track_end(state);
        Some((start_cell, start_line))
    }

    /// The top of the viewport when the bottom is the end of the transcript (or the start, when it all fits).
    fn tail_top(&mut self, state: &AppState, width: u16, theme: &Theme, height: usize) -> Position {
        let mut covered = 0usize;
        let mut first = state.cells.len();
        while first > 0 && covered < height {
            first -= 1;
            covered += self.lines_of(state, first, width, theme).len();
        }
        if first == state.cells.len() {
            return Position::Follow;
        }
        Position::Anchored {
            cell: first,
            line: covered.saturating_sub(height),
        }
    }

    /// The position `delta` lines down (negative: up) from the current anchor.
    fn moved(&mut self, state: &AppState, width: u16, theme: &Theme, delta: isize) -> Position {
        let Position::Anchored { mut cell, mut line } = self.position else {
            return Position::Follow;
        };
        if delta < 0 {
            let mut up = delta.unsigned_abs();
            while up > 0 {
                if line > 0 {
                    let d = line.min(up);
                    line -= d;
                    up -= d;
                } else if cell > 0 {
                    cell -= 1;
                    line = self.lines_of(state, cell, width, theme).len();
                } else {
                    break;
                }
            }
        } else {
            line += delta as usize;
            loop {
                let len = self.lines_of(state, cell, width, theme).len();
                if line < len || cell + 1 >= state.cells.len() {
                    break;
                }
                line -= len;
                cell += 1;
            }
        }
        Position::Anchored { cell, line }
    }

    fn render_scrollbar(
        &self,
        frame: &mut Frame<'_>,
        area: Rect,
        start_cell: usize,
        start_line: usize,
        height: usize,
        theme: &Theme,
    ) {
        let above: usize = self.heights[..start_cell.min(self.heights.len())]
            .iter()
            .map(|(_, h)| h)
            .sum::<usize>()
            + start_line;
        let total: usize = self.heights.iter().map(|(_, h)| h).sum();
        if total <= height {
            return;
        }
        let mut bar = ScrollbarState::new(total.saturating_sub(height)).position(above);
        frame.render_stateful_widget(
            Scrollbar::new(ScrollbarOrientation::VerticalRight)
                .begin_symbol(None)
                .end_symbol(None)
                .track_symbol(None)
                .thumb_style(theme.dim),
            area,
            &mut bar,
        );
    }
}

/// "new output below ↓" on the bottom edge of the transcript, right-aligned so it covers as little as it can.
fn render_marker(frame: &mut Frame<'_>, area: Rect, theme: &Theme) {
    const MARKER: &str = " new output below ↓ End ";
    let w = crate::wrap::width(MARKER) as u16;
    if area.height == 0 || area.width < w {
        return;
    }
    let at = Rect {
        x: area.x + area.width - w,
        y: area.y + area.height - 1,
        width: w,
        height: 1,
    };
    frame.render_widget(
        Paragraph::new(Line::styled(
            MARKER,
            theme.accent.add_modifier(ratatui::style::Modifier::REVERSED),
        )),
        at,
    );
}

/// The longest run of rows of `now` that are rows of `last` moved by one distance (`now[r] == last[r + by]`): the
/// run and the distance. Found by the rows' hashes (a tie goes to the shorter move), then checked byte for byte, the
/// run cut to its longest stretch that holds; rows marked `COVERED` never match.
fn same_rows(now: &[Row], last: &[Row]) -> Option<(std::ops::Range<usize>, isize)> {
    let (rows, lasts) = (now.len() as isize, last.len() as isize);
    let mut best: Option<(std::ops::Range<usize>, isize)> = None;
    let moves = std::iter::once(0).chain((1..rows.max(lasts)).flat_map(|d| [d, -d]));
    for by in moves {
        // Rows r with r + by inside `last`.
        let (from, to) = ((-by).max(0), rows.min(lasts - by));
        if to - from <= best.as_ref().map_or(0, |(run, _)| run.len() as isize) {
            continue;
        }
        let mut r = from;
        while r < to {
            let same = |r: isize| {
                let hash = now[r as usize].hash;
                hash.is_some() && hash == last[(r + by) as usize].hash
            };
            if !same(r) {
                r += 1;
                continue;
            }
            let first = r;
            while r < to && same(r) {
                r += 1;
            }
            if best.as_ref().is_none_or(|(run, _)| (r - first) as usize > run.len()) {
                best = Some((first as usize..r as usize, by));
            }
        }
    }
    let (run, by) = best?;
    let mut held: Option<std::ops::Range<usize>> = None;
    let mut r = run.start;
    while r < run.end {
        let same = |r: usize| now[r].bytes == last[(r as isize + by) as usize].bytes;
        if !same(r) {
            r += 1;
            continue;
        }
        let first = r;
        while r < run.end && same(r) {
            r += 1;
        }
        if held.as_ref().is_none_or(|h| r - first > h.len()) {
            held = Some(first..r);
        }
    }
    held.map(|rows| (rows, by))
}

#[derive(Debug, Clone, Copy)]
enum Jump {
    Cell(usize),
}

/// A cheap height guess for a cell never laid out.
/// A user message's lines with blank rows reserved, before the blank line that ends the cell, for each image it names
/// whose thumbnail is ready; and where each thumbnail goes (its first row, its column from the gutter).
fn with_thumbnails(
    kind: &CellKind,
    mut lines: Vec<Line<'static>>,
    thumbnails: &Thumbnails,
) -> (Vec<Line<'static>>, Vec<(usize, Placement)>) {
    let CellKind::User(text) = kind else {
        return (lines, Vec::new());
    };
    let mut thumbs = Vec::new();
    let end = lines.len().saturating_sub(1);
    let mut reserved = Vec::new();
    for path in tern_protocol::Image::mentions(text) {
        let Some(thumb) = thumbnails.get(path) else {
            continue;
        };
        let placement = Placement {
            id: thumb.id,
            data: thumb.data.clone(),
            x: super::cells::GUTTER,
            y: 0,
            cols: thumb.cols,
            rows: thumb.rows,
        };
        thumbs.push((end + reserved.len(), placement));
        reserved.extend((0..thumb.rows).map(|_| Line::default()));
    }
    lines.splice(end..end, reserved);
    (lines, thumbs)
}

fn estimate(kind: &CellKind) -> usize {
    match kind {
        CellKind::User(t) | CellKind::Assistant { text: t, .. } => t.lines().count() + 1,
        CellKind::Reasoning { .. } => 2,
        CellKind::Tools(group) => group.len() + 2,
        CellKind::Notice { .. } => 2,
        CellKind::Subagent(_) => 3,
    }
}

#[cfg(test)]
mod warm_up_tests;
