use super::*;
use crate::{SessionLog, SessionMeta, ToolResultStore};
use serde_json::json;
use tern_protocol::{ApprovalRequest, ToolOutput};

const KEY: &str = "sk-export-unit-test-key-0123456789";

fn output(text: &str, details: ToolDetails) -> ToolOutput {
    ToolOutput::text(text).with_details(details)
}

/// A session with an edit, a command whose output holds a key and an escape, a stored result, an approval, a
/// subagent and its usage; returns the log's path.
fn session(data: &Path) -> std::path::PathBuf {
    tern_secrets::register(KEY);
    let path = SessionLog::path_for(data, "s1");
    let mut log = SessionLog::create(&path, &SessionMeta::new("s1", "/w", "openai", "m1")).unwrap();
    let at = 1_764_290_000_000;
    let event = |log: &mut SessionLog, e: Event| log.event(at, &e).unwrap();
    event(
        &mut log,
        Event::TurnStarted {
            turn: 1,
            text: format!("fix it, my key is {KEY}"),
        },
    );
    event(
        &mut log,
        Event::AssistantMessage {
            text: "Editing.".into(),
            reasoning: None,
        },
    );
    event(
        &mut log,
        Event::ToolCallBegin {
            call_id: "c1".into(),
            name: "edit_file".into(),
            kind: ToolKind::Edit,
            args: json!({"path": "a.txt", "old": "one", "new": "two"}),
        },
    );
    let diff = FileDiff::new("a.txt", Some("zero\none\n".into()), Some("zero\ntwo\n".into()));
    event(
        &mut log,
        Event::ToolCallEnd {
            call_id: "c1".into(),
            name: "edit_file".into(),
            output: output("edited a.txt", ToolDetails::Diffs { diffs: vec![diff] }),
            duration_ms: 3,
            full_output_path: None,
        },
    );
    event(
        &mut log,
        Event::ApprovalRequest(ApprovalRequest {
            id: 7,
            tool: "exec".into(),
            command: "cat big.log".into(),
            ..Default::default()
        }),
    );
    event(
        &mut log,
        Event::ApprovalDecided {
            id: 7,
            decision: ApprovalDecision::Once,
        },
    );
    event(
        &mut log,
        Event::ToolCallBegin {
            call_id: "c2".into(),
            name: "exec".into(),
            kind: ToolKind::Command,
            args: json!({"command": "cat big.log"}),
        },
    );
    let stored = ToolResultStore::for_session(data, "s1")
        .save(
            "c2",
            "exec",
            &format!("line 1\n```\nfull \x1b]52;c;aGk=\x07 {KEY} end of the whole output\n"),
        )
        .unwrap();
    let exec = ToolDetails::Exec {
        exit_code: Some(0),
        duration_ms: 5,
        timed_out: false,
        sandboxed: true,
        new_git_repos: Vec::new(),
        background: None,
    };
    event(
        &mut log,
        Event::ToolCallEnd {
            call_id: "c2".into(),
            name: "exec".into(),
            output: output("line 1 (preview)", exec),
            duration_ms: 5,
            full_output_path: Some(stored.display().to_string()),
        },
    );
    event(
        &mut log,
        Event::SubagentStarted {
            id: "a1".into(),
            label: "explorer".into(),
            task: "look around".into(),
            wait: true,
            transcript: Some(subagent_log(&path)),
        },
    );
    event(
        &mut log,
        Event::SubagentFinished {
            id: "a1".into(),
            label: "explorer".into(),
            end: TurnEnd::Completed,
            result: "found three files".into(),
            usage: Usage::default(),
            steps: 2,
            elapsed_ms: 1500,
        },
    );
    event(
        &mut log,
        Event::AssistantMessage {
            text: "Done.".into(),
            reasoning: None,
        },
    );
    event(
        &mut log,
        Event::TokenUsage {
            last: Usage::default(),
            total: Usage {
                input_tokens: 1200,
                output_tokens: 80,
                ..Default::default()
            },
            context: None,
        },
    );
    event(
        &mut log,
        Event::TurnFinished {
            reason: TurnEnd::Completed,
        },
    );
    path
}

