//! What the approval prompt shows, as lines for its scrollable body: the whole command (every line, wrapped), or the
//! proposed change as diffs (the content of a new file shows as added lines), with the hunk (or the part of a split
//! hunk) under review marked; then
//! where a command runs; and, under it, why the call asks. Every character of the command bash would act on is shown
//! (`terminal_text::reveal`), and a line in sight says how many were invisible. Pure: request in, lines out.

use ratatui::text::{Line, Span};

use super::hunks::{Choice, HunkReview, Item};
use crate::diff::{Changed, DiffOptions, render_diff_with_hunks};
use crate::theme::Theme;
use crate::wrap::wrap_line;
use tern_protocol::ApprovalRequest;
use tern_text::{one_line, reveal};

/// The body's lines, and the line the view should keep in sight (the hunk under review).
pub(crate) struct Body {
    pub(crate) lines: Vec<Line<'static>>,
    pub(crate) focus: Option<usize>,
}

pub(crate) fn body(request: &ApprovalRequest, review: Option<&HunkReview>, width: u16, theme: &Theme) -> Body {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut focus = None;
    if request.diffs.is_empty() {
        // Split on '\n' alone: `lines()` would also eat a CR before it, which bash reads as part of a word.
        let command = request.command.strip_suffix('\n').unwrap_or(&request.command);
        for (i, line) in command.split('\n').enumerate() {
            let prefix = if i == 0 { "$ " } else { "  " };
            lines.extend(wrap_line(
                Line::from(vec![
                    Span::styled(prefix, theme.accent),
                    Span::styled(reveal(line).0.into_owned(), theme.text),
                ]),
                width,
                "  ",
            ));
        }
        lines.push(Line::from(vec![
            Span::styled("in ", theme.dim),
            Span::styled(one_line(&request.cwd).into_owned(), theme.dim),
        ]));
    } else {
        // A gutter column marks the hunk under review.
        let diff_width = if review.is_some() {
            width.saturating_sub(2)
        } else {
            width
        };
        let current = review.and_then(HunkReview::current_item);
        for (file, diff) in request.diffs.iter().enumerate() {
            let (rendered, starts, changed) = render_diff_with_hunks(diff, diff_width, theme, &DiffOptions::default());
            let mine: Vec<usize> = review
                .map(|r| (0..r.hunks.len()).filter(|&k| r.hunks[k].file == file).collect())
                .unwrap_or_default();
            // The marks only when the view's hunks are the review's hunks (they come from the same diff).
            let marked = review.is_some() && mine.len() == starts.len();
            for (i, line) in rendered.into_iter().enumerate() {
                let Some(r) = review else {
                    lines.push(line);
                    continue;
                };
                let local = starts.iter().rposition(|&s| s <= i);
                let k = local.and_then(|l| mine.get(l).copied()).filter(|_| marked);
                let item = k.and_then(|k| item_at(r, k, changed.get(i).copied().flatten()));
                let is_current = item.is_some() && item == current;
                let mark = match item.map(|item| r.choice(item)) {
                    _ if is_current => Span::styled("▌ ", theme.accent),
                    Some(Some(Choice::Accept)) => Span::styled("✓ ", theme.success),
                    Some(Some(Choice::Edited(_))) => Span::styled("✎ ", theme.success),
                    Some(Some(Choice::Reject)) => Span::styled("✗ ", theme.error),
                    _ => Span::raw("  "),
                };
                if is_current && focus.is_none() {
                    focus = Some(lines.len());
                }
                let mut spans = vec![mark];
                spans.extend(line.spans);
                lines.push(Line::from(spans));
            }
        }
    }
    Body { lines, focus }
}

/// What a line of hunk `k` belongs to: the hunk, or, once it is split, the part whose changed line it draws (its
/// unchanged lines belong to no part).
fn item_at(review: &HunkReview, k: usize, changed: Option<Changed>) -> Option<Item> {
    if !review.is_split(k) {
        return Some(Item { hunk: k, part: None });
    }
    let parts = &review.hunks.get(k)?.parts;
    let part = parts.iter().position(|p| match changed {
        Some(Changed::Removed(n)) => p.old.contains(&n),
        Some(Changed::Added(n)) => p.new.contains(&n),
        None => false,
    })?;
    Some(Item {
        hunk: k,
        part: Some(part),
    })
}

/// Why the call asks: one line under the body, always in sight. Above it, when the command holds characters a person
/// would not see as bash reads them, how many and how they are shown.
pub(crate) fn why(request: &ApprovalRequest, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let hidden = if request.diffs.is_empty() {
        reveal(&request.command).1
    } else {
        0
    };
    if hidden > 0 {
        let noun = if hidden == 1 { "character" } else { "characters" };
        let text = format!(
            "⚠ this command contains {hidden} invisible or control {noun}, shown as symbols (␛ escape, ␉ tab, \
             ␍ return) or \\u{{code}}"
        );
        lines.extend(wrap_line(Line::from(Span::styled(text, theme.error)), width, "  "));
    }
    lines.extend(wrap_line(
        Line::from(vec![
            Span::styled("why: ", theme.dim),
            Span::styled(request.reason.clone(), theme.warning),
        ]),
        width,
        "     ",
    ));
    lines
}
