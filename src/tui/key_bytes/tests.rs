use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn plain(code: KeyCode) -> Option<String> {
    encode(&key(code, KeyModifiers::NONE), false)
}

#[test]
fn text_and_editing_keys_send_what_a_terminal_sends() {
    assert_eq!(plain(KeyCode::Char('a')).as_deref(), Some("a"));
    assert_eq!(
        encode(&key(KeyCode::Char('A'), KeyModifiers::SHIFT), false).as_deref(),
        Some("A")
    );
    assert_eq!(plain(KeyCode::Char('é')).as_deref(), Some("é"));
    assert_eq!(plain(KeyCode::Enter).as_deref(), Some("\r"));
    assert_eq!(plain(KeyCode::Backspace).as_deref(), Some("\x7f"));
    assert_eq!(plain(KeyCode::Tab).as_deref(), Some("\t"));
    assert_eq!(plain(KeyCode::BackTab).as_deref(), Some("\x1b[Z"));
    assert_eq!(plain(KeyCode::Esc).as_deref(), Some("\x1b"));
    assert_eq!(plain(KeyCode::Delete).as_deref(), Some("\x1b[3~"));
    assert_eq!(plain(KeyCode::PageUp).as_deref(), Some("\x1b[5~"));
    assert_eq!(plain(KeyCode::PageDown).as_deref(), Some("\x1b[6~"));
    assert_eq!(plain(KeyCode::F(1)).as_deref(), Some("\x1bOP"));
    assert_eq!(plain(KeyCode::F(5)).as_deref(), Some("\x1b[15~"));
    assert_eq!(plain(KeyCode::F(12)).as_deref(), Some("\x1b[24~"));
    assert_eq!(plain(KeyCode::CapsLock), None);
}

#[test]
fn cursor_keys_follow_the_programs_mode_and_modifiers() {
    assert_eq!(plain(KeyCode::Up).as_deref(), Some("\x1b[A"));
    assert_eq!(plain(KeyCode::Left).as_deref(), Some("\x1b[D"));
    assert_eq!(plain(KeyCode::Home).as_deref(), Some("\x1b[H"));
    assert_eq!(plain(KeyCode::End).as_deref(), Some("\x1b[F"));
    let app = |code| encode(&key(code, KeyModifiers::NONE), true);
    assert_eq!(app(KeyCode::Up).as_deref(), Some("\x1bOA"));
    assert_eq!(app(KeyCode::End).as_deref(), Some("\x1bOF"));
    assert_eq!(
        encode(&key(KeyCode::Right, KeyModifiers::CONTROL), true).as_deref(),
        Some("\x1b[1;5C")
    );
    assert_eq!(
        encode(&key(KeyCode::Delete, KeyModifiers::SHIFT), false).as_deref(),
        Some("\x1b[3;2~")
    );
}

#[test]
fn ctrl_and_alt_send_control_bytes_and_a_leading_escape() {
    let ctrl = |c| encode(&key(KeyCode::Char(c), KeyModifiers::CONTROL), false);
    assert_eq!(ctrl('c').as_deref(), Some("\x03"));
    assert_eq!(ctrl('a').as_deref(), Some("\x01"));
    assert_eq!(ctrl('z').as_deref(), Some("\x1a"));
    assert_eq!(ctrl('[').as_deref(), Some("\x1b"));
    assert_eq!(ctrl(' ').as_deref(), Some("\0"));
    assert_eq!(ctrl('?').as_deref(), Some("\x7f"));
    assert_eq!(
        encode(&key(KeyCode::Char('b'), KeyModifiers::ALT), false).as_deref(),
        Some("\x1bb")
    );
    assert_eq!(
        encode(
            &key(KeyCode::Char('x'), KeyModifiers::ALT | KeyModifiers::CONTROL),
            false
        )
        .as_deref(),
        Some("\x1b\x18")
    );
}

#[test]
fn ctrl_bracket_gives_the_keys_back_however_the_terminal_reports_it() {
    assert!(gives_back(&key(KeyCode::Char(']'), KeyModifiers::CONTROL)));
    assert!(gives_back(&key(KeyCode::Char('5'), KeyModifiers::CONTROL)));
    assert!(!gives_back(&key(KeyCode::Char(']'), KeyModifiers::NONE)));
    assert!(!gives_back(&key(KeyCode::Char('g'), KeyModifiers::CONTROL)));
}

#[test]
fn a_paste_is_bracketed_when_the_program_asked_and_cannot_end_itself() {
    assert_eq!(paste("ls\n", false), "ls\n");
    assert_eq!(paste("ls\n", true), "\x1b[200~ls\n\x1b[201~");
    assert_eq!(paste("a\x1b[201~rm -rf ~\r", true), "\x1b[200~arm -rf ~\r\x1b[201~");
    assert_eq!(paste("a\x1b[20\x1b[201~1~b", true), "\x1b[200~ab\x1b[201~");
}
