//! Colours and styles, in one place so views never hard-code a colour. A theme is plain data; `Theme::dark()` is
//! the default and works on both dark and light terminals reasonably (it relies on the terminal's own palette).

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone)]
pub struct Theme {
    pub(crate) text: Style,
    pub(crate) dim: Style,
    pub(crate) accent: Style,
    pub(crate) user: Style,
    pub(crate) reasoning: Style,
    pub(crate) error: Style,
    pub(crate) warning: Style,
    pub(crate) success: Style,
    pub(crate) tool_name: Style,
    pub(crate) border: Style,
    pub(crate) selection: Style,
    pub(crate) status_bar: Style,
    // Markdown.
    pub(crate) heading: Style,
    pub(crate) code_inline: Style,
    pub(crate) code_block_bg: Color,
    pub(crate) link: Style,
    pub(crate) quote: Style,
    // Diffs.
    pub(crate) diff_added: Style,
    pub(crate) diff_removed: Style,
    /// The changed words inside an added / removed line.
    pub(crate) diff_added_word: Style,
    pub(crate) diff_removed_word: Style,
    pub(crate) diff_hunk: Style,
    pub(crate) diff_gutter: Style,
    /// The syntect theme used for code blocks.
    pub(crate) syntax_theme: &'static str,
}

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}

impl Theme {
    pub fn dark() -> Self {
        Self {
            text: Style::default(),
            dim: Style::default().fg(Color::DarkGray),
            accent: Style::default().fg(Color::Cyan),
            user: Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            reasoning: Style::default().fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            error: Style::default().fg(Color::Red),
            warning: Style::default().fg(Color::Yellow),
            success: Style::default().fg(Color::Green),
            tool_name: Style::default().fg(Color::Magenta).add_modifier(Modifier::BOLD),
            border: Style::default().fg(Color::DarkGray),
            selection: Style::default().add_modifier(Modifier::REVERSED),
            status_bar: Style::default().fg(Color::Gray),
            heading: Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            code_inline: Style::default().fg(Color::Yellow),
            code_block_bg: Color::Reset,
            link: Style::default().fg(Color::Blue).add_modifier(Modifier::UNDERLINED),
            quote: Style::default().fg(Color::Gray).add_modifier(Modifier::ITALIC),
            diff_added: Style::default().fg(Color::Green),
            diff_removed: Style::default().fg(Color::Red),
            diff_added_word: Style::default().fg(Color::Black).bg(Color::Green),
            diff_removed_word: Style::default().fg(Color::Black).bg(Color::Red),
            diff_hunk: Style::default().fg(Color::Cyan),
            diff_gutter: Style::default().fg(Color::DarkGray),
            syntax_theme: "base16-ocean.dark",
        }
    }
}
