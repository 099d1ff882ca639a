//! The `/mcp` view: every MCP server and its state, live while servers connect. One server is selected: its details
//! (transport, source, state, tools, resources, prompt commands) show below the list; `e` / `d` turn it on or off for
//! this session, `r` reconnects it, Enter lists its tools with their descriptions. The view only asks (`Op::McpServer`);
//! the states it shows come back from the manager.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use tokio::sync::watch;

use crate::layer::{Ctx, Effect, Handled, Layer, View};
use crate::theme::Theme;
use crate::wrap::wrap_lines;
use tern_protocol::mcp::report::render_statuses;
use tern_protocol::mcp::{ServerState, ServerStatus};
use tern_protocol::{McpAction, Op};

const EMPTY: &str = "No MCP servers are configured.\n\nAdd one with `tern mcp add NAME -- COMMAND` (or --url URL), \
                     [mcp_servers.NAME] tables in ~/.config/tern/config.toml, an `mcpServers` object in .mcp.json of a \
                     trusted project, or pass --mcp-config FILE.";

pub(crate) struct McpLayer {
    statuses: watch::Receiver<Vec<ServerStatus>>,
    selected: usize,
    /// The details' (or the tool list's) first shown line.
    scroll: usize,
    /// Showing the selected server's tools.
    tools: bool,
}

impl McpLayer {
    pub(crate) fn new(statuses: watch::Receiver<Vec<ServerStatus>>) -> Self {
        Self {
            statuses,
            selected: 0,
            scroll: 0,
            tools: false,
        }
    }

    fn current(&self) -> Vec<ServerStatus> {
        self.statuses.borrow().clone()
    }

    fn act(&self, action: McpAction, ctx: &mut Ctx<'_>) {
        let Some(server) = self.current().into_iter().nth(self.selected) else {
            return;
        };
        let doing = match action {
            McpAction::Enable => "turning on",
            McpAction::Disable => "turning off",
            McpAction::Reconnect => "reconnecting",
        };
        ctx.effect(Effect::Notice(format!("{doing} {} (this session only)", server.name)));
        ctx.effect(Effect::Op(Op::McpServer {
            name: server.name,
            action,
        }));
    }

    fn select(&mut self, to: usize) {
        if to != self.selected {
            self.selected = to;
            self.scroll = 0;
        }
    }
}

/// One row of the server list: the marker, the name, the state in a word or a few.
fn row(status: &ServerStatus, selected: bool, name_width: usize, theme: &Theme) -> Line<'static> {
    let (state, style) = match &status.state {
        ServerState::Ready {
            tools,
            resources,
            prompts,
        } => (
            format!(
                "ready · {} · {} · {}",
                count(*tools, "tool"),
                count(*resources, "resource"),
                count(*prompts, "prompt")
            ),
            theme.success,
        ),
        ServerState::Connecting => ("connecting…".to_string(), theme.dim),
        ServerState::Disabled if status.switched == Some(false) => ("off for this session".to_string(), theme.dim),
        ServerState::Disabled => ("disabled in config".to_string(), theme.dim),
        ServerState::Disconnected { .. } => ("disconnected".to_string(), theme.warning),
        ServerState::Failed { .. } if status.skipped => ("not started".to_string(), theme.warning),
        ServerState::Failed { .. } => ("failed".to_string(), theme.error),
    };
    let marker = if selected { "› " } else { "  " };
    let name_style = if selected { theme.selection } else { theme.heading };
    Line::from(vec![
        Span::styled(marker, theme.accent),
        Span::styled(format!("{:<name_width$}", status.name), name_style),
        Span::raw("  "),
        Span::styled(format!("{:<5}", status.transport.to_string()), theme.dim),
        Span::raw(" "),
        Span::styled(state, style),
    ])
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn detail_style(line: &str, theme: &Theme) -> Style {
    if line.starts_with("  status: failed") || line.starts_with("  status: disconnected") {
        theme.error
    } else if line.starts_with("  problem: ") {
        theme.warning
    } else if line.starts_with("  status: ready") {
        theme.success
    } else if !line.starts_with(' ') {
        theme.heading
    } else {
        theme.text
    }
}

