//! A long session in a real terminal: its first frame comes from the log's tail (the last turns), and the whole
//! record replaces it once loaded; the transcript then counts every turn and the model gets the whole conversation.

use std::path::Path;

use serde_json::json;
use tern::protocol::{Event, Message, ToolCall, ToolOutput, TurnEnd};
use tern::session::{SessionLog, SessionMeta};

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{BIN, Scratch};
use crate::support::tmux::{Tmux, tmux_available};

/// A session of `turns` turns, each a prompt, a command with 10 KB of output and an answer: over 3 MB of log, more
/// than a resume loads before its first frame.
fn write_long_session(data: &Path, workspace: &Path, id: &str, turns: u64) {
    let meta = SessionMeta::new(id, &workspace.display().to_string(), "openai", "m");
    let mut log = SessionLog::create(&SessionLog::path_for(data, id), &meta).unwrap();
    for turn in 1..=turns {
        let at = 1_763_900_000_000 + turn * 10_000;
        let prompt = format!("prompt-{turn} please");
        log.event(
            at,
            &Event::TurnStarted {
                turn,
                text: prompt.clone(),
            },
        )
        .unwrap();
        log.record(&Message::User {
            content: prompt,
            images: vec![],
        })
        .unwrap();
        let call = ToolCall {
            id: format!("call_{turn}"),
            name: "exec".into(),
            arguments: json!({"command": format!("cat log_{turn}.txt")}),
        };
        log.record(&Message::Assistant {
            content: String::new(),
            reasoning: None,
            tool_calls: vec![call.clone()],
        })
        .unwrap();
        log.event(
            at + 1,
            &Event::ToolCallBegin {
                call_id: call.id.clone(),
                name: call.name.clone(),
                kind: tern::protocol::ToolKind::recorded_by_name(&call.name.clone()),
                args: call.arguments.clone(),
            },
        )
        .unwrap();
        let output = ToolOutput::text(format!("line of output {turn}\n").repeat(500));
        log.event(
            at + 2,
            &Event::ToolCallEnd {
                call_id: call.id.clone(),
                name: call.name.clone(),
                output: output.clone(),
                duration_ms: 5,
                full_output_path: None,
            },
        )
        .unwrap();
        log.record(&Message::Tool {
            call_id: call.id,
            name: call.name,
            content: output.text,
            is_error: false,
            images: vec![],
        })
        .unwrap();
        let answer = format!("answer-{turn} done");
        log.event(
            at + 3,
            &Event::AssistantMessage {
                text: answer.clone(),
                reasoning: None,
            },
        )
        .unwrap();
        log.record(&Message::Assistant {
            content: answer,
            reasoning: None,
            tool_calls: vec![],
        })
        .unwrap();
        log.event(
            at + 4,
            &Event::TurnFinished {
                reason: TurnEnd::Completed,
            },
        )
        .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_session_shows_its_last_turns_first_and_then_all_of_it() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("one more answer")]).await;
    let sb = Scratch::new();
    let workspace = std::fs::canonicalize(sb.work.path()).unwrap();
    let id = "20261124-010203-abcd";
    let data_dir = sb.data().join("tern");
    write_long_session(&data_dir, &workspace, id, 300);
    let log = SessionLog::path_for(&data_dir, id);
    assert!(std::fs::metadata(&log).unwrap().len() > tern::session::tail::PREVIEW_FROM);
    let command = format!(
        "cd {work} && export HOME={home} XDG_DATA_HOME={data} XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k; \
         {BIN} --provider openai --base-url {url} --model m resume {id}; echo TERN-EXITED-$?; sleep 30",
        work = workspace.display(),
        home = sb.home.path().display(),
        data = sb.data().display(),
        url = mock.openai_base_url(),
    );
    let tmux = Tmux::start("resume-long", (120, 40), &command);
    // The whole record: every turn counted, the last ones on screen, the preview's notice gone.
    let screen = tmux.wait_for("resumed a session of 300 turns").await;
    assert!(screen.contains("answer-300 done"), "{screen}");
    assert!(!screen.contains("loading the whole session"), "{screen}");

    tmux.keys(&["and one more", "Enter"]);
    tmux.wait_for("one more answer").await;
    let body = mock.requests().last().unwrap().to_string();
    // Every turn's words (3 MB of old command output do not fit the window: those become notes, as in any session).
    for part in [
        "prompt-1 please",
        "answer-1 done",
        "line of output 300\\n",
        "answer-150 done",
        "prompt-300 please",
        "and one more",
    ] {
        assert!(
            body.contains(part),
            "the model gets the whole conversation: {part} is missing"
        );
    }
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
