//! Tool-call panes: a header with the tool, its key argument and its status; the live tail of a running command; a
//! one-line summary when done, or the diff of an edit; the full result when expanded. Parallel read-only calls render
//! as one group.

use std::time::Instant;

use ratatui::text::{Line, Span};

use super::output_line;
pub(crate) use super::summary::summary;
use super::summary::{call_label, exec_tail, more_lines};
use crate::diff::{DiffOptions, render_diff};
use crate::state::calls::{CallStatus, ToolCallState};
use crate::state::output::StyledLine;
use crate::theme::Theme;
use crate::wrap::{truncate, truncate_spans, width as text_width, wrap_line};
use tern_protocol::{DiagnosticCount, ToolDetails, ToolKind, ToolOutput};
pub(crate) use tern_text::units::{duration, elapsed};

/// Live output lines shown under a running command.
const LIVE_LINES: usize = 6;
/// Diff lines shown before folding.
const DIFF_LINES: usize = 30;
/// Result lines shown when a pane is expanded (the history browser shows everything).
const EXPANDED_LINES: usize = 400;

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub(crate) fn spinner(now: Instant, since: Instant) -> &'static str {
    let frame = (now.saturating_duration_since(since).as_millis() / 80) as usize;
    SPINNER[frame % SPINNER.len()]
}

pub(crate) fn render_group(
    group: &[usize],
    calls: &[ToolCallState],
    width: u16,
    theme: &Theme,
    selected: Option<usize>,
    now: Instant,
) -> Vec<Line<'static>> {
    let members: Vec<(usize, &ToolCallState)> = group.iter().filter_map(|&i| calls.get(i).map(|c| (i, c))).collect();
    if let [(index, call)] = members.as_slice() {
        return render_call(call, width, theme, selected == Some(*index), now);
    }
    let running = members.iter().filter(|(_, c)| c.status == CallStatus::Running).count();
    let mut out = vec![Line::from(vec![
        Span::styled("● ", theme.tool_name),
        Span::styled(format!("{} parallel reads", members.len()), theme.tool_name),
        Span::styled(
            if running > 0 {
                format!("  {running} running")
            } else {
                String::new()
            },
            theme.dim,
        ),
    ])];
    for (_, call) in members {
        let mut line = vec![
            Span::raw("  "),
            status_mark(call, theme, now),
            Span::raw(" "),
            Span::styled(call.name.clone(), theme.tool_name),
            Span::raw(" "),
            Span::styled(call_label(call), theme.text),
        ];
        if let Some(summary) = call.output.as_ref().map(summary) {
            line.push(Span::styled(format!(" — {summary}"), theme.dim));
        }
        out.extend(wrap_line(Line::from(line), width, "    "));
        if call.expanded {
            out.extend(body(call, width, theme));
        }
    }
    out
}

pub(crate) fn render_call(
    call: &ToolCallState,
    width: u16,
    theme: &Theme,
    _selected: bool,
    now: Instant,
) -> Vec<Line<'static>> {
    let mut out = header(call, width, theme, now);
    match call.status {
        CallStatus::Running => {
            let partial = (!call.live_partial.is_empty()).then(|| call.live_partial());
            let mut shown: Vec<&StyledLine> = call.live.iter().rev().take(LIVE_LINES).collect();
            shown.reverse();
            shown.extend(partial.as_ref());
            let start = shown.len().saturating_sub(LIVE_LINES);
            for line in &shown[start..] {
                let mut spans = vec![Span::styled("  │ ", theme.border)];
                spans.extend(output_line::cut(line, theme.dim, usize::from(width.saturating_sub(4))));
                out.push(Line::from(spans));
            }
        }
        CallStatus::Done | CallStatus::Failed => out.extend(body(call, width, theme)),
    }
    out
}

fn header(call: &ToolCallState, width: u16, theme: &Theme, now: Instant) -> Vec<Line<'static>> {
    let mark = status_mark(call, theme, now);
    let elapsed = match (call.duration, call.waiting) {
        (Some(d), _) => duration(d),
        // No timer while the user decides: the call's time starts with the answer.
        (None, Some(_)) => "waiting for approval".to_string(),
        (None, None) => elapsed(now.saturating_duration_since(call.started)),
    };
    let mut right = format!(" {elapsed}");
    if let Some(ToolOutput {
        details:
            ToolDetails::Exec {
                exit_code,
                timed_out,
                sandboxed,
                background,
                ..
            },
        ..
    }) = &call.output
    {
        // A command that ran outside the OS sandbox says so: the user should see where the floor was missing.
        let outside = if *sandboxed { "" } else { " · unsandboxed" };
        right = match (exit_code, timed_out) {
            // It returned with the process still running: its pane below says how it stands.
            _ if background.is_some() => {
                format!(" started {}{outside} · {elapsed}", background.as_deref().unwrap_or(""))
            }
            (_, true) => format!(" timed out{outside} · {elapsed}"),
            (Some(code), _) => format!(" exit {code}{outside} · {elapsed}"),
            (None, _) => format!(" killed{outside} · {elapsed}"),
        };
    }
    let name_w = text_width(&call.name) + 4;
    let room = usize::from(width).saturating_sub(name_w + text_width(&right) + 1);
    let label = call_label(call);
    let arg = truncate(label.lines().next().unwrap_or(""), room);
    let pad = usize::from(width).saturating_sub(name_w + text_width(&arg) + text_width(&right));
    vec![Line::from(vec![
        mark,
        Span::raw(" "),
        Span::styled(call.name.clone(), theme.tool_name),
        Span::raw("  "),
        Span::styled(arg, theme.text),
        Span::raw(" ".repeat(pad)),
        Span::styled(right, theme.dim),
    ])]
}

