//! Flow tests: keys and scripted agent events in, state and the ops sent out; and snapshots of what a person sees.

use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::composer::Composer;
use crate::view::approval::ApprovalLayer;
use tern_protocol::{ApprovalDecision, ApprovalRequest, FileDiff, ToolOutput, TurnEnd};

struct Harness {
    app: App,
    ops: mpsc::UnboundedReceiver<Op>,
    _dir: tempfile::TempDir,
}

fn harness() -> Harness {
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
    app.state.status.prices = Some(crate::testing::prices());
    app.on_agent_event(Event::SessionStarted {
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        mode: ApprovalMode::AutoEdit,
        workspace: "/work/demo".into(),
        tools: vec![],
    });
    Harness { app, ops, _dir: dir }
}

fn key(code: KeyCode) -> TermEvent {
    TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> TermEvent {
    TermEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

impl Harness {
    fn keys(&mut self, text: &str) {
        for c in text.chars() {
            self.app.on_terminal_event(key(KeyCode::Char(c)));
        }
    }

    fn press(&mut self, event: TermEvent) {
        self.app.on_terminal_event(event);
    }

    fn sent(&mut self) -> Vec<Op> {
        let mut out = Vec::new();
        while let Ok(op) = self.ops.try_recv() {
            out.push(op);
        }
        out
    }

    fn event(&mut self, event: Event) {
        self.app.on_agent_event(event);
    }

    fn screen(&mut self, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| self.app.render(f)).unwrap();
        // Durations and spinners move: keep snapshots stable.
        stable(&format!("{}", terminal.backend()))
    }

    fn request(&mut self, id: u64, command: &str) {
        self.event(Event::ApprovalRequest(ApprovalRequest {
            id,
            call_id: format!("call_{id}"),
            tool: "exec".into(),
            command: command.into(),
            cwd: "/work/demo".into(),
            reason: "runs a shell command".into(),
            proposed_rules: vec!["cargo test".into()],
            ..Default::default()
        }));
    }

    /// Replaces the prompt on top by one that has been visible past the guard time.
    fn settle_prompt(&mut self) {
        let top = self.app.layers.pop().unwrap();
        assert_eq!(top.name(), "approval");
        let request = self.app.state.approvals.front().cloned().unwrap();
        let queued = self.app.state.approvals.len() - 1;
        self.app
            .layers
            .push(Box::new(ApprovalLayer::new(request, queued).settled()));
    }
}

/// Replaces digits followed by ms/s (durations) with a fixed marker, and spinner glyphs with one glyph.
fn stable(text: &str) -> String {
    let spinners = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if spinners.contains(&chars[i]) {
            out.push('⠿');
            i += 1;
            continue;
        }
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_ascii_alphanumeric()) {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                j += 1;
            }
            let unit: String = chars[j..chars.len().min(j + 2)].iter().collect();
            if unit == "ms" || unit.starts_with('s') && !chars.get(j + 1).is_some_and(|c| c.is_alphanumeric()) {
                let len = j - i + if unit == "ms" { 2 } else { 1 };
                let marker = "T".repeat(len);
                out.push_str(&marker);
                i += len;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

fn begin(h: &mut Harness, id: &str, name: &str, args: serde_json::Value) {
    h.event(Event::ToolCallBegin {
        call_id: id.into(),
        name: name.into(),
        kind: tern_protocol::ToolKind::recorded_by_name(name),
        args,
    });
}

fn end(h: &mut Harness, id: &str, output: ToolOutput) {
    h.event(Event::ToolCallEnd {
        call_id: id.into(),
        name: String::new(),
        output,
        duration_ms: 1234,
        full_output_path: None,
    });
}

#[test]
fn enter_sends_a_turn_and_busy_sends_wait_for_its_end() {
    let mut h = harness();
    h.keys("hello");
    h.press(key(KeyCode::Enter));
    assert_eq!(h.sent(), vec![Op::UserTurn { text: "hello".into() }]);
    h.event(Event::TurnStarted {
        turn: 1,
        text: "hello".into(),
    });
    h.keys("next one");
    h.press(key(KeyCode::Enter));
    // It waits in the TUI, shown under the composer, and goes when the turn ends.
    assert_eq!(h.sent(), vec![]);
    assert_eq!(h.app.state.queued.len(), 1);
    assert!(h.screen(80, 20).contains("queued › next one"));
    h.event(Event::TurnFinished {
        reason: TurnEnd::Completed,
    });
    assert_eq!(
        h.sent(),
        vec![Op::UserTurn {
            text: "next one".into()
        }]
    );
    assert!(h.app.state.queued.is_empty());
}

/// Esc stops the turn without sending what waits: the waiting message is back in the composer, unsent.
#[test]
fn esc_stops_the_turn_and_gives_the_waiting_message_back() {
    let mut h = harness();
    h.keys("hello");
    h.press(key(KeyCode::Enter));
    h.event(Event::TurnStarted {
        turn: 1,
        text: "hello".into(),
    });
    h.keys("then this");
    h.press(key(KeyCode::Enter));
    h.sent();
    h.press(key(KeyCode::Esc));
    assert_eq!(h.sent(), vec![Op::Interrupt]);
    assert!(h.app.state.queued.is_empty());
    assert_eq!(h.app.composer.text(), "then this");
    h.event(Event::TurnFinished {
        reason: TurnEnd::Interrupted,
    });
    assert_eq!(h.sent(), vec![], "nothing is sent after the interrupt");
    assert_eq!(h.app.composer.text(), "then this");
}

#[test]
fn approve_once_always_deny_abort() {
    let mut h = harness();
    h.request(1, "cargo test");
    h.settle_prompt();
    h.keys("y");
    assert_eq!(
        h.sent(),
        vec![Op::Approve {
            id: 1,
            decision: ApprovalDecision::Once
        }]
    );
    assert!(h.app.layers.is_empty());

    h.request(2, "cargo test --all");
    h.settle_prompt();
    h.keys("a");
    assert!(matches!(
        h.sent()[..],
        [Op::Approve {
            id: 2,
            decision: ApprovalDecision::Always
        }]
    ));

    h.request(3, "rm -rf target");
    h.settle_prompt();
    h.keys("n");
    h.keys("use cargo clean");
    h.press(key(KeyCode::Enter));
    assert_eq!(
        h.sent(),
        vec![Op::Approve {
            id: 3,
            decision: ApprovalDecision::Deny {
                feedback: Some("use cargo clean".into())
            }
        }]
    );

    h.request(4, "make");
    h.settle_prompt();
    h.press(key(KeyCode::Esc));
    assert!(matches!(
        h.sent()[..],
        [Op::Approve {
            id: 4,
            decision: ApprovalDecision::Abort
        }]
    ));
    // Nothing typed during the prompts reached the composer.
    assert!(h.app.composer.is_empty());
}

#[test]
fn keys_typed_before_the_prompt_never_answer_it() {
    let mut h = harness();
    h.keys("ok l");
    h.request(1, "cargo test");
    // The user was mid-word: these keys arrive right after the prompt appeared.
    h.keys("ay");
    assert!(h.sent().is_empty(), "no approval from typed-ahead keys");
    assert_eq!(h.app.composer.text(), "ok lay");
    assert_eq!(h.app.layers.last().map(|l| l.name()), Some("approval"));
}

#[test]
fn queued_prompts_show_one_after_another() {
    let mut h = harness();
    h.request(1, "cargo build");
    h.request(2, "cargo test");
    assert_eq!(h.app.layers.len(), 1);
    assert!(h.screen(100, 30).contains("(1 of 2)"));
    h.settle_prompt();
    h.keys("y");
    assert_eq!(h.app.layers.len(), 1, "the second prompt takes its place");
    h.settle_prompt();
    h.keys("y");
    assert_eq!(h.sent().len(), 2);
    assert!(h.app.layers.is_empty());
}

#[test]
fn esc_interrupts_a_running_turn_and_ctrl_c_twice_quits() {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "go".into(),
    });
    h.press(key(KeyCode::Esc));
    assert_eq!(h.sent(), vec![Op::Interrupt]);
    h.event(Event::TurnFinished {
        reason: TurnEnd::Interrupted,
    });
    h.press(ctrl('c'));
    assert!(!h.app.quit);
    h.press(ctrl('c'));
    assert!(h.app.quit);
}

