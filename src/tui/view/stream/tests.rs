//! The kept layout of an answer against laying it out whole: at every step of a stream it gives the lines the
//! transcript showed before (finished part laid out whole, the block being written apart), and once finished the
//! lines of `render_cell`.

use ratatui::text::Line;

use super::StreamLayout;
use crate::highlight;
use crate::markdown::render_markdown;
use crate::theme::Theme;
use crate::view::cells::{GUTTER, frame_lines, stable_split};

/// What the transcript drew for a streaming answer before the layout was kept: the finished part laid out whole.
fn laid_out_whole(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let inner = width.saturating_sub(GUTTER).max(8);
    let split = stable_split(text);
    let mut lines = if split == 0 {
        Vec::new()
    } else {
        render_markdown(&text[..split], inner, theme)
    };
    let tail = &text[split..];
    if !tail.trim().is_empty() {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.extend(render_markdown(tail, inner, theme));
    }
    frame_lines(&mut lines, false, theme);
    lines
}

fn finished_whole(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = render_markdown(text, width.saturating_sub(GUTTER).max(8), theme);
    frame_lines(&mut lines, false, theme);
    lines
}

const ANSWER: &str = "## Plan\n\nThe parser returns an error when the input is empty, and the **cache** keeps \
entries per width.\n\n- first `src/a.rs`: reads the file\n- second: merges flags\n\n```rust\nfn main() {\n\n    \
let x = 1;\n}\n```\n\nAfter the code, a paragraph\nover two lines.\n\n1. one\n\n2. two, loose\n\n   still two\n\n\
| file | ms |\n|---|---:|\n| a | 1 |\n\n> quoted\n\n> again\n\n***\n\nLast words with a [link](http://x).\n";

/// Streams `text` in pieces of `step` bytes, comparing every frame, then finishes it.
fn stream_and_compare(text: &str, step: usize, width: u16) {
    let theme = Theme::dark();
    let mut layout = StreamLayout::new(7);
    let mut old: Option<Vec<Line<'static>>> = None;
    let mut end = 0;
    while end < text.len() {
        end = (end + step).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let lines = layout
            .lines(&text[..end], false, width, &theme, old.take())
            .expect("the streamed text grows");
        assert_eq!(
            lines,
            laid_out_whole(&text[..end], width, &theme),
            "frame at byte {end} of {text:?}"
        );
        old = Some(lines);
    }
    let lines = layout.lines(text, true, width, &theme, old).expect("the same text");
    assert_eq!(lines, finished_whole(text, width, &theme), "finished {text:?}");
}

#[test]
fn every_frame_and_the_end_match_laying_out_whole() {
    highlight::warm_up();
    for step in [1, 3, 17, 64] {
        stream_and_compare(ANSWER, step, 60);
    }
}

#[test]
fn html_and_link_definitions_make_it_one_chunk() {
    highlight::warm_up();
    let text = "Intro [a][r] here.\n\n<!--\n\nhidden\n\n-->\n\nAfter.\n\n[r]: http://x\n\nEnd.\n";
    stream_and_compare(text, 2, 50);
}

#[test]
fn a_list_that_goes_on_after_blank_lines_stays_one_block() {
    highlight::warm_up();
    let text = "Text.\n\n- a\n\n- b\n\n      indented code in b\n\n- c\n\nPara.\n\n3. three\n\n4) four\n";
    stream_and_compare(text, 1, 40);
}

#[test]
fn a_list_after_other_blocks_starts_its_own_chunk() {
    highlight::warm_up();
    // After a paragraph, a heading, a table, a quote or code, a list item or an indented line starts a new block;
    // after a list (its item's lazy line too), it may go on.
    let text = "Para.\n\n- a\n- b\n\n## H\n\n1. one\n\n| x |\n|---|\n| 1 |\n\n2. two\n\n> q\n\n    code\n\n\
                ```\n- in code\n```\n\n- after code\nlazy\n\n- more\n\n  still more\n\nEnd.\n\n    indented code\n";
    for step in [1, 5] {
        stream_and_compare(text, step, 40);
    }
}

#[test]
fn a_width_change_and_a_dropped_cache_lay_it_out_again() {
    highlight::warm_up();
    let theme = Theme::dark();
    let mut layout = StreamLayout::new(1);
    let half = &ANSWER[..ANSWER.len() / 2];
    let first = layout.lines(half, false, 80, &theme, None).expect("lines");
    let narrow = layout.lines(half, false, 40, &theme, Some(first)).expect("lines");
    assert_eq!(narrow, laid_out_whole(half, 40, &theme));
    let again = layout.lines(ANSWER, false, 40, &theme, None).expect("lines");
    assert_eq!(again, laid_out_whole(ANSWER, 40, &theme));
}

#[test]
fn another_final_text_is_refused() {
    let theme = Theme::dark();
    let mut layout = StreamLayout::new(1);
    let lines = layout.lines("Hello there.\n\nMore", false, 60, &theme, None);
    assert!(lines.is_some());
    assert!(
        layout
            .lines("Hello world!\n\nMore text", true, 60, &theme, lines)
            .is_none()
    );
    let mut layout = StreamLayout::new(2);
    let lines = layout.lines("Hello there.\n\nMore", false, 60, &theme, None);
    assert!(
        layout.lines("Hello", false, 60, &theme, lines).is_none(),
        "a shorter text"
    );
}
