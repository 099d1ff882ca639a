//! Colours and styles, in one place so views never hard-code a colour. A theme is plain data; `Theme::dark()` is
//! the default and works on both dark and light terminals reasonably (it relies on the terminal's own palette).

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone)]
pub struct Theme {
    pub text: Style,
    pub dim: Style,
    pub accent: Style,
    pub user: Style,
    pub assistant: Style,
    pub reasoning: Style,
    pub error: Style,
    pub warning: Style,
    pub success: Style,
    pub tool_name: Style,
    pub border: Style,
    pub selection: Style,
    pub status_bar: Style,
    // Markdown.
    pub heading: Style,
    pub code_inline: Style,
    pub code_block_bg: Color,
    pub link: Style,
    pub quote: Style,
    // Diffs.
    pub diff_added: Style,
    pub diff_removed: Style,
    /// The changed words inside an added / removed line.
    pub diff_added_word: Style,
    pub diff_removed_word: Style,
    pub diff_hunk: Style,
    pub diff_gutter: Style,
    /// The syntect theme used for code blocks.
    pub syntax_theme: &'static str,
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
            assistant: Style::default(),
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
