//! The status bar: model, mode, tokens used and context left, cost where the price is known, what is running, and
//! key hints.

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::tool_pane::spinner;
use crate::tui::state::Status;
use crate::tui::theme::Theme;
use crate::tui::wrap::width as text_width;
use crate::units::{duration, elapsed};

/// How long a flash message stays.
const FLASH: Duration = Duration::from_secs(4);

/// USD per million tokens (input, output) for models whose price is public; others show no cost.
const PRICES: &[(&str, f64, f64)] = &[
    ("gpt-4.1-mini", 0.4, 1.6),
    ("gpt-4.1-nano", 0.1, 0.4),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4o-mini", 0.15, 0.6),
    ("gpt-4o", 2.5, 10.0),
    ("o4-mini", 1.1, 4.4),
    ("claude-opus-4", 15.0, 75.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-haiku-4", 1.0, 5.0),
];

pub fn cost(model: &str, input: u64, output: u64) -> Option<f64> {
    let (_, i, o) = PRICES.iter().find(|(prefix, _, _)| model.starts_with(prefix))?;
    Some((input as f64 * i + output as f64 * o) / 1_000_000.0)
}

fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

pub fn render(frame: &mut Frame<'_>, area: Rect, status: &Status, context_window: u64, theme: &Theme, hints: &str) {
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
    if let Some((text, at)) = &status.flash
        && now.saturating_duration_since(*at) < FLASH
    {
        left.push(Span::styled(format!("{text} "), theme.warning));
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
    let used = status.last_usage.input_tokens + status.last_usage.output_tokens;
    if used > 0 {
        let left_pct = 100u64.saturating_sub(used.saturating_mul(100) / context_window.max(1));
        right.push((
            3,
            Span::styled(
                format!(
                    " · {} tokens",
                    tokens(status.usage.input_tokens + status.usage.output_tokens)
                ),
                theme.status_bar,
            ),
        ));
        right.push((
            2,
            Span::styled(format!(" · {left_pct}% context left"), theme.status_bar),
        ));
    }
    if let Some(usd) = cost(&model, status.usage.input_tokens, status.usage.output_tokens) {
        right.push((4, Span::styled(format!(" · ${usd:.2}"), theme.status_bar)));
    }
    right.push((5, Span::styled(format!(" · {hints}"), theme.dim)));
    let left_w: usize = left.iter().map(|s| text_width(&s.content)).sum();
    let width = usize::from(area.width);
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
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_match_by_prefix() {
        assert_eq!(cost("gpt-4.1-mini-2025", 1_000_000, 0), Some(0.4));
        assert_eq!(cost("claude-sonnet-4-5", 1_000_000, 1_000_000), Some(18.0));
        assert_eq!(cost("qwen2.5-coder", 1, 1), None);
        assert_eq!(tokens(12_345), "12.3k");
    }
}
