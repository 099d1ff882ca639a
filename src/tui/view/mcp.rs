//! The `/mcp` view: every MCP server, its state and its tools, live while servers connect.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use tokio::sync::watch;

use crate::tools::mcp::{ServerState, ServerStatus, render_statuses};
use crate::tui::layer::{Ctx, Effect, Handled, Layer, View};
use crate::tui::wrap::wrap_lines;

pub struct McpLayer {
    statuses: Option<watch::Receiver<Vec<ServerStatus>>>,
    scroll: usize,
}

impl McpLayer {
    pub fn new(statuses: Option<watch::Receiver<Vec<ServerStatus>>>) -> Self {
        Self { statuses, scroll: 0 }
    }

    fn text(&self) -> String {
        match &self.statuses {
            Some(rx) if !rx.borrow().is_empty() => render_statuses(&rx.borrow()),
            _ => "No MCP servers are configured.\n\nAdd [mcp_servers.NAME] tables to ~/.config/tern/config.toml, an \
                  `mcpServers` object to .mcp.json in a trusted project, or pass --mcp-config FILE."
                .to_string(),
        }
    }
}

impl Layer for McpLayer {
    fn name(&self) -> &'static str {
        "mcp"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => ctx.effect(Effect::Close),
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll += 10,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Home | KeyCode::Char('g') => self.scroll = 0,
            _ => return Handled::Ignored,
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let rect = Rect {
            x: area.x + 1,
            y: area.y,
            width: area.width.saturating_sub(2),
            height: area.height.saturating_sub(1),
        };
        let inner_width = rect.width.saturating_sub(2);
        let lines: Vec<Line<'static>> = self
            .text()
            .lines()
            .map(|l| {
                let style = if l.starts_with("  status: failed") || l.starts_with("  status: disconnected") {
                    theme.error
                } else if l.starts_with("  problem: ") {
                    theme.warning
                } else if l.starts_with("  status: ready") {
                    theme.success
                } else if !l.starts_with(' ') {
                    theme.heading
                } else {
                    theme.text
                };
                Line::from(Span::styled(l.to_string(), style))
            })
            .collect();
        let lines = wrap_lines(lines, inner_width, "      ");
        let visible = usize::from(rect.height.saturating_sub(2));
        self.scroll = self.scroll.min(lines.len().saturating_sub(visible));
        let shown: Vec<Line<'static>> = lines.into_iter().skip(self.scroll).take(visible).collect();
        frame.render_widget(Clear, rect);
        frame.render_widget(
            Paragraph::new(shown).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(theme.border)
                    .title(" MCP servers — q closes "),
            ),
            rect,
        );
    }

    fn animating(&self) -> bool {
        self.statuses
            .as_ref()
            .is_some_and(|rx| rx.borrow().iter().any(|s| matches!(s.state, ServerState::Connecting)))
    }
}
