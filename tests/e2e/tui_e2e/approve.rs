//! An edit approved hunk by hunk in a real terminal: in `ask` mode the model proposes a patch with three hunks; the
//! prompt shows the diff docked above the composer; the user reviews it (`r`), rejects the second hunk and accepts
//! the others; the file on disk then holds exactly the accepted hunks, and the model is told which one was rejected.
//! Three edits within six lines are one hunk, which `s` splits so each edit is accepted or rejected on its own.

use std::time::Duration;

use serde_json::json;

use super::BIN;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tmux::{Tmux, tern_command, tmux_available};

fn numbered() -> String {
    (1..=40).map(|i| format!("row {i}\n")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_approved_hunk_by_hunk_writes_only_the_accepted_hunks() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Patching.".into(),
            vec![(
                "apply_patch".into(),
                json!({"edits": [
                    {"path": "rows.txt", "old_text": "row 2\n", "new_text": "row two\n"},
                    {"path": "rows.txt", "old_text": "row 20\n", "new_text": "row twenty\n"},
                    {"path": "rows.txt", "old_text": "row 38\n", "new_text": "row thirty-eight\n"}
                ]}),
            )],
        ),
        Reply::text("Patched what you accepted."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("rows.txt"), numbered()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "--mode ask",
        "echo TERN-EXITED-$?; sleep 30",
    );
    let tmux = Tmux::start("approve", (100, 30), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["patch the rows", "Enter"]);
    let screen = tmux.wait_for("Allow apply_patch?").await;
    assert!(screen.contains("row two"), "the diff is in the prompt: {screen}");
    assert!(screen.contains("waiting for approval"), "{screen}");
    tokio::time::sleep(Duration::from_millis(600)).await;
    tmux.keys(&["r"]);
    tmux.wait_for("hunk 1/3").await;
    tmux.keys(&["y"]);
    tmux.wait_for("hunk 2/3").await;
    tmux.keys(&["n"]);
    tmux.wait_for("hunk 3/3").await;
    tmux.keys(&["y"]);
    tmux.wait_for("Patched what you accepted.").await;
    let expected = numbered()
        .replace("row 2\n", "row two\n")
        .replace("row 38\n", "row thirty-eight\n");
    assert_eq!(std::fs::read_to_string(work.path().join("rows.txt")).unwrap(), expected);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].to_string();
    assert!(sent.contains("rows.txt line 20 (hunk 2 of 3)"), "{sent}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}

/// Three edits within six lines are one hunk; `s` splits it in the prompt, and accepting the first and last while
/// rejecting the middle one writes exactly those lines; the model is told which part was not applied.
#[tokio::test(flavor = "multi_thread")]
async fn an_edit_split_in_the_prompt_writes_only_the_accepted_parts() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Patching.".into(),
            vec![(
                "apply_patch".into(),
                json!({"edits": [
                    {"path": "rows.txt", "old_text": "row 10\n", "new_text": "row TEN\n"},
                    {"path": "rows.txt", "old_text": "row 12\n", "new_text": "row TWELVE\n"},
                    {"path": "rows.txt", "old_text": "row 15\n", "new_text": "row FIFTEEN\n"}
                ]}),
            )],
        ),
        Reply::text("Patched the parts you accepted."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("rows.txt"), numbered()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "--mode ask",
        "echo TERN-EXITED-$?; sleep 30",
    );
    let tmux = Tmux::start("approve-split", (100, 30), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["patch the rows", "Enter"]);
    tmux.wait_for("Allow apply_patch?").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    tmux.keys(&["r"]);
    let screen = tmux.wait_for("hunk 1/1").await;
    assert!(screen.contains("s split"), "the key hint: {screen}");
    tmux.keys(&["s"]);
    let screen = tmux.wait_for("hunk 1/1 part 1/3").await;
    assert!(!screen.contains("s split"), "a part does not split: {screen}");
    tmux.keys(&["y"]);
    tmux.wait_for("part 2/3").await;
    tmux.keys(&["n"]);
    tmux.wait_for("part 3/3").await;
    tmux.keys(&["y"]);
    tmux.wait_for("Patched the parts you accepted.").await;
    let expected = numbered()
        .replace("row 10\n", "row TEN\n")
        .replace("row 15\n", "row FIFTEEN\n");
    assert_eq!(
        std::fs::read_to_string(work.path().join("rows.txt")).unwrap(),
        expected,
        "the middle edit is not written"
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].to_string();
    assert!(sent.contains("rows.txt line 12 (part 2 of 3 of hunk 1 of 1)"), "{sent}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
