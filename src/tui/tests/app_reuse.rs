//! Frames that take transcript rows from the last frame (`App::plan`, `Screen`'s reuse) come out as frames drawn
//! whole, on the app harness of `app.rs`: an answer streams in pieces (code, lists, wide symbols), the view scrolls
//! up and down, a popup opens over the transcript and closes, the terminal is cleared; the composer's box and the
//! status bar, kept while they do not change, are drawn again when text is typed or a prompt opens.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::*;
use crate::tui::screen::{self, Screen};

const W: u16 = 72;
const H: u16 = 24;

/// The app drawn as the terminal loop draws it (planned, rows reused) and then whole on a fresh terminal: both
/// screens as text, durations and spinners made stable; and whether rows were reused.
fn both(h: &mut Harness, terminal: &mut Terminal<Screen<TestBackend>>) -> (String, String, bool) {
    let (reused, whole, taken, _) = both_kept(h, terminal);
    (reused, whole, taken)
}

/// `both`, and how many rows below the transcript were kept from the last frame.
fn both_kept(h: &mut Harness, terminal: &mut Terminal<Screen<TestBackend>>) -> (String, String, bool, usize) {
    let reuse = h.app.plan(Rect::new(0, 0, W, H));
    let kept = reuse.as_ref().map_or(0, |r| r.kept.len());
    let mut taken = false;
    screen::draw(terminal, reuse, |frame, reused| {
        taken = reused;
        h.app.render_reusing(frame, reused);
    })
    .unwrap();
    let reused = format!("{}", terminal.backend().inner());
    let whole = h.screen(W, H);
    (stable(&reused), whole, taken, if taken { kept } else { 0 })
}

/// The app harness with a turn started, and a terminal for `both`.
fn answering() -> (Harness, Terminal<Screen<TestBackend>>) {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "write a long answer".into(),
    });
    (h, Terminal::new(Screen::new(TestBackend::new(W, H))).unwrap())
}

/// A piece of a long answer: prose, a list, a fenced code block with wide symbols, a table row.
fn piece(i: usize) -> String {
    match i % 9 {
        0 => format!("\n\n## Part {i}\n\nSome prose about part {i}, long enough to wrap across the width of the view "),
        1 => "and go on for a while with words. ".to_string(),
        2 => "\n\n- an item\n- another item with 漢字 and é\n".to_string(),
        3 => "\n```rust\nfn main() {\n    let s = \"日本語\";\n".to_string(),
        4 => format!("    println!(\"{{s}} {i}\");\n"),
        5 => "}\n```\n".to_string(),
        6 => "\n| a | b |\n|---|---|\n| 1 | 2 |\n".to_string(),
        7 => "A line ".to_string(),
        _ => "that ends.\n".to_string(),
    }
}

#[test]
fn frames_that_reuse_rows_show_what_frames_drawn_whole_show() {
    let (mut h, mut terminal) = answering();
    let mut reused_frames = 0;
    for i in 0..160 {
        h.event(Event::AssistantDelta { text: piece(i) });
        match i {
            60 => h.press(key(KeyCode::PageUp)),
            64 | 66 => h.press(key(KeyCode::Up)),
            70 => h.press(key(KeyCode::PageDown)),
            80 => h.press(key(KeyCode::End)),
            // A popup over the transcript, then gone.
            100 => h.keys("/"),
            104 => h.press(key(KeyCode::Esc)),
            120 => terminal.clear().unwrap(),
            _ => {}
        }
        let (reused, whole, taken) = both(&mut h, &mut terminal);
        reused_frames += usize::from(taken);
        assert_eq!(
            reused, whole,
            "frame {i}: a frame with reused rows differs from one drawn whole"
        );
    }
    h.event(Event::AssistantMessage {
        text: String::new(),
        reasoning: None,
    });
    let (reused, whole, _) = both(&mut h, &mut terminal);
    assert_eq!(reused, whole, "the finished answer");
    assert!(
        reused_frames > 100,
        "rows were reused in only {reused_frames} of 160 frames"
    );
}

#[test]
fn the_composer_and_status_bar_kept_from_the_last_frame_show_what_frames_drawn_whole_show() {
    let (mut h, mut terminal) = answering();
    let (mut kept_frames, mut kept_all) = (0, 0);
    for i in 0..80 {
        h.event(Event::AssistantDelta { text: piece(i) });
        match i {
            // Typed while the answer streams, then taken back.
            20 => h.keys("a question"),
            21 => h.keys(" and more"),
            25 => (0..19).for_each(|_| h.press(key(KeyCode::Backspace))),
            // A prompt docks above the box (the box loses focus), then is answered.
            40 => h.request(7, "cargo test"),
            44 => {
                h.settle_prompt();
                h.keys("y");
            }
            // An older prompt from the history, then back.
            50 => h.press(key(KeyCode::Up)),
            52 => h.press(key(KeyCode::Down)),
            // A popup over the transcript, then gone.
            60 => h.keys("/"),
            62 => h.press(key(KeyCode::Esc)),
            70 => terminal.clear().unwrap(),
            _ => {}
        }
        let (reused, whole, _, kept) = both_kept(&mut h, &mut terminal);
        kept_frames += usize::from(kept > 0);
        kept_all += usize::from(kept == 4);
        assert_eq!(
            reused, whole,
            "frame {i}: a frame with kept rows differs from one drawn whole"
        );
    }
    assert!(
        kept_frames > 40,
        "rows below the transcript were kept in only {kept_frames} of 80 frames"
    );
    assert!(
        kept_all > 10,
        "the box and the status bar were kept together in only {kept_all} of 80 frames"
    );
}
