//! What a key sends to a program in a terminal, as xterm sends it: the bytes for `Op::ProcessInput` while a live
//! process has the keys. Printable text as it is, Enter as `\r`, Backspace as DEL, Ctrl+letter as its control byte,
//! Alt as a leading ESC, and the cursor and editing keys as xterm's sequences (cursor keys in the program's
//! application mode when it asked for it).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The key that gives the keys back to tern: Ctrl+] (telnet's escape, which terminal programs rarely need). A
/// terminal without the kitty protocol reports it as Ctrl+5, the key that sends the same byte.
pub(crate) fn gives_back(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && matches!(key.code, KeyCode::Char(']' | '5'))
}

/// How the give-back key is named on screen.
pub(crate) const GIVE_BACK: &str = "Ctrl+]";

/// The bytes `key` sends; `None` for a key that sends nothing (a lone modifier, media keys).
pub(crate) fn encode(key: &KeyEvent, application_cursor: bool) -> Option<String> {
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let bytes = match key.code {
        KeyCode::Char(c) => char_bytes(c, key.modifiers)?,
        KeyCode::Enter => "\r".into(),
        KeyCode::Backspace => "\x7f".into(),
        KeyCode::Tab => "\t".into(),
        KeyCode::BackTab => return Some("\x1b[Z".into()),
        KeyCode::Esc => "\x1b".into(),
        KeyCode::Up => return Some(cursor('A', key.modifiers, application_cursor)),
        KeyCode::Down => return Some(cursor('B', key.modifiers, application_cursor)),
        KeyCode::Right => return Some(cursor('C', key.modifiers, application_cursor)),
        KeyCode::Left => return Some(cursor('D', key.modifiers, application_cursor)),
        KeyCode::Home => return Some(cursor('H', key.modifiers, application_cursor)),
        KeyCode::End => return Some(cursor('F', key.modifiers, application_cursor)),
        KeyCode::Insert => return Some(tilde(2, key.modifiers)),
        KeyCode::Delete => return Some(tilde(3, key.modifiers)),
        KeyCode::PageUp => return Some(tilde(5, key.modifiers)),
        KeyCode::PageDown => return Some(tilde(6, key.modifiers)),
        KeyCode::F(n) => return function(n, key.modifiers),
        _ => return None,
    };
    Some(if alt { format!("\x1b{bytes}") } else { bytes })
}

/// A character key: itself, or with Ctrl its control byte (`Ctrl+A` is 0x01, `Ctrl+[` ESC, `Ctrl+?` DEL; the digits
/// 2-8 as xterm maps them).
fn char_bytes(c: char, modifiers: KeyModifiers) -> Option<String> {
    if !modifiers.contains(KeyModifiers::CONTROL) {
        return Some(c.to_string());
    }
    let byte = match c.to_ascii_lowercase() {
        c @ 'a'..='z' => c as u8 - b'a' + 1,
        '@' | ' ' | '2' => 0,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' => 0x1e,
        '_' | '/' | '7' => 0x1f,
        '?' | '8' => 0x7f,
        _ => return Some(c.to_string()),
    };
    Some(char::from(byte).to_string())
}

/// xterm's modifier parameter: 1 + Shift 1 + Alt 2 + Ctrl 4; `None` without modifiers.
fn modifier_param(modifiers: KeyModifiers) -> Option<u8> {
    let m = u8::from(modifiers.contains(KeyModifiers::SHIFT))
        + 2 * u8::from(modifiers.contains(KeyModifiers::ALT))
        + 4 * u8::from(modifiers.contains(KeyModifiers::CONTROL));
    (m > 0).then_some(m + 1)
}

/// A cursor key (`A`-`D`, `H`, `F`): `ESC [ A`, or `ESC O A` in application mode, or `ESC [ 1 ; m A` with modifiers.
fn cursor(final_byte: char, modifiers: KeyModifiers, application: bool) -> String {
    match modifier_param(modifiers) {
        Some(m) => format!("\x1b[1;{m}{final_byte}"),
        None if application => format!("\x1bO{final_byte}"),
        None => format!("\x1b[{final_byte}"),
    }
}

/// An editing key: `ESC [ n ~`, or `ESC [ n ; m ~` with modifiers.
fn tilde(n: u8, modifiers: KeyModifiers) -> String {
    match modifier_param(modifiers) {
        Some(m) => format!("\x1b[{n};{m}~"),
        None => format!("\x1b[{n}~"),
    }
}

/// F1-F12 as xterm sends them.
fn function(n: u8, modifiers: KeyModifiers) -> Option<String> {
    let code = match n {
        1..=4 => {
            let last = char::from(b'P' + n - 1);
            return Some(match modifier_param(modifiers) {
                Some(m) => format!("\x1b[1;{m}{last}"),
                None => format!("\x1bO{last}"),
            });
        }
        5 => 15,
        6..=10 => n + 11,
        11 | 12 => n + 12,
        _ => return None,
    };
    Some(tilde(code, modifiers))
}

/// Pasted text as the program gets it: as it is, or between the bracketed-paste markers when the program turned that
/// mode on (an end marker inside the text is left out, so a paste cannot end itself early and type the rest).
pub(crate) fn paste(text: &str, bracketed: bool) -> String {
    const END: &str = "\x1b[201~";
    if !bracketed {
        return text.to_string();
    }
    let mut inner = text.to_string();
    // Removing one marker may join the pieces of another.
    while inner.contains(END) {
        inner = inner.replace(END, "");
    }
    format!("\x1b[200~{inner}{END}")
}

#[cfg(test)]
mod tests;
