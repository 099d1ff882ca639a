//! Large blocks off the render path: drawn plain at once, coloured by the worker into the cache, served from the
//! cache the next time; small blocks stay on the render path.

use std::time::{Duration, Instant};

use super::background::idle;
use super::tests::{has_rgb, text};
use super::*;

/// Waits (at most 20 s) until the worker has nothing left to do.
pub(crate) fn wait_for_worker() {
    let start = Instant::now();
    while !idle() {
        assert!(start.elapsed() < Duration::from_secs(20), "the worker never finished");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Ruby code of `lines` lines no other test highlights (the cache is shared by the process). Ruby, because syntect
/// highlights it: the languages the lexer knows never go to the worker.
fn unique_ruby(tag: &str, lines: usize) -> String {
    (0..lines).map(|i| format!("{tag}_{i} = \"s\" # note\n")).collect()
}

#[test]
fn a_large_block_is_drawn_plain_then_coloured_from_the_cache() {
    warm_up();
    let theme = Theme::default();
    let code = unique_ruby("large_block", background::SYNC_LINES * 6);
    let before = epoch();
    let (first, provisional) = track(|| highlight(&code, Some("ruby"), &theme));
    assert!(provisional, "the frame did not wait for the block");
    assert_eq!(first.len(), background::SYNC_LINES * 6);
    assert!(first.iter().all(|l| !has_rgb(l)), "drawn plain for now");
    wait_for_worker();
    assert!(epoch() > before, "the worker said it is done");
    let (second, provisional) = track(|| highlight(&code, Some("ruby"), &theme));
    assert!(!provisional, "served from the cache, not queued again");
    assert!(
        has_rgb(&second[0]) && has_rgb(&second[second.len() - 1]),
        "{:?}",
        second[0]
    );
    assert_eq!(text(&first), text(&second), "the same text, coloured");
}

#[test]
fn a_block_that_fits_a_frame_is_highlighted_at_once() {
    warm_up();
    let theme = Theme::default();
    let code = unique_ruby("small_block", background::SYNC_LINES);
    let (lines, provisional) = track(|| highlight(&code, Some("ruby"), &theme));
    assert!(!provisional);
    assert!(lines.iter().all(has_rgb));
}

#[test]
fn a_grown_block_highlights_only_its_new_lines_here() {
    warm_up();
    let theme = Theme::default();
    let code = unique_ruby("grown_block", background::SYNC_LINES * 4);
    let _ = track(|| highlight(&code, Some("ruby"), &theme));
    wait_for_worker();
    // A few lines more (an answer still streaming): the cached part is resumed, the rest fits the frame.
    let longer = format!("{code}{}", unique_ruby("grown_tail", 3));
    let (lines, provisional) = track(|| highlight(&longer, Some("ruby"), &theme));
    assert!(!provisional);
    assert!(lines.iter().all(has_rgb));
}

#[test]
fn while_the_worker_runs_a_frame_hands_it_small_blocks_too() {
    warm_up();
    let theme = Theme::default();
    let code = unique_ruby("small_while_busy", 3);
    // A block as large as the worker ever gets keeps it busy for this test (highlighting it takes seconds here).
    let busy = unique_ruby("keeps_the_worker_busy", MAX_HIGHLIGHT_LINES - 1);
    let _ = highlight(&busy, Some("ruby"), &theme);
    assert!(
        !idle(),
        "2,000 lines take the worker far longer than this thread takes to get here"
    );
    // Outside a frame (a test, a one-off render) the small block is highlighted here, as always.
    let (lines, provisional) = track(|| highlight(&unique_ruby("small_outside", 3), Some("ruby"), &theme));
    assert!(!provisional && lines.iter().all(has_rgb));
    // In a frame it goes to the worker and is drawn plain for now; once the worker is done it comes coloured.
    let (lines, provisional) = frame(|| track(|| highlight(&code, Some("ruby"), &theme)));
    assert!(provisional);
    assert!(!lines.iter().any(has_rgb));
    wait_for_worker();
    let (lines, provisional) = frame(|| track(|| highlight(&code, Some("ruby"), &theme)));
    assert!(!provisional);
    assert!(lines.iter().all(has_rgb));
    assert_eq!(text(&lines).len(), 3);
}
