//! Tests of edit_file as a tool: the file around the engine (policy, encodings, atomic checked writes, results).

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::file_state::{FileStamp, ReadRecord};
use crate::registry::{PreparedCall, execute_prepared};
use crate::{PathPolicy, ToolContext};
use tern_protocol::ToolDetails;

fn setup() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    (dir, ctx)
}

async fn run(ctx: &ToolContext, args: Value) -> ToolOutput {
    let call = PreparedCall {
        tool: Arc::new(EditFileTool),
        args,
    };
    execute_prepared(call, ctx).await
}

fn diffs(out: &ToolOutput) -> &[tern_protocol::FileDiff] {
    match &out.details {
        ToolDetails::Diffs { diffs } => diffs,
        other => panic!("expected diffs, got {other:?}"),
    }
}

#[tokio::test]
async fn edits_and_reports_lines_and_diff() {
    let (dir, ctx) = setup();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let p = dir.path().join("src/a.rs");
    std::fs::write(&p, "fn a() {\n    1\n}\n").unwrap();
    let out = run(
        &ctx,
        json!({"path": "src/a.rs", "old_text": "    1\n", "new_text": "    let x = 1;\n    x\n"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, "Edited src/a.rs: replaced 1 occurrence at line 2 (+2 -1)");
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "fn a() {\n    let x = 1;\n    x\n}\n"
    );
    let d = &diffs(&out)[0];
    assert_eq!((d.path.as_str(), d.added, d.removed), ("src/a.rs", 2, 1));
    assert_eq!(d.old.as_deref(), Some("fn a() {\n    1\n}\n"));
}

#[tokio::test]
async fn fallback_match_is_noted_and_replace_all_lists_lines() {
    let (dir, ctx) = setup();
    let p = dir.path().join("a.py");
    std::fs::write(&p, "if x:\n    a = 1\nb = 1\na = 1\n").unwrap();
    let out = run(
        &ctx,
        json!({"path": "a.py", "old_text": "a = 1", "new_text": "a = 2", "replace_all": true}),
    )
    .await;
    assert_eq!(out.text, "Edited a.py: replaced 2 occurrences at lines 2, 4 (+2 -2)");
    std::fs::write(&p, "if x:\n    a = 1  \n").unwrap();
    let out = run(
        &ctx,
        json!({"path": "a.py", "old_text": "a = 1 \n", "new_text": "a = 3\nb = 4\n"}),
    )
    .await;
    assert!(
        out.text.contains("Note: matched ignoring leading/trailing whitespace"),
        "{}",
        out.text
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "if x:\n    a = 3\n    b = 4\n");
}

#[tokio::test]
async fn ambiguous_match_is_an_error_listing_lines() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "x = 1\ny\nx = 1\n").unwrap();
    let out = run(&ctx, json!({"path": "a.txt", "old_text": "x = 1", "new_text": "x = 2"})).await;
    assert!(out.is_error);
    assert!(
        out.text.contains("a.txt: old_text matches 2 times, at lines 1, 3."),
        "{}",
        out.text
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "x = 1\ny\nx = 1\n"
    );
    let out = run(
        &ctx,
        json!({"path": "a.txt", "old_text": "x = 1", "new_text": "x = 2", "occurrence": 2}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "x = 1\ny\nx = 2\n"
    );
}

#[tokio::test]
async fn creates_and_fills_with_empty_old_text() {
    let (dir, ctx) = setup();
    let out = run(
        &ctx,
        json!({"path": "sub/new.txt", "old_text": "", "new_text": "a\nb\n"}),
    )
    .await;
    assert_eq!(out.text, "Created sub/new.txt (+2)");
    assert_eq!(diffs(&out)[0].old, None);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/new.txt")).unwrap(),
        "a\nb\n"
    );
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    let out = run(&ctx, json!({"path": "empty.txt", "old_text": "", "new_text": "x\n"})).await;
    assert_eq!(out.text, "Wrote empty.txt (it was empty) (+1)");
    let out = run(&ctx, json!({"path": "sub/new.txt", "old_text": "", "new_text": "zzz"})).await;
    assert!(out.is_error && out.text.contains("old_text is empty"), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/new.txt")).unwrap(),
        "a\nb\n"
    );
}

