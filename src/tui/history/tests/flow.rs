//! Key-driven flows: movement, filtering, the detail view, background loading, effects, growth while open.

use crossterm::event::{KeyCode, KeyModifiers};
use serde_json::json;

use super::fixtures::{Harness, STORED_LINES, call, copied, describe, done, set_running_since};
use crate::history::HistoryLayer;
use crate::layer::{Handled, Layer};
use crate::state::calls::ToolCallState;
use tern_protocol::ToolOutput;

#[test]
fn selection_starts_on_newest_and_stays_in_bounds() {
    let mut h = Harness::new();
    let screen = h.screen_text(100, 20);
    assert!(screen.contains("Tool history — 6 calls"), "{screen}");
    assert_eq!(h.selected_id().as_deref(), Some("call_build"));
    h.press(KeyCode::Char('j'));
    assert_eq!(h.selected_id().as_deref(), Some("call_build"), "j at the newest stays");
    h.press(KeyCode::Up);
    assert_eq!(h.selected_id().as_deref(), Some("call_log"));
    for _ in 0..10 {
        h.press(KeyCode::Char('k'));
    }
    assert_eq!(h.selected_id().as_deref(), Some("call_read"), "k stops at the oldest");
    h.press(KeyCode::Down);
    assert_eq!(h.selected_id().as_deref(), Some("call_grep"));
    h.press(KeyCode::Char('G'));
    assert_eq!(h.selected_id().as_deref(), Some("call_build"));
    h.press(KeyCode::Char('g'));
    assert_eq!(h.selected_id().as_deref(), Some("call_read"));
    h.press(KeyCode::End);
    h.press(KeyCode::Home);
    assert_eq!(h.selected_id().as_deref(), Some("call_read"));
    h.press(KeyCode::PageDown);
    assert_eq!(
        h.selected_id().as_deref(),
        Some("call_build"),
        "a page is more than 6 rows"
    );
    h.press(KeyCode::PageUp);
    assert_eq!(h.selected_id().as_deref(), Some("call_read"));
}

#[test]
fn filters_by_text_tool_and_status() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('/'));
    h.type_text("CARGO");
    // Live while typing; words match the arguments case-insensitively.
    assert_eq!(h.visible_ids(), ["call_test", "call_build"]);
    assert!(h.screen_text(100, 20).contains("Tool history — 2 of 6 calls"));
    h.press(KeyCode::Enter);
    assert!(!h.layer.editing());
    assert_eq!(h.visible_ids(), ["call_test", "call_build"]);

    let filter = |h: &mut Harness, text: &str| {
        h.press(KeyCode::Char('/'));
        h.press_with(KeyCode::Char('u'), KeyModifiers::CONTROL);
        h.type_text(text);
        h.press(KeyCode::Enter);
        h.visible_ids()
    };
    assert_eq!(filter(&mut h, "t:exec"), ["call_test", "call_log", "call_build"]);
    assert_eq!(filter(&mut h, "tool:exec is:error"), ["call_test"]);
    assert_eq!(filter(&mut h, "is:running"), ["call_build"]);
    assert_eq!(filter(&mut h, "is:done t:file"), ["call_read", "call_edit"]);
    // Result text (the in-memory output, not the stored file).
    assert_eq!(filter(&mut h, "panicked"), ["call_test"]);
    assert_eq!(filter(&mut h, "line 0002"), ["call_log"]);
    assert!(
        filter(&mut h, "line 2999").is_empty(),
        "the stored file is not searched"
    );
    // Live output of a running call.
    assert_eq!(filter(&mut h, "compiling serde"), ["call_build"]);
    assert_eq!(filter(&mut h, "\"fn main\""), ["call_grep"]);
    assert_eq!(filter(&mut h, "fn nothing"), Vec::<String>::new());
    let screen = h.screen_text(100, 20);
    assert!(screen.contains("No calls match the filter."), "{screen}");
    assert!(screen.contains("0 of 6 calls"), "{screen}");
    assert_eq!(h.selected_id(), None);
    // Enter on an empty list does nothing; Esc clears the filter, a second Esc closes.
    assert!(h.press(KeyCode::Enter).is_empty());
    assert!(h.layer.detail.is_none());
    assert!(h.press(KeyCode::Esc).is_empty());
    assert_eq!(h.visible_ids().len(), 6);
    assert_eq!(describe(&h.press(KeyCode::Esc)), ["close"]);
}