/// A subagent's own log next to the session's (one command it ran); returns its path.
fn subagent_log(session: &Path) -> String {
    let path = session.parent().unwrap().join("subagents/a1/session.jsonl");
    let mut log = SessionLog::create(&path, &SessionMeta::new("a1", "/w", "openai", "m1")).unwrap();
    let begin = Event::ToolCallBegin {
        call_id: "s1".into(),
        name: "exec".into(),
        kind: ToolKind::Command,
        args: json!({"command": "ls src"}),
    };
    let exec = ToolDetails::Exec {
        exit_code: Some(0),
        duration_ms: 1,
        timed_out: false,
        sandboxed: true,
        new_git_repos: Vec::new(),
        background: None,
    };
    let end = Event::ToolCallEnd {
        call_id: "s1".into(),
        name: "exec".into(),
        output: output("main.rs", exec),
        duration_ms: 1,
        full_output_path: None,
    };
    for event in [
        Event::TurnStarted {
            turn: 1,
            text: "look around".into(),
        },
        begin,
        end,
    ] {
        log.event(1, &event).unwrap();
    }
    path.display().to_string()
}

#[test]
fn markdown_has_the_prompt_the_diff_the_whole_result_and_no_key_or_escape() {
    let data = tempfile::tempdir().unwrap();
    let path = session(data.path());
    let md = export(&path, Format::Markdown, None).unwrap();
    assert!(md.starts_with("# fix it, my key is [redacted]\n"), "{md}");
    assert!(
        md.contains("- Model: `m1` (openai)") && md.contains("- Date: 2025-11-28T00:33:20Z"),
        "{md}"
    );
    assert!(md.contains("> fix it, my key is [redacted]"), "{md}");
    assert!(
        md.contains("```diff\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n zero\n-one\n+two\n```"),
        "{md}"
    );
    assert!(md.contains("### Tool: `exec` — `cat big.log`"), "{md}");
    assert!(md.contains("Result, exit 0, 5 ms:"), "{md}");
    // The whole stored output, fenced past the backticks inside it, the escape shown and not sent.
    assert!(
        md.contains("````text\nline 1\n```\nfull ␛]52;c;aGk=␇ [redacted] end of the whole output\n````"),
        "{md}"
    );
    assert!(!md.contains("(preview)"), "{md}");
    assert!(
        md.contains("*Approval for `exec`: `cat big.log`* — allowed once"),
        "{md}"
    );
    assert!(
        md.contains("### Subagent `explorer`") && md.contains("found three files"),
        "{md}"
    );
    assert!(md.contains("Its calls:\n\n- `exec` `ls src` (exit 0)\n"), "{md}");
    assert!(md.contains("- Input tokens: 1200\n- Output tokens: 80"), "{md}");
    assert!(
        !md.contains(KEY) && !md.contains('\x1b') && !md.contains('\x07'),
        "{md}"
    );
}

#[test]
fn json_has_the_documented_shape_and_no_key_or_escape() {
    let data = tempfile::tempdir().unwrap();
    let path = session(data.path());
    let text = export(&path, Format::Json, None).unwrap();
    assert!(!text.contains(KEY) && !text.contains('\x1b'), "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (doc["format"].as_str(), doc["version"].as_u64()),
        (Some(FORMAT), Some(1))
    );
    assert_eq!(doc["session"]["id"], "s1");
    assert_eq!(doc["session"]["model"], "m1");
    let turn = &doc["turns"][0];
    assert_eq!(turn["number"], 1);
    assert_eq!(turn["prompt"], "fix it, my key is [redacted]");
    assert_eq!(turn["end"], "completed");
    let items = turn["items"].as_array().unwrap();
    let types: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "assistant",
            "tool_call",
            "approval",
            "tool_call",
            "subagent",
            "assistant"
        ]
    );
    assert_eq!(items[1]["diffs"][0]["path"], "a.txt");
    assert!(
        items[1]["diffs"][0]["unified"]
            .as_str()
            .unwrap()
            .contains("-one\n+two\n")
    );
    assert_eq!(items[3]["result"]["exit_code"], 0);
    let result = items[3]["result"]["text"].as_str().unwrap();
    // The escape is kept as a value (escaped in the JSON text), the key is not.
    assert!(result.contains("full \x1b]52;c;aGk=\x07 [redacted] end"), "{result}");
    assert_eq!(items[4]["result"], "found three files");
    assert_eq!(items[4]["items"][0]["name"], "exec");
    assert_eq!(items[4]["items"][0]["result"]["text"], "main.rs");
    assert_eq!(doc["usage"]["input_tokens"], 1200);
}