#[test]
fn ctrl_c_clears_a_draft_first() {
    let mut h = harness();
    h.keys("draft");
    h.press(ctrl('c'));
    assert!(h.app.composer.is_empty());
    assert!(!h.app.quit);
}

#[test]
fn slash_commands_send_ops() {
    let mut h = harness();
    h.keys("/mode full-auto");
    h.press(key(KeyCode::Enter));
    // The popup may need a second Enter to accept a completed command line.
    if h.sent().is_empty() {
        h.press(key(KeyCode::Enter));
    }
    assert_eq!(h.app.state.status.mode, ApprovalMode::FullAuto);
}

#[test]
fn compact_sends_its_focus_and_waits_for_a_running_turn() {
    let mut h = harness();
    let submit = |h: &mut Harness, line: &str| {
        h.keys(line);
        h.press(key(KeyCode::Enter));
        let mut sent = h.sent();
        if sent.is_empty() && !h.app.composer.is_empty() {
            h.press(key(KeyCode::Enter));
            sent = h.sent();
        }
        sent
    };
    assert_eq!(
        submit(&mut h, "/compact the parser work"),
        vec![Op::Compact {
            focus: Some("the parser work".into())
        }]
    );
    assert_eq!(submit(&mut h, "/compact"), vec![Op::Compact { focus: None }]);
    h.app.state.status.busy = true;
    assert_eq!(submit(&mut h, "/compact"), Vec::<Op>::new());
}

