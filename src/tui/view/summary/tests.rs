//! Summaries of real command outputs (bash run by the exec tool) and of patches.

use serde_json::{Value, json};

use super::*;
use tern_protocol::FileDiff;
use tern_tools::exec::ExecTool;
use tern_tools::{PathPolicy, Tool, ToolContext};

/// Runs `command` through the exec tool, as the agent does, and returns the call the UI would hold.
async fn run(command: &str) -> ToolCallState {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    let args = json!({ "command": command });
    let output = ExecTool::default().execute(args.clone(), &ctx).await.unwrap();
    let mut call = ToolCallState::new("c1".into(), "exec".into(), tern_protocol::ToolKind::Command, args);
    call.finish(output, std::time::Duration::from_millis(5), None);
    call
}

fn summary_of(call: &ToolCallState) -> String {
    summary(call.output.as_ref().unwrap())
}

#[tokio::test]
async fn failed_command_shows_its_error_line_not_the_stderr_label() {
    let call = run("ls /definitely/not/here").await;
    let s = summary_of(&call);
    assert!(s.starts_with("ls: cannot access '/definitely/not/here'"), "{s}");
    assert!(!s.contains("STDERR"), "{s}");

    // Progress on stderr first, the error after: the error line wins.
    let call =
        run("echo '   Compiling foo v0.1.0' >&2; echo 'error[E0425]: cannot find value `x`' >&2; exit 101").await;
    assert_eq!(summary_of(&call), "error[E0425]: cannot find value `x`");

    // Nothing on stderr: the last stdout line says what happened.
    let call = run("echo step one; echo 'tests: 3 passed, 1 FAILED'; exit 1").await;
    assert_eq!(summary_of(&call), "tests: 3 passed, 1 FAILED");

    // Nothing at all.
    let call = run("exit 3").await;
    assert_eq!(summary_of(&call), "exit 3, no output");
}

#[tokio::test]
async fn long_output_shows_its_line_count_and_tail() {
    let call = run("seq 1 500").await;
    assert_eq!(summary_of(&call), "500 lines · 500");
    let (hidden, tail) = exec_tail(call.output.as_ref().unwrap()).unwrap();
    assert_eq!(hidden, 496);
    assert_eq!(tail, ["497", "498", "499", "500"]);
    assert_eq!(more_lines(hidden), "… +496 lines");

    // One line: the summary is the line, and there is nothing to fold.
    let call = run("echo hello").await;
    assert_eq!(summary_of(&call), "hello");
    assert_eq!(exec_tail(call.output.as_ref().unwrap()), None);

    // No output says so rather than showing exec's status line.
    let call = run("true").await;
    assert_eq!(summary_of(&call), "no output");
}

#[test]
fn exec_text_drops_labels_and_status() {
    let parsed = ExecText::parse("out\nSTDERR:\nerr\nExit code: 1 (took 0.01s)\nNote: a sandbox note");
    assert_eq!(parsed.stdout, ["out"]);
    assert_eq!(parsed.stderr, ["err"]);
    let parsed = ExecText::parse(
        "Error: Command timed out after 5 seconds and was killed, with every process it started. Output so \
         far:\n(no output)\nIf it needs longer, pass a larger `timeout` (max 600 seconds).",
    );
    assert_eq!(
        parsed.error_line(),
        Some("Command timed out after 5 seconds and was killed, with every process it started.")
    );
    assert!(parsed.is_empty());
}

#[test]
fn other_failures_and_long_results() {
    let mut call = ToolCallState::new(
        "c".into(),
        "edit_file".into(),
        tern_protocol::ToolKind::Edit,
        json!({"path": "a.rs"}),
    );
    call.finish(
        ToolOutput::error("Error: old_text not found in a.rs\nclosest match at line 3"),
        Default::default(),
        None,
    );
    assert_eq!(summary_of(&call), "old_text not found in a.rs");

    let mut call = ToolCallState::new(
        "c".into(),
        "mcp__docs__search".into(),
        tern_protocol::ToolKind::Mcp,
        json!({}),
    );
    call.finish(ToolOutput::text("first hit\nsecond\n\nthird"), Default::default(), None);
    assert_eq!(summary_of(&call), "first hit … +2 lines");
}

fn patch_call(args: Value) -> ToolCallState {
    ToolCallState::new("p".into(), "apply_patch".into(), tern_protocol::ToolKind::Edit, args)
}

#[test]
fn patch_rows_name_their_files() {
    let args = json!({"edits": [
        {"path": "src/a.rs", "old_text": "x", "new_text": "y"},
        {"path": "src/b.rs", "action": "add", "new_text": "z"},
        {"path": "src/a.rs", "old_text": "y", "new_text": "w"}
    ]});
    let mut call = patch_call(args.clone());
    assert_eq!(call_label(&call), "src/a.rs, src/b.rs (2 files)");
    // Sent as a JSON string (some models do): read the same.
    assert_eq!(
        call_label(&patch_call(Value::String(args.to_string()))),
        "src/a.rs, src/b.rs (2 files)"
    );
    // Once it ran, the diffs say what it touched.
    call.finish(
        ToolOutput::text("ok").with_details(ToolDetails::Diffs {
            diffs: vec![FileDiff::new("src/c.rs", None, Some("c\n".into()))],
        }),
        Default::default(),
        None,
    );
    assert_eq!(call_label(&call), "src/c.rs");
    // Other tools keep their key argument.
    let call = ToolCallState::new(
        "e".into(),
        "exec".into(),
        tern_protocol::ToolKind::Command,
        json!({"command": "ls -la"}),
    );
    assert_eq!(call_label(&call), "ls -la");
}

#[test]
fn hidden_characters_in_a_written_name_are_shown() {
    // write_file tells the model the real name ("Created x\u{200b}file.txt"); the summary and a patch row show the
    // zero-width space, so the name cannot pass for "xfile.txt".
    let args = json!({"path": "x\u{200b}file.txt", "content": "z\n"});
    let mut call = ToolCallState::new("w".into(), "write_file".into(), tern_protocol::ToolKind::Edit, args);
    call.finish(
        ToolOutput::text("Created x\u{200b}file.txt (1 line)"),
        Default::default(),
        None,
    );
    let shown = summary_of(&call);
    assert_eq!(shown, "Created x\\u{200b}file.txt (1 line)");

    let call = patch_call(json!({"edits": [{"path": "a\u{2060}b.rs", "action": "add", "new_text": "z"}]}));
    assert_eq!(call_label(&call), "a\\u{2060}b.rs");
}
