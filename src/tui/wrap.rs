//! Wrapping styled lines to a width in terminal cells (CJK and emoji count two), breaking at spaces where it can and
//! inside words only when a word is wider than the line. Every view that lays out text uses this one function.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// The display width of a string in terminal cells.
pub(crate) fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Wraps `line` to `width` cells. The line's own style and alignment carry over to every piece; an empty line stays one
/// empty line. `indent` is prefixed to continuation lines (e.g. to hang list items). A word is a run of non-space
/// characters even across style changes; wide (CJK) characters may break anywhere, as CJK text does.
pub(crate) fn wrap_line(mut line: Line<'static>, width: u16, indent: &str) -> Vec<Line<'static>> {
    // Every laid-out line passes here: escape and control characters are shown, and measured as shown.
    super::cell_guard::clean_spans(&mut line.spans);
    let width = usize::from(width.max(1));
    let total: usize = line.spans.iter().map(|s| self::width(&s.content)).sum();
    if total <= width {
        return vec![line];
    }
    let indent_w = self::width(indent).min(width.saturating_sub(1));
    let spans = &line.spans;
    let (tokens, parts) = tokens(spans);
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for token in tokens {
        let parts = &parts[token.parts.clone()];
        if token.space {
            if used + token.width <= width {
                push_token(&mut current, spans, parts);
                used += token.width;
            } else {
                // A break here: the spaces are dropped.
                flush(&mut out, &mut current, &line.style, line.alignment);
                used = start_continuation(&mut current, indent, indent_w);
            }
            continue;
        }
        if used + token.width <= width {
            push_token(&mut current, spans, parts);
            used += token.width;
            continue;
        }
        if token.width <= width - indent_w && used > indent_w {
            flush(&mut out, &mut current, &line.style, line.alignment);
            used = start_continuation(&mut current, indent, indent_w);
            push_token(&mut current, spans, parts);
            used += token.width;
            continue;
        }
        // A word wider than the line: break it by characters, a piece per run of one style.
        let mut chunk = String::new();
        for (i, part) in parts.iter().enumerate() {
            let style = spans[part.span].style;
            for ch in spans[part.span].content[part.bytes.clone()].chars() {
                let cw = char_width(ch);
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
            let run_ends = parts.get(i + 1).is_none_or(|next| spans[next.span].style != style);
            if run_ends && !chunk.is_empty() {
                current.push(Span::styled(std::mem::take(&mut chunk), style));
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

/// A unit of wrapping: a word (possibly in several styles), a run of spaces, or one wide character. Its text is the
/// parts `parts` of the list `tokens` returns with it.
struct Token {
    parts: std::ops::Range<usize>,
    width: usize,
    space: bool,
}

/// A token's text within one span: bytes `bytes` of span `span`.
struct Part {
    span: usize,
    bytes: std::ops::Range<usize>,
}

/// A character's width in cells (printable ASCII, most text, without a table look-up).
fn char_width(ch: char) -> usize {
    if (' '..='~').contains(&ch) {
        1
    } else {
        unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0)
    }
}

/// The tokens of `spans` and the parts their text is in, read in place.
fn tokens(spans: &[Span<'static>]) -> (Vec<Token>, Vec<Part>) {
    let mut out: Vec<Token> = Vec::new();
    let mut parts: Vec<Part> = Vec::new();
    let mut open: Option<Token> = None;
    for (index, span) in spans.iter().enumerate() {
        for (at, ch) in span.content.char_indices() {
            let cw = char_width(ch);
            let space = ch == ' ';
            let wide = cw > 1 && is_cjk(ch);
            let continues = open.as_ref().is_some_and(|t| t.space == space && !wide);
            if !continues && let Some(t) = open.take() {
                out.push(t);
            }
            let token = open.get_or_insert(Token {
                parts: parts.len()..parts.len(),
                width: 0,
                space,
            });
            match parts.last_mut() {
                Some(part) if token.parts.end > token.parts.start && part.span == index => {
                    part.bytes.end = at + ch.len_utf8();
                }
                _ => {
                    parts.push(Part {
                        span: index,
                        bytes: at..at + ch.len_utf8(),
                    });
                    token.parts.end = parts.len();
                }
            }
            token.width += cw;
            if wide {
                // A wide character stands alone: text may break on either side of it.
                if let Some(t) = open.take() {
                    out.push(t);
                }
            }
        }
    }
    if let Some(t) = open {
        out.push(t);
    }
    (out, parts)
}

/// Scripts written without spaces, where a line may break between any two characters.
fn is_cjk(ch: char) -> bool {
    matches!(ch as u32,
        0x1100..=0x115F | 0x2E80..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x2FFFD | 0x30000..=0x3FFFD)
}

fn push_token(current: &mut Vec<Span<'static>>, spans: &[Span<'static>], parts: &[Part]) {
    for part in parts {
        let span = &spans[part.span];
        let text = &span.content[part.bytes.clone()];
        match current.last_mut() {
            Some(last) if last.style == span.style => last.content.to_mut().push_str(text),
            _ => current.push(Span::styled(text.to_string(), span.style)),
        }
    }
}

/// Wraps many lines.
pub(crate) fn wrap_lines(lines: Vec<Line<'static>>, width: u16, indent: &str) -> Vec<Line<'static>> {
    lines.into_iter().flat_map(|l| wrap_line(l, width, indent)).collect()
}

/// Cuts a string to at most `max` cells, adding `…` when it was cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    // Titles and paths are cut here: escape and control characters are shown, and counted as shown.
    let s = &*tern_text::clean(s);
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

/// Cuts spans to at most `max` cells, adding `…` (in the style of the span it cuts) when they were cut. Each span is
/// cleaned first, as `truncate` cleans a string.
pub(crate) fn truncate_spans(mut spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    super::cell_guard::clean_spans(&mut spans);
    if spans.iter().map(|s| width(&s.content)).sum::<usize>() <= max {
        return spans;
    }
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let mut kept = String::new();
        for ch in span.content.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + cw + 1 > max {
                kept.push('…');
                out.push(Span::styled(kept, span.style));
                return out;
            }
            kept.push(ch);
            used += cw;
        }
        out.push(Span::styled(kept, span.style));
    }
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
    style: &Style,
    alignment: Option<ratatui::layout::Alignment>,
) {
    let mut line = Line::from(std::mem::take(current)).style(*style);
    line.alignment = alignment;
    out.push(line);
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
        // A space that fits stays with its word; the break drops the spaces it falls on.
        assert_eq!(text(&out), ["hello ", "wide ", "world"]);
        assert_eq!(out[1].spans[0].style, red);
    }

    #[test]
    fn breaks_long_words_and_hangs_indent() {
        let out = wrap_line(Line::from("- abcdefghijkl xy"), 6, "  ");
        assert_eq!(text(&out), ["- abcd", "  efgh", "  ijkl", "  xy"]);
        for l in &out {
            assert!(l.width() <= 6);
        }
    }

    #[test]
    fn wide_characters_count_two_cells() {
        let out = wrap_line(Line::from("日本語のテキスト"), 6, "");
        assert_eq!(text(&out), ["日本語", "のテキ", "スト"]);
        let mixed = wrap_line(Line::from("see 日本語のテキスト here"), 10, "");
        assert_eq!(text(&mixed), ["see 日本語", "のテキスト", "here"]);
        // Emoji are word characters: a run of them breaks only when wider than the line.
        let out = wrap_line(Line::from("🦀🦀🦀🦀"), 5, "");
        assert_eq!(text(&out), ["🦀🦀", "🦀🦀"]);
        assert_eq!(truncate("日本語テキスト", 7), "日本語…");
    }

    #[test]
    fn a_word_in_several_styles_stays_whole() {
        let code = Style::default().fg(Color::Yellow);
        let line = Line::from(vec![
            Span::raw("call "),
            Span::styled("read_to_string", code),
            Span::raw(". Then stop."),
        ]);
        let out = wrap_line(line, 20, "");
        assert_eq!(text(&out), ["call read_to_string.", "Then stop."]);
        assert_eq!(out[0].spans[1].style, code);
    }

    #[test]
    fn empty_and_fitting_lines_unchanged() {
        assert_eq!(wrap_line(Line::default(), 10, "").len(), 1);
        assert_eq!(text(&wrap_line(Line::from("fits"), 4, "")), ["fits"]);
        assert_eq!(wrap_line(Line::from("x"), 0, "").len(), 1);
    }
}
