//! The transcript view, virtualised: scrolling is anchored at the bottom (`offset` lines up from the end), and a frame
//! lays out only the cells from the bottom up to the top of the viewport. Each cell's lines are cached per (cell id,
//! revision, width, selection), so a frame while streaming lays out just the streaming cell. Cells never seen keep no
//! layout at all, so a session with thousands of calls costs nothing until you scroll to them.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState};

use super::cells::{is_live, render_cell};
use crate::tui::state::{AppState, CellKind};
use crate::tui::theme::Theme;

struct Cached {
    rev: u64,
    width: u16,
    selected: Option<usize>,
    lines: Vec<Line<'static>>,
}

#[derive(Default)]
pub struct TranscriptView {
    cache: HashMap<u64, Cached>,
    /// Lines between the bottom of the viewport and the end of the transcript; 0 = following the tail.
    offset: usize,
    /// The last viewport height, for paging.
    height: u16,
    /// The tool call picked with next/previous (index into `AppState::calls`).
    pub selected_call: Option<usize>,
}

impl TranscriptView {
    pub fn new() -> Self {
        Self::default()
    }

    /// True when the view follows new output.
    pub fn following(&self) -> bool {
        self.offset == 0
    }

    pub fn scroll_up(&mut self, lines: usize) {
        self.offset = self.offset.saturating_add(lines);
    }

    pub fn scroll_down(&mut self, lines: usize) {
        self.offset = self.offset.saturating_sub(lines);
    }

    pub fn page_up(&mut self) {
        self.scroll_up(usize::from(self.height.saturating_sub(2)).max(1));
    }

    pub fn page_down(&mut self) {
        self.scroll_down(usize::from(self.height.saturating_sub(2)).max(1));
    }

    pub fn to_bottom(&mut self) {
        self.offset = 0;
    }

    /// Scrolls to the very top (lays out every cell once).
    pub fn to_top(&mut self, state: &AppState, width: u16, theme: &Theme) {
        let total: usize = (0..state.cells.len())
            .map(|i| self.lines_of(state, i, width, theme).len())
            .sum();
        self.offset = total.saturating_sub(usize::from(self.height));
    }

    /// Scrolls so that cell `index` starts at the top of the viewport (or as near as the end allows).
    pub fn show_cell(&mut self, state: &AppState, index: usize, width: u16, theme: &Theme) {
        let below: usize = (index..state.cells.len())
            .map(|i| self.lines_of(state, i, width, theme).len())
            .sum();
        self.offset = below.saturating_sub(usize::from(self.height));
    }

    /// Selects the next (`forward`) or previous tool call and scrolls to it.
    pub fn select_call(&mut self, state: &AppState, forward: bool, width: u16, theme: &Theme) {
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
            self.show_cell(state, cell, width, theme);
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
        let fresh = match self.cache.get(&cell.id) {
            Some(c) => live || c.rev != cell.rev || c.width != width || c.selected != selected,
            None => true,
        };
        if fresh {
            let lines = render_cell(cell, &state.calls, width, theme, self.selected_call);
            self.cache.insert(
                cell.id,
                Cached {
                    rev: cell.rev,
                    width,
                    selected,
                    lines,
                },
            );
        }
        self.cache.get(&cell.id).map(|c| c.lines.as_slice()).unwrap_or(&[])
    }

    /// Draws the transcript into `area`.
    pub fn render(&mut self, frame: &mut Frame<'_>, area: Rect, state: &AppState, theme: &Theme) {
        self.height = area.height;
        if area.width < 4 || area.height == 0 {
            return;
        }
        let width = area.width - 1; // the scrollbar column
        let height = usize::from(area.height);
        let need = self.offset + height;
        // Walk up from the last cell until the viewport (plus the offset below it) is covered.
        let mut collected: Vec<Line<'static>> = Vec::new();
        let mut covered = 0usize;
        let mut first = state.cells.len();
        while first > 0 && covered < need {
            first -= 1;
            covered += self.lines_of(state, first, width, theme).len();
        }
        let at_top = first == 0;
        if at_top && covered < need {
            // Less content than the scroll position asks for: clamp.
            self.offset = covered.saturating_sub(height);
        }
        let skip_top = covered.saturating_sub(self.offset + height);
        let mut skipped = 0usize;
        for i in first..state.cells.len() {
            let lines = self.lines_of(state, i, width, theme);
            for line in lines {
                if skipped < skip_top {
                    skipped += 1;
                    continue;
                }
                if collected.len() == height {
                    break;
                }
                collected.push(line.clone());
            }
            if collected.len() == height {
                break;
            }
        }
        let text_area = Rect { width, ..area };
        frame.render_widget(Paragraph::new(collected), text_area);
        // The scrollbar needs a total: estimate the unseen cells from their cached heights, or their text lines.
        if !at_top || self.offset > 0 {
            let above: usize = state.cells[..first]
                .iter()
                .map(|c| self.cache.get(&c.id).map_or(estimate(&c.kind), |l| l.lines.len()))
                .sum();
            let total = above + covered;
            let position = total.saturating_sub(self.offset + height);
            let mut bar = ScrollbarState::new(total.saturating_sub(height)).position(position);
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

    /// Drops cached layouts (after a theme change); memory use of the cache stays proportional to what was seen.
    pub fn clear_cache(&mut self) {
        self.cache.clear();
    }
}

/// A cheap height guess for a cell never laid out.
fn estimate(kind: &CellKind) -> usize {
    match kind {
        CellKind::User(t) | CellKind::Assistant { text: t, .. } => t.lines().count() + 1,
        CellKind::Reasoning { .. } => 2,
        CellKind::Tools(group) => group.len() + 2,
        CellKind::Notice { .. } => 2,
    }
}
