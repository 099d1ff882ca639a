//! The form for an MCP server's request for input: a box over the bottom of the screen with the server's message and
//! one line per requested field (its type, whether it is required, its value). Tab and the arrows move between
//! fields, Left/Right choose an option, Space toggles, Enter sends the answer, Esc declines. Keys that arrive within a
//! short guard time after the form appears are swallowed, so Enter typed for the composer never sends it.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Padding, Paragraph};

use super::approval::GUARD;
use crate::layer::{Answers, Ctx, Effect, Handled, Layer, View};
use crate::state::elicit::{ElicitForm, Field, FieldKind, PendingElicitation};
use crate::theme::Theme;
use crate::wrap::wrap_line;
use tern_protocol::{ElicitationAnswer, Op};

pub(crate) struct ElicitLayer {
    pub(crate) form: ElicitForm,
    shown: Instant,
}

impl ElicitLayer {
    pub(crate) fn new(request: &PendingElicitation) -> Self {
        Self {
            form: ElicitForm::new(request),
            shown: Instant::now(),
        }
    }

    /// For tests: as if the form had been on screen for a while.
    #[cfg(test)]
    pub(crate) fn settled(mut self) -> Self {
        self.shown = Instant::now() - GUARD * 2;
        self
    }

    fn send(&self, answer: ElicitationAnswer, ctx: &mut Ctx<'_>) {
        ctx.effect(Effect::Op(Op::Elicit {
            id: self.form.id,
            answer,
        }));
        ctx.effect(Effect::Close);
    }
}

impl Layer for ElicitLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "elicitation"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code == KeyCode::Char('c') && ctrl {
            return Handled::Ignored;
        }
        if self.shown.elapsed() < GUARD {
            return Handled::Consumed;
        }
        let form = &mut self.form;
        match key.code {
            KeyCode::Enter => match form.answer() {
                Ok(content) => self.send(ElicitationAnswer::Accept { content }, ctx),
                Err(why) => form.error = Some(why),
            },
            KeyCode::Esc => self.send(ElicitationAnswer::Decline { reason: None }, ctx),
            KeyCode::Tab | KeyCode::Down => form.next(),
            KeyCode::BackTab | KeyCode::Up => form.previous(),
            KeyCode::Left => form.step(-1),
            KeyCode::Right => form.step(1),
            KeyCode::Backspace => form.backspace(),
            KeyCode::Char(c) if !ctrl => form.type_char(c),
            _ => {}
        }
        Handled::Consumed
    }

    fn answers(&self) -> Answers {
        Answers::Elicitation(self.form.id)
    }

    fn handle_paste(&mut self, text: &str, _ctx: &mut Ctx<'_>) -> Handled {
        for c in text.chars().filter(|c| !c.is_control()) {
            self.form.type_char(c);
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let width = area.width.saturating_sub(2).min(100);
        let inner = width.saturating_sub(4);
        let form = &self.form;
        let lines = form_lines(form, inner, theme);
        let height = (lines.len() as u16 + 2).min(area.height);
        let rect = Rect {
            x: area.x + (area.width.saturating_sub(width)) / 2,
            y: area.y + area.height.saturating_sub(height + 3),
            width,
            height,
        };
        frame.render_widget(Clear, rect);
        frame.render_widget(
            Paragraph::new(lines).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(theme.accent)
                    .padding(Padding::horizontal(1))
                    .title(format!(" MCP server {} asks for input ", form.server)),
            ),
            rect,
        );
    }
}

/// The lines inside the form's box, `inner` cells wide: the server's message, the fields, any error, and the keys.
fn form_lines(form: &ElicitForm, inner: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    for line in form.message.lines().take(8) {
        lines.extend(wrap_line(
            Line::from(Span::styled(line.to_string(), theme.text)),
            inner,
            "",
        ));
    }
    lines.push(Line::default());
    for (i, field) in form.fields.iter().enumerate() {
        lines.extend(field_lines(field, i == form.focus, inner, theme));
    }
    if form.fields.is_empty() {
        lines.push(Line::from(Span::styled("(no fields: Enter to accept)", theme.dim)));
    }
    if let Some(error) = &form.error {
        lines.push(Line::from(Span::styled(error.clone(), theme.error)));
    }
    lines.push(Line::default());
    lines.extend(wrap_line(
        Line::from(vec![
            Span::styled("Enter", theme.success),
            Span::raw(" send   "),
            Span::styled("Tab/↑↓", theme.accent),
            Span::raw(" field   "),
            Span::styled("←→", theme.accent),
            Span::raw(" choose   "),
            Span::styled("Space", theme.accent),
            Span::raw(" toggle   "),
            Span::styled("Esc", theme.error),
            Span::raw(" decline"),
        ]),
        inner,
        "",
    ));
    lines
}

/// One field's lines: its title, type and value (with a cursor when `focused` on a typed value), and its description
/// when focused.
fn field_lines(field: &Field, focused: bool, inner: u16, theme: &Theme) -> Vec<Line<'static>> {
    let marker = if focused { "› " } else { "  " };
    let required = if field.required { "*" } else { "" };
    let mut spans = vec![
        Span::styled(marker, theme.accent),
        Span::styled(format!("{}{required}", field.title), theme.heading),
        Span::styled(format!(" ({}): ", field.type_label()), theme.dim),
        Span::styled(field.display(), theme.text),
    ];
    if focused
        && matches!(
            field.kind,
            FieldKind::Text { .. } | FieldKind::Number | FieldKind::Integer
        )
    {
        spans.push(Span::styled("█", theme.dim));
    }
    let mut lines = wrap_line(Line::from(spans), inner, "    ");
    if focused && let Some(description) = &field.description {
        lines.extend(wrap_line(
            Line::from(Span::styled(format!("    {description}"), theme.dim)),
            inner,
            "    ",
        ));
    }
    lines
}
