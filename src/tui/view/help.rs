//! The help overlay: every key and slash command. Any key closes it.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use crate::tui::composer::SlashCommand;
use crate::tui::layer::{Ctx, Effect, Handled, Layer, View};

pub struct HelpLayer {
    keys: Vec<(String, &'static str)>,
    commands: Vec<SlashCommand>,
}

impl HelpLayer {
    pub fn new(keys: Vec<(String, &'static str)>, commands: Vec<SlashCommand>) -> Self {
        Self { keys, commands }
    }
}

impl Layer for HelpLayer {
    fn name(&self) -> &'static str {
        "help"
    }

    fn handle_key(&mut self, _key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        ctx.effect(Effect::Close);
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let mut lines = vec![Line::from(Span::styled("Keys", theme.heading))];
        let key_w = self.keys.iter().map(|(k, _)| k.len()).max().unwrap_or(0).max(18);
        for (keys, help) in &self.keys {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:key_w$}  "), theme.accent),
                Span::raw(*help),
            ]));
        }
        for (keys, help) in [
            ("Enter", "send (queued while the agent works)"),
            ("Shift+Enter, Alt+Enter, Ctrl+J", "new line"),
            ("Up / Down", "history (on the first / last line)"),
            ("@", "complete a file path"),
            ("Mouse wheel", "scroll"),
        ] {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:key_w$}  "), theme.accent),
                Span::raw(help),
            ]));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Commands", theme.heading)));
        for c in &self.commands {
            let name = format!("/{} {}", c.name, c.args);
            lines.push(Line::from(vec![
                Span::styled(format!("  {:key_w$}  ", name.trim_end()), theme.accent),
                Span::raw(c.help.clone()),
            ]));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Any key closes this help.", theme.dim)));
        let width = area.width.saturating_sub(4).min(90);
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
                    .border_style(theme.border)
                    .title(" Help "),
            ),
            rect,
        );
    }
}