#[test]
fn filter_input_editing() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('/'));
    h.type_text("t:grep");
    assert_eq!(h.visible_ids(), ["call_grep"]);
    // Esc restores the filter from before `/` (none) and leaves the input.
    h.press(KeyCode::Esc);
    assert!(!h.layer.editing());
    assert_eq!(h.visible_ids().len(), 6);
    assert_eq!(h.layer.filter, "");

    h.press(KeyCode::Char('/'));
    h.type_text("t:exec is:error");
    h.press_with(KeyCode::Char('w'), KeyModifiers::CONTROL);
    assert_eq!(h.layer.filter, "t:exec ");
    h.press(KeyCode::Backspace);
    h.press(KeyCode::Backspace);
    assert_eq!(h.layer.filter, "t:exe");
    assert_eq!(h.visible_ids().len(), 3);
    assert_eq!(h.paste("c is:nope\n"), Handled::Consumed);
    assert_eq!(h.layer.filter, "t:exec is:nope ");
    let screen = h.screen_text(100, 20);
    assert!(screen.contains("not understood: is:nope"), "{screen}");
    // Arrows still move the selection while typing.
    h.press(KeyCode::Up);
    assert_eq!(h.selected_id().as_deref(), Some("call_log"));
    h.press(KeyCode::Down);
    assert_eq!(h.selected_id().as_deref(), Some("call_build"));
    // Keys typed in the filter are text, not commands.
    h.type_text("q");
    assert_eq!(h.layer.filter, "t:exec is:nope q");
    // Ctrl+C is left to the app.
    let (handled, _) = h.press_with(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(handled, Handled::Ignored);
    h.press(KeyCode::Enter);
    // Esc again (from the list) clears; the selection comes back on the newest.
    h.press(KeyCode::Esc);
    assert_eq!(h.selected_id().as_deref(), Some("call_build"));
}

#[test]
fn selection_survives_filtering_when_it_can() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Char('k'));
    assert_eq!(h.selected_id().as_deref(), Some("call_test"));
    h.press(KeyCode::Char('/'));
    h.type_text("t:exec");
    assert_eq!(h.selected_id().as_deref(), Some("call_test"));
    h.press_with(KeyCode::Char('u'), KeyModifiers::CONTROL);
    h.type_text("t:grep");
    assert_eq!(h.selected_id().as_deref(), Some("call_grep"), "the nearest older match");
}

#[test]
fn follows_new_calls_and_changes_while_open() {
    let mut h = Harness::new();
    h.draw(100, 20);
    let mut next = call("call_new", "list_dir", json!({"path": "."}), 20);
    next.push_live("partial");
    h.calls.push(next);
    h.draw(100, 20);
    assert_eq!(h.selected_id().as_deref(), Some("call_new"), "on the newest: follow");
    assert!(h.screen_text(100, 20).contains("Tool history — 7 calls"));

    // Moved away: stay put when more arrive.
    h.press(KeyCode::Char('k'));
    h.calls.push(done(
        call("call_more", "grep", json!({"pattern": "x"}), 21),
        ToolOutput::text("none"),
        1,
    ));
    h.draw(100, 20);
    assert_eq!(h.selected_id().as_deref(), Some("call_build"));

    // A running call gains output that matches an active filter, then finishes.
    h.press(KeyCode::Char('/'));
    h.type_text("needle");
    h.press(KeyCode::Enter);
    assert!(h.visible_ids().is_empty());
    h.calls[5].push_live("found the needle\n");
    h.draw(100, 20);
    assert_eq!(h.visible_ids(), ["call_build"]);
    h.calls[5].finish(
        ToolOutput::text("done without it"),
        std::time::Duration::from_secs(9),
        None,
    );
    h.draw(100, 20);
    assert!(h.visible_ids().is_empty(), "the final result replaces the live output");
    h.calls[6].finish(
        ToolOutput::text("a needle here"),
        std::time::Duration::from_secs(1),
        None,
    );
    h.draw(100, 20);
    assert_eq!(h.visible_ids(), ["call_new"]);

    // The list replaced by a shorter one (a new session): the index starts over.
    h.calls.truncate(2);
    h.calls[0].call_id = "other".into();
    let screen = h.screen_text(100, 20);
    assert!(screen.contains("0 of 2 calls"), "{screen}");
}