impl Layer for McpLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "mcp"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        let count = self.current().len();
        if self.tools {
            match key.code {
                KeyCode::Esc | KeyCode::Enter | KeyCode::Backspace | KeyCode::Left => {
                    self.tools = false;
                    self.scroll = 0;
                }
                KeyCode::Char('q') => ctx.effect(Effect::Close),
                KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
                KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
                KeyCode::PageDown => self.scroll += 10,
                KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
                _ => return Handled::Ignored,
            }
            return Handled::Consumed;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => ctx.effect(Effect::Close),
            KeyCode::Down | KeyCode::Char('j') => self.select((self.selected + 1).min(count.saturating_sub(1))),
            KeyCode::Up | KeyCode::Char('k') => self.select(self.selected.saturating_sub(1)),
            KeyCode::Home | KeyCode::Char('g') => self.select(0),
            KeyCode::End | KeyCode::Char('G') => self.select(count.saturating_sub(1)),
            KeyCode::PageDown => self.scroll += 10,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Enter | KeyCode::Right if count > 0 => {
                self.tools = true;
                self.scroll = 0;
            }
            KeyCode::Char('e') => self.act(McpAction::Enable, ctx),
            KeyCode::Char('d') => self.act(McpAction::Disable, ctx),
            KeyCode::Char('r') => self.act(McpAction::Reconnect, ctx),
            _ => return Handled::Ignored,
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let rect = super::list_layer(area);
        let inner_width = rect.width.saturating_sub(2);
        let inner_height = usize::from(rect.height.saturating_sub(2));
        let statuses = self.current();
        self.selected = self.selected.min(statuses.len().saturating_sub(1));
        let selected = statuses.get(self.selected);
        let (title, hint, lines) = match selected {
            None => (
                " MCP servers ".to_string(),
                " q close ",
                EMPTY.lines().map(|l| Line::styled(l.to_string(), theme.text)).collect(),
            ),
            Some(server) if self.tools => (
                format!(" {}: {} tools ", server.name, server.tools.len()),
                " ↑↓ scroll · Esc back · q close ",
                self.tool_lines(server, inner_width, inner_height, theme),
            ),
            Some(server) => (
                " MCP servers ".to_string(),
                " ↑↓ select · Enter tools · e on · d off · r reconnect · q close ",
                self.server_lines(&statuses, server, inner_width, inner_height, theme),
            ),
        };
        let shown: Vec<Line<'static>> = lines.into_iter().take(inner_height).collect();
        frame.render_widget(Clear, rect);
        frame.render_widget(
            Paragraph::new(shown).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(theme.border)
                    .title(title)
                    .title_bottom(Line::styled(hint, theme.dim)),
            ),
            rect,
        );
    }

    fn animating(&self) -> bool {
        self.statuses
            .borrow()
            .iter()
            .any(|s| matches!(s.state, ServerState::Connecting))
    }
}

impl McpLayer {
    /// The selected server's tools, each with its summary, scrolled to fit `height` rows of `width` cells.
    fn tool_lines(&mut self, server: &ServerStatus, width: u16, height: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if server.tools.is_empty() {
            lines.push(Line::styled("No tools offered.", theme.dim));
        }
        for tool in &server.tools {
            let flags = if tool.read_only { "  (read-only)" } else { "" };
            lines.push(Line::from(vec![
                Span::styled(tool.name.clone(), theme.tool_name),
                Span::styled(flags, theme.dim),
            ]));
            if !tool.summary.is_empty() {
                lines.push(Line::styled(format!("    {}", tool.summary), theme.text));
            }
        }
        let lines = wrap_lines(lines, width, "    ");
        self.scrolled(lines, height)
    }

    /// One row per server, then the selected `server`'s details, scrolled to fit the rest of `height` rows of
    /// `width` cells.
    fn server_lines(
        &mut self,
        statuses: &[ServerStatus],
        server: &ServerStatus,
        width: u16,
        height: usize,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let name_width = statuses
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0)
            .min(24);
        let list: Vec<Line<'static>> = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| row(s, i == self.selected, name_width, theme))
            .collect();
        let list = wrap_lines(list, width, "    ");
        let details: Vec<Line<'static>> = render_statuses(std::slice::from_ref(server))
            .lines()
            .map(|l| Line::styled(l.to_string(), detail_style(l, theme)))
            .collect();
        let details = wrap_lines(details, width, "      ");
        let room = height.saturating_sub(list.len() + 1);
        let mut lines = list;
        lines.push(Line::raw(""));
        lines.extend(self.scrolled(details, room));
        lines
    }

    /// The lines from the scroll position that fit in `room`, the scroll kept within them.
    fn scrolled(&mut self, lines: Vec<Line<'static>>, room: usize) -> Vec<Line<'static>> {
        self.scroll = self.scroll.min(lines.len().saturating_sub(room));
        lines.into_iter().skip(self.scroll).take(room).collect()
    }
}
