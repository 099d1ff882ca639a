//! The plan pane: the model's checklist (`todo_write`) docked above the composer, one pane that changes in place as
//! the model rewrites its plan. It shows while some step is unfinished (the status bar keeps `n/m done` after), and
//! takes at most a few rows: a long plan shows a window around the step in progress.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::state::plan::PlanState;
use crate::theme::Theme;
use crate::wrap;
use tern_protocol::{PlanItem, PlanStatus, plan_progress};

/// The most rows the pane takes, its title included.
pub(crate) const MAX_ROWS: u16 = 8;

/// The pane's height in a screen with `available` rows for the transcript and the pane together: 0 when there is no
/// unfinished plan, or no room to show it beside a useful transcript.
pub(crate) fn height(plan: &PlanState, available: u16) -> u16 {
    if !plan.is_open() {
        return 0;
    }
    let want = u16::try_from(plan.items().len() + 1).unwrap_or(u16::MAX);
    let cap = MAX_ROWS.min(available / 3);
    if cap < 2 { 0 } else { want.min(cap) }
}

pub(crate) fn render(frame: &mut Frame<'_>, area: Rect, plan: &PlanState, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let lines = lines(plan.items(), area.width, area.height, theme);
    frame.render_widget(Paragraph::new(lines), area);
}

/// The title and as many steps as fit in `height` rows.
pub(crate) fn lines(items: &[PlanItem], width: u16, height: u16, theme: &Theme) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let (done, total) = plan_progress(items);
    let title = format!("─ Plan · {done}/{total} done ");
    let fill = "─".repeat(width.saturating_sub(wrap::width(&title)));
    let mut lines = vec![Line::from(vec![
        Span::styled("─ ", theme.border),
        Span::styled("Plan", theme.accent.add_modifier(Modifier::BOLD)),
        Span::styled(format!(" · {done}/{total} done "), theme.dim),
        Span::styled(fill, theme.border),
    ])];
    let slots = usize::from(height.saturating_sub(1));
    let focus = items
        .iter()
        .position(|i| i.status == PlanStatus::InProgress)
        .or_else(|| items.iter().position(|i| i.status != PlanStatus::Completed))
        .unwrap_or(0);
    let shown = window(items.len(), focus, slots);
    // Below three rows there is no room to say what is hidden.
    let marks = slots >= 3;
    if marks && shown.start > 0 {
        lines.push(Line::styled(format!("  … {} earlier", shown.start), theme.dim));
    }
    for item in &items[shown.start..shown.end] {
        lines.push(step(item, width, theme));
    }
    if marks && shown.end < items.len() {
        lines.push(Line::styled(format!("  … {} more", items.len() - shown.end), theme.dim));
    }
    lines
}

fn step(item: &PlanItem, width: usize, theme: &Theme) -> Line<'static> {
    let (mark, mark_style, text_style) = match item.status {
        PlanStatus::Completed => ("☑", theme.success, theme.dim.add_modifier(Modifier::CROSSED_OUT)),
        PlanStatus::InProgress => ("◐", theme.accent, theme.text.add_modifier(Modifier::BOLD)),
        PlanStatus::Pending => ("☐", theme.dim, theme.text),
    };
    let content = wrap::truncate(&item.content, width.saturating_sub(4));
    Line::from(vec![
        Span::raw("  "),
        Span::styled(mark, mark_style),
        Span::raw(" "),
        Span::styled(content, text_style),
    ])
}

/// Which steps fit in `slots` rows, and whether a row says how many are hidden before or after them.
#[derive(Debug, PartialEq, Eq)]
struct Window {
    start: usize,
    end: usize,
}