#[test]
fn detail_opens_shows_sections_and_closes() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('g'));
    h.press(KeyCode::Char('j'));
    h.press(KeyCode::Char('j'));
    h.press(KeyCode::Char('j'));
    assert!(h.press(KeyCode::Enter).is_empty());
    let screen = h.screen_text(100, 30);
    for want in [
        "edit_file  call_edit",
        "Arguments",
        "\"old_string\": \"    a - b\"",
        "Result",
        "Edited src/lib.rs",
    ] {
        assert!(screen.contains(want), "{want:?} missing from\n{screen}");
    }
    for want in [
        "Diff src/lib.rs  +1 -1",
        "@@ -1,3 +1,3 @@",
        "-    a - b",
        "+    a + b",
        "1 file +1 -1",
    ] {
        assert!(screen.contains(want), "{want:?} missing from\n{screen}");
    }
    // q and Backspace go back to the list, they do not close the layer.
    assert!(h.press(KeyCode::Char('q')).is_empty());
    assert!(h.layer.detail.is_none());
    h.press(KeyCode::Enter);
    h.press(KeyCode::Backspace);
    assert!(h.layer.detail.is_none());
    h.press(KeyCode::Enter);
    h.press(KeyCode::Esc);
    assert!(h.layer.detail.is_none());
    assert_eq!(h.selected_id().as_deref(), Some("call_edit"));
    assert_eq!(describe(&h.press(KeyCode::Char('q'))), ["close"]);
}

#[test]
fn detail_scrolls_within_bounds() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('g'));
    h.press(KeyCode::Enter);
    // 20 rows: 3 of header, 1 of footer, 16 of body; the doc is 46 lines.
    let screen = h.screen(100, 20);
    assert!(screen[3].contains("Arguments"), "{screen:?}");
    assert!(screen[19].contains("Top"), "{}", screen[19]);
    h.press(KeyCode::Char('k'));
    assert!(h.screen(100, 20)[3].contains("Arguments"));
    h.press(KeyCode::Char('j'));
    assert_eq!(h.screen(100, 20)[3].trim(), "{");
    h.press(KeyCode::Char('G'));
    let screen = h.screen(100, 20);
    assert!(screen[18].contains("line 40 of main.rs"), "{screen:?}");
    assert!(screen[19].contains("Bot"));
    h.press(KeyCode::Char('j'));
    h.press(KeyCode::PageDown);
    assert!(
        h.screen(100, 20)[18].contains("line 40 of main.rs"),
        "no scrolling past the end"
    );
    h.press(KeyCode::PageUp);
    let screen = h.screen(100, 20);
    assert!(screen[18].contains("line 25 of main.rs"), "{screen:?}");
    assert!(screen[19].contains('%'));
    h.press(KeyCode::Char('g'));
    assert!(h.screen(100, 20)[3].contains("Arguments"));
    // Narrower: the same document rewraps; the end still ends on the last line.
    h.press(KeyCode::Char('G'));
    let screen = h.screen(12, 20);
    assert!(screen[18].contains("main.rs"), "{screen:?}");
}

#[test]
fn stored_result_loads_in_the_background() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Enter);
    assert!(h.layer.animating(), "loading keeps frames coming");
    h.wait_background();
    h.press(KeyCode::Char('G'));
    let screen = h.screen_text(100, 20);
    assert!(
        screen.contains(&format!("log line {STORED_LINES:04}: all good")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("stored {}", h.stored_path.display())),
        "{screen}"
    );
    let size = std::fs::metadata(&h.stored_path).unwrap().len();
    assert!(screen.contains(&crate::history::format::size(size)), "{screen}");
    // y copies the whole stored file, not the preview.
    let effects = h.press(KeyCode::Char('y'));
    assert_eq!(copied(&effects).map(str::len), Some(size as usize));
    // Back in the list, the stored call's size is the file's.
    h.press(KeyCode::Esc);
    let screen = h.screen_text(100, 20);
    assert!(
        screen.contains(&format!("  {}", crate::history::format::size(size))),
        "{screen}"
    );
}

#[test]
fn copy_from_the_list_loads_a_stored_result_first() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('k'));
    let effects = h.press(KeyCode::Char('y'));
    assert_eq!(
        describe(&effects),
        ["notice Loading the stored result… press y again to copy it."]
    );
    h.wait_background();
    let effects = h.press(KeyCode::Char('y'));
    let text = copied(&effects).unwrap();
    assert_eq!(text, std::fs::read_to_string(&h.stored_path).unwrap());
    // An in-memory result copies at once.
    h.press(KeyCode::Char('k'));
    let effects = h.press(KeyCode::Char('y'));
    assert_eq!(copied(&effects), Some("Edited src/lib.rs (+1 -1)"));
    // A running call copies the output so far, and says so.
    h.press(KeyCode::Char('G'));
    let effects = h.press(KeyCode::Char('y'));
    assert_eq!(
        copied(&effects),
        Some("   Compiling tern v0.1.0\n   Compiling serde v1.0\n")
    );
    assert_eq!(
        describe(&effects)[1],
        "notice Copied the output so far (the call is still running)."
    );
}

