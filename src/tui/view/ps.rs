//! The `/ps` view: the session's live processes (id, state, age, command), newest last, with the selected one's
//! screen below the list. Enter gives it the keys (the focused view), `s` stops it (`Op::ProcessStop`; the state
//! shows what the agent tells when it has ended), Esc or `q` closes the list.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::live_screen;
use crate::key_bytes::GIVE_BACK;
use crate::layer::{Ctx, Effect, Handled, Layer, View};
use crate::state::processes::{LiveProcess, Processes};
use crate::theme::Theme;
use crate::wrap::{truncate, width as text_width};
use tern_protocol::Op;

const EMPTY: &str = "No live processes. The model starts one with a command run in the background; it shows here \
                     while it runs and after it ends.";

/// The keys of the list and of a process with the keys, for the help.
pub(crate) const PROCESS_KEYS: &[(&str, &str)] = &[
    ("Enter", "type into the selected process: every key goes to it"),
    ("Ctrl+]", "give the keys back to tern (any key, once it ended)"),
    ("s", "stop the selected process"),
];

#[derive(Default)]
pub(crate) struct ProcessesLayer {
    selected: usize,
}

impl ProcessesLayer {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn selected<'a>(&self, processes: &'a Processes) -> Option<&'a LiveProcess> {
        processes.iter().nth(self.selected)
    }
}

/// One row of the list: marker, id, state, age, command.
fn row(process: &LiveProcess, selected: bool, width: u16, now: Instant, theme: &Theme) -> Line<'static> {
    let marker = if selected { "› " } else { "  " };
    let id = tern_text::one_line(&process.info.id).into_owned();
    let state = live_screen::state_text(process);
    let state_style = if process.running() { theme.accent } else { theme.dim };
    let head = format!("{id:<5} {state:<16} {:>6}  ", live_screen::age(process, now));
    let room = usize::from(width).saturating_sub(text_width(marker) + text_width(&head));
    let command = truncate(&tern_text::one_line(&process.info.command), room);
    let style = if selected { theme.selection } else { theme.text };
    Line::from(vec![
        Span::styled(marker, theme.accent),
        Span::styled(format!("{id:<5} "), theme.tool_name),
        Span::styled(format!("{state:<16} "), state_style),
        Span::styled(format!("{:>6}  ", live_screen::age(process, now)), theme.dim),
        Span::styled(command, style),
    ])
}

impl Layer for ProcessesLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "ps"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        let count = ctx.view.processes.len();
        let selected = self
            .selected(ctx.view.processes)
            .map(|p| (p.info.id.clone(), p.running()));
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => ctx.effect(Effect::Close),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(count.saturating_sub(1)),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Enter => {
                if let Some((id, _)) = selected {
                    ctx.effect(Effect::Focus(id));
                }
            }
            KeyCode::Char('s') | KeyCode::Delete => match selected {
                Some((id, true)) => {
                    ctx.effect(Effect::Notice(format!("stopping {}…", tern_text::one_line(&id))));
                    ctx.effect(Effect::Op(Op::ProcessStop { id }));
                }
                Some((id, false)) => ctx.effect(Effect::Notice(format!("{} has ended", tern_text::one_line(&id)))),
                None => {}
            },
            _ => return Handled::Ignored,
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let rect = super::list_layer(area);
        let inner_width = rect.width.saturating_sub(2);
        let inner_height = usize::from(rect.height.saturating_sub(2));
        self.selected = self.selected.min(view.processes.len().saturating_sub(1));
        let now = Instant::now();
        let mut lines: Vec<Line<'static>> = view
            .processes
            .iter()
            .enumerate()
            .map(|(i, p)| row(p, i == self.selected, inner_width, now, theme))
            .collect();
        if let Some(process) = self.selected(view.processes) {
            lines.push(Line::raw(""));
            lines.extend(live_screen::pane(process, inner_width, theme));
        } else {
            lines.push(Line::styled(EMPTY, theme.dim));
        }
        let shown: Vec<Line<'static>> = lines.into_iter().take(inner_height).collect();
        let hint = format!(" ↑↓ select · Enter type into it ({GIVE_BACK} gives the keys back) · s stop · q close ");
        frame.render_widget(Clear, rect);
        frame.render_widget(
            Paragraph::new(shown).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(theme.border)
                    .title(format!(" Live processes: {} ", view.processes.len()))
                    .title_bottom(Line::styled(hint, theme.dim)),
            ),
            rect,
        );
    }
}

#[cfg(test)]
mod tests;
