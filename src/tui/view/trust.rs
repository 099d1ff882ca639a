//! The project trust prompt: shown once at start when the workspace has its own configuration that is not trusted.
//! It says which files it found and what trusting enables; `t` writes the workspace to the user's
//! `trusted_projects` (the only place trust is read from) and asks the app to restart the agent on the new settings,
//! `n` or Esc leave it untrusted for this run (tern asks again next start, and `/trust` opens it again meanwhile).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Padding, Paragraph};

use crate::host::TrustOffer;
use crate::layer::{Ctx, Effect, Handled, Layer, View};
use crate::theme::Theme;
use crate::wrap::{truncate, wrap_lines};

pub(crate) struct TrustLayer {
    offer: TrustOffer,
    /// Writes the trust where it is read from.
    host: std::sync::Arc<dyn crate::host::Host>,
    /// Why writing the trust failed, shown in the prompt.
    error: Option<String>,
    scroll: usize,
}

impl TrustLayer {
    pub(crate) fn new(offer: TrustOffer, host: std::sync::Arc<dyn crate::host::Host>) -> Self {
        Self {
            offer,
            host,
            error: None,
            scroll: 0,
        }
    }

    fn trust(&mut self, ctx: &mut Ctx<'_>) {
        match self.host.trust(&self.offer) {
            Ok(()) => {
                ctx.effect(Effect::Close);
                ctx.effect(Effect::Reload);
            }
            Err(e) => self.error = Some(format!("could not save the trust: {e}")),
        }
    }

    fn lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        let offer = &self.offer;
        let mut out = vec![
            Line::from(vec![
                Span::styled(offer.workspace.display().to_string(), theme.text),
                Span::styled(" has its own configuration: ", theme.dim),
                Span::styled(offer.files.join(", "), theme.text),
            ]),
            Line::default(),
            Line::styled("Trusting it lets that configuration loosen what tern does:", theme.dim),
        ];
        if !offer.servers.is_empty() {
            out.push(Line::styled("• its MCP servers start:", theme.warning));
            for (name, target) in &offer.servers {
                out.push(Line::from(vec![
                    Span::raw("    "),
                    Span::styled(name.clone(), theme.tool_name),
                    Span::styled(format!("  {target}"), theme.text),
                ]));
            }
        }
        for change in &offer.changes {
            out.push(Line::styled(format!("• {change}"), theme.warning));
        }
        if offer.servers.is_empty() && offer.changes.is_empty() {
            out.push(Line::styled(
                "• nothing today: it sets only what an untrusted project may (model, limits, deny rules)",
                theme.dim,
            ));
        }
        out.push(Line::default());
        out.push(Line::styled(
            format!(
                "Until then tern ignores these (a project may only tighten settings). Trust is saved to \
                 trusted_projects in {}; the session restarts on the new settings.",
                offer.user_config.display()
            ),
            theme.dim,
        ));
        if let Some(error) = &self.error {
            out.push(Line::default());
            out.push(Line::styled(error.clone(), theme.error));
        }
        out
    }
}

impl Layer for TrustLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "trust"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        match key.code {
            KeyCode::Char('t') | KeyCode::Char('T') => self.trust(ctx),
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                ctx.effect(Effect::Close);
                ctx.effect(Effect::Notice(
                    "project not trusted: its config stays ignored (asked again next start)".into(),
                ));
            }
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            // Everything else waits for the answer: the prompt is modal.
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let width = area.width.saturating_sub(4).min(96);
        let inner = width.saturating_sub(4);
        let lines = wrap_lines(self.lines(theme), inner, "  ");
        // Borders, a blank and the keys around the text; taller text scrolls (↑↓).
        let room = usize::from(area.height.saturating_sub(5));
        let visible = lines.len().min(room);
        let mut footer = Line::from(vec![
            Span::styled(" t", theme.accent),
            Span::styled(" trust   ", theme.dim),
            Span::styled("n", theme.accent),
            Span::styled(" not now   ", theme.dim),
            Span::styled("Esc", theme.accent),
            Span::styled(" not now", theme.dim),
        ]);
        if visible < lines.len() {
            footer.spans.push(Span::styled("   ↑↓", theme.accent));
            footer.spans.push(Span::styled(" more", theme.dim));
        }
        self.scroll = self.scroll.min(lines.len() - visible);
        let mut shown: Vec<Line<'static>> = lines.into_iter().skip(self.scroll).take(visible).collect();
        shown.push(Line::default());
        shown.push(footer);
        let height = (shown.len() as u16 + 2).min(area.height);
        let rect = Rect {
            x: area.x + (area.width - width) / 2,
            y: area.y + area.height.saturating_sub(height) / 3,
            width,
            height,
        };
        frame.render_widget(Clear, rect);
        frame.render_widget(
            Paragraph::new(shown).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(theme.warning)
                    .padding(Padding::horizontal(1))
                    .title(Span::styled(
                        truncate(" Trust this project? ", usize::from(width.saturating_sub(2))),
                        theme.heading,
                    )),
            ),
            rect,
        );
    }
}
