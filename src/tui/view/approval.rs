//! The approval prompt: a box over the bottom of the screen with the exact command, where it runs and why it asks.
//! `y` once, `a` always (showing the rule it adds), `n` deny (then an optional line of feedback), `Esc` abort the turn.
//! Keys that arrive within a short guard time after the prompt appears go elsewhere: typing into the composer when the
//! prompt pops up must never answer it.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Padding, Paragraph};

use crate::protocol::{ApprovalDecision, ApprovalRequest, Op};
use crate::tui::layer::{Ctx, Effect, Handled, Layer, View};
use crate::tui::wrap::wrap_line;

/// Keys arriving sooner than this after the prompt appeared are not taken as an answer.
pub const GUARD: Duration = Duration::from_millis(400);

pub struct ApprovalLayer {
    pub request: ApprovalRequest,
    /// How many more requests wait behind this one.
    pub queued: usize,
    shown: Instant,
    /// Typing feedback after `n`.
    feedback: Option<String>,
    /// The subagent that asks, by label; `None`: the main agent.
    from: Option<String>,
}

impl ApprovalLayer {
    pub fn new(request: ApprovalRequest, queued: usize) -> Self {
        Self {
            request,
            queued,
            shown: Instant::now(),
            feedback: None,
            from: None,
        }
    }

    /// A prompt from the subagent labelled `label`: the title says which one asks.
    pub fn from_subagent(mut self, label: Option<String>) -> Self {
        self.from = label;
        self
    }

    /// For tests: as if the prompt had been on screen for a while.
    pub fn settled(mut self) -> Self {
        self.shown = Instant::now() - GUARD * 2;
        self
    }

    fn decide(&self, decision: ApprovalDecision, ctx: &mut Ctx<'_>) {
        ctx.effect(Effect::Op(Op::Approve {
            id: self.request.id,
            decision,
        }));
        ctx.effect(Effect::Close);
    }
}

impl Layer for ApprovalLayer {
    fn name(&self) -> &'static str {
        "approval"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        if let Some(text) = &mut self.feedback {
            match key.code {
                KeyCode::Enter => {
                    let feedback = Some(text.trim().to_string()).filter(|t| !t.is_empty());
                    self.decide(ApprovalDecision::Deny { feedback }, ctx);
                }
                KeyCode::Esc => self.feedback = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
                _ => {}
            }
            return Handled::Consumed;
        }
        if self.shown.elapsed() < GUARD {
            return Handled::Ignored;
        }
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => self.decide(ApprovalDecision::Once, ctx),
            KeyCode::Char('a') | KeyCode::Char('A') if self.request.proposed_rule.is_some() => {
                self.decide(ApprovalDecision::Always, ctx)
            }
            KeyCode::Char('n') | KeyCode::Char('N') => self.feedback = Some(String::new()),
            KeyCode::Esc => self.decide(ApprovalDecision::Abort, ctx),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return Handled::Ignored,
            // Every other key is swallowed while the prompt is up, so nothing typed lands by surprise.
            _ => {}
        }
        Handled::Consumed
    }

    fn set_pending_approvals(&mut self, count: usize) {
        self.queued = count.saturating_sub(1);
    }

    fn handle_paste(&mut self, text: &str, _ctx: &mut Ctx<'_>) -> Handled {
        if let Some(feedback) = &mut self.feedback {
            feedback.push_str(&text.replace(['\n', '\r'], " "));
            return Handled::Consumed;
        }
        Handled::Ignored
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let width = area.width.saturating_sub(2).min(110);
        let inner = width.saturating_sub(4);
        let r = &self.request;
        let mut lines: Vec<Line<'static>> = Vec::new();
        for (i, line) in r.command.lines().enumerate().take(12) {
            let prefix = if i == 0 { "$ " } else { "  " };
            lines.extend(wrap_line(
                Line::from(vec![
                    Span::styled(prefix, theme.accent),
                    Span::styled(line.to_string(), theme.text),
                ]),
                inner,
                "  ",
            ));
        }
        if r.command.lines().count() > 12 {
            lines.push(Line::from(Span::styled(
                format!("  … {} more lines", r.command.lines().count() - 12),
                theme.dim,
            )));
        }
        lines.push(Line::from(vec![
            Span::styled("in ", theme.dim),
            Span::styled(r.cwd.clone(), theme.dim),
        ]));
        lines.extend(wrap_line(
            Line::from(vec![
                Span::styled("why: ", theme.dim),
                Span::styled(r.reason.clone(), theme.warning),
            ]),
            inner,
            "     ",
        ));
        lines.push(Line::default());
        match &self.feedback {
            Some(text) => {
                lines.push(Line::from(Span::styled(
                    "Deny — tell the model why (optional), Enter to send, Esc to go back:",
                    theme.text,
                )));
                lines.extend(wrap_line(
                    Line::from(vec![
                        Span::styled("> ", theme.accent),
                        Span::raw(text.clone()),
                        Span::styled("█", theme.dim),
                    ]),
                    inner,
                    "  ",
                ));
            }
            None => {
                let mut keys = vec![Span::styled("y", theme.success), Span::raw(" run once   ")];
                if let Some(rule) = &r.proposed_rule {
                    keys.push(Span::styled("a", theme.success));
                    keys.push(Span::raw(format!(" always allow `{rule}` this session   ")));
                }
                keys.extend([
                    Span::styled("n", theme.error),
                    Span::raw(" deny…   "),
                    Span::styled("Esc", theme.error),
                    Span::raw(" abort turn"),
                ]);
                lines.extend(wrap_line(Line::from(keys), inner, ""));
            }
        }
        let height = (lines.len() as u16 + 2).min(area.height);
        let rect = Rect {
            x: area.x + (area.width.saturating_sub(width)) / 2,
            y: area.y + area.height.saturating_sub(height + 3),
            width,
            height,
        };
        let asker = match &self.from {
            Some(label) => format!(" for subagent {label}"),
            None => String::new(),
        };
        let title = if self.queued > 0 {
            format!(" Allow {}{asker}? (1 of {}) ", r.tool, self.queued + 1)
        } else {
            format!(" Allow {}{asker}? ", r.tool)
        };
        frame.render_widget(Clear, rect);
        frame.render_widget(
            Paragraph::new(lines).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(theme.warning)
                    .padding(Padding::horizontal(1))
                    .title(Span::styled(title, theme.warning)),
            ),
            rect,
        );
    }
}
