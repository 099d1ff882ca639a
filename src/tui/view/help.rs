//! The help overlay: every key (the keymap's actions and the composer's own keys, both from `keymap.rs`) and every
//! slash command. It fits any screen from 80x24 up: two columns when wide (keys left, commands right), one when
//! narrow, and whatever does not fit scrolls (Up/Down, PgUp/PgDn, Home/End). Any other key closes it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use crate::composer::SlashCommand;
use crate::keymap::{COMPOSER_KEYS, SHIFT_ENTER_SETUP};
use crate::layer::{Ctx, Effect, Handled, Layer, View};
use crate::theme::Theme;
use crate::wrap::{width as text_width, wrap_line};

/// Inner width from which the help is laid out in two columns.
const TWO_COLUMNS: u16 = 100;
/// The widest the box gets.
const MAX_WIDTH: u16 = 140;
/// The key column's width (a longer key gets a line of its own).
const KEY_WIDTH: usize = 22;
/// Between the two columns.
const GAP: u16 = 3;

pub(crate) struct HelpLayer {
    keys: Vec<(String, &'static str)>,
    commands: Vec<SlashCommand>,
    /// The first row shown.
    offset: usize,
    /// Rows shown at the last draw, for paging.
    page: usize,
    /// Rows in all at the last draw, for End.
    rows: usize,
}

impl HelpLayer {
    pub(crate) fn new(keys: Vec<(String, &'static str)>, commands: Vec<SlashCommand>) -> Self {
        Self {
            keys,
            commands,
            offset: 0,
            page: 1,
            rows: 0,
        }
    }

    /// The entries of each section: (heading, entries of (keys, what they do)).
    fn sections(&self) -> (Vec<Section>, Vec<Section>) {
        let keys = Section {
            heading: "Keys",
            entries: self.keys.iter().map(|(k, h)| (k.clone(), h.to_string())).collect(),
        };
        let composer = Section {
            heading: "Composer",
            entries: COMPOSER_KEYS
                .iter()
                .map(|(_, shown, help)| (shown.to_string(), help.to_string()))
                .collect(),
        };
        let commands = Section {
            heading: "Commands",
            entries: self
                .commands
                .iter()
                .map(|c| {
                    let name = format!("/{} {}", c.name, c.args);
                    (name.trim_end().to_string(), c.help.to_string())
                })
                .collect(),
        };
        let approval = Section {
            heading: "Approval prompt",
            entries: super::approval::APPROVAL_KEYS
                .iter()
                .map(|(keys, help)| (keys.to_string(), help.to_string()))
                .collect(),
        };
        let processes = Section {
            heading: "Live processes (/ps)",
            entries: super::ps::PROCESS_KEYS
                .iter()
                .map(|(keys, help)| (keys.to_string(), help.to_string()))
                .collect(),
        };
        let terminals = Section {
            heading: "Shift+Enter in your terminal",
            entries: vec![(String::new(), SHIFT_ENTER_SETUP.to_string())],
        };
        (vec![keys, composer, approval], vec![commands, processes, terminals])
    }

    /// The rows of the help for an inner width: two columns side by side, or one after the other.
    pub(crate) fn rows(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let (left, right) = self.sections();
        if width >= TWO_COLUMNS {
            let col = (width - GAP) / 2;
            let left = column(&left, col, theme);
            let right = column(&right, col, theme);
            let n = left.len().max(right.len());
            (0..n)
                .map(|i| {
                    let mut spans = Vec::new();
                    let mut used = 0;
                    if let Some(line) = left.get(i) {
                        used = line.spans.iter().map(|s| text_width(&s.content)).sum();
                        spans.extend(line.spans.iter().cloned());
                    }
                    spans.push(Span::raw(" ".repeat(usize::from(col + GAP).saturating_sub(used))));
                    if let Some(line) = right.get(i) {
                        spans.extend(line.spans.iter().cloned());
                    }
                    Line::from(spans)
                })
                .collect()
        } else {
            let mut all = left;
            all.extend(right);
            column(&all, width, theme)
        }
    }

    fn scroll_to(&mut self, offset: usize) {
        self.offset = offset.min(self.rows.saturating_sub(self.page));
    }
}

struct Section {
    heading: &'static str,
    entries: Vec<(String, String)>,
}

/// Sections laid out in one column of `width`: a heading, then each entry with its keys in the key column and what
/// they do wrapped beside them (under them, when the keys are wider than the column).
fn column(sections: &[Section], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let key_w = KEY_WIDTH.min(usize::from(width) / 3);
    let indent = " ".repeat(key_w + 4);
    let mut out = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        if i > 0 {
            out.push(Line::default());
        }
        out.push(Line::from(Span::styled(section.heading, theme.heading)));
        for (keys, help) in &section.entries {
            if keys.is_empty() {
                // Prose.
                out.extend(wrap_line(Line::from(format!("  {help}")), width, "  "));
            } else if text_width(keys) > key_w {
                out.extend(wrap_line(
                    Line::from(Span::styled(format!("  {keys}"), theme.accent)),
                    width,
                    "    ",
                ));
                out.extend(wrap_line(Line::from(format!("{indent}{help}")), width, &indent));
            } else {
                let line = Line::from(vec![
                    Span::styled(format!("  {keys:key_w$}  "), theme.accent),
                    Span::raw(help.clone()),
                ]);
                out.extend(wrap_line(line, width, &indent));
            }
        }
    }
    out
}

impl Layer for HelpLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "help"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll_to(self.offset.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_to(self.offset + 1),
            KeyCode::PageUp => self.scroll_to(self.offset.saturating_sub(self.page.max(2) - 1)),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll_to(self.offset + self.page.max(2) - 1),
            KeyCode::Home | KeyCode::Char('g') => self.scroll_to(0),
            KeyCode::End | KeyCode::Char('G') => self.scroll_to(usize::MAX),
            _ => ctx.effect(Effect::Close),
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let width = area.width.saturating_sub(2).min(MAX_WIDTH);
        // Borders and the footer line.
        let inner_w = width.saturating_sub(4);
        if inner_w < 10 || area.height < 5 {
            return;
        }
        let rows = self.rows(inner_w, theme);
        let height = (rows.len() as u16 + 3)
            .min(area.height.saturating_sub(2).max(5))
            .min(area.height);
        let page = usize::from(height - 3);
        self.rows = rows.len();
        self.page = page;
        self.scroll_to(self.offset);
        let rect = Rect {
            x: area.x + (area.width - width) / 2,
            y: area.y + (area.height - height) / 2,
            width,
            height,
        };
        let mut lines: Vec<Line<'static>> = rows.into_iter().skip(self.offset).take(page).collect();
        lines.resize(page, Line::default());
        let more = self.rows > page;
        let footer = if more {
            format!(
                "↑↓ PgUp PgDn Home End scroll · any other key closes · {}-{} of {}",
                self.offset + 1,
                (self.offset + page).min(self.rows),
                self.rows
            )
        } else {
            "any key closes".to_string()
        };
        lines.push(Line::from(Span::styled(footer, theme.dim)));
        frame.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.border)
            .title(" Help ");
        let inner = block.inner(rect);
        frame.render_widget(block, rect);
        // A column of padding on each side, inside the border.
        let text = Rect {
            x: inner.x + 1,
            width: inner_w,
            ..inner
        };
        frame.render_widget(Paragraph::new(lines), text);
    }
}

#[cfg(test)]
mod tests;
