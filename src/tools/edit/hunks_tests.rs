//! The dry run and hunk selection: a change proposed without writing, then applied whole or in part.

use serde_json::json;

use super::ProposedChange;
use super::hunks::hunks;
use crate::fs::testing::workspace;
use crate::patch::ApplyPatchTool;
use crate::{Tool, ToolContext};
use tern_protocol::{EditedHunk, EditedPart, SplitHunk};

fn numbered() -> String {
    (1..=30).map(|i| format!("line {i}\n")).collect()
}

/// Three hunks in one file (lines 2, 15, 28) and a new file.
async fn propose(ctx: &ToolContext) -> ProposedChange {
    let args = json!({"edits": [
        {"path": "n.txt", "old_text": "line 2\n", "new_text": "line two\nline two and a half\n"},
        {"path": "n.txt", "old_text": "line 15\n", "new_text": ""},
        {"path": "n.txt", "old_text": "line 28\n", "new_text": "line 28!\n"},
        {"path": "new.txt", "action": "add", "new_text": "fresh\n"}
    ]});
    ApplyPatchTool.propose(args, ctx).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_proposal_writes_nothing_until_applied() {
    let ws = workspace();
    ws.write("n.txt", numbered());
    let change = propose(&ws.ctx).await;
    assert!(change.reviewable());
    assert_eq!(change.diffs().len(), 2);
    assert_eq!(std::fs::read_to_string(ws.path("n.txt")).unwrap(), numbered());
    assert!(!ws.path("new.txt").exists());
    let out = change.apply(&ws.ctx).await.unwrap();
    assert!(out.text.starts_with("Patch applied:"), "{}", out.text);
    assert!(
        std::fs::read_to_string(ws.path("n.txt"))
            .unwrap()
            .contains("line two and a half\n")
    );
    assert_eq!(std::fs::read_to_string(ws.path("new.txt")).unwrap(), "fresh\n");
}

#[tokio::test]
async fn only_the_accepted_hunks_are_applied_exactly() {
    let ws = workspace();
    ws.write("n.txt", numbered());
    let change = propose(&ws.ctx).await;
    let all = hunks(change.diffs());
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(all[1].location(), "line 15");
    // Accept hunks 1 and 3 of n.txt, reject the middle one and the new file.
    let chosen = change.select(&[0, 2], &[], &[]).unwrap().unwrap();
    let out = chosen.apply(&ws.ctx).await.unwrap();
    let expected = numbered()
        .replace("line 2\n", "line two\nline two and a half\n")
        .replace("line 28\n", "line 28!\n");
    assert_eq!(std::fs::read_to_string(ws.path("n.txt")).unwrap(), expected);
    assert!(!ws.path("new.txt").exists(), "a rejected new file is not created");
    assert!(out.text.contains("- n.txt line 15 (hunk 2 of 4)"), "{}", out.text);
    assert!(
        out.text.contains("- new.txt at the start (hunk 4 of 4)"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn an_edited_hunk_is_applied_with_the_users_text() {
    let ws = workspace();
    ws.write("n.txt", numbered());
    let change = propose(&ws.ctx).await;
    let edited = EditedHunk {
        hunk: 2,
        text: "line 25\nline 26\nline 27\nline 28 (mine)\nline 29\nline 30".into(),
    };
    let chosen = change.select(&[], &[edited], &[]).unwrap().unwrap();
    chosen.apply(&ws.ctx).await.unwrap();
    // The editor dropped the final newline; the hunk ended a line, so it still does.
    assert_eq!(
        std::fs::read_to_string(ws.path("n.txt")).unwrap(),
        numbered().replace("line 28\n", "line 28 (mine)\n")
    );
}

#[tokio::test]
async fn every_hunk_rejected_is_nothing_and_bad_numbers_are_refused() {
    let ws = workspace();
    ws.write("n.txt", numbered());
    assert!(propose(&ws.ctx).await.select(&[], &[], &[]).unwrap().is_none());
    let err = propose(&ws.ctx).await.select(&[9], &[], &[]).unwrap_err();
    assert!(err.contains("hunk 9 does not exist"), "{err}");
    // All accepted is the change as proposed.
    let whole = propose(&ws.ctx).await.select(&[0, 1, 2, 3], &[], &[]).unwrap().unwrap();
    assert!(whole.output.text.starts_with("Patch applied:"));
}

#[tokio::test]
async fn a_file_changed_after_the_proposal_is_left_alone() {
    let ws = workspace();
    ws.write("n.txt", numbered());
    let change = propose(&ws.ctx).await;
    ws.write("n.txt", "someone else's\n");
    let err = change.apply(&ws.ctx).await.unwrap_err().to_string();
    assert!(
        err.contains("n.txt changed on disk after this change was computed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(ws.path("n.txt")).unwrap(), "someone else's\n");
    assert!(!ws.path("new.txt").exists());
}

#[tokio::test]
async fn write_and_edit_propose_too_and_failures_come_before_any_write() {
    let ws = workspace();
    ws.write("a.txt", "one\n");
    let write = crate::registry::ToolRegistry::with_builtins();
    let write_file = write.get("write_file").unwrap();
    let change = write_file
        .propose(json!({"path": "b/new.txt", "content": "x\ny\n"}), &ws.ctx)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(change.diffs()[0].old, None);
    assert_eq!(change.diffs()[0].new.as_deref(), Some("x\ny\n"));
    assert!(!ws.path("b").exists(), "a dry run creates no directory");
    let edit = write.get("edit_file").unwrap();
    let failed = edit
        .propose(json!({"path": "a.txt", "old_text": "two", "new_text": "2"}), &ws.ctx)
        .await
        .unwrap();
    assert!(failed.is_err());
    let outside = edit
        .propose(json!({"path": "/etc/x.txt", "old_text": "", "new_text": "2"}), &ws.ctx)
        .await
        .unwrap();
    assert!(outside.unwrap_err().to_string().contains("outside the workspace"));
}

/// Three edits within six lines: one hunk of three parts (lines 10, 12 and 15, an unchanged line or two between).
async fn propose_close(ctx: &ToolContext) -> ProposedChange {
    let args = json!({"edits": [
        {"path": "n.txt", "old_text": "line 10\n", "new_text": "line ten\n"},
        {"path": "n.txt", "old_text": "line 12\n", "new_text": "line twelve\nline twelve and a half\n"},
        {"path": "n.txt", "old_text": "line 15\n", "new_text": ""}
    ]});
    ApplyPatchTool.propose(args, ctx).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_split_hunk_writes_exactly_its_accepted_parts() {
    let ws = workspace();
    ws.write("n.txt", numbered());
    let change = propose_close(&ws.ctx).await;
    let all = hunks(change.diffs());
    assert_eq!(all.len(), 1, "{all:?}");
    let parts: Vec<String> = all[0].parts.iter().map(|p| p.location()).collect();
    assert_eq!(parts, ["line 10", "line 12", "line 15"]);
    // Accept the first and the third part, reject the middle one.
    let split = SplitHunk {
        hunk: 0,
        accepted: vec![0, 2],
        edited: vec![],
    };
    let chosen = change.select(&[], &[], &[split]).unwrap().unwrap();
    let out = chosen.apply(&ws.ctx).await.unwrap();
    let expected = numbered().replace("line 10\n", "line ten\n").replace("line 15\n", "");
    assert_eq!(std::fs::read_to_string(ws.path("n.txt")).unwrap(), expected);
    assert!(
        out.text.contains("- n.txt line 12 (part 2 of 3 of hunk 1 of 1)"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn a_split_hunks_part_is_edited_and_bad_parts_are_refused() {
    let ws = workspace();
    ws.write("n.txt", numbered());
    // The removed line 15 rewritten without a final newline still ends a line.
    let split = SplitHunk {
        hunk: 0,
        accepted: vec![1],
        edited: vec![EditedPart {
            part: 2,
            text: "line fifteen".into(),
        }],
    };
    let chosen = propose_close(&ws.ctx)
        .await
        .select(&[], &[], &[split])
        .unwrap()
        .unwrap();
    chosen.apply(&ws.ctx).await.unwrap();
    let expected = numbered()
        .replace("line 12\n", "line twelve\nline twelve and a half\n")
        .replace("line 15\n", "line fifteen\n");
    assert_eq!(std::fs::read_to_string(ws.path("n.txt")).unwrap(), expected);
    ws.write("n.txt", numbered());
    let bad = SplitHunk {
        hunk: 0,
        accepted: vec![3],
        edited: vec![],
    };
    let err = propose_close(&ws.ctx).await.select(&[], &[], &[bad]).unwrap_err();
    assert!(err.contains("hunk 0 has no part 3"), "{err}");
    let both = SplitHunk {
        hunk: 0,
        accepted: vec![0],
        edited: vec![],
    };
    let err = propose_close(&ws.ctx).await.select(&[0], &[], &[both]).unwrap_err();
    assert!(err.contains("both whole and split"), "{err}");
    let none = SplitHunk {
        hunk: 0,
        accepted: vec![],
        edited: vec![],
    };
    assert!(
        propose_close(&ws.ctx)
            .await
            .select(&[], &[], &[none])
            .unwrap()
            .is_none()
    );
}