#[tokio::test]
async fn missing_file_suggests_a_similar_name() {
    let (dir, ctx) = setup();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let out = run(
        &ctx,
        json!({"path": "src/mian.rs", "old_text": "fn", "new_text": "pub fn"}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.text
            .contains("src/mian.rs does not exist. Did you mean src/main.rs?"),
        "{}",
        out.text
    );
    let out = run(
        &ctx,
        json!({"path": "nope/x.rs", "old_text": "fn", "new_text": "pub fn"}),
    )
    .await;
    assert!(
        out.text.contains("Its directory nope does not exist either"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let (dir, ctx) = setup();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secret.txt");
    std::fs::write(&target, "keep\n").unwrap();
    let escape = format!(
        "../{}/secret.txt",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    let out = run(&ctx, json!({"path": escape, "old_text": "keep", "new_text": "lost"})).await;
    assert!(
        out.is_error && out.text.contains("outside the workspace"),
        "{}",
        out.text
    );
    std::os::unix::fs::symlink(&target, dir.path().join("link.txt")).unwrap();
    let out = run(
        &ctx,
        json!({"path": "link.txt", "old_text": "keep", "new_text": "lost"}),
    )
    .await;
    assert!(
        out.is_error && out.text.contains("outside the workspace"),
        "{}",
        out.text
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
}

#[tokio::test]
async fn non_utf8_binary_and_directories_are_refused() {
    let (dir, ctx) = setup();
    let latin1 = b"caf\xe9 = 1\n".to_vec();
    std::fs::write(dir.path().join("l1.txt"), &latin1).unwrap();
    let out = run(&ctx, json!({"path": "l1.txt", "old_text": "= 1", "new_text": "= 2"})).await;
    assert!(
        out.is_error && out.text.contains("not valid UTF-8 (first invalid byte at offset 3)"),
        "{}",
        out.text
    );
    assert_eq!(std::fs::read(dir.path().join("l1.txt")).unwrap(), latin1);
    std::fs::write(dir.path().join("b.bin"), b"ab\0cd").unwrap();
    let out = run(&ctx, json!({"path": "b.bin", "old_text": "ab", "new_text": "x"})).await;
    assert!(out.is_error && out.text.contains("binary"), "{}", out.text);
    std::fs::write(dir.path().join("u16.txt"), b"\xff\xfea\0").unwrap();
    let out = run(&ctx, json!({"path": "u16.txt", "old_text": "a", "new_text": "x"})).await;
    assert!(out.is_error && out.text.contains("UTF-16"), "{}", out.text);
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let out = run(&ctx, json!({"path": "d", "old_text": "a", "new_text": "x"})).await;
    assert!(out.is_error && out.text.contains("is a directory"), "{}", out.text);
}

#[tokio::test]
async fn crlf_file_keeps_its_bytes() {
    let (dir, ctx) = setup();
    let p = dir.path().join("w.txt");
    std::fs::write(&p, b"one\r\ntwo\r\nthree\r\n").unwrap();
    let out = run(
        &ctx,
        json!({"path": "w.txt", "old_text": "two\n", "new_text": "2\n2b\n"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(std::fs::read(&p).unwrap(), b"one\r\n2\r\n2b\r\nthree\r\n");
}

#[tokio::test]
async fn unchanged_and_invalid_arguments_are_errors() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let out = run(&ctx, json!({"path": "a.txt", "old_text": "a", "new_text": "a"})).await;
    assert!(out.is_error && out.text.contains("identical"), "{}", out.text);
    let out = run(&ctx, json!({"old_text": "a", "new_text": "b"})).await;
    assert!(out.is_error && out.text.contains("path is required"), "{}", out.text);
    let out = run(&ctx, json!({"path": "a.txt", "old_text": 5, "new_text": "b"})).await;
    assert!(
        out.is_error && out.text.contains("old_text must be a string"),
        "{}",
        out.text
    );
}

#[test]
fn a_file_changed_between_read_and_write_is_not_overwritten() {
    let (dir, ctx) = setup();
    let p = dir.path().join("a.txt");
    std::fs::write(&p, "one\n").unwrap();
    let resolved = ctx.policy.resolve_write("a.txt").unwrap();
    let (mut plan, _) = plan_edit(&ctx, resolved, "a.txt".into(), &EditRequest::new("one", "two")).unwrap();
    std::fs::write(&p, "someone else's\n").unwrap();
    let err = plan.write().unwrap_err();
    assert!(err.to_string().contains("changed on disk"), "{err}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "someone else's\n");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp file left behind"
    );
}

#[tokio::test]
async fn read_tracking_forgets_on_write_and_flags_stale_reads() {
    let (dir, ctx) = setup();
    let p = dir.path().join("a.txt");
    std::fs::write(&p, "alpha\n").unwrap();
    let resolved = ctx.policy.resolve_write("a.txt").unwrap();
    let stale = ReadRecord {
        stamp: FileStamp {
            modified: None,
            len: 3,
            hash: 42,
        },
        offset: 1,
        limit: 2000,
    };
    ctx.files.record_read(&resolved, stale.clone());
    let out = run(&ctx, json!({"path": "a.txt", "old_text": "beta", "new_text": "gamma"})).await;
    assert!(
        out.is_error
            && out
                .text
                .contains("The file has changed on disk since you last read it."),
        "{}",
        out.text
    );
    // A read that matches the file on disk gives no such note.
    let meta = std::fs::metadata(&p).unwrap();
    let fresh = ReadRecord {
        stamp: FileStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            hash: 7,
        },
        ..stale
    };
    ctx.files.record_read(&resolved, fresh);
    let out = run(&ctx, json!({"path": "a.txt", "old_text": "beta", "new_text": "gamma"})).await;
    assert!(
        out.is_error && !out.text.contains("since you last read it"),
        "{}",
        out.text
    );
    let out = run(&ctx, json!({"path": "a.txt", "old_text": "alpha", "new_text": "gamma"})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(ctx.files.last_read(&resolved), None);
}

#[tokio::test]
async fn cancelled_edit_writes_nothing() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    ctx.cancel.cancel();
    let out = run(&ctx, json!({"path": "a.txt", "old_text": "a", "new_text": "b"})).await;
    assert!(out.is_error && out.text.contains("interrupted"), "{}", out.text);
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "a\n");
}

#[test]
fn schema_is_strict_and_described() {
    let schema = EditFileTool.parameters();
    assert_eq!(schema["additionalProperties"], json!(false));
    for (name, prop) in schema["properties"].as_object().unwrap() {
        assert!(
            prop["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name} has no description"
        );
    }
    assert_eq!(tools().len(), 1);
}

#[tokio::test]
async fn works_through_the_registry_with_cast_arguments() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "x\nx\n").unwrap();
    let mut registry = crate::ToolRegistry::new();
    registry.register(Arc::new(EditFileTool));
    let call = tern_protocol::ToolCall {
        id: "1".into(),
        name: "edit_file".into(),
        arguments: json!(r#"{"path": "a.txt", "old_text": "x", "new_text": "y", "occurrence": "2"}"#),
    };
    let out = registry.run(&call, &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "x\ny\n");
    let call = tern_protocol::ToolCall {
        arguments: json!({"path": "a.txt", "old_text": "x", "new_text": "z", "occurrence": 0}),
        ..call
    };
    let out = registry.run(&call, &ctx).await;
    assert!(out.is_error, "{}", out.text);
}
