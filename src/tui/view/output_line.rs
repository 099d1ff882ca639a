//! A command's output line as spans: its SGR styles (`state::output`) as ratatui styles over the pane's own. Only the
//! text is passed on, never an escape: the colours are cell attributes, and the text goes through the terminal gate
//! as every laid-out span does (`wrap`).

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

use crate::state::output::StyledLine;
use crate::wrap::truncate_spans;
use tern_text::ansi::{self, Colour};

/// The line's runs, plain text in `base` and coloured text in its own colours; tabs as four spaces.
pub(crate) fn spans(line: &StyledLine, base: Style) -> Vec<Span<'static>> {
    line.runs()
        .map(|(text, style)| {
            let text = text.replace('\t', "    ");
            if style == ansi::Style::default() {
                Span::styled(text, base)
            } else {
                Span::styled(text, ratatui_style(style))
            }
        })
        .collect()
}

/// The line's spans cut to `max` cells.
pub(crate) fn cut(line: &StyledLine, base: Style, max: usize) -> Vec<Span<'static>> {
    truncate_spans(spans(line, base), max)
}

fn colour(c: Colour) -> Color {
    const NAMED: [Color; 16] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    match c {
        // The 16 are named, so the terminal's own palette draws them.
        Colour::Indexed(i) => NAMED.get(usize::from(i)).copied().unwrap_or(Color::Indexed(i)),
        Colour::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

/// The ratatui style of an SGR style. Text in its own background colour would be invisible (a command's output could
/// hide a line from the user that way, while the model reads it): then both colours are left out, and the text shows
/// in the terminal's own (leaving only the background out would still hide dark text on a dark terminal).
pub(crate) fn ratatui_style(s: ansi::Style) -> Style {
    let mut style = Style::default();
    let hiding = s.fg.is_some() && s.fg == s.bg;
    if let Some(fg) = s.fg.filter(|_| !hiding) {
        style = style.fg(colour(fg));
    }
    if let Some(bg) = s.bg.filter(|_| !hiding) {
        style = style.bg(colour(bg));
    }
    for (on, modifier) in [
        (s.bold, Modifier::BOLD),
        (s.dim, Modifier::DIM),
        (s.italic, Modifier::ITALIC),
        (s.underline, Modifier::UNDERLINED),
        (s.reverse, Modifier::REVERSED),
    ] {
        if on {
            style = style.add_modifier(modifier);
        }
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgr_styles_map_to_ratatui_and_text_in_its_own_background_stays_visible() {
        let mut sgr = ansi::Style::default();
        sgr.apply("1;4;31;48;5;236");
        let style = ratatui_style(sgr);
        assert_eq!((style.fg, style.bg), (Some(Color::Red), Some(Color::Indexed(236))));
        assert!(style.add_modifier.contains(Modifier::BOLD | Modifier::UNDERLINED));
        sgr.apply("0;38;2;9;9;9;48;2;9;9;9");
        let hidden = ratatui_style(sgr);
        assert_eq!((hidden.fg, hidden.bg), (None, None));
        sgr.apply("0;30;40");
        let black_on_black = ratatui_style(sgr);
        assert_eq!((black_on_black.fg, black_on_black.bg), (None, None));
    }
}
