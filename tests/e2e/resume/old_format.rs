//! Sessions written before the renovation (tern 0f856cf, one crate) still load and resume. The fixture is a real
//! session of that build: `tern --mode full-auto run "tidy the notes"` against a scripted model that read a file, ran
//! a command and edited the file; its workspace and session paths are written as `{workspace}` and `{session_dir}`.

use std::path::Path;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::Scratch;
use tern::protocol::{Event, Message, ToolDetails, ToolKind};

const FIXTURE: &str = include_str!("fixtures/before-the-renovation.jsonl");
const ID: &str = "20261127-120807-4e64";

/// The fixture as a session of `workspace`, written where tern keeps sessions under `data`.
fn install(data: &Path, workspace: &Path) -> std::path::PathBuf {
    let dir = data.join("tern/sessions").join(ID);
    std::fs::create_dir_all(&dir).unwrap();
    let text = FIXTURE
        .replace("{workspace}", &workspace.display().to_string())
        .replace("{session_dir}", &dir.display().to_string());
    let path = dir.join("session.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_session_written_before_the_renovation_loads_whole() {
    let scratch = Scratch::new();
    let path = install(&scratch.data(), scratch.work.path());
    let loaded = tern::session::log::load(&path).unwrap();
    assert_eq!(loaded.meta.id, ID);
    assert_eq!(loaded.model(), "m");
    let roles: Vec<&str> = loaded
        .messages
        .iter()
        .map(|m| match m {
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        })
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    // A tool result's text is kept once, in its recorded end event; the message gets it back on load.
    assert!(
        loaded
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { content, .. } if content.contains("hello from the fixture"))),
        "{:?}",
        loaded.messages
    );
    let ended: Vec<&str> = loaded
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ToolCallEnd { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ended, ["read_file", "exec", "edit_file"]);
    // Calls were recorded without their kind then: the loader puts in the kind each name had.
    let kinds: Vec<ToolKind> = loaded
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ToolCallBegin { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [ToolKind::Read, ToolKind::Command, ToolKind::Edit]);
    assert!(
        loaded.events.iter().any(|(_, e)| matches!(
            e,
            Event::ToolCallEnd { output, .. } if matches!(&output.details, ToolDetails::Diffs { diffs } if diffs.len() == 1)
        )),
        "the edit's diff is kept"
    );
    assert_eq!(loaded.checkpoints.len(), 1, "the turn's checkpoint record");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_written_before_the_renovation_resumes_with_its_conversation() {
    let scratch = Scratch::new();
    install(&scratch.data(), scratch.work.path());
    let mock = MockLlm::start(vec![Reply::text("Resumed.")]).await;
    let out = scratch.run(Some(&mock), &["run", "--resume", ID, "and now?"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Resumed."));
    let request = mock.requests().remove(0).to_string();
    for said in [
        "tidy the notes",
        "hello from the fixture",
        "Two lines. Now a command:",
        "and now?",
    ] {
        assert!(request.contains(said), "{said} is in the resumed request: {request}");
    }
}