fn status_mark(call: &ToolCallState, theme: &Theme, now: Instant) -> Span<'static> {
    match call.status {
        CallStatus::Running => Span::styled(spinner(now, call.started), theme.accent),
        CallStatus::Done => Span::styled("✓", theme.success),
        CallStatus::Failed => Span::styled("✗", theme.error),
    }
}

/// What the language server said of an edited file: `  language server: 2 errors, 1 warning`.
fn diagnostics_line(count: DiagnosticCount, theme: &Theme) -> Line<'static> {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let (text, style) = match (count.errors, count.warnings) {
        (0, 0) => ("no errors or warnings".to_string(), theme.dim),
        (0, w) => (plural(w, "warning"), theme.warning),
        (e, 0) => (plural(e, "error"), theme.error),
        (e, w) => (format!("{}, {}", plural(e, "error"), plural(w, "warning")), theme.error),
    };
    Line::from(vec![
        Span::styled("  language server: ", theme.dim),
        Span::styled(text, style),
    ])
}

/// What a finished call shows under its header.
fn body(call: &ToolCallState, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let Some(output) = &call.output else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let ToolDetails::Diffs { diffs } = &output.details
        && !output.is_error
    {
        let opts = DiffOptions {
            context: 3,
            max_lines: (!call.expanded).then_some(DIFF_LINES),
            fold_hint: Some("Ctrl+O expands, Ctrl+D full screen".into()),
        };
        for diff in diffs {
            for line in render_diff(diff, width.saturating_sub(2), theme, &opts) {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(line.spans);
                out.push(Line::from(spans));
            }
            out.extend(diff.diagnostics.map(|count| diagnostics_line(count, theme)));
        }
        return out;
    }
    if call.expanded {
        let total = output.text.lines().count();
        let style = if output.is_error { theme.error } else { theme.dim };
        for line in output.text.lines().take(EXPANDED_LINES) {
            let mut spans = vec![Span::styled("  │ ", theme.border)];
            match shown_line(call, line) {
                Some(styled) => spans.extend(output_line::spans(&styled, style)),
                None => spans.push(Span::styled(expand_tabs(line), style)),
            }
            out.extend(wrap_line(Line::from(spans), width, "  │ "));
        }
        if total > EXPANDED_LINES {
            out.push(Line::from(Span::styled(
                format!(
                    "  … {} more lines (Ctrl+T opens the history browser)",
                    total - EXPANDED_LINES
                ),
                theme.dim,
            )));
        }
        return out;
    }
    let style = if output.is_error { theme.error } else { theme.dim };
    let room = usize::from(width);
    let mut rows: Vec<(StyledLine, ratatui::style::Style)> = Vec::new();
    let row = |text: &str| shown_line(call, text).unwrap_or_else(|| StyledLine::unstyled(text));
    match exec_tail(output) {
        // A long output folds as Claude Code's does: what was left out, then the last lines. A failure leads with
        // its error line.
        Some((hidden, tail)) => {
            let lead = output.is_error.then(|| summary(output));
            if hidden > 0 {
                rows.push((row(&format!("{} (Ctrl+O expands)", more_lines(hidden))), theme.dim));
            }
            // The error line leads; the tail does not say it twice.
            rows.extend(
                tail.iter()
                    .filter(|l| lead.as_deref() != Some(l.trim()))
                    .map(|l| (row(l), theme.dim)),
            );
            if let Some(lead) = lead {
                rows.insert(0, (row(&lead), style));
            }
        }
        None => rows.push((row(&summary(output)), style)),
    }
    for (i, (line, style)) in rows.into_iter().enumerate() {
        let lead = if i == 0 { "  └ " } else { "    " };
        let mut spans = vec![Span::styled(lead, style)];
        spans.extend(output_line::spans(&line, style));
        out.push(Line::from(truncate_spans(spans, room)));
    }
    out
}

/// A result line of a command as its pane shows it (after carriage returns, with the live output's colours); `None`
/// for other tools, whose text is shown as it is.
fn shown_line(call: &ToolCallState, text: &str) -> Option<StyledLine> {
    (call.kind == ToolKind::Command).then(|| StyledLine::of_result(text, &call.coloured))
}

fn expand_tabs(s: &str) -> String {
    if s.contains('\t') {
        s.replace('\t', "    ")
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests;
