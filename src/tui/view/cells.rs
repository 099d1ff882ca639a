//! How each transcript cell renders itself into lines for a width. Pure functions of state: the transcript caches
//! their output per (cell revision, width).

use std::time::Instant;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::tool_pane;
use crate::composer::attach::strip_blocks;
use crate::markdown::render_markdown;
use crate::state::calls::{CallStatus, ToolCallState};
use crate::state::processes::Processes;
use crate::state::{Cell, CellKind, Level};
use crate::theme::Theme;
use crate::wrap::wrap_line;

/// Columns reserved left of every cell (the selection marker and a space).
pub(crate) const GUTTER: u16 = 2;

/// Renders one cell at `width` (the whole transcript width; the gutter is added here).
pub fn render_cell(
    cell: &Cell,
    calls: &[ToolCallState],
    processes: &Processes,
    width: u16,
    theme: &Theme,
    selected_call: Option<usize>,
) -> Vec<Line<'static>> {
    let inner = width.saturating_sub(GUTTER).max(8);
    let mut lines = match &cell.kind {
        // Attached files show as their chips in the text, not whole.
        CellKind::User(text) => user(strip_blocks(text), inner, theme),
        CellKind::Assistant { text, .. } => render_markdown(text, inner, theme),
        CellKind::Reasoning {
            text,
            streaming,
            expanded,
        } => reasoning(text, *streaming, *expanded, inner, theme),
        CellKind::Tools(group) => {
            let mut lines = tool_pane::render_group(group, calls, inner, theme, selected_call, Instant::now());
            lines.extend(live_panes(group, calls, processes, inner, theme));
            lines
        }
        CellKind::Notice { text, level } => notice(text, *level, inner, theme),
        CellKind::Subagent(pane) => super::subagent::render(pane, inner, theme, Instant::now()),
    };
    let marked = match &cell.kind {
        CellKind::Tools(group) => selected_call.is_some_and(|s| group.contains(&s)),
        _ => false,
    };
    frame_lines(&mut lines, marked, theme);
    lines
}

/// The panes of the live processes the calls of `group` started.
fn live_panes(
    group: &[usize],
    calls: &[ToolCallState],
    processes: &Processes,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if processes.is_empty() {
        return Vec::new();
    }
    group
        .iter()
        .filter_map(|&i| calls.get(i))
        .filter_map(|call| processes.of_call(&call.call_id))
        .flat_map(|process| super::live_screen::pane(process, width, theme))
        .collect()
}

/// Adds the gutter (a selection marker or blank) before each line and the blank line after a cell.
pub(crate) fn frame_lines(lines: &mut Vec<Line<'static>>, marked: bool, theme: &Theme) {
    let gutter = if marked {
        Span::styled("▌ ", theme.accent)
    } else {
        Span::raw("  ")
    };
    for line in lines.iter_mut() {
        line.spans.insert(0, gutter.clone());
    }
    lines.push(Line::default());
}

/// Where a streaming answer's finished blocks end: after the last blank line outside a code fence. Everything before
/// it renders the same however the answer goes on, so it need not be laid out again for each new token.
#[cfg(test)]
pub(crate) fn stable_split(text: &str) -> usize {
    let mut in_fence = false;
    let mut split = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        } else if !in_fence && trimmed.trim().is_empty() && line.ends_with('\n') {
            split = offset;
        }
    }
    split
}

/// Whether a cell must be drawn fresh every frame (its running timer or spinner moves without a revision change).
pub(crate) fn is_live(cell: &Cell, calls: &[ToolCallState]) -> bool {
    match &cell.kind {
        CellKind::Tools(group) => group
            .iter()
            .any(|&i| calls.get(i).is_some_and(|c| c.status == CallStatus::Running)),
        CellKind::Subagent(pane) => matches!(
            pane.status,
            crate::state::subagents::SubagentStatus::Running | crate::state::subagents::SubagentStatus::Queued
        ),
        _ => false,
    }
}

fn user(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let prefix = if i == 0 { "› " } else { "  " };
        let line = Line::from(vec![
            Span::styled(prefix.to_string(), theme.user),
            Span::styled(line.to_string(), theme.user),
        ]);
        out.extend(wrap_line(line, width, "  "));
    }
    if out.is_empty() {
        out.push(Line::from(Span::styled("›", theme.user)));
    }
    out
}

fn reasoning(text: &str, streaming: bool, expanded: bool, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let words = text.split_whitespace().count();
    let label = if streaming { "Thinking…" } else { "Thought" };
    let arrow = if expanded { "▾" } else { "▸" };
    let mut out = vec![Line::from(vec![
        Span::styled(format!("{arrow} {label} "), theme.reasoning),
        Span::styled(
            format!("({words} words · Ctrl+R to {})", if expanded { "fold" } else { "show" }),
            theme.dim,
        ),
    ])];
    if expanded {
        // Markdown, as the model wrote it, behind a dim bar that says whose thoughts these are.
        for mut line in render_markdown(text, width.saturating_sub(2).max(8), theme) {
            for span in &mut line.spans {
                span.style = span.style.add_modifier(Modifier::ITALIC);
            }
            line.spans.insert(0, Span::styled("│ ", theme.reasoning));
            out.push(line);
        }
    }
    out
}

fn notice(text: &str, level: Level, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let (mark, style): (&str, Style) = match level {
        Level::Info => ("•", theme.dim),
        Level::Warning => ("!", theme.warning),
        Level::Error => ("✗", theme.error),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let prefix = if i == 0 { format!("{mark} ") } else { "  ".into() };
        out.extend(wrap_line(
            Line::from(Span::styled(format!("{prefix}{line}"), style)),
            width,
            "  ",
        ));
    }
    out
}
