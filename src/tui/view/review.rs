//! `/review`: first which changes (the last turn's or the session's), then each hunk the agent changed, file by file
//! like `git add -p`: the hunk as a diff (the diff view's renderer) under a line naming the file and "hunk i/n", and
//! the keys to keep or revert it. A hunk of several changes splits (`s`, as in `git add -p`) into one hunk per run of
//! changed lines, each kept or reverted on its own. Finishing sends the hunks to revert; the agent reverts them all or
//! none.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use crate::diff::{DiffOptions, render_diff};
use crate::layer::{Ctx, Effect, Handled, Layer, View};
use crate::state::review::{ReviewWalk, Step};
use tern_protocol::{Op, ReviewChange, ReviewFile, ReviewSince};

/// The keys, as `?` lists them.
const HELP: [(&str, &str); 8] = [
    ("y", "keep this hunk"),
    ("n", "revert this hunk"),
    ("s", "split this hunk into its smallest changes"),
    ("a", "keep this hunk and the rest of the file"),
    ("d", "revert this hunk and the rest of the file"),
    ("←/p", "back to the hunk before"),
    ("q/Esc", "finish: revert what you chose, keep the rest"),
    ("↑↓ PgUp PgDn", "scroll a long hunk"),
];

/// Asks which changes to review.
pub(crate) struct ReviewChooseLayer {
    at: usize,
}

impl ReviewChooseLayer {
    pub(crate) fn new() -> Self {
        Self { at: 0 }
    }
}

impl Default for ReviewChooseLayer {
    fn default() -> Self {
        Self::new()
    }
}

const CHOICES: [(&str, ReviewSince); 2] = [
    ("this turn (the last one)", ReviewSince::Turn),
    ("this session (every turn not undone)", ReviewSince::Session),
];

impl Layer for ReviewChooseLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "review-choose"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        let chosen = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.at = 0;
                None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.at = 1;
                None
            }
            KeyCode::Enter => Some(CHOICES[self.at].1),
            KeyCode::Char('1') | KeyCode::Char('t') => Some(ReviewSince::Turn),
            KeyCode::Char('2') | KeyCode::Char('s') => Some(ReviewSince::Session),
            KeyCode::Esc | KeyCode::Char('q') => {
                ctx.effect(Effect::Close);
                None
            }
            _ => None,
        };
        if let Some(since) = chosen {
            ctx.effect(Effect::Op(Op::ReviewStart { since }));
            ctx.effect(Effect::Close);
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let mut lines = vec![Line::from(Span::styled("Review the agent's changes of:", theme.text))];
        lines.push(Line::default());
        for (i, (label, _)) in CHOICES.iter().enumerate() {
            let style = if i == self.at { theme.selection } else { theme.text };
            let marker = if i == self.at { "›" } else { " " };
            lines.push(Line::from(Span::styled(format!("{marker} {}. {label}", i + 1), style)));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Enter or 1-2 choose · Esc close", theme.dim)));
        let width = area.width.saturating_sub(4).min(60);
        let height = (lines.len() as u16 + 2).min(area.height);
        let rect = Rect {
            x: area.x + (area.width - width) / 2,
            y: area.y + (area.height - height) / 2,
            width,
            height,
        };
        frame.render_widget(Clear, rect);
        frame.render_widget(Paragraph::new(lines).block(framed(" Review ", view)), rect);
    }
}

/// The walk over the hunks.
pub(crate) struct ReviewLayer {
    walk: ReviewWalk,
    help: bool,
    scroll: usize,
    /// The rendered diff of the hunk shown, by (file, hunk, width).
    cache: Option<((usize, usize, u16), Vec<Line<'static>>)>,
    /// Rows the diff had on the last frame (for paging).
    page: usize,
}

impl ReviewLayer {
    pub(crate) fn new(id: u64, from: String, files: Vec<ReviewFile>) -> Self {
        Self {
            walk: ReviewWalk::new(id, from, files),
            help: false,
            scroll: 0,
            cache: None,
            page: 10,
        }
    }

    fn finish(&self, ctx: &mut Ctx<'_>) {
        ctx.effect(Effect::Op(Op::ReviewApply {
            id: self.walk.id,
            reverted: self.walk.reverted(),
        }));
        ctx.effect(Effect::Close);
    }

    fn diff_lines(&mut self, width: u16, view: &View<'_>) -> &[Line<'static>] {
        let (file, hunk) = self.walk.at;
        let key = (file, hunk, width);
        if self.cache.as_ref().is_none_or(|(k, _)| *k != key) {
            let lines = self
                .walk
                .files
                .get(file)
                .and_then(|f| f.hunks.get(hunk))
                .map(|h| render_diff(&h.diff, width, view.theme, &DiffOptions::default()))
                .unwrap_or_default();
            self.cache = Some((key, lines));
        }
        self.cache.as_ref().map_or(&[], |(_, lines)| lines.as_slice())
    }

