//! Configurable keys: the defaults in assets/keymap.toml, overridden per action by ~/.config/tern/keymap.toml.

use std::collections::HashMap;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const DEFAULTS: &str = include_str!("../../assets/keymap.toml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Action {
    Interrupt,
    PageUp,
    PageDown,
    Top,
    Bottom,
    LineUp,
    LineDown,
    PrevCall,
    NextCall,
    ToggleCall,
    ToggleReasoning,
    Diff,
    History,
    Help,
    Quit,
    ToggleMouse,
}

impl Action {
    pub(crate) const ALL: &[(Action, &'static str, &'static str)] = &[
        (
            Action::Interrupt,
            "interrupt",
            "stop the running turn (Ctrl+C twice quits)",
        ),
        (Action::PageUp, "page_up", "scroll up a page"),
        (Action::PageDown, "page_down", "scroll down a page"),
        (Action::Top, "top", "scroll to the top (composer empty)"),
        (Action::Bottom, "bottom", "scroll to the end and follow"),
        (Action::LineUp, "line_up", "scroll up a line"),
        (Action::LineDown, "line_down", "scroll down a line"),
        (Action::PrevCall, "prev_call", "select the previous tool call"),
        (Action::NextCall, "next_call", "select the next tool call"),
        (
            Action::ToggleCall,
            "toggle_call",
            "expand / collapse the selected tool call (a spawn call: its subagent's transcript)",
        ),
        (
            Action::ToggleReasoning,
            "toggle_reasoning",
            "show / fold the selected call's reasoning (no call selected: all of it)",
        ),
        (Action::Diff, "diff", "full-screen diff of the selected edit"),
        (Action::History, "history", "browse every tool result"),
        (Action::Help, "help", "this help"),
        (Action::Quit, "quit", "quit"),
        (
            Action::ToggleMouse,
            "toggle_mouse",
            "mouse capture off / on (off: the terminal selects text)",
        ),
    ];

    fn from_name(name: &str) -> Option<Action> {
        Self::ALL.iter().find(|(_, n, _)| *n == name).map(|(a, _, _)| *a)
    }
}

/// The composer's own keys (fixed, see `composer/keys.rs`), for the help screen: the keys as written for
/// `parse_key` (the first of each is checked against the composer in the tests), how help shows them, and what
/// they do.
pub(crate) const COMPOSER_KEYS: &[(&str, &str, &str)] = &[
    ("enter", "Enter", "send (queued while the agent works)"),
    (
        "shift+enter",
        "Shift+Enter, Alt+Enter, Ctrl+J",
        "new line (Shift+Enter where the terminal reports it; \\ then Enter anywhere)",
    ),
    ("up", "Up / Down", "history (on the first / last line)"),
    ("@", "@", "attach a file (Backspace removes its chip)"),
    ("/", "/", "commands"),
    (
        "ctrl+w",
        "Ctrl+W, Ctrl+U, Ctrl+K",
        "delete a word, to line start, to line end",
    ),
    ("ctrl+y", "Ctrl+Y", "paste what was deleted last"),
    (
        "ctrl+v",
        "Ctrl+V",
        "attach the clipboard's image (wl-paste, xclip or pngpaste; where the terminal passes Ctrl+V on)",
    ),
    ("ctrl+z", "Ctrl+Z, Ctrl+Shift+Z", "undo, redo"),
    ("ctrl+a", "Ctrl+A, Ctrl+E", "line start, line end"),
];

/// How to get Shift+Enter in a terminal that does not report it, for the help screen (and the README).
pub(crate) const SHIFT_ENTER_SETUP: &str = "tern turns on the kitty keyboard protocol where the terminal has it (kitty, \
foot, Ghostty, Alacritty; WezTerm with enable_kitty_keyboard = true), and Shift+Enter then inserts a new line; so \
does iTerm2 with \"Report keys using CSI u\" on. Elsewhere use Alt+Enter or Ctrl+J, or end the line with \\ and \
press Enter, or have the terminal send ESC Enter for Shift+Enter (VS Code: a keybinding for shift+enter running \
workbench.action.terminal.sendSequence with text \"\\u001b\\r\"; Windows Terminal: a sendInput action with \
input \"\\u001b\\r\").";

