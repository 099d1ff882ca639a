use super::*;
use tern_protocol::{PlanItem, ToolOutput};

#[test]
fn a_streamed_message_is_not_sent_again_when_it_ends() {
    let mut stream = Stream::default();
    let delta = stream.live(&Event::AssistantDelta { text: "Hi".into() });
    assert_eq!(delta[0]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(delta[0]["content"], json!({"type": "text", "text": "Hi"}));
    let whole = Event::AssistantMessage {
        text: "Hi".into(),
        reasoning: None,
    };
    assert!(stream.live(&whole).is_empty());
    // A message that came whole (nothing streamed) is sent whole.
    assert_eq!(stream.live(&whole).len(), 1);
}

#[test]
fn a_recorded_turn_replays_as_the_user_s_and_the_agent_s_messages() {
    let user = recorded(&Event::TurnStarted {
        turn: 1,
        text: "fix it".into(),
    });
    assert_eq!(user[0]["sessionUpdate"], "user_message_chunk");
    let answer = recorded(&Event::AssistantMessage {
        text: "Done.".into(),
        reasoning: Some("think".into()),
    });
    let kinds: Vec<&Value> = answer.iter().map(|u| &u["sessionUpdate"]).collect();
    assert_eq!(kinds, ["agent_thought_chunk", "agent_message_chunk"]);
}

#[test]
fn a_tool_call_shows_its_title_kind_paths_and_cleaned_output() {
    let begin = recorded(&Event::ToolCallBegin {
        call_id: "c1".into(),
        name: "exec".into(),
        kind: ToolKind::Command,
        args: json!({"command": "ls\u{1b}[31m"}),
    });
    assert_eq!(begin[0]["kind"], "execute");
    assert!(!begin[0]["title"].as_str().unwrap().contains('\u{1b}'));
    let output = ToolOutput {
        details: ToolDetails::Diffs {
            diffs: vec![FileDiff {
                path: "a.txt".into(),
                old: None,
                new: Some("new\n".into()),
                added: 1,
                removed: 0,
                diagnostics: None,
            }],
        },
        ..ToolOutput::text("wrote \u{1b}]0;title\u{7}a.txt")
    };
    let end = recorded(&Event::ToolCallEnd {
        call_id: "c1".into(),
        name: "write_file".into(),
        output,
        duration_ms: 1,
        full_output_path: None,
    });
    assert_eq!(end[0]["status"], "completed");
    let text = end[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    assert_eq!(
        end[0]["content"][1],
        json!({"type": "diff", "path": "a.txt", "newText": "new\n"})
    );
    assert_eq!(end[0]["locations"][0]["path"], "a.txt");
    let failed = recorded(&Event::ToolCallEnd {
        call_id: "c2".into(),
        name: "exec".into(),
        output: ToolOutput::error("no"),
        duration_ms: 1,
        full_output_path: None,
    });
    assert_eq!(failed[0]["status"], "failed");
}

#[test]
fn the_plan_and_the_mode_are_told() {
    let plan = recorded(&Event::PlanUpdated {
        items: vec![PlanItem {
            content: "step".into(),
            status: PlanStatus::InProgress,
        }],
    });
    assert_eq!(
        plan[0]["entries"][0],
        json!({"content": "step", "priority": "medium", "status": "in_progress"})
    );
    let mode = recorded(&Event::ModeChanged {
        mode: ApprovalMode::Ask,
    });
    assert_eq!(mode[0]["currentModeId"], "ask");
    assert_eq!(
        modes(ApprovalMode::AutoEdit)["availableModes"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn a_running_call_s_output_is_sent_as_it_comes_cut_to_its_tail() {
    let mut stream = Stream::default();
    let delta = |chunk: &str| Event::ToolOutputDelta {
        call_id: "c".into(),
        chunk: chunk.into(),
    };
    stream.live(&delta("one\n"));
    let update = stream.live(&delta("two\u{1b}[2J\n"));
    assert_eq!(update[0]["status"], "in_progress");
    let text = update[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.starts_with("one\ntwo") && !text.contains('\u{1b}'), "{text:?}");
    let long = stream.live(&delta(&"é".repeat(LIVE_OUTPUT)));
    let text = long[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.len() <= LIVE_OUTPUT && text.ends_with('é'), "{}", text.len());
    // The end forgets it.
    stream.live(&Event::ToolCallEnd {
        call_id: "c".into(),
        name: "exec".into(),
        output: ToolOutput::text("done"),
        duration_ms: 1,
        full_output_path: None,
    });
    assert!(stream.output.is_empty());
}
