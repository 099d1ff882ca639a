//! Subagents on screen: the pane's live progress, the labelled prompt, the transcript opened from the spawn call
//! with Ctrl+O and closed with Esc, and a background subagent's prompt outliving the main turn.

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tokio::sync::mpsc;

use crate::app::{App, slash_commands};
use crate::composer::Composer;
use crate::keymap::Keymap;
use crate::theme::Theme;
use crate::view::approval::ApprovalLayer;
use tern_protocol::{ApprovalMode, ApprovalRequest, Event, Op, ToolOutput, TurnEnd, Usage};

fn app() -> (App, mpsc::UnboundedReceiver<Op>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (tx, ops) = mpsc::unbounded_channel();
    let (notify, _) = mpsc::unbounded_channel();
    let composer = Composer::new(
        dir.path().to_path_buf(),
        slash_commands(),
        notify,
        std::sync::Arc::new(crate::testing::TestHost::new(dir.path())),
    );
    let mut app = App::new(tx, composer, Keymap::default(), Theme::dark(), 128_000);
    app.on_agent_event(Event::SessionStarted {
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        mode: ApprovalMode::AutoEdit,
        workspace: "/work/demo".into(),
        tools: vec![],
    });
    (app, ops, dir)
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(140, 24)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    format!("{}", terminal.backend())
}

fn tagged(inner: Event) -> Event {
    Event::Subagent {
        id: "1-abcd".into(),
        label: "reader".into(),
        inner: Box::new(inner),
    }
}

fn usage(input: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: 100,
        ..Usage::default()
    }
}

fn started(app: &mut App, wait: bool) {
    app.on_agent_event(Event::TurnStarted {
        turn: 1,
        text: "look around".into(),
    });
    app.on_agent_event(Event::ToolCallBegin {
        call_id: "call_1".into(),
        name: "spawn".into(),
        kind: tern_protocol::ToolKind::Agent,
        args: json!({"task": "read the notes", "label": "reader", "wait": wait}),
    });
    app.on_agent_event(Event::SubagentStarted {
        id: "1-abcd".into(),
        label: "reader".into(),
        task: "read the notes".into(),
        wait,
        transcript: None,
    });
    app.on_agent_event(tagged(Event::TurnStarted {
        turn: 1,
        text: "read the notes".into(),
    }));
}

fn prompt(id: u64) -> Event {
    tagged(Event::ApprovalRequest(ApprovalRequest {
        id,
        call_id: "call_2".into(),
        tool: "exec".into(),
        command: "cat notes.txt | wc -l".into(),
        cwd: "/work/demo".into(),
        reason: "runs a command".into(),
        proposed_rules: Vec::new(),
        ..Default::default()
    }))
}

#[test]
fn the_pane_shows_live_progress_and_the_prompt_says_which_subagent_asks() {
    let (mut app, mut ops, _dir) = app();
    started(&mut app, true);
    app.on_agent_event(tagged(Event::TokenUsage {
        last: usage(900),
        total: usage(900),
        context: None,
    }));
    app.on_agent_event(tagged(Event::ToolCallBegin {
        call_id: "call_2".into(),
        name: "exec".into(),
        kind: tern_protocol::ToolKind::Command,
        args: json!({"command": "cat notes.txt | wc -l"}),
    }));
    app.on_agent_event(prompt(7));
    let shown = screen(&mut app);
    assert!(shown.contains("subagent reader"), "{shown}");
    assert!(shown.contains("running exec · 1 step · 1.0k tokens"), "{shown}");
    assert!(shown.contains("Allow exec for subagent reader?"), "{shown}");
    // The answer goes to the request's id, whichever agent asked.
    let request = app.state.approvals.front().cloned().unwrap();
    app.layers.pop();
    app.layers.push(Box::new(ApprovalLayer::new(request, 0).settled()));
    app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE)));
    let sent: Vec<Op> = std::iter::from_fn(|| ops.try_recv().ok()).collect();
    assert!(
        sent.iter().any(|op| matches!(op, Op::Approve { id: 7, .. })),
        "{sent:?}"
    );
    app.on_agent_event(tagged(Event::ToolCallEnd {
        call_id: "call_2".into(),
        name: "exec".into(),
        output: ToolOutput::text("3"),
        duration_ms: 5,
        full_output_path: None,
    }));
    app.on_agent_event(tagged(Event::AssistantMessage {
        text: "The notes have 3 lines.".into(),
        reasoning: None,
    }));
    app.on_agent_event(Event::SubagentFinished {
        id: "1-abcd".into(),
        label: "reader".into(),
        end: TurnEnd::Completed,
        result: "The notes have 3 lines.".into(),
        usage: usage(900),
        steps: 2,
        elapsed_ms: 1500,
    });
    app.on_agent_event(Event::TokenUsage {
        last: usage(2000),
        total: usage(2000),
        context: None,
    });
    let shown = screen(&mut app);
    assert!(shown.contains("✓ subagent reader  done · 2 steps"), "{shown}");
    assert!(shown.contains("⎿ The notes have 3 lines."), "{shown}");
    // The session's tokens count the subagent's, and say how much was theirs.
    assert!(shown.contains("3.1k tokens (1.0k subagents)"), "{shown}");
}

