//! GFM tables: cells are collected while the markdown is parsed, then laid out with box-drawing borders. Columns keep
//! their natural width when the table fits; otherwise the width is shared out (narrow columns keep theirs, wide ones
//! split the rest) and cell text wraps inside its column. A table too narrow for even one cell per column falls back to
//! one wrapped line per row.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::lines::clamp_u16;
use crate::theme::Theme;
use crate::wrap;

type Cell = Vec<Span<'static>>;

#[derive(Debug, Default)]
pub(super) struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Cell>>,
    /// How many of `rows` (from the top) are header rows.
    header_rows: usize,
    row: Option<Vec<Cell>>,
    cell: Option<Cell>,
}

impl Table {
    pub(super) fn new(aligns: Vec<Alignment>) -> Self {
        Self {
            aligns,
            ..Self::default()
        }
    }

    pub(super) fn start_row(&mut self) {
        self.end_row(false);
        self.row = Some(Vec::new());
    }

    pub(super) fn end_row(&mut self, header: bool) {
        self.end_cell();
        if let Some(row) = self.row.take() {
            self.rows.push(row);
            if header {
                self.header_rows = self.rows.len();
            }
        }
    }

    pub(super) fn start_cell(&mut self) {
        self.end_cell();
        self.cell = Some(Vec::new());
    }

    pub(super) fn end_cell(&mut self) {
        if let Some(cell) = self.cell.take() {
            self.row.get_or_insert_with(Vec::new).push(cell);
        }
    }

    pub(super) fn push_span(&mut self, span: Span<'static>) {
        self.cell.get_or_insert_with(Vec::new).push(span);
    }

    /// The table as lines no wider than `width`.
    pub(super) fn render(mut self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        self.end_row(false);
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0).max(self.aligns.len());
        if columns == 0 {
            return Vec::new();
        }
        for row in &mut self.rows {
            row.resize_with(columns, Vec::new);
        }
        for row in &mut self.rows[..self.header_rows] {
            for span in row.iter_mut().flatten() {
                span.style = span.style.add_modifier(Modifier::BOLD);
            }
        }
        // Each column costs its text plus "│ " before and " " after, and the last "│".
        let overhead = 3 * columns + 1;
        if width < overhead + columns {
            return self.render_narrow(width, theme);
        }
        let natural: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|row| cell_width(&row[c]))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        let widths = fit_columns(&natural, width - overhead);
        let border = theme.border;
        let mut out = vec![rule(&widths, ['┌', '┬', '┐'], border)];
        for (i, row) in self.rows.iter().enumerate() {
            if i == self.header_rows && i > 0 {
                out.push(rule(&widths, ['├', '┼', '┤'], border));
            }
            self.render_row(row, &widths, border, &mut out);
        }
        out.push(rule(&widths, ['└', '┴', '┘'], border));
        out
    }

    fn render_row(&self, row: &[Cell], widths: &[usize], border: Style, out: &mut Vec<Line<'static>>) {
        let cells: Vec<Vec<Line<'static>>> = row
            .iter()
            .zip(widths)
            .map(|(cell, &w)| wrap::wrap_line(Line::from(cell.clone()), clamp_u16(w), ""))
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut spans = vec![Span::styled("│ ", border)];
            for (c, (cell, &w)) in cells.iter().zip(widths).enumerate() {
                let content = cell.get(k).map(|l| l.spans.clone()).unwrap_or_default();
                let pad = w.saturating_sub(cell_width(&content));
                let (left, right) = match self.aligns.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if left > 0 {
                    spans.push(Span::raw(" ".repeat(left)));
                }
                spans.extend(content);
                if right > 0 {
                    spans.push(Span::raw(" ".repeat(right)));
                }
                let last = c + 1 == widths.len();
                spans.push(Span::styled(if last { " │" } else { " │ " }, border));
            }
            out.push(Line::from(spans));
        }
    }

    /// One wrapped line per row, cells separated by bars: for widths where a grid cannot fit.
    fn render_narrow(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            if i == self.header_rows && i > 0 {
                out.push(Line::from(Span::styled("─".repeat(width), theme.border)));
            }
            let mut spans = Vec::new();
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(" │ ", theme.border));
                }
                spans.extend(cell.iter().cloned());
            }
            out.extend(wrap::wrap_line(Line::from(spans), clamp_u16(width), ""));
        }
        out
    }
}

fn cell_width(spans: &[Span]) -> usize {
    spans.iter().map(|s| wrap::width(&s.content)).sum()
}

/// Column widths summing to at most `available` (which is at least one per column): natural widths when they fit,
/// otherwise columns narrower than an even share keep their width and the others split what is left.
fn fit_columns(natural: &[usize], available: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= available {
        return natural.to_vec();
    }
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|&c| natural[c]);
    let mut widths = vec![0; natural.len()];
    let mut remaining = available;
    for (k, &c) in order.iter().enumerate() {
        let share = remaining / (natural.len() - k);
        widths[c] = natural[c].min(share).max(1);
        remaining = remaining.saturating_sub(widths[c]);
    }
    widths
}

fn rule(widths: &[usize], [left, middle, right]: [char; 3], style: Style) -> Line<'static> {
    let mut s = String::new();
    s.push(left);
    for (i, w) in widths.iter().enumerate() {
        if i > 0 {
            s.push(middle);
        }
        s.extend(std::iter::repeat_n('─', w + 2));
    }
    s.push(right);
    Line::from(Span::styled(s, style))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_share_the_width() {
        assert_eq!(fit_columns(&[3, 4], 20), [3, 4]);
        assert_eq!(fit_columns(&[3, 40, 50], 30), [3, 13, 14]);
        assert_eq!(fit_columns(&[10, 10, 10], 3), [1, 1, 1]);
        let widths = fit_columns(&[5, 100, 7, 60], 50);
        assert_eq!(widths.iter().sum::<usize>(), 50);
        assert_eq!((widths[0], widths[2]), (5, 7));
    }
}
