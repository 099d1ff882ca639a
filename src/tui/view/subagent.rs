//! A subagent's pane in the transcript: a header with its label, state, current tool, model requests, tokens and
//! time, the first line of its task, and when it is done the first line of its report. Enter or Ctrl+O on the pane
//! (it is selectable like a tool pane) opens its transcript (`SubagentLayer`).

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::tool_pane::spinner;
use super::transcript::TranscriptView;
use crate::keymap::{Action, Keymap};
use crate::state::subagents::{SubagentPane, SubagentStatus};
use crate::state::{AppState, CellKind};
use crate::theme::Theme;
use crate::wrap::wrap_line;
use tern_protocol::TurnEnd;
use tern_text::units::elapsed;

pub(crate) fn render(pane: &SubagentPane, width: u16, theme: &Theme, now: Instant) -> Vec<Line<'static>> {
    let (mark, style, state) = match pane.status {
        SubagentStatus::Queued => ("…".to_string(), theme.dim, "waiting for a slot".to_string()),
        SubagentStatus::Running => (
            spinner(now, pane.started).to_string(),
            theme.accent,
            match &pane.tool {
                Some(tool) => format!("running {tool}"),
                None => "thinking".to_string(),
            },
        ),
        SubagentStatus::Done => ("✓".to_string(), theme.success, "done".to_string()),
        SubagentStatus::Failed => (
            "✗".to_string(),
            theme.error,
            match &pane.end {
                Some(TurnEnd::Interrupted) => "interrupted".to_string(),
                Some(TurnEnd::Aborted) => "aborted".to_string(),
                _ => "failed".to_string(),
            },
        ),
    };
    let time = pane
        .elapsed
        .unwrap_or_else(|| now.saturating_duration_since(pane.started));
    let tokens = pane.usage.input_tokens + pane.usage.output_tokens;
    let mut facts = vec![
        state,
        format!("{} step{}", pane.steps, if pane.steps == 1 { "" } else { "s" }),
        format!("{} tokens", short(tokens)),
        elapsed(time),
    ];
    if !pane.wait && pane.delivered {
        facts.push("reported".into());
    }
    let header = Line::from(vec![
        Span::styled(format!("{mark} "), style),
        Span::styled("subagent ", theme.dim),
        Span::styled(pane.label.clone(), theme.tool_name),
        Span::styled(format!("  {}", facts.join(" · ")), theme.dim),
    ]);
    let mut out = wrap_line(header, width, "  ");
    let task = pane.task.lines().next().unwrap_or_default();
    out.extend(wrap_line(
        Line::from(Span::styled(format!("  task: {task}"), theme.dim)),
        width,
        "    ",
    ));
    if let Some(result) = &pane.result {
        let first = result.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
        let first: String = first.chars().take(200).collect();
        out.extend(wrap_line(
            Line::from(vec![
                Span::styled("  ⎿ ".to_string(), theme.dim),
                Span::styled(first, theme.text),
            ]),
            width,
            "    ",
        ));
    }
    out
}

fn short(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// A subagent's transcript in place of the main one, read-only and live while it runs: the same transcript view over
/// the subagent's own state. Esc (or the key that opened it) goes back; the scroll keys scroll it; anything else
/// goes on to the composer, so the user can type meanwhile. Approval prompts still come up over it.
pub(crate) struct SubagentViewer {
    pub(crate) id: String,
    transcript: TranscriptView,
}

/// What the viewer did with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ViewerKey {
    Close,
    Consumed,
    Ignored,
}

impl SubagentViewer {
    pub(crate) fn new(id: String) -> Self {
        Self {
            id,
            transcript: TranscriptView::new(),
        }
    }

    pub(crate) fn handle_key(&mut self, key: KeyEvent, keymap: &Keymap) -> ViewerKey {
        if key.code == KeyCode::Esc {
            return ViewerKey::Close;
        }
        match keymap.action(&key) {
            Some(Action::ToggleCall) => ViewerKey::Close,
            Some(Action::PageUp) => self.scrolled(|t| t.page_up()),
            Some(Action::PageDown) => self.scrolled(|t| t.page_down()),
            Some(Action::LineUp) => self.scrolled(|t| t.scroll_up(1)),
            Some(Action::LineDown) => self.scrolled(|t| t.scroll_down(1)),
            Some(Action::Top) if key.modifiers.contains(KeyModifiers::CONTROL) => self.scrolled(|t| t.scroll_to_top()),
            Some(Action::Bottom) if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.scrolled(|t| t.scroll_to_bottom())
            }
            _ => ViewerKey::Ignored,
        }
    }

    fn scrolled(&mut self, scroll: impl FnOnce(&mut TranscriptView)) -> ViewerKey {
        scroll(&mut self.transcript);
        ViewerKey::Consumed
    }

    /// Draws the subagent's transcript under a title line; `false` when the session has no such subagent (the main
    /// transcript is drawn instead).
    pub(crate) fn render(&mut self, frame: &mut Frame<'_>, area: Rect, state: &AppState, theme: &Theme) -> bool {
        let Some(subagent) = state.subagents.get(&self.id) else {
            return false;
        };
        if area.height < 2 {
            return false;
        }
        let pane = state.cells.iter().find_map(|c| match &c.kind {
            CellKind::Subagent(p) if p.id == self.id => Some(p),
            _ => None,
        });
        let mut title = vec![Span::styled(" subagent ", theme.dim)];
        if let Some(pane) = pane {
            title.push(Span::styled(pane.label.clone(), theme.tool_name));
            let state = match pane.status {
                SubagentStatus::Queued => "waiting for a slot",
                SubagentStatus::Running => "running",
                SubagentStatus::Done => "done",
                SubagentStatus::Failed => "stopped",
            };
            title.push(Span::styled(format!(" · {state}"), theme.dim));
        }
        title.push(Span::styled(" · read-only · Esc back", theme.dim));
        let title_area = Rect { height: 1, ..area };
        frame.render_widget(Paragraph::new(Line::from(title)).style(theme.status_bar), title_area);
        let body = Rect {
            y: area.y + 1,
            height: area.height - 1,
            ..area
        };
        self.transcript.render(frame, body, &subagent.view, theme, false);
        true
    }
}
