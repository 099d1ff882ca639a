//! `/rewind`: a list of the conversation's user messages, then what to take back to before the chosen one (code and
//! conversation, only the conversation, only the code). Also the confirmation an undo or rewind asks for before it
//! overwrites files someone changed after the turn.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use crate::layer::{Ctx, Effect, Handled, Layer, View};
use tern_protocol::{Op, RewindPoint};

/// What to rewind: (label, conversation, code).
type Choice = (&'static str, bool, bool);

const CHOICES: [Choice; 3] = [
    ("code and conversation", true, true),
    ("only the conversation", true, false),
    ("only the code", false, true),
];

pub(crate) struct RewindLayer {
    points: Vec<RewindPoint>,
    selected: usize,
    /// The choices offered for the selected point, once one was picked.
    choices: Option<(Vec<Choice>, usize)>,
}

impl RewindLayer {
    /// The picker over `points` (oldest first), starting at the newest.
    pub(crate) fn new(points: Vec<RewindPoint>) -> Self {
        let selected = points.len().saturating_sub(1);
        Self {
            points,
            selected,
            choices: None,
        }
    }

    fn pick(&mut self) {
        let Some(point) = self.points.get(self.selected) else {
            return;
        };
        let offered = CHOICES
            .into_iter()
            .filter(|(_, conversation, code)| (!conversation || point.conversation) && (!code || point.code))
            .collect();
        self.choices = Some((offered, 0));
    }
}

fn moved(key: &KeyEvent, at: usize, len: usize) -> Option<usize> {
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => Some(at.saturating_sub(1)),
        KeyCode::Down | KeyCode::Char('j') => Some((at + 1).min(len.saturating_sub(1))),
        KeyCode::Home => Some(0),
        KeyCode::End => Some(len.saturating_sub(1)),
        _ => None,
    }
}

impl Layer for RewindLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "rewind"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        if let Some((choices, at)) = &mut self.choices {
            if let Some(next) = moved(&key, *at, choices.len()) {
                *at = next;
                return Handled::Consumed;
            }
            let chosen = match key.code {
                KeyCode::Esc => {
                    self.choices = None;
                    return Handled::Consumed;
                }
                KeyCode::Enter => choices.get(*at).copied(),
                KeyCode::Char(c @ '1'..='3') => choices.get(c as usize - '1' as usize).copied(),
                _ => return Handled::Consumed,
            };
            if let (Some((_, conversation, code)), Some(point)) = (chosen, self.points.get(self.selected)) {
                ctx.effect(Effect::Op(Op::Rewind {
                    turn: point.turn,
                    conversation,
                    code,
                    force: false,
                }));
                ctx.effect(Effect::Close);
            }
            return Handled::Consumed;
        }
        if let Some(next) = moved(&key, self.selected, self.points.len()) {
            self.selected = next;
            return Handled::Consumed;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => ctx.effect(Effect::Close),
            KeyCode::Enter => self.pick(),
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let width = area.width.saturating_sub(4).min(100);
        let text_w = usize::from(width.saturating_sub(12));
        let mut lines = Vec::new();
        let title;
        match &self.choices {
            None => {
                title = " Rewind to before… ";
                let rows = usize::from(area.height.saturating_sub(6)).max(1);
                let first = self.selected.saturating_sub(rows - 1);
                for (i, point) in self.points.iter().enumerate().skip(first).take(rows) {
                    let one_line: String = point.text.lines().next().unwrap_or("").chars().take(text_w).collect();
                    let marker = if i == self.selected { "› " } else { "  " };
                    let style = if i == self.selected {
                        theme.selection
                    } else {
                        theme.text
                    };
                    let mut spans = vec![Span::styled(format!("{marker}{one_line}"), style)];
                    if !point.code {
                        spans.push(Span::styled("  (no code to revert)", theme.dim));
                    } else if !point.conversation {
                        spans.push(Span::styled("  (code only)", theme.dim));
                    }
                    lines.push(Line::from(spans));
                }
                lines.push(Line::default());
                lines.push(Line::from(Span::styled(
                    "↑↓ choose · Enter select · Esc close",
                    theme.dim,
                )));
            }
            Some((choices, at)) => {
                title = " Rewind ";
                let text = self.points.get(self.selected).map(|p| p.text.as_str()).unwrap_or("");
                let one_line: String = text.lines().next().unwrap_or("").chars().take(text_w).collect();
                lines.push(Line::from(vec![
                    Span::styled("to before: ", theme.dim),
                    Span::styled(one_line, theme.user),
                ]));
                lines.push(Line::default());
                for (i, (label, _, _)) in choices.iter().enumerate() {
                    let style = if i == *at { theme.selection } else { theme.text };
                    let marker = if i == *at { "›" } else { " " };
                    lines.push(Line::from(Span::styled(format!("{marker} {}. {label}", i + 1), style)));
                }
                lines.push(Line::default());
                lines.push(Line::from(Span::styled("Enter or 1-3 rewind · Esc back", theme.dim)));
            }
        }
        render_box(frame, area, width, lines, title, view);
    }
}

/// Asks before an undo or rewind overwrites files changed since the turn.
pub(crate) struct ConfirmRevertLayer {
    files: Vec<String>,
    retry: Op,
}