#[test]
fn missing_stored_file_falls_back_to_the_preview() {
    let mut h = Harness::new();
    std::fs::remove_file(&h.stored_path).unwrap();
    h.press(KeyCode::Char('k'));
    h.press(KeyCode::Enter);
    h.wait_background();
    let screen = h.screen_text(100, 20);
    assert!(screen.contains("Could not read the stored result"), "{screen}");
    assert!(screen.contains("log line 0001"), "{screen}");
    let effects = h.press(KeyCode::Char('y'));
    assert!(copied(&effects).unwrap().starts_with("log line 0001"));
    assert_eq!(
        describe(&effects)[1],
        "notice Could not read the stored result: copied the preview."
    );
}

#[test]
fn jump_to_call_from_list_and_detail() {
    let mut h = Harness::new();
    h.press(KeyCode::Char('g'));
    assert_eq!(describe(&h.press(KeyCode::Char('o'))), ["jump call_read"]);
    h.press(KeyCode::Char('j'));
    h.press(KeyCode::Enter);
    assert_eq!(describe(&h.press(KeyCode::Char('o'))), ["jump call_grep"]);
}

#[test]
fn running_detail_follows_live_output() {
    let mut h = Harness::new();
    h.press(KeyCode::Enter);
    let screen = h.screen_text(100, 20);
    assert!(
        screen.contains("Live output (so far)") && screen.contains("Compiling serde"),
        "{screen}"
    );
    h.press(KeyCode::Char('G'));
    for i in 0..40 {
        h.calls[5].push_live(&format!("step {i}\n"));
    }
    set_running_since(&mut h.calls[5], 3_500);
    let screen = h.screen(100, 20);
    assert!(screen[18].contains("step 39"), "at the end it follows: {screen:?}");
    h.calls[5].finish(
        ToolOutput::text("Finished release"),
        std::time::Duration::from_secs(4),
        None,
    );
    let screen = h.screen_text(100, 20);
    assert!(
        screen.contains("Finished release") && screen.contains("✓ done"),
        "{screen}"
    );
}

#[test]
fn thousands_of_calls() {
    let tools = ["read_file", "grep", "exec", "edit_file", "list_dir"];
    let calls: Vec<ToolCallState> = (0..5_000)
        .map(|i| {
            let name = tools[i % tools.len()];
            let c = call(
                &format!("c{i}"),
                name,
                json!({"path": format!("src/file_{i}.rs")}),
                i as u64,
            );
            done(c, ToolOutput::text(format!("result {i}\n").repeat(20)), i as u64)
        })
        .collect();
    let mut h = Harness::new();
    h.calls = calls;
    h.layer = HistoryLayer::new();
    let screen = h.screen(100, 20);
    assert!(screen[0].contains("5000 calls"));
    assert!(screen[18].contains("src/file_4999.rs"), "{screen:?}");
    h.press(KeyCode::Char('/'));
    h.type_text("t:grep \"result 4\"");
    h.press(KeyCode::Enter);
    assert_eq!(h.selected_id().as_deref(), Some("c4996"));
    let screen = h.screen(60, 15);
    assert!(screen[0].contains("of 5000 calls"), "{screen:?}");
    for _ in 0..30 {
        h.press(KeyCode::PageUp);
    }
    assert_eq!(h.selected_id().as_deref(), Some("c41"));
    h.press(KeyCode::Enter);
    let screen = h.screen_text(100, 20);
    assert!(screen.contains("src/file_41.rs"), "{screen}");
}

#[test]
fn patch_rows_name_the_files_they_touch() {
    use tern_protocol::{FileDiff, ToolDetails};
    let mut h = Harness::new();
    let args = json!({"edits": [
        {"path": "src/parser.rs", "old_text": "a", "new_text": "b"},
        {"path": "docs/guide.md", "old_text": "c", "new_text": "d"}
    ]});
    // One still running (named from its arguments), one done (named from its diffs).
    h.calls.push(call("call_patch_running", "apply_patch", args, 40));
    h.calls.push(done(
        call("call_patch_done", "apply_patch", json!({"edits": []}), 41),
        ToolOutput::text("applied").with_details(ToolDetails::Diffs {
            diffs: vec![FileDiff::new("src/lexer.rs", Some("x\n".into()), Some("y\n".into()))],
        }),
        3,
    ));
    let screen = h.screen_text(100, 20);
    assert!(
        screen.contains("apply_patch  src/parser.rs, docs/guide.md (2 files)"),
        "{screen}"
    );
    assert!(screen.contains("apply_patch  src/lexer.rs"), "{screen}");
}
