//! A transcript drawn before the syntax definitions are loaded shows its code plain (the frame does not wait), and the
//! next frame after warm-up shows it highlighted although the cell did not change.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::style::Color;

use super::*;
use crate::highlight::tests::cold;
use tern_protocol::Event;

/// Draws the view; returns the screen's text and whether any cell of the code line has a syntax colour.
fn draw(view: &mut TranscriptView, state: &AppState, theme: &Theme) -> (String, bool) {
    let mut terminal = Terminal::new(TestBackend::new(60, 12)).unwrap();
    terminal
        .draw(|frame| view.render(frame, Rect::new(0, 0, 60, 12), state, theme, false))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let text = format!("{}", terminal.backend());
    let row = (0..buffer.area.height)
        .find(|&y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
                .contains("fn main")
        })
        .expect("the code line is on screen");
    let coloured = (0..buffer.area.width).any(|x| matches!(buffer[(x, row)].fg, Color::Rgb(..)));
    (text, coloured)
}

#[test]
fn code_drawn_plain_before_warm_up_is_redrawn_highlighted_after() {
    let theme = Theme::dark();
    let mut state = AppState::new();
    state.apply(Event::AssistantMessage {
        text: "Here:\n\n```rust\nfn main() { let answer = 42; }\n```\n".into(),
        reasoning: None,
    });
    let mut view = TranscriptView::new();
    let (before, coloured) = cold(|| draw(&mut view, &state, &theme));
    assert!(!coloured, "drawn plain while the definitions load:\n{before}");
    // Warm-up ends; the cell's revision is unchanged, its cached plain layout must not stay.
    crate::highlight::warm_up();
    let (after, coloured) = draw(&mut view, &state, &theme);
    assert!(coloured, "highlighted once they are loaded:\n{after}");
    assert_eq!(before, after, "the same text in the same place");
}

#[test]
fn a_large_block_is_drawn_plain_at_once_and_coloured_once_the_worker_is_done() {
    crate::highlight::warm_up();
    let theme = Theme::dark();
    let mut state = AppState::new();
    // Ruby: syntect highlights it (the languages the lexer knows are coloured at once, whatever their size).
    let body: String = (0..300).map(|i| format!("transcript_block_{i} = {i}\n")).collect();
    state.apply(Event::AssistantMessage {
        text: format!("Here:\n\n```ruby\n{body}puts \"fn main\" # 42\n```\n"),
        reasoning: None,
    });
    let mut view = TranscriptView::new();
    let (before, coloured) = draw(&mut view, &state, &theme);
    assert!(!coloured, "the frame did not wait for the block:\n{before}");
    crate::highlight::background_tests::wait_for_worker();
    // The cell did not change; its provisional layout must not stay.
    let (after, coloured) = draw(&mut view, &state, &theme);
    assert!(coloured, "coloured once the worker is done:\n{after}");
    assert_eq!(before, after, "the same text in the same place");
}
