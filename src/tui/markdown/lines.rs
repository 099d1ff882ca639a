//! Small shaping steps on finished lines: trimming, cutting to a width, and the conversions wrapping needs.

use ratatui::text::{Line, Span};

use crate::wrap;

/// Drops the spaces a wrapped prose line ends with (the break fell after them).
pub(super) fn trim_end(mut line: Line<'static>) -> Line<'static> {
    while let Some(last) = line.spans.last_mut() {
        let trimmed = last.content.trim_end_matches(' ');
        if trimmed.is_empty() {
            line.spans.pop();
        } else {
            if trimmed.len() < last.content.len() {
                last.content = trimmed.to_string().into();
            }
            break;
        }
    }
    line
}

/// Tabs in prose become four spaces (a terminal cell grid has no tab stops of its own).
pub(super) fn expand_tabs(text: &str) -> String {
    text.replace('\t', "    ")
}

/// A width for `wrap`, which counts in u16 cells.
pub(super) fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Cuts a line to `width` cells: the last guard for containers nested deeper than the width allows.
pub(super) fn fit(line: Line<'static>, width: usize) -> Line<'static> {
    let total: usize = line.spans.iter().map(|s| wrap::width(&s.content)).sum();
    if total <= width {
        return line;
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for span in line.spans {
        let w = wrap::width(&span.content);
        if used + w <= width {
            used += w;
            spans.push(span);
            continue;
        }
        let mut cut = String::new();
        for ch in span.content.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + cw > width {
                break;
            }
            cut.push(ch);
            used += cw;
        }
        if !cut.is_empty() {
            spans.push(Span::styled(cut, span.style));
        }
        break;
    }
    Line { spans, ..line }
}
