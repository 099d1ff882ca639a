//! Telling the user, through the terminal, that tern needs them: an approval or a request for input waits, or a long
//! turn ended. Written as a desktop notification (OSC 9, iTerm2's; OSC 777, rxvt's and foot's) or the bell, after a
//! frame, on the terminal writer the frames use.
//!
//! When: only while the user is not looking. The terminal reports focus (mode 1004, set in `modes.rs`); a terminal
//! that never reports it is treated as unfocused once the turn has run `after` (a short exchange at the keyboard
//! stays quiet). A turn's end is told when the turn ran at least `after`.
//!
//! What: one short line, "tern: …", made of model and command text, so it passes `tern_text::one_line` first: no
//! ESC, BEL, C1 or other control reaches the sequence, which would end the OSC early and start one of its own.
//!
//! Inside tmux an OSC reaches the outer terminal only through tmux's passthrough (`set -g allow-passthrough on`,
//! off by default since tmux 3.3): a style chosen in the configuration is wrapped in it; the automatic choice there
//! is the bell, which tmux handles itself (a bell flag on the window, and the bell to the terminal).

use std::io::Write;
use std::time::{Duration, Instant};

use tern_protocol::{Event, TurnEnd};

/// How a notification is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `ESC ] 9 ; text BEL` (iTerm2, WezTerm, kitty, Ghostty, Windows Terminal).
    Osc9,
    /// `ESC ] 777 ; notify ; title ; body BEL` (urxvt, foot, Ghostty).
    Osc777,
    /// The bell.
    Bell,
    Off,
}

impl Style {
    /// The names the `[tui] notify` setting takes, `auto` besides.
    pub const NAMES: &'static str = "auto, osc9, osc777, bell, off";

    /// The style named `name`; `None` for `auto` (chosen from the terminal).
    pub fn parse(name: &str) -> Result<Option<Style>, String> {
        match name {
            "auto" => Ok(None),
            "osc9" => Ok(Some(Style::Osc9)),
            "osc777" => Ok(Some(Style::Osc777)),
            "bell" => Ok(Some(Style::Bell)),
            "off" => Ok(Some(Style::Off)),
            other => Err(format!("unknown notify style '{other}': expected {}", Self::NAMES)),
        }
    }

    /// The style a terminal understands, from its environment (`env`): OSC 9 for the terminals known to show it,
    /// OSC 777 for rxvt and foot, the bell elsewhere and inside tmux or screen.
    pub fn for_terminal(env: &dyn Fn(&str) -> Option<String>) -> Style {
        let has = |name: &str| env(name).is_some_and(|v| !v.is_empty());
        let term = env("TERM").unwrap_or_default();
        let program = env("TERM_PROGRAM").unwrap_or_default();
        if has("TMUX") || has("STY") || term.starts_with("screen") || term.starts_with("tmux") {
            return Style::Bell;
        }
        let osc9_program = ["iTerm.app", "WezTerm", "ghostty"].contains(&program.as_str());
        let osc9_env = ["KITTY_WINDOW_ID", "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR", "WT_SESSION"]
            .iter()
            .any(|name| has(name));
        if osc9_program || osc9_env || env("LC_TERMINAL").as_deref() == Some("iTerm2") || term.contains("kitty") {
            return Style::Osc9;
        }
        if term.starts_with("foot") || term.starts_with("rxvt") {
            return Style::Osc777;
        }
        Style::Bell
    }
}

/// The `[tui]` notification settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `None`: chosen from the terminal.
    pub style: Option<Style>,
    /// A turn that ran this long is told when it ends; also how long a turn runs before tern counts a terminal that
    /// never reports focus as unattended.
    pub after: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            style: None,
            after: Duration::from_secs(10),
        }
    }
}

/// Where notifications go, and when.
#[derive(Debug)]
pub(crate) struct Notifier {
    style: Style,
    /// Wrap in tmux's passthrough.
    tmux: bool,
    after: Duration,
    /// What the terminal last said of its focus; `None` until it says anything.
    focused: Option<bool>,
    /// When the running turn started.
    turn_began: Option<Instant>,
    /// Sequences to write after the next frame.
    waiting: Vec<u8>,
}