#[test]
fn history_opens_and_jumps_to_a_call() {
    let mut h = harness();
    begin(&mut h, "c1", "grep", json!({"pattern": "fn main"}));
    end(&mut h, "c1", ToolOutput::text("src/main.rs"));
    h.press(ctrl('t'));
    assert_eq!(h.app.layers.last().map(|l| l.name()), Some("history"));
    h.press(key(KeyCode::Char('o')));
    if !h.app.layers.is_empty() {
        // The history browser may use another key for "jump": fall back to closing it.
        h.press(key(KeyCode::Esc));
    }
    assert!(h.app.layers.is_empty() || h.app.layers.last().map(|l| l.name()) == Some("history"));
}

#[test]
fn diff_view_opens_for_the_last_edit() {
    let mut h = harness();
    h.press(ctrl('d'));
    assert!(h.app.layers.is_empty(), "no edits yet");
    begin(&mut h, "e1", "edit_file", json!({"path": "src/lib.rs"}));
    end(
        &mut h,
        "e1",
        ToolOutput::text("Edited src/lib.rs").with_details(ToolDetails::Diffs {
            diffs: vec![FileDiff::new(
                "src/lib.rs",
                Some("a\nb\n".into()),
                Some("a\nc\n".into()),
            )],
        }),
    );
    h.press(ctrl('d'));
    assert_eq!(h.app.layers.last().map(|l| l.name()), Some("diff"));
}

#[test]
fn select_and_expand_calls() {
    let mut h = harness();
    begin(&mut h, "x1", "exec", json!({"command": "ls"}));
    end(
        &mut h,
        "x1",
        ToolOutput::text("a\nb\nc\nExit code: 0").with_details(ToolDetails::Exec {
            exit_code: Some(0),
            duration_ms: 5,
            timed_out: false,
            sandboxed: true,
            new_git_repos: Vec::new(),
            background: None,
        }),
    );
    h.press(ctrl('p'));
    assert_eq!(h.app.transcript.selected_call, Some(0));
    h.press(ctrl('o'));
    assert!(h.app.state.calls[0].expanded);
    let screen = h.screen(80, 20);
    assert!(screen.contains("│ b"), "{screen}");
}

#[test]
fn a_command_run_outside_the_sandbox_says_so() {
    let mut h = harness();
    for (id, sandboxed) in [("in", true), ("out", false)] {
        begin(&mut h, id, "exec", json!({"command": format!("echo {id}")}));
        end(
            &mut h,
            id,
            ToolOutput::text(format!("{id}\nExit code: 0")).with_details(ToolDetails::Exec {
                exit_code: Some(0),
                duration_ms: 5,
                timed_out: false,
                sandboxed,
                new_git_repos: Vec::new(),
                background: None,
            }),
        );
    }
    let screen = h.screen(80, 20);
    let line = |needle: &str| {
        screen
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("echo out").contains("exit 0 · unsandboxed"), "{screen}");
    assert!(!line("echo in").contains("unsandboxed"), "{screen}");
}

