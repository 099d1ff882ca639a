//! Which keys the composer takes and what they mean: one table, so the set of consumed keys is explicit and the app
//! keeps everything else (Esc, Ctrl+C, PageUp/PageDown, Tab, F-keys, other Ctrl/Alt chords). Emacs/readline bindings,
//! since that is what a shell user's fingers expect; ratatui-textarea's own defaults differ (its Ctrl+U is undo, its
//! Ctrl+J deletes a line), so keys are mapped here rather than fed to `TextArea::input`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::CursorMove;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// Enter: submit (or accept the popup selection; a trailing `\` turns it into a newline).
    Enter,
    /// Shift+Enter, Alt+Enter, Ctrl+Enter, Ctrl+J.
    Newline,
    Insert(char),
    /// Backspace, Ctrl+H.
    Backspace,
    /// Delete.
    Delete,
    /// Ctrl+D: delete the next char, or leave the key to the app when the input is empty.
    DeleteOrEof,
    /// Ctrl+W, Alt+Backspace, Ctrl+Backspace.
    DeleteWordBack,
    /// Alt+D, Alt+Delete, Ctrl+Delete.
    DeleteWordForward,
    /// Ctrl+U.
    DeleteToLineStart,
    /// Ctrl+K.
    DeleteToLineEnd,
    /// Ctrl+Y: insert what the last delete removed.
    Yank,
    /// Ctrl+V: attach the clipboard's image.
    PasteImage,
    /// Ctrl+Z.
    Undo,
    /// Ctrl+Shift+Z (on terminals that report Shift with Ctrl).
    Redo,
    /// Left/Right, Ctrl+B/F, Ctrl+Left/Right, Alt+B/F, Home/End, Ctrl+A/E.
    Move(CursorMove),
    /// Up, Ctrl+P: previous line, or older history on the first line.
    Up,
    /// Down, Ctrl+N: next line, or newer history on the last line.
    Down,
    /// Not the composer's key.
    Ignore,
}

pub(crate) fn intent(key: &KeyEvent) -> Intent {
    let m = key.modifiers;
    let ctrl = m.contains(KeyModifiers::CONTROL);
    let alt = m.contains(KeyModifiers::ALT);
    let shift = m.contains(KeyModifiers::SHIFT);
    // Super/Hyper/Meta chords belong to the terminal or the app.
    if m.intersects(KeyModifiers::SUPER | KeyModifiers::HYPER | KeyModifiers::META) {
        return Intent::Ignore;
    }
    match key.code {
        KeyCode::Enter if ctrl || alt || shift => Intent::Newline,
        KeyCode::Enter => Intent::Enter,
        KeyCode::Char(c) if !ctrl && !alt => match c {
            '\n' => Intent::Newline,
            '\r' => Intent::Enter,
            c if c.is_control() => Intent::Ignore,
            c => Intent::Insert(c),
        },
        KeyCode::Char(c) if ctrl && !alt => match c.to_ascii_lowercase() {
            'j' => Intent::Newline,
            'm' => Intent::Enter,
            'h' => Intent::Backspace,
            'd' => Intent::DeleteOrEof,
            'w' => Intent::DeleteWordBack,
            'u' => Intent::DeleteToLineStart,
            'k' => Intent::DeleteToLineEnd,
            'y' => Intent::Yank,
            'v' => Intent::PasteImage,
            'z' if shift || c.is_ascii_uppercase() => Intent::Redo,
            'z' => Intent::Undo,
            'a' => Intent::Move(CursorMove::Head),
            'e' => Intent::Move(CursorMove::End),
            'b' => Intent::Move(CursorMove::Back),
            'f' => Intent::Move(CursorMove::Forward),
            'p' => Intent::Up,
            'n' => Intent::Down,
            _ => Intent::Ignore,
        },
        KeyCode::Char(c) if alt && !ctrl => match c {
            'b' => Intent::Move(CursorMove::WordBack),
            'f' => Intent::Move(CursorMove::WordForward),
            'd' => Intent::DeleteWordForward,
            _ => Intent::Ignore,
        },
        KeyCode::Backspace if ctrl || alt => Intent::DeleteWordBack,
        KeyCode::Backspace => Intent::Backspace,
        KeyCode::Delete if ctrl || alt => Intent::DeleteWordForward,
        KeyCode::Delete => Intent::Delete,
        KeyCode::Left if ctrl || alt => Intent::Move(CursorMove::WordBack),
        KeyCode::Left => Intent::Move(CursorMove::Back),
        KeyCode::Right if ctrl || alt => Intent::Move(CursorMove::WordForward),
        KeyCode::Right => Intent::Move(CursorMove::Forward),
        // Ctrl+Home/End stay with the app (transcript top/bottom).
        KeyCode::Home if !ctrl && !alt => Intent::Move(CursorMove::Head),
        KeyCode::End if !ctrl && !alt => Intent::Move(CursorMove::End),
        // Modified Up/Down (Shift, Ctrl, Alt) stay with the app, e.g. for scrolling or jumping between tool calls.
        KeyCode::Up if m.is_empty() => Intent::Up,
        KeyCode::Down if m.is_empty() => Intent::Down,
        _ => Intent::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, m: KeyModifiers) -> Intent {
        intent(&KeyEvent::new(code, m))
    }

    #[test]
    fn the_table() {
        let none = KeyModifiers::NONE;
        let ctrl = KeyModifiers::CONTROL;
        let alt = KeyModifiers::ALT;
        let shift = KeyModifiers::SHIFT;
        assert_eq!(k(KeyCode::Enter, none), Intent::Enter);
        assert_eq!(k(KeyCode::Enter, shift), Intent::Newline);
        assert_eq!(k(KeyCode::Enter, alt), Intent::Newline);
        assert_eq!(k(KeyCode::Char('j'), ctrl), Intent::Newline);
        assert_eq!(k(KeyCode::Char('A'), shift), Intent::Insert('A'));
        assert_eq!(k(KeyCode::Char('u'), ctrl), Intent::DeleteToLineStart);
        assert_eq!(k(KeyCode::Char('b'), alt), Intent::Move(CursorMove::WordBack));
        assert_eq!(k(KeyCode::Char('z'), ctrl), Intent::Undo);
        assert_eq!(k(KeyCode::Char('v'), ctrl), Intent::PasteImage);
        assert_eq!(k(KeyCode::Char('z'), ctrl | shift), Intent::Redo);
        for (code, m) in [
            (KeyCode::Char('c'), ctrl),
            (KeyCode::Char('o'), ctrl),
            (KeyCode::Char('l'), ctrl),
            (KeyCode::Char('x'), alt),
            (KeyCode::Esc, none),
            (KeyCode::Tab, none),
            (KeyCode::BackTab, shift),
            (KeyCode::PageUp, none),
            (KeyCode::PageDown, none),
            (KeyCode::F(1), none),
            (KeyCode::Home, ctrl),
            (KeyCode::Up, shift),
            (KeyCode::Down, ctrl),
            (KeyCode::Char('v'), KeyModifiers::SUPER),
        ] {
            assert_eq!(k(code, m), Intent::Ignore, "{code:?} {m:?}");
        }
    }
}
