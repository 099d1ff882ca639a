//! Frames that take transcript rows from the last frame (`App::plan`, `Screen`'s reuse) come out as frames drawn
//! whole, on the app harness of `app.rs`: an answer streams in pieces (code, lists, wide symbols), the view scrolls
//! up and down, a popup opens over the transcript and closes, the terminal is cleared; the composer's box and the
//! status bar, kept while they do not change, are drawn again when text is typed or a prompt opens.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::*;
use crate::screen::{self, Screen};

const W: u16 = 72;
const H: u16 = 24;

/// The app drawn as the terminal loop draws it (planned, rows reused), checked against the app drawn whole on a
/// fresh terminal (durations and spinners made stable): whether rows were taken from the last frame, and how many
/// of them were rows below the transcript kept where they were.
fn check_frame(h: &mut Harness, terminal: &mut Terminal<Screen<TestBackend>>, what: &str) -> (bool, usize) {
    let reuse = h.app.plan(Rect::new(0, 0, W, H));
    let kept = reuse.as_ref().map_or(0, |r| r.kept.len());
    let mut taken = false;
    screen::draw(terminal, reuse, |frame, reused| {
        taken = reused;
        h.app.render_reusing(frame, reused);
    })
    .unwrap();
    let reused = stable(&format!("{}", terminal.backend().inner()));
    assert_eq!(
        reused,
        h.screen(W, H),
        "{what}: a frame taking rows from the last one differs from one drawn whole"
    );
    (taken, if taken { kept } else { 0 })
}

/// Streams `frames` pieces of an answer, a frame after each (`act` runs before frame `i`), each checked
/// (`check_frame`); returns what each frame took.
fn stream(
    frames: usize,
    mut act: impl FnMut(usize, &mut Harness, &mut Terminal<Screen<TestBackend>>),
) -> Vec<(bool, usize)> {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "write a long answer".into(),
    });
    let mut terminal = Terminal::new(Screen::new(TestBackend::new(W, H))).unwrap();
    let mut taken = Vec::new();
    for i in 0..frames {
        h.event(Event::AssistantDelta { text: piece(i) });
        act(i, &mut h, &mut terminal);
        taken.push(check_frame(&mut h, &mut terminal, &format!("frame {i}")));
    }
    h.event(Event::AssistantMessage {
        text: String::new(),
        reasoning: None,
    });
    check_frame(&mut h, &mut terminal, "the finished answer");
    taken
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
    let taken = stream(160, |i, h, terminal| match i {
        60 => h.press(key(KeyCode::PageUp)),
        64 | 66 => h.press(key(KeyCode::Up)),
        70 => h.press(key(KeyCode::PageDown)),
        80 => h.press(key(KeyCode::End)),
        // A popup over the transcript, then gone.
        100 => h.keys("/"),
        104 => h.press(key(KeyCode::Esc)),
        120 => terminal.clear().unwrap(),
        _ => {}
    });
    let reused = taken.iter().filter(|(taken, _)| *taken).count();
    assert!(reused > 100, "rows were reused in only {reused} of 160 frames");
}

#[test]
fn the_composer_and_status_bar_kept_from_the_last_frame_show_what_frames_drawn_whole_show() {
    let taken = stream(80, |i, h, terminal| match i {
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
    });
    let kept = taken.iter().filter(|(_, kept)| *kept > 0).count();
    let both = taken.iter().filter(|(_, kept)| *kept == 4).count();
    assert!(
        kept > 40,
        "rows below the transcript were kept in only {kept} of 80 frames"
    );
    assert!(
        both > 10,
        "the box and the status bar were kept together in only {both} of 80 frames"
    );
}
