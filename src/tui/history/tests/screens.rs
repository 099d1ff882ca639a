//! Snapshots of what a person sees: the list, the filtered list and the detail view at 100x20 and 60x15.

use crossterm::event::KeyCode;

use super::fixtures::{Harness, set_running_since};

/// Snapshots go to src/tui/snapshots/, named after the test.
fn snapshot(name: &str, text: String) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// Draws after the size probes are done, with the running call at a fixed elapsed time and the temp dir hidden.
fn screen(h: &mut Harness, width: u16, height: u16) -> String {
    h.wait_background();
    set_running_since(&mut h.calls[5], 3_500);
    let terminal = h.draw(width, height);
    let dir = h.dir.path().display().to_string();
    terminal.backend().to_string().replace(&dir, "$TMP")
}

#[test]
fn history_list() {
    let mut h = Harness::new();
    snapshot("history_list_100x20", screen(&mut h, 100, 20));
    snapshot("history_list_60x15", screen(&mut h, 60, 15));
}

#[test]
fn history_filtered_list() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('/'));
    h.type_text("t:exec cargo");
    snapshot("history_filter_editing_100x20", screen(&mut h, 100, 20));
    h.press(KeyCode::Enter);
    snapshot("history_filtered_100x20", screen(&mut h, 100, 20));
    snapshot("history_filtered_60x15", screen(&mut h, 60, 15));
}

#[test]
fn history_detail() {
    let mut h = Harness::new();
    // The edit (arguments, result and diff).
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Enter);
    snapshot("history_detail_100x20", screen(&mut h, 100, 20));
    snapshot("history_detail_60x15", screen(&mut h, 60, 15));
    // The failed exec.
    h.press(KeyCode::Esc);
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Enter);
    snapshot("history_detail_error_60x15", screen(&mut h, 60, 15));
    // The stored result, loaded and scrolled to its end.
    h.press(KeyCode::Esc);
    h.press(KeyCode::Char('G'));
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Enter);
    h.wait_background();
    h.press(KeyCode::Char('G'));
    snapshot("history_detail_stored_100x20", screen(&mut h, 100, 20));
}
