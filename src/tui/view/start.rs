//! The start screen: what a person sees before the first message — the workspace, the model, the approval mode, the
//! instruction files and MCP servers the session loaded, and the keys to begin with. It gives way to the transcript
//! with the first message. Drawing only: what it shows is gathered at start-up (`StartInfo`) and from the state.

use ratatui::text::{Line, Span};

use crate::keymap::{Action, Keymap};
use crate::state::{AppState, CellKind, Status};
use crate::theme::Theme;
use crate::wrap::{truncate, width as text_width};
use tern_protocol::ApprovalMode;
use tern_protocol::mcp::{ServerState, ServerStatus};

/// What the start screen knows beyond the state: gathered once when the UI starts.
#[derive(Debug, Clone, Default)]
pub(crate) struct StartInfo {
    /// The instruction files (AGENTS.md, CLAUDE.md) the session's prompt carries, as paths.
    pub(crate) context_files: Vec<String>,
    /// The repository root, when the workspace is below it: the project's files are read from there down.
    pub(crate) project_root: Option<String>,
    /// The custom agents the session offers, by name.
    pub(crate) agents: Vec<String>,
}

/// Whether the screen shows the start screen: nothing of a conversation yet (notices may be there), and nothing asks.
pub(crate) fn shown(state: &AppState) -> bool {
    !state.status.busy
        && state.approvals.is_empty()
        && state.elicitations.is_empty()
        && state.cells.iter().all(|c| matches!(c.kind, CellKind::Notice { .. }))
}

/// The label column's width.
const LABEL_W: usize = 11;

/// The start screen's lines for `width` cells.
pub(crate) fn lines(
    status: &Status,
    info: &StartInfo,
    servers: &[ServerStatus],
    keymap: &Keymap,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let room = usize::from(width).saturating_sub(2 + LABEL_W + 1).max(10);
    let mut out = vec![
        Line::default(),
        Line::from(vec![
            Span::styled("  tern", theme.heading),
            Span::styled("  a coding assistant in your terminal", theme.dim),
        ]),
        Line::default(),
    ];
    out.push(row(
        "workspace",
        vec![Span::styled(truncate(&status.workspace, room), theme.text)],
        theme,
    ));
    if let Some(root) = &info.project_root {
        out.push(row(
            "project",
            vec![
                Span::styled(truncate(root, room.saturating_sub(30)), theme.text),
                Span::styled("  settings read from here down", theme.dim),
            ],
            theme,
        ));
    }
    out.extend(model_rows(status, room, theme));
    out.push(row(
        "mode",
        vec![
            Span::styled(status.mode.to_string(), theme.text),
            Span::styled(format!("  {}", mode_words(status.mode)), theme.dim),
        ],
        theme,
    ));
    out.push(row(
        "context",
        context_spans(info, &status.workspace, room, theme),
        theme,
    ));
    if !info.agents.is_empty() {
        let names = truncate(&info.agents.join(", "), room);
        out.push(row("agents", vec![Span::styled(names, theme.text)], theme));
    }
    out.push(row("MCP", mcp_spans(servers, room, theme), theme));
    out.push(Line::default());
    let hints = [
        ("Enter".to_string(), "send"),
        ("Shift+Enter".to_string(), "newline"),
        ("/".to_string(), "commands"),
        ("@".to_string(), "files"),
        (keymap.hint(Action::History), "history"),
        (keymap.hint(Action::Help), "help"),
        (keymap.hint(Action::Quit), "quit"),
    ];
    out.extend(hint_lines(&hints, usize::from(width), theme));
    // A gap before the notices below.
    out.push(Line::default());
    out
}

/// One row of the screen: `label` in the label column, then `value`.
fn row(label: &str, value: Vec<Span<'static>>, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(format!("  {label:<LABEL_W$} "), theme.dim)];
    spans.extend(value);
    Line::from(spans)
}