/// Steps `start..end` of `len`, with the focused step and the one before it in view. A hidden run before `start` or
/// after `end` costs a row for its "… n" line.
fn window(len: usize, focus: usize, slots: usize) -> Window {
    if len <= slots {
        return Window { start: 0, end: len };
    }
    if slots < 3 {
        let start = focus.min(len.saturating_sub(slots));
        return Window {
            start,
            end: start + slots,
        };
    }
    // The step before the focus too, when that still leaves room for the focus between two "…" rows.
    let start = if slots >= 4 { focus.saturating_sub(1) } else { focus };
    let above = usize::from(start > 0);
    let end = start + slots - above - 1;
    if end < len {
        Window { start, end }
    } else {
        // The window reaches the last step: no "more" row, one "earlier" row.
        Window {
            start: len - (slots - 1),
            end: len,
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::state::AppState;
    use tern_protocol::Event;

    fn plan(statuses: &[PlanStatus]) -> Vec<PlanItem> {
        let names = [
            "Read the config loader and its tests",
            "Add the [web] section with allowed hosts",
            "Refuse private addresses after every redirect",
            "Write the SSRF tests against 127.0.0.1",
            "Document the new settings in the README",
            "Run clippy and the whole suite",
            "Update the changelog",
            "Ask for a review",
            "Tag the release",
            "Announce it",
        ];
        statuses
            .iter()
            .zip(names)
            .map(|(&status, content)| PlanItem {
                content: content.into(),
                status,
            })
            .collect()
    }

    fn state_with(items: Vec<PlanItem>) -> AppState {
        let mut state = AppState::new();
        state.apply(Event::PlanUpdated { items });
        state
    }

    fn draw(state: &AppState, (w, h): (u16, u16)) -> TestBackend {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal
            .draw(|f| {
                let rows = height(&state.plan, 3 * h);
                render(
                    f,
                    Rect {
                        height: rows,
                        ..f.area()
                    },
                    &state.plan,
                    &Theme::default(),
                )
            })
            .unwrap();
        terminal.backend().clone()
    }

    use PlanStatus::{Completed as C, InProgress as I, Pending as P};

    #[test]
    fn snapshot_plan_in_progress() {
        let state = state_with(plan(&[C, C, I, P, P]));
        insta::assert_snapshot!("plan_in_progress_80x6", draw(&state, (80, 6)));
        insta::assert_snapshot!("plan_in_progress_40x6", draw(&state, (40, 6)));
    }

    #[test]
    fn snapshot_long_plan_shows_a_window() {
        let state = state_with(plan(&[C, C, C, C, C, I, P, P, P, P]));
        insta::assert_snapshot!("plan_window_80x8", draw(&state, (80, 8)));
    }

    #[test]
    fn marks_and_styles_say_the_status() {
        let theme = Theme::default();
        let lines = lines(&plan(&[C, I, P]), 60, 4, &theme);
        let marks: Vec<&str> = lines[1..].iter().map(|l| l.spans[1].content.as_ref()).collect();
        assert_eq!(marks, ["☑", "◐", "☐"]);
        assert!(lines[1].spans[3].style.add_modifier.contains(Modifier::CROSSED_OUT));
        assert!(lines[2].spans[3].style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn the_pane_hides_when_done_or_cramped() {
        let done = state_with(plan(&[C, C]));
        assert_eq!(height(&done.plan, 40), 0);
        let open = state_with(plan(&[C, I, P]));
        assert_eq!(height(&open.plan, 40), 4);
        assert_eq!(height(&open.plan, 9), 3);
        assert_eq!(height(&open.plan, 5), 0);
        let long = state_with(plan(&[P; 10]));
        assert_eq!(height(&long.plan, 100), MAX_ROWS);
        assert_eq!(height(&AppState::new().plan, 40), 0);
    }

    #[test]
    fn windows_keep_the_focus_in_view() {
        assert_eq!(window(3, 1, 5), Window { start: 0, end: 3 });
        // From the top: steps 0..3 and "… 7 more".
        assert_eq!(window(10, 0, 4), Window { start: 0, end: 3 });
        // In the middle: "… 4 earlier", steps 4..6, "… 4 more".
        assert_eq!(window(10, 5, 4), Window { start: 4, end: 6 });
        // At the end: "… 7 earlier", steps 7..10.
        assert_eq!(window(10, 9, 4), Window { start: 7, end: 10 });
        assert_eq!(window(10, 9, 2), Window { start: 8, end: 10 });
        for len in 1..12 {
            for slots in 1..12 {
                for focus in 0..len {
                    let w = window(len, focus, slots);
                    let rows = (w.end - w.start)
                        + usize::from(w.start > 0 && slots >= 3)
                        + usize::from(w.end < len && slots >= 3);
                    assert!(rows <= slots.max(1), "len {len} slots {slots} focus {focus}: {w:?}");
                    assert!(
                        w.start <= focus && focus < w.end,
                        "len {len} slots {slots} focus {focus}: {w:?}"
                    );
                }
            }
        }
    }
}
