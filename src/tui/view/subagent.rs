//! A subagent's pane in the transcript: a header with its label, state, current tool, model requests, tokens and
//! time, the first line of its task, and when it is done the first line of its report. Enter or Ctrl+O on the pane
//! (it is selectable like a tool pane) opens its transcript (`SubagentLayer`).

use std::time::Instant;

use ratatui::text::{Line, Span};

use super::tool_pane::spinner;
use crate::protocol::TurnEnd;
use crate::tui::state::subagents::{SubagentPane, SubagentStatus};
use crate::tui::theme::Theme;
use crate::tui::wrap::wrap_line;
use crate::units::elapsed;

pub fn render(pane: &SubagentPane, width: u16, theme: &Theme, now: Instant) -> Vec<Line<'static>> {
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
