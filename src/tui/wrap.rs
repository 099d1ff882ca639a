//! Wrapping styled lines to a width in terminal cells (CJK and emoji count two), breaking at spaces where it can and
//! inside words only when a word is wider than the line. Every view that lays out text uses this one function.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// The display width of a string in terminal cells.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Wraps `line` to `width` cells. The line's own style and alignment carry over to every piece; an empty line stays one
/// empty line. `indent` is prefixed to continuation lines (e.g. to hang list items).
pub fn wrap_line(line: Line<'static>, width: u16, indent: &str) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let total: usize = line.spans.iter().map(|s| self::width(&s.content)).sum();
    if total <= width {
        return vec![line];
    }
    let indent_w = self::width(indent).min(width.saturating_sub(1));
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    // Pieces: runs of non-space and runs of space, each with its span's style.
    for span in line.spans {
        let style = span.style;
        for piece in split_keep_spaces(&span.content) {
            let w = self::width(piece);
            let is_space = piece.starts_with(' ');
            if used + w <= width {
                current.push(Span::styled(piece.to_string(), style));
                used += w;
                continue;
            }
            if is_space {
                // A break here: the spaces are dropped.
                flush(&mut out, &mut current, &line.style, line.alignment);
                used = start_continuation(&mut current, indent, indent_w);
                continue;
            }
            if w <= width - indent_w && used > indent_w {
                flush(&mut out, &mut current, &line.style, line.alignment);
                used = start_continuation(&mut current, indent, indent_w);
                current.push(Span::styled(piece.to_string(), style));
                used += w;
                continue;
            }
            // A word wider than the line: break it by characters.
            let mut chunk = String::new();
            for ch in piece.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
                if used + cw > width && used > indent_w {
                    if !chunk.is_empty() {
                        current.push(Span::styled(std::mem::take(&mut chunk), style));
                    }
                    flush(&mut out, &mut current, &line.style, line.alignment);
                    used = start_continuation(&mut current, indent, indent_w);
                }
                chunk.push(ch);
                used += cw;
            }
            if !chunk.is_empty() {
                current.push(Span::styled(chunk, style));
            }
        }
    }
    if !current.is_empty() {
        flush(&mut out, &mut current, &line.style, line.alignment);
    }
    if out.is_empty() {
        out.push(Line::default());
    }
    out
}

/// Wraps many lines.
pub fn wrap_lines(lines: Vec<Line<'static>>, width: u16, indent: &str) -> Vec<Line<'static>> {
    lines.into_iter().flat_map(|l| wrap_line(l, width, indent)).collect()
}

/// Cuts a string to at most `max` cells, adding `…` when it was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + cw + 1 > max {
            break;
        }
        out.push(ch);
        used += cw;
    }
    out.push('…');
    out
}

fn start_continuation(current: &mut Vec<Span<'static>>, indent: &str, indent_w: usize) -> usize {
    if indent_w > 0 {
        current.push(Span::raw(indent.to_string()));
    }
    indent_w
}

fn flush(
    out: &mut Vec<Line<'static>>,
    current: &mut Vec<Span<'static>>,
    style: &ratatui::style::Style,
    alignment: Option<ratatui::layout::Alignment>,
) {
    let mut line = Line::from(std::mem::take(current)).style(*style);
    line.alignment = alignment;
    out.push(line);
}

fn split_keep_spaces(s: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (i, ch) in s.char_indices() {
        let space = ch == ' ';
        match in_space {
            Some(prev) if prev != space => {
                pieces.push(&s[start..i]);
                start = i;
            }
            _ => {}
        }
        in_space = Some(space);
    }
    if start < s.len() {
        pieces.push(&s[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Style};

    fn text(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_at_spaces_and_keeps_styles() {
        let red = Style::default().fg(Color::Red);
        let line = Line::from(vec![Span::raw("hello "), Span::styled("wide world", red)]);
        let out = wrap_line(line, 8, "");
        assert_eq!(text(&out), ["hello ", "wide", "world"]);
        assert_eq!(out[1].spans[0].style, red);
    }

    #[test]
    fn breaks_long_words_and_hangs_indent() {
        let out = wrap_line(Line::from("- abcdefghijkl xy"), 6, "  ");
        assert_eq!(text(&out), ["- ", "  abcd", "  efgh", "  ijkl", "  xy"]);
        for l in &out {
            assert!(l.width() <= 6);
        }
    }

    #[test]
    fn wide_characters_count_two_cells() {
        let out = wrap_line(Line::from("日本語のテキスト"), 6, "");
        assert_eq!(text(&out), ["日本語", "のテキ", "スト"]);
        let out = wrap_line(Line::from("🦀🦀🦀🦀"), 5, "");
        assert_eq!(text(&out), ["🦀🦀", "🦀🦀"]);
        assert_eq!(truncate("日本語テキスト", 7), "日本語…");
    }

    #[test]
    fn empty_and_fitting_lines_unchanged() {
        assert_eq!(wrap_line(Line::default(), 10, "").len(), 1);
        assert_eq!(text(&wrap_line(Line::from("fits"), 4, "")), ["fits"]);
        assert_eq!(wrap_line(Line::from("x"), 0, "").len(), 1);
    }
}
