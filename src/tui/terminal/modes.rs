//! The terminal modes tern sets on entry and undoes on every way out: the alternate screen, bracketed paste, focus
//! reports (for `notify`: is the user looking?), mouse capture (optional, toggled at run time) and the kitty keyboard
//! protocol where the terminal has it.
//!
//! The kitty protocol's "disambiguate escape codes" level makes a terminal report modified keys it otherwise cannot
//! tell apart (Shift+Enter arrives as `CSI 13;2u` instead of a bare `\r`), which is what Shift+Enter in the composer
//! needs. Support is asked once at start-up, and the answer is waited for only briefly: a terminal that never answers
//! must not hold up the first frame. The flags are popped only if they were pushed, so a parent program's own flags
//! (tern run inside another full-screen program) stay as they were. A program run in the middle (`$EDITOR`) gets the
//! terminal with `leave` and gives it back with `resume`.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste, EnableFocusChange,
    EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{Clear, ClearType, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, queue};

/// The kitty flags tern asks for: enough for Shift+Enter (and Ctrl+J, Alt+Enter) to arrive as themselves, without
/// release events or alternate keys that the rest of the UI does not expect.
pub(crate) const KITTY_FLAGS: KeyboardEnhancementFlags = KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES;

/// The flags are pushed now, so every way out pops them (once).
static KITTY_PUSHED: AtomicBool = AtomicBool::new(false);
/// The terminal said it has the protocol (asked once, at start-up), for `resume`.
static KITTY_SUPPORTED: AtomicBool = AtomicBool::new(false);

/// Asks (in raw mode, on a thread of its own) whether the terminal speaks the kitty keyboard protocol; the answer
/// comes on the returned channel, for `kitty_answered`. Nothing waits for it: crossterm's query waits up to two seconds
/// for a terminal that answers neither it nor the device-attributes query sent with it (every common terminal answers
/// the latter at once), and until it has its answer, crossterm's reader is its own, so the event stream starts after it
/// and keys wait in the terminal (none is lost).
pub(crate) fn ask_kitty() -> tokio::sync::oneshot::Receiver<bool> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let _ = std::thread::Builder::new()
        .name("tern-kitty-query".into())
        .spawn(move || {
            let _ = tx.send(crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false));
        });
    rx
}

/// The terminal answered the kitty query: when it has the protocol, push the flags (once; `leave` pops them).
pub(crate) fn kitty_answered(out: &mut impl Write, supported: bool) -> std::io::Result<()> {
    if !supported {
        return Ok(());
    }
    KITTY_SUPPORTED.store(true, Ordering::SeqCst);
    if !KITTY_PUSHED.swap(true, Ordering::SeqCst) {
        queue!(out, PushKeyboardEnhancementFlags(KITTY_FLAGS))?;
    }
    out.flush()
}

/// Writes what entering the full screen takes. `kitty`: push the keyboard flags (the terminal said it has them).
pub(crate) fn enter(out: &mut impl Write, kitty: bool, mouse: bool) -> std::io::Result<()> {
    // Clearing directly (not with ratatui's `clear`, which first asks the terminal where its cursor is: a round trip
    // before the first frame, and a hang on terminals that never answer).
    queue!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange,
        cursor::Hide,
        Clear(ClearType::All)
    )?;
    KITTY_SUPPORTED.store(kitty, Ordering::SeqCst);
    if kitty && !KITTY_PUSHED.swap(true, Ordering::SeqCst) {
        queue!(out, PushKeyboardEnhancementFlags(KITTY_FLAGS))?;
    }
    set_mouse(out, mouse)?;
    out.flush()
}

/// Enters the full screen again after `leave` (a program such as `$EDITOR` had the terminal meanwhile), with the
/// keyboard flags if the terminal had them at start-up. Raw mode is the caller's.
pub(crate) fn resume(out: &mut impl Write, mouse: bool) -> std::io::Result<()> {
    enter(out, KITTY_SUPPORTED.load(Ordering::SeqCst), mouse)
}

/// Turns mouse capture on or off.
pub(crate) fn set_mouse(out: &mut impl Write, on: bool) -> std::io::Result<()> {
    if on {
        queue!(out, EnableMouseCapture)?;
    } else {
        queue!(out, DisableMouseCapture)?;
    }
    out.flush()
}

/// Writes what puts the terminal back (everything but raw mode). Safe to call more than once: the keyboard flags are
/// popped only by the first call after they were pushed.
pub(crate) fn leave(out: &mut impl Write) -> std::io::Result<()> {
    queue!(out, EndSynchronizedUpdate, DisableMouseCapture)?;
    if KITTY_PUSHED.swap(false, Ordering::SeqCst) {
        queue!(out, PopKeyboardEnhancementFlags)?;
    }
    queue!(
        out,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    )?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test, since the pushed flag is process-wide.
    #[test]
    fn kitty_flags_are_pushed_when_supported_and_popped_once() {
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        let push = "\x1b[>1u";
        let pop = "\x1b[<1u";

        let mut out = Vec::new();
        enter(&mut out, false, true).unwrap();
        let entered = text(out);
        assert!(!entered.contains(push), "{entered:?}");
        assert!(
            entered.contains("\x1b[?1049h") && entered.contains("\x1b[?2004h"),
            "{entered:?}"
        );
        assert!(entered.contains("\x1b[?1000h"), "mouse capture on: {entered:?}");
        assert!(entered.contains("\x1b[?1004h"), "focus reports on: {entered:?}");
        let mut out = Vec::new();
        leave(&mut out).unwrap();
        let left = text(out);
        assert!(!left.contains(pop), "never pushed, never popped: {left:?}");
        assert!(left.contains("\x1b[?1049l") && left.contains("\x1b[?1000l"), "{left:?}");
        assert!(left.contains("\x1b[?1004l"), "focus reports off: {left:?}");

        let mut out = Vec::new();
        enter(&mut out, true, false).unwrap();
        let entered = text(out);
        assert!(entered.contains(push), "{entered:?}");
        assert!(entered.contains("\x1b[?1000l"), "mouse capture off: {entered:?}");
        let mut out = Vec::new();
        leave(&mut out).unwrap();
        let left = text(out);
        assert!(left.contains(pop), "{left:?}");
        // The pop comes before leaving the alternate screen, where the flags were pushed.
        assert!(left.find(pop) < left.find("\x1b[?1049l"), "{left:?}");
        let mut out = Vec::new();
        leave(&mut out).unwrap();
        assert!(!text(out).contains(pop), "a second restore pops nothing");

        // Back from an editor: pushed again, once, and popped again on the way out.
        let mut out = Vec::new();
        resume(&mut out, true).unwrap();
        resume(&mut out, true).unwrap();
        assert_eq!(text(out).matches(push).count(), 1);
        let mut out = Vec::new();
        leave(&mut out).unwrap();
        assert!(text(out).contains(pop));

        // The answer comes after the first frame: a "no" writes nothing, a "yes" pushes the flags once.
        let mut out = Vec::new();
        kitty_answered(&mut out, false).unwrap();
        assert!(out.is_empty());
        kitty_answered(&mut out, true).unwrap();
        kitty_answered(&mut out, true).unwrap();
        assert_eq!(text(out).matches(push).count(), 1);
        let mut out = Vec::new();
        leave(&mut out).unwrap();
        assert!(text(out).contains(pop));
    }
}
