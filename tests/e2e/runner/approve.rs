//! Edits in `ask` mode: computed before the prompt (an edit that cannot apply fails without asking), shown in the
//! request, written exactly as shown, and answered hunk by hunk with the rejected hunks named to the model.

use tern::protocol::{EditScope, EditedHunk};

use super::*;

/// Twenty numbered lines: changes at lines 2 and 18 are two hunks.
fn numbered() -> String {
    (1..=20).map(|i| format!("line {i}\n")).collect()
}

fn two_hunk_patch() -> Reply {
    Reply::tool(
        "apply_patch",
        json!({"edits": [
            {"path": "n.txt", "old_text": "line 2\n", "new_text": "line two\n"},
            {"path": "n.txt", "old_text": "line 18\n", "new_text": "line eighteen\n"}
        ]}),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_cannot_apply_fails_without_asking() {
    let script = vec![
        Reply::tool(
            "edit_file",
            json!({"path": "hello.txt", "old_text": "no such text", "new_text": "x"}),
        ),
        Reply::text("it failed"),
    ];
    let mut h = openai(script, ApprovalMode::Ask).await;
    let events = h
        .turn("edit", |_| panic!("an edit that cannot apply must not ask"))
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let results = tool_results(&h.mock.requests()[1]);
    assert!(results[0].1.starts_with("Error: hello.txt:"), "{}", results[0].1);
    assert!(
        results[0].1.contains("no such text") || results[0].1.contains("not found"),
        "{}",
        results[0].1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_request_shows_the_diff_and_a_yes_writes_it() {
    let script = vec![
        Reply::tool(
            "edit_file",
            json!({"path": "hello.txt", "old_text": "second line", "new_text": "2nd line"}),
        ),
        Reply::text("edited"),
    ];
    let mut h = openai(script, ApprovalMode::Ask).await;
    let mut shown = Vec::new();
    let events = h
        .turn("edit", |r| {
            shown = r.diffs.clone();
            assert!(r.hunk_review);
            assert_eq!(r.always_file.as_deref(), Some("hello.txt"));
            ApprovalDecision::Once
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].old.as_deref(), Some("hello world\nsecond line\n"));
    assert_eq!(shown[0].new.as_deref(), Some("hello world\n2nd line\n"));
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("hello.txt")).unwrap(),
        "hello world\n2nd line\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_changed_between_the_ask_and_the_yes_is_not_overwritten() {
    let script = vec![
        Reply::tool(
            "edit_file",
            json!({"path": "hello.txt", "old_text": "second line", "new_text": "2nd line"}),
        ),
        Reply::text("it changed"),
    ];
    let mut h = openai(script, ApprovalMode::Ask).await;
    let path = h.dir.path().join("hello.txt");
    let events = h
        .turn("edit", |_| {
            // Someone saves the file while the prompt is open.
            std::fs::write(&path, "hello world\nsecond line\nthird line\n").unwrap();
            ApprovalDecision::Once
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "hello world\nsecond line\nthird line\n"
    );
    let results = tool_results(&h.mock.requests()[1]);
    assert!(
        results[0]
            .1
            .contains("hello.txt changed on disk after this change was computed"),
        "{}",
        results[0].1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_is_told_which_hunks_were_rejected() {
    let script = vec![two_hunk_patch(), Reply::text("ok")];
    let mut h = openai(script, ApprovalMode::Ask).await;
    std::fs::write(h.dir.path().join("n.txt"), numbered()).unwrap();
    let events = h
        .turn("patch", |r| {
            assert!(r.hunk_review);
            // Reject the first hunk, accept the second.
            ApprovalDecision::Hunks {
                accepted: vec![1],
                edited: vec![],
                split: vec![],
            }
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let expected = numbered().replace("line 18\n", "line eighteen\n");
    assert_eq!(std::fs::read_to_string(h.dir.path().join("n.txt")).unwrap(), expected);
    let results = tool_results(&h.mock.requests()[1]);
    let text = &results[0].1;
    assert!(text.contains("Applied 1 of 2 hunks"), "{text}");
    assert!(text.contains("Rejected by the user and NOT applied"), "{text}");
    assert!(text.contains("- n.txt line 2 (hunk 1 of 2)"), "{text}");
    assert!(!text.contains("line 18 (hunk"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_hunk_is_applied_and_all_rejected_is_a_denial() {
    let second = Reply::tool(
        "apply_patch",
        json!({"edits": [
            {"path": "n.txt", "old_text": "line 10\n", "new_text": "line ten\n"},
            {"path": "n.txt", "old_text": "line 18\n", "new_text": "line eighteen\n"}
        ]}),
    );
    let script = vec![two_hunk_patch(), second, Reply::text("ok")];
    let mut h = openai(script, ApprovalMode::Ask).await;
    std::fs::write(h.dir.path().join("n.txt"), numbered()).unwrap();
    let mut asked = 0;
    let events = h
        .turn("patch", |_| {
            asked += 1;
            if asked == 1 {
                ApprovalDecision::Hunks {
                    accepted: vec![],
                    edited: vec![EditedHunk {
                        hunk: 0,
                        text: "line 1\nline 2, edited\nline 3\nline 4\nline 5\n".into(),
                    }],
                    split: vec![],
                }
            } else {
                ApprovalDecision::Hunks {
                    accepted: vec![],
                    edited: vec![],
                    split: vec![],
                }
            }
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let expected = numbered().replace("line 2\n", "line 2, edited\n");
    assert_eq!(std::fs::read_to_string(h.dir.path().join("n.txt")).unwrap(), expected);
    let results = tool_results(&h.mock.requests()[2]);
    assert!(
        results[0].1.contains("Applied as the user rewrote them"),
        "{}",
        results[0].1
    );
    assert_eq!(asked, 2);
    assert!(
        results[1].1.contains("rejected every hunk; nothing was written"),
        "{}",
        results[1].1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn always_for_this_file_stops_asking_for_that_file_only() {
    let edit = |path: &str, from: &str, to: &str| {
        Reply::tool("edit_file", json!({"path": path, "old_text": from, "new_text": to}))
    };
    let script = vec![
        edit("hello.txt", "hello", "hi"),
        edit("hello.txt", "second", "2nd"),
        edit("src/lib.rs", "hello", "hi"),
        Reply::text("done"),
    ];
    let mut h = openai(script, ApprovalMode::Ask).await;
    let mut asked = Vec::new();
    let events = h
        .turn("edits", |r| {
            asked.push(r.command.clone());
            ApprovalDecision::AlwaysEdits { scope: EditScope::File }
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked[0].contains("hello.txt") && asked[1].contains("lib.rs"),
        "{asked:?}"
    );
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("hello.txt")).unwrap(),
        "hi world\n2nd line\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_call_does_not_report_the_wait_as_its_duration() {
    let script = vec![
        Reply::tool("exec", json!({"command": "echo hi > out.txt"})),
        Reply::text("ok"),
    ];
    let mut h = openai(script, ApprovalMode::Ask).await;
    let events = h
        .turn("run it", |_| {
            // The user takes a while to decide.
            std::thread::sleep(Duration::from_millis(400));
            ApprovalDecision::Deny { feedback: None }
        })
        .await;
    let took = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd { duration_ms, .. } => Some(*duration_ms),
            _ => None,
        })
        .unwrap();
    assert!(took < 400, "the wait counted: {took} ms");
}