#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: HashMap<Action, Vec<KeyBinding>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyBinding {
    pub(crate) code: KeyCode,
    pub(crate) modifiers: KeyModifiers,
}

#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct KeymapError {
    file: String,
    message: String,
}

impl Default for Keymap {
    fn default() -> Self {
        let mut map = Keymap {
            bindings: HashMap::new(),
        };
        // The defaults are part of the binary and tested; a failure here would be caught by the tests.
        let _ = map.overlay(DEFAULTS, "assets/keymap.toml");
        map
    }
}

impl Keymap {
    /// The defaults with the user's file (if any) on top.
    pub fn load(user_file: Option<&Path>) -> Result<Self, KeymapError> {
        let mut map = Self::default();
        if let Some(path) = user_file
            && let Ok(text) = std::fs::read_to_string(path)
        {
            map.overlay(&text, &path.display().to_string())?;
        }
        Ok(map)
    }

    fn overlay(&mut self, text: &str, file: &str) -> Result<(), KeymapError> {
        let err = |message: String| KeymapError {
            file: file.to_string(),
            message,
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        for (name, value) in table {
            let action = Action::from_name(&name).ok_or_else(|| err(format!("unknown action '{name}'")))?;
            let keys = value
                .as_array()
                .ok_or_else(|| err(format!("{name}: expected a list of keys")))?
                .iter()
                .map(|k| {
                    let s = k.as_str().ok_or_else(|| err(format!("{name}: keys are strings")))?;
                    parse_key(s).ok_or_else(|| err(format!("{name}: cannot read key '{s}'")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            self.bindings.insert(action, keys);
        }
        Ok(())
    }

    /// The action bound to `key`, if any.
    pub(crate) fn action(&self, key: &KeyEvent) -> Option<Action> {
        let mods = key.modifiers & !KeyModifiers::SHIFT;
        Action::ALL.iter().map(|(a, _, _)| *a).find(|a| {
            self.bindings.get(a).is_some_and(|keys| {
                keys.iter().any(|b| match (b.code, key.code) {
                    // Characters carry their shift in the character itself.
                    (KeyCode::Char(x), KeyCode::Char(y)) => x == y && b.modifiers == mods,
                    _ => b.code == key.code && b.modifiers == key.modifiers,
                })
            })
        })
    }

    /// The first key of an action, as shown in hints ("Ctrl+T").
    pub(crate) fn hint(&self, action: Action) -> String {
        self.bindings
            .get(&action)
            .and_then(|k| k.first())
            .map(describe)
            .unwrap_or_else(|| "unbound".into())
    }

    /// Every action with its keys, for the help screen.
    pub(crate) fn describe_all(&self) -> Vec<(String, &'static str)> {
        Action::ALL
            .iter()
            .map(|(a, _, help)| {
                let keys = self
                    .bindings
                    .get(a)
                    .map(|k| k.iter().map(describe).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                (keys, *help)
            })
            .collect()
    }
}

pub(crate) fn parse_key(s: &str) -> Option<KeyBinding> {
    let lower = s.trim().to_ascii_lowercase();
    let mut modifiers = KeyModifiers::NONE;
    let mut parts: Vec<&str> = lower.split('+').collect();
    // "+" itself, or "ctrl++".
    if lower.ends_with("++") || lower == "+" {
        parts.retain(|p| !p.is_empty());
        parts.push("+");
    }
    let key = parts.pop()?;
    for m in parts {
        modifiers |= match m {
            "ctrl" | "control" => KeyModifiers::CONTROL,
            "alt" | "meta" => KeyModifiers::ALT,
            "shift" => KeyModifiers::SHIFT,
            _ => return None,
        };
    }
    let code = match key {
        "esc" | "escape" => KeyCode::Esc,
        "enter" | "return" => KeyCode::Enter,
        "tab" => KeyCode::Tab,
        "backspace" => KeyCode::Backspace,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "space" => KeyCode::Char(' '),
        f if f.starts_with('f') && f.len() > 1 => KeyCode::F(f[1..].parse().ok()?),
        c if c.chars().count() == 1 => {
            // Keep the case the user wrote for plain characters ("?" or "G").
            let original = s.trim().chars().last()?;
            KeyCode::Char(if modifiers.is_empty() {
                original
            } else {
                c.chars().next()?
            })
        }
        _ => return None,
    };
    Some(KeyBinding { code, modifiers })
}

fn describe(b: &KeyBinding) -> String {
    let mut s = String::new();
    if b.modifiers.contains(KeyModifiers::CONTROL) {
        s.push_str("Ctrl+");
    }
    if b.modifiers.contains(KeyModifiers::ALT) {
        s.push_str("Alt+");
    }
    if b.modifiers.contains(KeyModifiers::SHIFT) {
        s.push_str("Shift+");
    }
    let key = match b.code {
        KeyCode::Char(c) if b.modifiers.is_empty() => c.to_string(),
        KeyCode::Char(c) => c.to_ascii_uppercase().to_string(),
        KeyCode::F(n) => format!("F{n}"),
        KeyCode::PageUp => "PgUp".into(),
        KeyCode::PageDown => "PgDn".into(),
        other => format!("{other:?}"),
    };
    s.push_str(&key);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn defaults_parse_and_match() {
        let map = Keymap::default();
        assert_eq!(
            map.action(&key(KeyCode::Char('t'), KeyModifiers::CONTROL)),
            Some(Action::History)
        );
        assert_eq!(
            map.action(&key(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Action::Help)
        );
        assert_eq!(
            map.action(&key(KeyCode::PageUp, KeyModifiers::NONE)),
            Some(Action::PageUp)
        );
        assert_eq!(map.action(&key(KeyCode::Char('x'), KeyModifiers::NONE)), None);
        assert_eq!(map.hint(Action::History), "Ctrl+T");
        for (a, _, _) in Action::ALL {
            assert!(map.bindings.contains_key(a), "{a:?} has a default");
        }
    }

    #[test]
    fn user_file_overrides_one_action() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keymap.toml");
        std::fs::write(&path, "history = [\"alt+h\"]\n").unwrap();
        let map = Keymap::load(Some(&path)).unwrap();
        assert_eq!(
            map.action(&key(KeyCode::Char('h'), KeyModifiers::ALT)),
            Some(Action::History)
        );
        assert_eq!(map.action(&key(KeyCode::Char('t'), KeyModifiers::CONTROL)), None);
        assert_eq!(
            map.action(&key(KeyCode::Char('p'), KeyModifiers::CONTROL)),
            Some(Action::PrevCall)
        );
        std::fs::write(&path, "histroy = [\"alt+h\"]\n").unwrap();
        let err = Keymap::load(Some(&path)).unwrap_err().to_string();
        assert!(
            err.contains("unknown action 'histroy'") && err.contains("keymap.toml"),
            "{err}"
        );
    }

    #[test]
    fn composer_keys_in_help_are_the_composers_and_free_of_actions() {
        use crate::composer::keys_for_help::consumes;
        let map = Keymap::default();
        for (key, shown, _) in COMPOSER_KEYS {
            let b = parse_key(key).unwrap_or_else(|| panic!("{key}"));
            let event = KeyEvent::new(b.code, b.modifiers);
            assert!(consumes(&event), "{shown}: not a composer key");
            assert_eq!(map.action(&event), None, "{shown} is also an action");
        }
    }

    #[test]
    fn key_syntax() {
        assert_eq!(parse_key("F1").unwrap().code, KeyCode::F(1));
        assert_eq!(
            parse_key("ctrl+shift+up").unwrap().modifiers,
            KeyModifiers::CONTROL | KeyModifiers::SHIFT
        );
        assert_eq!(parse_key("G").unwrap().code, KeyCode::Char('G'));
        assert!(parse_key("hyper+x").is_none());
        assert!(parse_key("nokey").is_none());
    }
}