impl Default for Notifier {
    /// Tells nothing (tests, and a UI started without settings).
    fn default() -> Self {
        Self::new(
            Settings {
                style: Some(Style::Off),
                ..Settings::default()
            },
            &|_| None,
        )
    }
}

impl Notifier {
    /// A notifier for the terminal whose environment `env` reads.
    pub(crate) fn new(settings: Settings, env: &dyn Fn(&str) -> Option<String>) -> Self {
        Self {
            style: settings.style.unwrap_or_else(|| Style::for_terminal(env)),
            tmux: env("TMUX").is_some_and(|v| !v.is_empty()),
            after: settings.after,
            focused: None,
            turn_began: None,
            waiting: Vec::new(),
        }
    }

    /// The terminal gained (`true`) or lost the focus.
    pub(crate) fn focus(&mut self, focused: bool) {
        self.focused = Some(focused);
    }

    /// An agent event came at `now`: a question for the user or a long turn's end is told.
    pub(crate) fn on_event(&mut self, event: &Event, now: Instant) {
        match event {
            Event::TurnStarted { .. } => self.turn_began = Some(now),
            Event::TurnFinished { reason } => {
                let long = self
                    .turn_began
                    .take()
                    .is_some_and(|at| now.duration_since(at) >= self.after);
                if long && self.focused != Some(true) {
                    self.tell(match reason {
                        TurnEnd::Completed => "turn finished".to_string(),
                        TurnEnd::Error { .. } => "turn ended with an error".to_string(),
                        _ => "turn ended".to_string(),
                    });
                }
            }
            Event::ApprovalRequest(request) => self.question(now, format!("approval needed: {}", request.command)),
            Event::Subagent { inner, label, .. } => {
                if let Event::ApprovalRequest(request) = &**inner {
                    self.question(now, format!("approval needed ({label}): {}", request.command));
                }
            }
            Event::Elicitation { server, .. } => self.question(now, format!("{server} asks for input")),
            _ => {}
        }
    }

    /// A question waits for the user: told when the terminal is not focused, or does not report focus and the turn
    /// has run `after`.
    fn question(&mut self, now: Instant, text: String) {
        let away = match self.focused {
            Some(focused) => !focused,
            None => self.turn_began.is_some_and(|at| now.duration_since(at) >= self.after),
        };
        if away {
            self.tell(text);
        }
    }

    fn tell(&mut self, text: String) {
        let sequence = sequence(self.style, self.tmux, &text);
        self.waiting.extend_from_slice(&sequence);
    }

    /// Writes the notifications waiting, if any.
    pub(crate) fn write_to(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        out.write_all(&std::mem::take(&mut self.waiting))?;
        out.flush()
    }
}

/// The longest text a notification carries, in characters.
const MAX_CHARS: usize = 120;

/// The bytes that notify `text` (prefixed "tern: ") in `style`, in tmux's passthrough when `tmux`.
fn sequence(style: Style, tmux: bool, text: &str) -> Vec<u8> {
    let text = tern_text::one_line(&format!("tern: {text}")).into_owned();
    let text = match text.chars().count() > MAX_CHARS {
        true => text.chars().take(MAX_CHARS - 1).chain(['…']).collect(),
        false => text,
    };
    let osc = match style {
        Style::Osc9 => format!("\x1b]9;{text}\x07"),
        // The body is the last field; the title is fixed. A `;` in the body is kept as a comma, for terminals that
        // split on every one.
        Style::Osc777 => format!("\x1b]777;notify;tern;{}\x07", text.replace(';', ",")),
        // tmux sees a bell itself: it is never wrapped.
        Style::Bell => return b"\x07".to_vec(),
        Style::Off => return Vec::new(),
    };
    if !tmux {
        return osc.into_bytes();
    }
    format!("\x1bPtmux;{}\x1b\\", osc.replace('\x1b', "\x1b\x1b")).into_bytes()
}

#[cfg(test)]
mod tests;
