use super::*;
use serde_json::json;
use tern_protocol::ToolOutput;

fn begin(s: &mut AppState, id: &str, name: &str) {
    s.apply(Event::ToolCallBegin {
        call_id: id.into(),
        name: name.into(),
        kind: tern_protocol::ToolKind::recorded_by_name(name),
        args: json!({"path": "a.rs"}),
    });
}

fn end(s: &mut AppState, id: &str, text: &str) {
    s.apply(Event::ToolCallEnd {
        call_id: id.into(),
        name: "x".into(),
        output: ToolOutput::text(text),
        duration_ms: 12,
        full_output_path: None,
    });
}

#[test]
fn streaming_builds_one_assistant_cell_and_finishes_it() {
    let mut s = AppState::new();
    s.apply(Event::TurnStarted {
        turn: 1,
        text: "hi".into(),
    });
    s.apply(Event::ReasoningDelta { text: "think".into() });
    s.apply(Event::AssistantDelta { text: "Hel".into() });
    s.apply(Event::AssistantDelta { text: "lo".into() });
    assert!(s.status.busy);
    assert_eq!(s.cells.len(), 3);
    assert!(matches!(&s.cells[2].kind, CellKind::Assistant { text, streaming: true } if text == "Hello"));
    assert!(matches!(&s.cells[1].kind, CellKind::Reasoning { streaming: false, .. }));
    s.apply(Event::AssistantMessage {
        text: "Hello".into(),
        reasoning: None,
    });
    s.apply(Event::TurnFinished {
        reason: TurnEnd::Completed,
    });
    assert!(matches!(&s.cells[2].kind, CellKind::Assistant { streaming: false, .. }));
    assert!(!s.status.busy);
    assert_eq!(s.last_exchange(), Some(("hi".into(), "Hello".into())));
}

#[test]
fn parallel_reads_group_and_commands_stand_alone() {
    let mut s = AppState::new();
    begin(&mut s, "a", "read_file");
    begin(&mut s, "b", "grep");
    begin(&mut s, "c", "exec");
    assert_eq!(s.cells.len(), 2);
    assert!(matches!(&s.cells[0].kind, CellKind::Tools(g) if g == &vec![0, 1]));
    assert_eq!(s.cell_of_call("b"), Some(0));
    assert_eq!(s.cell_of_call("c"), Some(1));
    end(&mut s, "a", "done");
    begin(&mut s, "d", "read_file");
    assert_eq!(s.cells.len(), 3, "a new read after results starts a new group");
}

#[test]
fn live_output_and_end_touch_the_cell() {
    let mut s = AppState::new();
    begin(&mut s, "a", "exec");
    let rev = s.cells[0].rev;
    s.apply(Event::ToolOutputDelta {
        call_id: "a".into(),
        chunk: "line\n".into(),
    });
    assert!(s.cells[0].rev > rev);
    end(&mut s, "a", "ok");
    assert_eq!(s.calls[0].status, calls::CallStatus::Done);
    assert!(!s.animating());
}

#[test]
fn retry_discards_the_partial_answer() {
    let mut s = AppState::new();
    s.apply(Event::AssistantDelta { text: "partial".into() });
    s.apply(Event::Retrying {
        attempt: 2,
        max_attempts: 5,
        delay_ms: 1000,
        reason: "HTTP 529".into(),
    });
    assert!(s.cells.is_empty());
    assert!(s.status.retry.is_some());
    s.apply(Event::AssistantDelta { text: "fresh".into() });
    assert!(s.status.retry.is_none());
}

#[test]
fn retry_discards_the_reasoning_of_the_failed_attempt_too() {
    let mut s = AppState::new();
    s.apply(Event::TurnStarted {
        turn: 1,
        text: "hi".into(),
    });
    let attempt = |s: &mut AppState| {
        s.apply(Event::ReasoningDelta { text: "think".into() });
        s.apply(Event::AssistantDelta { text: "part".into() });
    };
    attempt(&mut s);
    s.apply(Event::Retrying {
        attempt: 2,
        max_attempts: 5,
        delay_ms: 10,
        reason: "the connection broke".into(),
    });
    assert_eq!(s.cells.len(), 1, "only the user's message is left");
    attempt(&mut s);
    let reasoning = s
        .cells
        .iter()
        .filter(|c| matches!(c.kind, CellKind::Reasoning { .. }))
        .count();
    assert_eq!((s.cells.len(), reasoning), (3, 1));
}

#[test]
fn approvals_queue_and_clear_at_turn_end() {
    let mut s = AppState::new();
    for id in 1..=2 {
        s.apply(Event::ApprovalRequest(tern_protocol::ApprovalRequest {
            id,
            call_id: format!("c{id}"),
            tool: "exec".into(),
            command: "ls".into(),
            cwd: "/w".into(),
            reason: "runs a shell command".into(),
            proposed_rules: vec!["ls".into()],
            ..Default::default()
        }));
    }
    assert_eq!(s.approvals.len(), 2);
    s.apply(Event::TurnFinished {
        reason: TurnEnd::Interrupted,
    });
    assert!(s.approvals.is_empty());
    assert!(matches!(
        &s.cells.last().unwrap().kind,
        CellKind::Notice {
            level: Level::Warning,
            ..
        }
    ));
}