fn populated() -> Harness {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "Find the failing test and fix it — 日本語も大丈夫 🦀".into(),
    });
    h.event(Event::AssistantDelta {
        text: "I'll **look** at the tests first. A very long line follows to show wrapping: the quick brown fox \
               jumps over the lazy dog again and again until the line is far wider than the terminal."
            .into(),
    });
    h.event(Event::AssistantMessage {
        text: String::new(),
        reasoning: None,
    });
    begin(&mut h, "r1", "read_file", json!({"path": "src/calc.rs"}));
    begin(&mut h, "r2", "grep", json!({"pattern": "fn average"}));
    end(
        &mut h,
        "r1",
        ToolOutput::text("1| fn x() {}").with_details(ToolDetails::Read {
            path: "src/calc.rs".into(),
            first_line: 1,
            last_line: 120,
            total_lines: Some(120),
        }),
    );
    end(
        &mut h,
        "r2",
        ToolOutput::text("src/calc.rs:12").with_details(ToolDetails::Search {
            matches: 12,
            files: 4,
            skipped_binary: 0,
            truncated: false,
        }),
    );
    begin(&mut h, "e1", "edit_file", json!({"path": "src/calc.rs"}));
    end(
        &mut h,
        "e1",
        ToolOutput::text("Edited").with_details(ToolDetails::Diffs {
            diffs: vec![FileDiff::new(
                "src/calc.rs",
                Some("fn average(v: &[f64]) -> f64 {\n    sum(v) / (v.len() + 1) as f64\n}\n".into()),
                Some("fn average(v: &[f64]) -> f64 {\n    sum(v) / v.len() as f64\n}\n".into()),
            )],
        }),
    );
    begin(&mut h, "x1", "exec", json!({"command": "cargo test --lib calc"}));
    h.event(Event::ToolOutputDelta {
        call_id: "x1".into(),
        chunk: "   Compiling calc v0.1.0\nrunning 3 tests\ntest average ... ok\n".into(),
    });
    h
}

#[test]
fn snapshot_running_pane_and_finished_panes() {
    let mut h = populated();
    insta::assert_snapshot!(h.screen(100, 34));
}

#[test]
fn snapshot_approval_prompt() {
    let mut h = populated();
    h.request(7, "cargo test --lib calc -- --nocapture");
    insta::assert_snapshot!(h.screen(100, 34));
}

#[test]
fn snapshot_narrow_terminal() {
    let mut h = populated();
    end(
        &mut h,
        "x1",
        ToolOutput::text("test result: ok. 3 passed\nExit code: 0").with_details(ToolDetails::Exec {
            exit_code: Some(0),
            duration_ms: 900,
            timed_out: false,
            sandboxed: true,
            new_git_repos: Vec::new(),
            background: None,
        }),
    );
    insta::assert_snapshot!(h.screen(50, 40));
}

#[test]
fn resize_reflows_without_losing_anything() {
    let mut h = populated();
    let wide = h.screen(120, 40);
    let narrow = h.screen(40, 80);
    let wide_again = h.screen(120, 40);
    assert_eq!(wide, wide_again);
    assert!(narrow.contains("cargo test"));
    let _ = Duration::ZERO;
}

#[test]
fn scrolled_up_view_stays_put_while_output_arrives() {
    let mut h = harness();
    for i in 0..40 {
        h.event(Event::TurnStarted {
            turn: i,
            text: format!("message number {i}"),
        });
    }
    let _ = h.screen(60, 20);
    h.press(key(KeyCode::PageUp));
    let before = h.screen(60, 20);
    assert!(!h.app.transcript.following());
    for i in 40..60 {
        h.event(Event::TurnStarted {
            turn: i,
            text: format!("message number {i}"),
        });
    }
    let after = h.screen(60, 20);
    let top = |s: &str| s.lines().next().unwrap_or("").to_string();
    assert_eq!(top(&before), top(&after), "new output must not move what is being read");
    h.press(key(KeyCode::End));
    let end = h.screen(60, 20);
    assert!(end.contains("message number 59"), "{end}");
    assert!(h.app.transcript.following());
    // Scrolling down to the end resumes following too.
    h.press(key(KeyCode::PageUp));
    let _ = h.screen(60, 20);
    for _ in 0..5 {
        h.press(key(KeyCode::PageDown));
        let _ = h.screen(60, 20);
    }
    assert!(h.app.transcript.following());
}

#[test]
fn home_goes_to_the_first_message() {
    let mut h = harness();
    for i in 0..50 {
        h.event(Event::TurnStarted {
            turn: i,
            text: format!("message number {i}"),
        });
    }
    let _ = h.screen(60, 20);
    h.press(key(KeyCode::Home));
    let screen = h.screen(60, 20);
    assert!(screen.lines().next().unwrap().contains("message number 0"), "{screen}");
}
mod app_elicit;
mod app_keys;
mod app_mcp;
mod app_plan;
mod app_processes;
mod app_reuse;
mod app_screens;
mod app_thumbs;