#[test]
fn a_subagent_waiting_for_a_slot_shows_as_queued_until_it_starts() {
    let (mut app, _ops, _dir) = app();
    started(&mut app, true);
    app.on_agent_event(tagged(Event::Notice {
        text: format!("{} 3 subagents are running", tern_protocol::SUBAGENT_QUEUED),
    }));
    assert!(screen(&mut app).contains("subagent reader  waiting for a slot"));
    app.on_agent_event(tagged(Event::TurnStarted {
        turn: 1,
        text: "read the notes".into(),
    }));
    assert!(screen(&mut app).contains("subagent reader  thinking · 0 steps"));
}

#[test]
fn ctrl_o_on_the_spawn_call_opens_the_subagents_transcript_and_esc_closes_it() {
    let (mut app, _ops, _dir) = app();
    started(&mut app, true);
    app.on_agent_event(tagged(Event::AssistantMessage {
        text: "Here is what I found in the notes.".into(),
        reasoning: None,
    }));
    app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL)));
    assert!(app.viewer.is_some());
    let shown = screen(&mut app);
    assert!(
        shown.contains("subagent reader · running · read-only · Esc back"),
        "{shown}"
    );
    assert!(shown.contains("› read the notes"), "{shown}");
    // Live: what it does next shows at once.
    app.on_agent_event(tagged(Event::Notice {
        text: "still reading".into(),
    }));
    assert!(screen(&mut app).contains("still reading"));
    app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    assert!(app.viewer.is_none());
    let shown = screen(&mut app);
    assert!(shown.contains("› look around"), "{shown}");
}

#[test]
fn a_background_subagents_prompt_outlives_the_main_turn_and_esc_interrupts_it() {
    let (mut app, mut ops, _dir) = app();
    started(&mut app, false);
    app.on_agent_event(prompt(9));
    app.on_agent_event(Event::TurnFinished {
        reason: TurnEnd::Completed,
    });
    assert_eq!(app.state.approvals.len(), 1, "the subagent still waits for its answer");
    // Stopped before anyone answered, it takes its prompt with it.
    app.on_agent_event(Event::SubagentFinished {
        id: "1-abcd".into(),
        label: "reader".into(),
        end: TurnEnd::Interrupted,
        result: "interrupted".into(),
        usage: Usage::default(),
        steps: 0,
        elapsed_ms: 10,
    });
    assert!(app.state.approvals.is_empty() && app.state.approval_from.is_empty());
    app.on_agent_event(Event::SubagentStarted {
        id: "2-beef".into(),
        label: "other".into(),
        task: "more".into(),
        wait: false,
        transcript: None,
    });
    assert!(app.layers.iter().any(|l| l.name() == "approval"));
    app.layers.clear();
    // Idle, with a subagent at work: Esc stops it.
    assert!(!app.state.status.busy && app.state.subagents_running());
    app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    let sent: Vec<Op> = std::iter::from_fn(|| ops.try_recv().ok()).collect();
    assert!(sent.contains(&Op::Interrupt), "{sent:?}");
}