/// The model row: the model and its provider, or, when none is configured, how to get one.
fn model_rows(status: &Status, room: usize, theme: &Theme) -> Vec<Line<'static>> {
    if status.model.is_empty() {
        let mut out = vec![row(
            "model",
            vec![Span::styled("none configured", theme.warning)],
            theme,
        )];
        for hint in [
            "try it with `tern --demo` (a scripted model, no key needed), or",
            "export OPENAI_API_KEY or ANTHROPIC_API_KEY, or set provider and",
            "model in ~/.config/tern/config.toml, or run `ollama serve`",
        ] {
            out.push(row("", vec![Span::styled(truncate(hint, room), theme.dim)], theme));
        }
        out
    } else {
        let provider = if status.provider.is_empty() {
            String::new()
        } else {
            format!("  {}", status.provider)
        };
        vec![row(
            "model",
            vec![
                Span::styled(truncate(&status.model, room), theme.text),
                Span::styled(provider, theme.dim),
            ],
            theme,
        )]
    }
}

/// The instruction files the session loaded, relative to `workspace` (or `~`) where they are inside it.
fn context_spans(info: &StartInfo, workspace: &str, room: usize, theme: &Theme) -> Vec<Span<'static>> {
    if info.context_files.is_empty() {
        return vec![Span::styled("no AGENTS.md (/init writes one)", theme.dim)];
    }
    let home = std::env::home_dir().map(|h| h.display().to_string());
    let short = |path: &str| -> String {
        match path.strip_prefix(&format!("{workspace}/")) {
            Some(inside) if !workspace.is_empty() => inside.to_string(),
            _ => match home.as_deref().and_then(|h| path.strip_prefix(h)) {
                Some(rest) if rest.starts_with('/') => format!("~{rest}"),
                _ => path.to_string(),
            },
        }
    };
    let names: Vec<String> = info.context_files.iter().map(|f| short(f)).collect();
    vec![Span::styled(truncate(&names.join(", "), room), theme.text)]
}

/// What each mode means, in a few words.
fn mode_words(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "reads only; nothing is changed or run",
        ApprovalMode::Ask => "edits and commands ask first",
        ApprovalMode::AutoEdit => "edits apply, commands ask",
        ApprovalMode::FullAuto => "nothing asks",
    }
}

/// The servers, each with a mark for its state: `docs ✓ 3 tools · web … starting · fs ✗ failed`.
fn mcp_spans(servers: &[ServerStatus], room: usize, theme: &Theme) -> Vec<Span<'static>> {
    if servers.is_empty() {
        return vec![Span::styled("none", theme.dim)];
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for (i, server) in servers.iter().enumerate() {
        let (mark, words, style) = match &server.state {
            ServerState::Ready { tools, .. } => (
                "✓",
                format!("{tools} {}", if *tools == 1 { "tool" } else { "tools" }),
                theme.success,
            ),
            ServerState::Connecting => ("…", "starting".to_string(), theme.dim),
            ServerState::Disabled => ("-", "disabled".to_string(), theme.dim),
            ServerState::Disconnected { .. } => ("!", "disconnected".to_string(), theme.warning),
            ServerState::Failed { .. } if server.skipped => ("✗", "not started".to_string(), theme.warning),
            ServerState::Failed { .. } => ("✗", "failed".to_string(), theme.error),
        };
        let sep = if i == 0 { "" } else { " · " };
        let piece = format!("{sep}{} {mark} {words}", server.name);
        if used + text_width(&piece) > room {
            spans.push(Span::styled(format!(" +{} more (/mcp)", servers.len() - i), theme.dim));
            break;
        }
        used += text_width(&piece);
        spans.push(Span::styled(format!("{sep}{} ", server.name), theme.text));
        spans.push(Span::styled(format!("{mark} {words}"), style));
    }
    spans
}

/// Key hints laid out over as many lines as `width` needs.
fn hint_lines(hints: &[(String, &str)], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut spans: Vec<Span<'static>> = vec![Span::raw("  ")];
    let mut used = 2;
    for (key, what) in hints {
        let w = text_width(key) + 1 + text_width(what) + 3;
        if used + w > width && spans.len() > 1 {
            out.push(Line::from(std::mem::replace(&mut spans, vec![Span::raw("  ")])));
            used = 2;
        }
        spans.push(Span::styled(key.clone(), theme.accent));
        spans.push(Span::styled(format!(" {what}   "), theme.dim));
        used += w;
    }
    if spans.len() > 1 {
        out.push(Line::from(spans));
    }
    out
}