impl ConfirmRevertLayer {
    pub(crate) fn new(files: Vec<String>, retry: Op) -> Self {
        Self { files, retry }
    }
}

impl Layer for ConfirmRevertLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "confirm-revert"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => {
                ctx.effect(Effect::Op(self.retry.clone()));
                ctx.effect(Effect::Close);
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                ctx.effect(Effect::Notice("nothing reverted".into()));
                ctx.effect(Effect::Close);
            }
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let mut lines = vec![
            Line::from(Span::styled(
                "Changed since the turn (by you, or anyone but tern):",
                theme.warning,
            )),
            Line::default(),
        ];
        for file in self.files.iter().take(12) {
            lines.push(Line::from(Span::styled(format!("  {file}"), theme.accent)));
        }
        if self.files.len() > 12 {
            lines.push(Line::from(Span::styled(
                format!("  … and {} more", self.files.len() - 12),
                theme.dim,
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("y", theme.accent),
            Span::raw(" revert and overwrite them · "),
            Span::styled("n", theme.accent),
            Span::raw(" keep everything as it is"),
        ]));
        let width = area.width.saturating_sub(4).min(80);
        render_box(frame, area, width, lines, " Overwrite changes? ", view);
    }
}

fn render_box(frame: &mut Frame<'_>, area: Rect, width: u16, lines: Vec<Line<'_>>, title: &str, view: &View<'_>) {
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(view.theme.border)
                .title(title.to_string()),
        ),
        rect,
    );
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crossterm::event::{KeyEvent, KeyModifiers};
    use serde_json::json;

    use super::*;
    use crate::state::{AppState, CellKind};
    use crate::theme::Theme;
    use tern_protocol::{Event, ToolOutput};

    fn press(layer: &mut dyn Layer, code: KeyCode) -> Vec<Effect> {
        let theme = Theme::dark();
        let mut ctx = Ctx::new(View {
            calls: &[],
            processes: crate::state::processes::Processes::none(),
            theme: &theme,
        });
        layer.handle_key(KeyEvent::new(code, KeyModifiers::NONE), &mut ctx);
        ctx.effects
    }

    fn point(turn: u64, text: &str, conversation: bool) -> RewindPoint {
        RewindPoint {
            turn,
            text: text.into(),
            conversation,
            code: true,
        }
    }

    #[test]
    fn picking_a_message_then_what_to_rewind_sends_the_op() {
        let mut layer = RewindLayer::new(vec![point(1, "first", true), point(2, "second", true)]);
        assert!(press(&mut layer, KeyCode::Up).is_empty());
        assert!(press(&mut layer, KeyCode::Enter).is_empty(), "the choices come first");
        let effects = press(&mut layer, KeyCode::Char('3'));
        assert!(matches!(
            effects.as_slice(),
            [
                Effect::Op(Op::Rewind {
                    turn: 1,
                    conversation: false,
                    code: true,
                    force: false
                }),
                Effect::Close
            ]
        ));
    }

    #[test]
    fn a_point_out_of_the_conversation_offers_only_the_code() {
        let mut layer = RewindLayer::new(vec![point(4, "gone", false)]);
        press(&mut layer, KeyCode::Enter);
        let effects = press(&mut layer, KeyCode::Enter);
        assert!(matches!(
            effects.as_slice(),
            [
                Effect::Op(Op::Rewind {
                    turn: 4,
                    conversation: false,
                    code: true,
                    ..
                }),
                Effect::Close
            ]
        ));
    }

    #[test]
    fn confirming_sends_the_retry_and_declining_sends_nothing() {
        let mut layer = ConfirmRevertLayer::new(vec!["a.txt".into()], Op::Undo { force: true });
        let effects = press(&mut layer, KeyCode::Char('n'));
        assert!(matches!(effects.as_slice(), [Effect::Notice(_), Effect::Close]));
        let effects = press(&mut layer, KeyCode::Char('y'));
        assert!(matches!(
            effects.as_slice(),
            [Effect::Op(Op::Undo { force: true }), Effect::Close]
        ));
    }

    #[test]
    fn a_rewind_cuts_the_transcript_and_its_calls_back() {
        let mut state = AppState::new();
        for (turn, text) in [(1, "first"), (2, "second")] {
            state.apply(Event::TurnStarted {
                turn,
                text: text.into(),
            });
            state.apply(Event::ToolCallBegin {
                call_id: format!("c{turn}"),
                name: "exec".into(),
                kind: tern_protocol::ToolKind::Command,
                args: json!({"command": "true"}),
            });
            state.apply(Event::ToolCallEnd {
                call_id: format!("c{turn}"),
                name: "exec".into(),
                output: ToolOutput::text("ok"),
                duration_ms: 1,
                full_output_path: None,
            });
        }
        state.apply(Event::Rewound {
            turns: 1,
            text: "second".into(),
        });
        assert_eq!(state.calls.len(), 1);
        assert!(state.call("c2").is_none() && state.call("c1").is_some());
        assert!(matches!(state.cells.last().map(|c| &c.kind), Some(CellKind::Tools(_))));
        let users = state
            .cells
            .iter()
            .filter(|c| matches!(c.kind, CellKind::User(_)))
            .count();
        assert_eq!(users, 1);
    }
}
