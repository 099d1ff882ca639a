//! Tests of apply_patch (module `tools::patch::tests`; the file lives with the edit engine it exercises).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use super::*;
use crate::PathPolicy;
use crate::registry::{PreparedCall, execute_prepared};
use tern_protocol::ToolDetails;

fn setup() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    (dir, ctx)
}

async fn run(ctx: &ToolContext, args: Value) -> ToolOutput {
    let call = PreparedCall {
        tool: Arc::new(ApplyPatchTool),
        args,
    };
    execute_prepared(call, ctx).await
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn plan(ctx: &ToolContext, args: Value) -> Vec<PlannedFile> {
    plan_patch(ctx, &parse_edits(&args).unwrap()).unwrap()
}

#[tokio::test]
async fn applies_updates_adds_and_deletes() {
    let (dir, ctx) = setup();
    let d = dir.path();
    std::fs::write(d.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(d.join("c.txt"), "bye\n").unwrap();
    let out = run(
        &ctx,
        json!({"edits": [
            {"path": "a.txt", "old_text": "two", "new_text": "2"},
            {"path": "new/b.txt", "action": "add", "new_text": "hello\n"},
            {"path": "c.txt", "action": "delete"},
            {"path": "a.txt", "action": "replace", "old_text": "one\n2", "new_text": "1\n2"}
        ]}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        out.text,
        "Patch applied:\n- update a.txt (+2 -2)\n- add new/b.txt (+1)\n- delete c.txt (-1)"
    );
    assert_eq!(read(d, "a.txt"), "1\n2\n");
    assert_eq!(read(d, "new/b.txt"), "hello\n");
    assert!(!d.join("c.txt").exists());
    let ToolDetails::Diffs { diffs } = &out.details else {
        panic!("{:?}", out.details)
    };
    let paths: Vec<&str> = diffs.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["a.txt", "new/b.txt", "c.txt"]);
    assert_eq!(
        (diffs[2].old.as_deref(), diffs[2].new.as_deref()),
        (Some("bye\n"), None)
    );
}

#[tokio::test]
async fn a_failing_edit_writes_nothing_and_is_named() {
    let (dir, ctx) = setup();
    let d = dir.path();
    std::fs::write(d.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(d.join("b.txt"), "beta\n").unwrap();
    let out = run(
        &ctx,
        json!({"edits": [
            {"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"},
            {"path": "x.txt", "action": "add", "new_text": "new\n"},
            {"path": "b.txt", "old_text": "gamma", "new_text": "GAMMA"}
        ]}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.text.contains("edits[2] (b.txt): old_text was not found"),
        "{}",
        out.text
    );
    assert_eq!(read(d, "a.txt"), "alpha\n");
    assert!(!d.join("x.txt").exists());
}

#[tokio::test]
async fn a_later_edit_sees_earlier_ones() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    let out = run(
        &ctx,
        json!({"edits": [
            {"path": "a.txt", "old_text": "x", "new_text": "y"},
            {"path": "a.txt", "old_text": "x", "new_text": "z"}
        ]}),
    )
    .await;
    assert!(
        out.text
            .contains("edits[1] (a.txt, after the 1 earlier edit(s) to it in this patch)"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("new_text is already") || out.text.contains("not found"),
        "{}",
        out.text
    );
    assert_eq!(read(dir.path(), "a.txt"), "x\n");
}

#[tokio::test]
async fn action_preconditions() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let err = |edit: Value| {
        let ctx = ctx.clone();
        async move { run(&ctx, json!({ "edits": [edit] })).await }
    };
    let out = err(json!({"path": "a.txt", "action": "add", "new_text": "x"})).await;
    assert!(
        out.is_error && out.text.contains("already exists; use action replace"),
        "{}",
        out.text
    );
    let out = err(json!({"path": "b.txt", "old_text": "a", "new_text": "x"})).await;
    assert!(out.is_error && out.text.contains("b.txt does not exist") && out.text.contains("action add"));
    let out = err(json!({"path": "b.txt", "action": "delete"})).await;
    assert!(
        out.is_error && out.text.contains("does not exist, so it cannot be deleted"),
        "{}",
        out.text
    );
    let out = err(json!({"path": "a.txt", "action": "delete", "old_text": "a"})).await;
    assert!(out.is_error && out.text.contains("takes no old_text"), "{}", out.text);
    let out = err(json!({"path": "a.txt", "action": "move"})).await;
    assert!(
        out.is_error && out.text.contains("edits[0]: action must be"),
        "{}",
        out.text
    );
    let out = err(json!({"path": "../../etc/passwd", "old_text": "root", "new_text": "x"})).await;
    assert!(
        out.is_error && out.text.contains("edits[0]: path '../../etc/passwd'"),
        "{}",
        out.text
    );
    let many: Vec<Value> = (0..51)
        .map(|_| json!({"path": "a.txt", "old_text": "a", "new_text": "b"}))
        .collect();
    let out = run(&ctx, json!({ "edits": many })).await;
    assert!(out.is_error && out.text.contains("1 to 50 edits"), "{}", out.text);
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
}

#[tokio::test]
async fn dry_run_writes_nothing_and_shows_diffs() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "old line\n").unwrap();
    let out = run(
        &ctx,
        json!({"dry_run": true, "edits": [
            {"path": "a.txt", "old_text": "old line", "new_text": "new line"},
            {"path": "b.txt", "action": "add", "new_text": "fresh\n"}
        ]}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text
            .starts_with("Dry run — nothing written:\n- update a.txt (+1 -1)\n- add b.txt (+1)\n")
    );
    assert!(out.text.contains("-old line\n+new line"), "{}", out.text);
    assert!(out.text.contains("+fresh"), "{}", out.text);
    assert_eq!(read(dir.path(), "a.txt"), "old line\n");
    assert!(!dir.path().join("b.txt").exists());
}

#[tokio::test]
async fn edits_that_cancel_out_write_nothing() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let out = run(
        &ctx,
        json!({"edits": [
            {"path": "a.txt", "old_text": "a", "new_text": "b"},
            {"path": "./a.txt", "old_text": "b", "new_text": "a"}
        ]}),
    )
    .await;
    assert_eq!(out.text, "Patch applied:\n- unchanged a.txt (its edits cancel out)");
    assert!(matches!(&out.details, ToolDetails::Diffs { diffs } if diffs.is_empty()));
}

/// A write that fails midway (the last target became a directory after planning) rolls back every file already
/// written: updated files get their content back, created files and their new directories go, deleted files return
/// with their permissions.
#[test]
fn failed_write_rolls_everything_back() {
    let (dir, ctx) = setup();
    let d = dir.path();
    std::fs::write(d.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(d.join("del.txt"), "doomed\n").unwrap();
    std::fs::set_permissions(d.join("del.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::write(d.join("z.txt"), "zeta\n").unwrap();
    let mut files = plan(
        &ctx,
        json!({"edits": [
            {"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"},
            {"path": "deep/er/new.txt", "action": "add", "new_text": "new\n"},
            {"path": "del.txt", "action": "delete"},
            {"path": "z.txt", "old_text": "zeta", "new_text": "ZETA"}
        ]}),
    );
    std::fs::remove_file(d.join("z.txt")).unwrap();
    std::fs::create_dir(d.join("z.txt")).unwrap();
    let err = commit(&mut files).unwrap_err().to_string();
    assert!(err.contains("writing z.txt failed"), "{err}");
    assert!(
        err.contains("restored to their original content: a.txt, deep/er/new.txt, del.txt"),
        "{err}"
    );
    assert_eq!(read(d, "a.txt"), "alpha\n");
    assert!(!d.join("deep").exists(), "created directories are removed again");
    assert_eq!(read(d, "del.txt"), "doomed\n");
    let mode = std::fs::metadata(d.join("del.txt")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.txt", "del.txt", "z.txt"], "no temp files left behind");
}

/// A file someone else changed after planning is not overwritten; what was already written is undone.
#[test]
fn concurrent_change_aborts_and_rolls_back() {
    let (dir, ctx) = setup();
    let d = dir.path();
    std::fs::write(d.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(d.join("b.txt"), "beta\n").unwrap();
    let mut files = plan(
        &ctx,
        json!({"edits": [
            {"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"},
            {"path": "b.txt", "old_text": "beta", "new_text": "BETA"}
        ]}),
    );
    std::fs::write(d.join("b.txt"), "theirs\n").unwrap();
    let err = commit(&mut files).unwrap_err().to_string();
    assert!(err.contains("writing b.txt failed: the file changed on disk"), "{err}");
    assert_eq!(read(d, "a.txt"), "alpha\n");
    assert_eq!(read(d, "b.txt"), "theirs\n");
}

/// When the undo itself cannot be done (a written file was changed again before the rollback), the error says so
/// loudly and that file keeps the other writer's content.
#[test]
fn failed_rollback_is_reported() {
    let (dir, ctx) = setup();
    let d = dir.path().to_path_buf();
    std::fs::write(d.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(d.join("b.txt"), "beta\n").unwrap();
    let mut files = plan(
        &ctx,
        json!({"edits": [
            {"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"},
            {"path": "b.txt", "old_text": "beta", "new_text": "BETA"}
        ]}),
    );
    let err = commit_with(&mut files, |k| {
        if k == 1 {
            std::fs::write(d.join("a.txt"), "changed again\n").unwrap();
            std::fs::write(d.join("b.txt"), "theirs\n").unwrap();
        }
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("writing b.txt failed"), "{err}");
    assert!(
        err.contains("could NOT be restored") && err.contains("a.txt (the file changed on disk"),
        "{err}"
    );
    assert_eq!(read(&d, "a.txt"), "changed again\n");
    assert_eq!(read(&d, "b.txt"), "theirs\n");
}

#[tokio::test]
async fn written_files_are_forgotten_by_the_read_tracker() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let resolved = ctx.policy.resolve_write("a.txt").unwrap();
    let record = crate::file_state::ReadRecord {
        stamp: crate::file_state::FileStamp {
            modified: None,
            len: 2,
            hash: crate::file_state::hash_bytes(b"a\n"),
        },
        offset: 1,
        limit: 2000,
    };
    ctx.files.record_read(&resolved, record);
    let out = run(
        &ctx,
        json!({"edits": [{"path": "a.txt", "old_text": "a", "new_text": "b"}]}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(ctx.files.last_read(&resolved), None);
}

#[test]
fn schema_limits_and_descriptions() {
    let schema = ApplyPatchTool.parameters();
    assert_eq!(schema["properties"]["edits"]["maxItems"], json!(50));
    assert_eq!(
        schema["properties"]["edits"]["items"]["additionalProperties"],
        json!(false)
    );
    for (name, prop) in schema["properties"]["edits"]["items"]["properties"]
        .as_object()
        .unwrap()
    {
        assert!(
            prop["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name} has no description"
        );
    }
}

#[tokio::test]
async fn works_through_the_registry() {
    let (dir, ctx) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let mut registry = crate::ToolRegistry::new();
    registry.register(Arc::new(ApplyPatchTool));
    let call = tern_protocol::ToolCall {
        id: "1".into(),
        name: "apply_patch".into(),
        arguments: json!({"dry_run": "false", "edits": [
            {"path": "a.txt", "old_text": "a", "new_text": "b"},
            {"path": "n.txt", "action": "add", "new_text": "n\n"}
        ]}),
    };
    let out = registry.run(&call, &ctx).await;
    assert_eq!(out.text, "Patch applied:\n- update a.txt (+1 -1)\n- add n.txt (+1)");
    let call = tern_protocol::ToolCall {
        arguments: json!({"edits": [{"path": "a.txt", "action": "rename"}]}),
        ..call
    };
    let out = registry.run(&call, &ctx).await;
    assert!(out.is_error && out.text.contains("Invalid parameters"), "{}", out.text);
    let call = tern_protocol::ToolCall {
        arguments: json!({"edits": []}),
        ..call
    };
    assert!(registry.run(&call, &ctx).await.is_error);
}
