//! The status bar: model, mode, tokens used and context left, cost where the session's prices (from the host) know
//! the price, what is running, and key hints. Prices live in the catalog, not here.

use std::time::Instant;

use ratatui::text::{Line, Span};

use super::tool_pane::spinner;
use crate::state::Status;
use crate::theme::Theme;
use crate::wrap::width as text_width;
use tern_text::units::{duration, elapsed};

fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// The session's tokens: the main agent's and its subagents', with the subagents' share said apart.
fn session_tokens(status: &Status) -> String {
    let main = status.usage.input_tokens + status.usage.output_tokens;
    let sub = status.subagent_usage.input_tokens + status.subagent_usage.output_tokens;
    if sub == 0 {
        format!(" · {} tokens", tokens(main))
    } else {
        format!(" · {} tokens ({} subagents)", tokens(main + sub), tokens(sub))
    }
}

/// The status bar as it shows now on a row `width` columns wide.
pub(crate) fn line(width: u16, status: &Status, context_window: u64, theme: &Theme, hints: &str) -> Line<'static> {
    let now = Instant::now();
    let mut left: Vec<Span<'static>> = Vec::new();
    if status.busy {
        let since = status.turn_started.unwrap_or(now);
        left.push(Span::styled(format!("{} ", spinner(now, since)), theme.accent));
        match &status.retry {
            Some((reason, at)) => {
                let wait = at.saturating_duration_since(now);
                left.push(Span::styled(format!("{reason}, in {} ", duration(wait)), theme.warning));
            }
            None => left.push(Span::styled(
                format!(
                    "working {} · Esc to interrupt ",
                    elapsed(now.saturating_duration_since(since))
                ),
                theme.accent,
            )),
        }
    }
    if let Some(flash) = status.flash.as_ref().filter(|f| f.live(now)) {
        left.push(Span::styled(format!("{} ", flash.text), theme.warning));
    }
    if status.mouse_off {
        // Said on the left, which never gives way: the wheel does nothing until capture is back on.
        left.push(Span::styled("mouse off ", theme.accent));
    }
    let model = if status.model.is_empty() {
        "connecting…".to_string()
    } else {
        status.model.clone()
    };
    // Right-hand parts with a priority: the lowest go first when the bar is too narrow.
    let mut right: Vec<(u8, Span<'static>)> = vec![
        (0, Span::styled(model.clone(), theme.status_bar)),
        (1, Span::styled(format!(" · {}", status.mode), theme.accent)),
    ];
    if let Some(part) = plan_part(status) {
        right.push((2, Span::styled(part, theme.accent)));
    }
    let prompt = status.context_tokens.unwrap_or(status.last_usage.input_tokens);
    let used = prompt + status.last_usage.output_tokens;
    if used > 0 {
        let left_pct = 100u64.saturating_sub(used.saturating_mul(100) / context_window.max(1));
        right.push((3, Span::styled(session_tokens(status), theme.status_bar)));
        right.push((
            2,
            Span::styled(format!(" · {left_pct}% context left"), theme.status_bar),
        ));
    }
    // The catalog prices cache reads and writes apart; a model it does not price shows no cost.
    // Subagents run on the same model: their tokens cost the same.
    let mut spent = status.usage;
    spent.input_tokens += status.subagent_usage.input_tokens;
    spent.output_tokens += status.subagent_usage.output_tokens;
    spent.cache_read_tokens += status.subagent_usage.cache_read_tokens;
    spent.cache_write_tokens += status.subagent_usage.cache_write_tokens;
    if let Some(usd) = status.prices.as_ref().and_then(|prices| prices.cost(&model, &spent)) {
        right.push((4, Span::styled(format!(" · ${usd:.2}"), theme.status_bar)));
    }
    right.push((5, Span::styled(format!(" · {hints}"), theme.dim)));
    let left_w: usize = left.iter().map(|s| text_width(&s.content)).sum();
    let width = usize::from(width);
    loop {
        let right_w: usize = right.iter().map(|(_, s)| text_width(&s.content)).sum();
        if left_w + right_w <= width || right.len() <= 1 {
            break;
        }
        let Some(lowest) = right.iter().enumerate().max_by_key(|(_, (p, _))| *p).map(|(i, _)| i) else {
            break;
        };
        right.remove(lowest);
    }
    let right_w: usize = right.iter().map(|(_, s)| text_width(&s.content)).sum();
    let pad = width.saturating_sub(left_w + right_w);
    let mut spans = left;
    spans.push(Span::raw(" ".repeat(pad)));
    spans.extend(right.into_iter().map(|(_, s)| s));
    Line::from(spans)
}

/// `· 3/7 done` while the model has a plan.
fn plan_part(status: &Status) -> Option<String> {
    let (done, total) = status.plan?;
    Some(format!(" · {done}/{total} done"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(status: &Status, width: u16) -> String {
        let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, 1)).unwrap();
        terminal
            .draw(|f| {
                let area = f.area();
                let line = line(area.width, status, 100_000, &Theme::default(), "? help");
                crate::line::put_line(f.buffer_mut(), area, 0, &line);
            })
            .unwrap();
        terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect()
    }

    #[test]
    fn shows_plan_progress_while_a_plan_exists() {
        let mut status = Status {
            model: "m1".into(),
            ..Status::default()
        };
        assert!(!bar(&status, 80).contains("done"));
        status.plan = Some((3, 7));
        let wide = bar(&status, 80);
        assert!(
            wide.trim_end().ends_with("m1 · auto-edit · 3/7 done · ? help"),
            "{wide}"
        );
        // Narrow: the hints go first, the plan stays with the model and mode.
        let narrow = bar(&status, 30);
        assert!(narrow.contains("3/7 done"), "{narrow}");
        assert!(!narrow.contains("help"), "{narrow}");
    }

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(2_500_000), "2.5M");
        assert_eq!(tokens(999), "999");
    }
}
