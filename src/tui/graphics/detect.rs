//! Which graphics protocol the terminal speaks, from its environment only (nothing is asked of the terminal, whose
//! answer would arrive among the keys), and the size of its cells in pixels, from the kernel's window size.

use crate::host::PictureFormat;

/// A terminal graphics protocol tern can draw thumbnails with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// kitty's graphics protocol (kitty, ghostty).
    Kitty,
    /// iTerm2's inline images (iTerm2, WezTerm).
    Iterm2,
    /// DEC sixel (foot, Windows Terminal, konsole, mlterm; xterm as a VT340 when asked for).
    Sixel,
}

impl Protocol {
    /// How the host encodes a thumbnail for this protocol.
    pub(crate) fn format(self) -> PictureFormat {
        match self {
            Protocol::Kitty | Protocol::Iterm2 => PictureFormat::Png,
            Protocol::Sixel => PictureFormat::Sixel,
        }
    }

    /// The cell size assumed when the terminal does not say it: kitty and iTerm2 scale the picture into the cells it
    /// is given, so a guess only costs sharpness; sixel's pixels are the terminal's, so the guess is a small cell,
    /// leaving a gap on larger ones rather than drawing past the rows kept for the picture.
    fn assumed_cell(self) -> (u32, u32) {
        match self {
            Protocol::Kitty | Protocol::Iterm2 => (10, 20),
            Protocol::Sixel => (8, 16),
        }
    }
}

/// `[tui] images`: whether thumbnails are drawn where the terminal can, or with which protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Setting {
    #[default]
    Auto,
    Off,
    /// This protocol, whatever the environment says (a terminal tern does not recognise, or a multiplexer built to
    /// pass it through).
    Only(Protocol),
}

impl Setting {
    /// `auto`, `off`, `kitty`, `iterm2` or `sixel`; the error names what was written.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Setting::Auto),
            "off" => Ok(Setting::Off),
            "kitty" => Ok(Setting::Only(Protocol::Kitty)),
            "iterm2" => Ok(Setting::Only(Protocol::Iterm2)),
            "sixel" => Ok(Setting::Only(Protocol::Sixel)),
            other => Err(format!("images = \"{other}\" is not auto, off, kitty, iterm2 or sixel")),
        }
    }
}

/// The protocol to draw with, from the environment `env` reads; none when off, inside tmux or screen (which pass no
/// graphics through), or when unsure.
pub fn detect(setting: Setting, env: &dyn Fn(&str) -> Option<String>) -> Option<Protocol> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let term = var("TERM").unwrap_or_default();
    let program = var("TERM_PROGRAM").unwrap_or_default();
    match setting {
        Setting::Off => return None,
        Setting::Only(protocol) => return Some(protocol),
        Setting::Auto => {}
    }
    if var("TMUX").is_some() || term.starts_with("screen") || term.starts_with("tmux") {
        return None;
    }
    if program == "iTerm.app" || program == "WezTerm" || var("LC_TERMINAL").as_deref() == Some("iTerm2") {
        return Some(Protocol::Iterm2);
    }
    if term == "xterm-kitty" || term == "xterm-ghostty" || program == "ghostty" || var("KITTY_WINDOW_ID").is_some() {
        return Some(Protocol::Kitty);
    }
    // konsole draws sixel from 22.04 (KONSOLE_VERSION 220400); Windows Terminal from 1.22, and an older one ignores
    // the sequence.
    let konsole = var("KONSOLE_VERSION")
        .and_then(|v| v.parse::<u32>().ok())
        .is_some_and(|v| v >= 220_400);
    if term.starts_with("foot") || term == "mlterm" || var("WT_SESSION").is_some() || konsole {
        return Some(Protocol::Sixel);
    }
    None
}

/// The size of a cell in pixels: the window's pixels over its cells where the kernel knows them (`pixels` and
/// `cells` as TIOCGWINSZ gives them; 0 when the terminal does not set them), else what `protocol` assumes.
pub fn cell_pixels(protocol: Protocol, pixels: (u16, u16), cells: (u16, u16)) -> (u32, u32) {
    let per = |px: u16, n: u16| {
        (n > 0)
            .then(|| u32::from(px) / u32::from(n))
            .filter(|&p| (4..=200).contains(&p))
    };
    match (per(pixels.0, cells.0), per(pixels.1, cells.1)) {
        (Some(w), Some(h)) => (w, h),
        _ => protocol.assumed_cell(),
    }
}
