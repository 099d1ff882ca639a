//! Which graphics protocol the terminal speaks, from its environment only (nothing is asked of the terminal, whose
//! answer would arrive among the keys).

/// A terminal graphics protocol tern can draw thumbnails with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// kitty's graphics protocol (kitty, ghostty).
    Kitty,
    /// iTerm2's inline images (iTerm2, WezTerm).
    Iterm2,
}

/// `[tui] images`: whether thumbnails are drawn where the terminal can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Setting {
    #[default]
    Auto,
    Off,
}

impl Setting {
    /// `auto` or `off`; the error names what was written.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Setting::Auto),
            "off" => Ok(Setting::Off),
            other => Err(format!("images = \"{other}\" is not auto or off")),
        }
    }
}

/// The protocol to draw with, from the environment `env` reads; none when off, inside tmux or screen (which pass no
/// graphics through), or when unsure.
pub fn detect(setting: Setting, env: &dyn Fn(&str) -> Option<String>) -> Option<Protocol> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let term = var("TERM").unwrap_or_default();
    let program = var("TERM_PROGRAM").unwrap_or_default();
    if setting == Setting::Off || var("TMUX").is_some() || term.starts_with("screen") || term.starts_with("tmux") {
        return None;
    }
    if program == "iTerm.app" || program == "WezTerm" || var("LC_TERMINAL").as_deref() == Some("iTerm2") {
        return Some(Protocol::Iterm2);
    }
    if term == "xterm-kitty" || term == "xterm-ghostty" || program == "ghostty" || var("KITTY_WINDOW_ID").is_some() {
        return Some(Protocol::Kitty);
    }
    None
}