    fn header(&self, view: &View<'_>) -> Vec<Line<'static>> {
        let theme = view.theme;
        let (file, hunk) = self.walk.at;
        let Some(reviewed) = self.walk.files.get(file) else {
            return Vec::new();
        };
        let lines = reviewed.hunks.get(hunk).map(|h| h.lines.clone()).unwrap_or_default();
        let what = match reviewed.change {
            ReviewChange::Created => "  (created: revert deletes it)",
            ReviewChange::Deleted => "  (deleted: revert restores it)",
            ReviewChange::Binary => "  (binary: kept or reverted whole)",
            ReviewChange::Modified => "",
        };
        let (nth, total) = self.walk.overall();
        let state = match self.walk.decision(file, hunk) {
            Some(true) => Span::styled("  [revert]", theme.error),
            Some(false) => Span::styled("  [keep]", theme.success),
            None => Span::raw(""),
        };
        let mut first = vec![
            Span::styled(format!("file {}/{} ", file + 1, self.walk.files.len()), theme.dim),
            Span::styled(reviewed.path.clone(), theme.accent),
            Span::styled(what, theme.dim),
        ];
        if reviewed.changed_outside {
            first.push(Span::styled("  also changed since, not by the agent", theme.warning));
        }
        vec![
            Line::from(first),
            Line::from(vec![
                Span::styled(format!("hunk {}/{}", hunk + 1, reviewed.hunks.len()), theme.text),
                Span::styled(format!(" · {lines} · {nth} of {total} in all"), theme.dim),
                state,
            ]),
        ]
    }

    fn footer(&self, view: &View<'_>) -> Vec<Line<'static>> {
        let theme = view.theme;
        if self.help {
            return HELP
                .iter()
                .map(|(key, what)| {
                    Line::from(vec![
                        Span::styled(format!("{key:>13} "), theme.accent),
                        Span::styled(what.to_string(), theme.text),
                    ])
                })
                .collect();
        }
        let mut spans = Vec::new();
        let split = self.walk.can_split().then_some(("s", "split"));
        for (key, what) in [
            Some(("y", "keep")),
            Some(("n", "revert")),
            split,
            Some(("a", "keep file")),
            Some(("d", "revert file")),
            Some(("q", "finish")),
            Some(("?", "help")),
        ]
        .into_iter()
        .flatten()
        {
            if !spans.is_empty() {
                spans.push(Span::styled(" · ", theme.dim));
            }
            spans.push(Span::styled(key, theme.accent));
            spans.push(Span::styled(format!(" {what}"), theme.dim));
        }
        vec![Line::from(spans)]
    }
}

fn framed<'a>(title: &'a str, view: &View<'_>) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(view.theme.border)
        .title(title)
}

impl Layer for ReviewLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "review"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        let at = self.walk.at;
        let step = match key.code {
            KeyCode::Char('y') => Some(Step::Keep),
            KeyCode::Char('n') => Some(Step::Revert),
            KeyCode::Char('a') => Some(Step::KeepFile),
            KeyCode::Char('d') => Some(Step::RevertFile),
            KeyCode::Left | KeyCode::Char('p') => Some(Step::Back),
            KeyCode::Char('s') => {
                // The hunk shown becomes its first part: the cached diff is another one now.
                self.cache = None;
                self.scroll = 0;
                Some(Step::Split)
            }
            KeyCode::Char('?') => {
                self.help = !self.help;
                None
            }
            KeyCode::Char('q') | KeyCode::Esc => {
                self.finish(ctx);
                return Handled::Consumed;
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.saturating_sub(1);
                None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll += 1;
                None
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(self.page);
                None
            }
            KeyCode::PageDown | KeyCode::Char(' ') => {
                self.scroll += self.page;
                None
            }
            _ => None,
        };
        if let Some(step) = step {
            self.walk.apply(step);
            if self.walk.done {
                self.finish(ctx);
            } else if self.walk.at != at {
                self.scroll = 0;
            }
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let title = format!(" Review: the agent's changes since {} ", self.walk.from);
        let block = framed(&title, view);
        let inner = block.inner(area);
        frame.render_widget(Clear, area);
        frame.render_widget(block, area);
        let header = self.header(view);
        let footer = self.footer(view);
        let fixed = (header.len() + footer.len() + 2) as u16;
        let rows = usize::from(inner.height.saturating_sub(fixed));
        self.page = rows.max(1);
        let diff = self.diff_lines(inner.width, view).to_vec();
        self.scroll = self.scroll.min(diff.len().saturating_sub(rows));
        let mut lines = header;
        lines.push(Line::default());
        let below = diff.len().saturating_sub(self.scroll + rows);
        let shown = diff.len().saturating_sub(self.scroll).min(rows);
        lines.extend(diff.into_iter().skip(self.scroll).take(rows));
        if below > 0 && shown > 0 {
            // The last row says the hunk goes on, rather than cutting it off silently.
            lines.pop();
            lines.push(Line::from(Span::styled(
                format!("… {} more lines (↓ or PgDn)", below + 1),
                view.theme.dim,
            )));
        }
        lines.extend(std::iter::repeat_n(Line::default(), rows - shown + 1));
        lines.extend(footer);
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

#[cfg(test)]
mod tests;