#[test]
fn a_stored_result_outside_the_sessions_directory_is_not_read() {
    let data = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("id_rsa");
    std::fs::write(&secret, "PRIVATE BYTES").unwrap();
    let path = SessionLog::path_for(data.path(), "s2");
    let mut log = SessionLog::create(&path, &SessionMeta::new("s2", "/w", "openai", "m")).unwrap();
    log.event(
        1,
        &Event::TurnStarted {
            turn: 1,
            text: "hi".into(),
        },
    )
    .unwrap();
    log.event(
        1,
        &Event::ToolCallBegin {
            call_id: "c".into(),
            name: "exec".into(),
            kind: ToolKind::Command,
            args: json!({"command": "x"}),
        },
    )
    .unwrap();
    log.event(
        1,
        &Event::ToolCallEnd {
            call_id: "c".into(),
            name: "exec".into(),
            output: ToolOutput::text("the preview"),
            duration_ms: 0,
            full_output_path: Some(secret.display().to_string()),
        },
    )
    .unwrap();
    let md = export(&path, Format::Markdown, None).unwrap();
    assert!(md.contains("the preview") && !md.contains("PRIVATE BYTES"), "{md}");
}

#[test]
fn a_session_without_events_is_exported_from_its_messages() {
    let data = tempfile::tempdir().unwrap();
    let path = SessionLog::path_for(data.path(), "old");
    let mut log = SessionLog::create(&path, &SessionMeta::new("old", "/w", "openai", "m")).unwrap();
    log.record(&Message::User {
        content: "list it".into(),
        images: vec![],
    })
    .unwrap();
    log.record(&Message::Assistant {
        content: String::new(),
        reasoning: None,
        tool_calls: vec![tern_protocol::ToolCall {
            id: "c".into(),
            name: "list_dir".into(),
            arguments: json!({"path": "."}),
        }],
    })
    .unwrap();
    log.record(&Message::Tool {
        call_id: "c".into(),
        name: "list_dir".into(),
        content: "a.txt\nb.txt".into(),
        is_error: false,
        images: vec![],
    })
    .unwrap();
    let md = export(&path, Format::Markdown, None).unwrap();
    assert!(md.contains("## Turn 1\n\n> list it"), "{md}");
    assert!(
        md.contains("### Tool: `list_dir` — `.`") && md.contains("a.txt\nb.txt"),
        "{md}"
    );
}

#[test]
fn files_are_written_new_and_never_over_another() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.md");
    write_new(&path, "first").unwrap();
    assert!(write_new(&path, "second").is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(Format::for_file(Path::new("x.JSON")), Format::Json);
    assert_eq!(Format::for_file(Path::new("x")), Format::Markdown);
}

#[test]
fn export_goes_to_the_workspace_a_named_directory_or_a_named_file_and_never_over_one() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::create_dir(w.join("notes")).unwrap();
    assert_eq!(destination(w, "s1", ""), w.join("tern-session-s1.md"));
    assert_eq!(destination(w, "s1", " notes "), w.join("notes/tern-session-s1.md"));
    assert_eq!(destination(w, "s1", "out.json"), w.join("out.json"));
    assert_eq!(destination(w, "s1", "/tmp/x.md"), Path::new("/tmp/x.md"));
    let data = tempfile::tempdir().unwrap();
    let log = session(data.path());
    let json = w.join("out.json");
    save(&log, &json, None).unwrap();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["session"]["id"], "s1");
    let err = save(&log, &json, None).unwrap_err();
    assert!(err.contains("exists"), "{err}");
}
