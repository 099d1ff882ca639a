//! Flow tests of the keys and rough edges of issue 11 item 5 (status messages, slash output, `/new`, mouse, help,
//! reasoning), on the app harness of `app.rs`.

use std::time::Instant;

use super::*;
use tern_protocol::Usage;

fn typed_command(h: &mut Harness, line: &str) {
    h.keys(line);
    h.press(key(KeyCode::Enter));
}

/// Fifty turns, then scrolled up well away from the end.
fn scrolled_up(h: &mut Harness) {
    for i in 0..50 {
        h.event(Event::TurnStarted {
            turn: i,
            text: format!("message number {i}"),
        });
        h.event(Event::TurnFinished {
            reason: TurnEnd::Completed,
        });
    }
    let _ = h.screen(80, 24);
    h.press(key(KeyCode::PageUp));
    h.press(key(KeyCode::PageUp));
    let screen = h.screen(80, 24);
    assert!(!screen.contains("message number 49"), "{screen}");
}

#[test]
fn slash_output_printed_at_once_scrolls_into_view() {
    let mut h = harness();
    scrolled_up(&mut h);
    typed_command(&mut h, "/model");
    let screen = h.screen(80, 24);
    assert!(screen.contains("model: gpt-4.1 (switch with /model NAME)"), "{screen}");
}

#[test]
fn slash_output_answered_later_scrolls_into_view_when_it_arrives() {
    let mut h = harness();
    scrolled_up(&mut h);
    typed_command(&mut h, "/context");
    assert_eq!(h.sent(), vec![Op::ShowContext]);
    let _ = h.screen(80, 24);
    h.event(Event::Notice {
        text: "context reloaded: 3 files".into(),
    });
    let screen = h.screen(80, 24);
    assert!(screen.contains("context reloaded: 3 files"), "{screen}");
    // Answered: a later notice leaves a scrolled-up view where it is.
    h.press(key(KeyCode::PageUp));
    h.press(key(KeyCode::PageUp));
    let _ = h.screen(80, 24);
    h.event(Event::Notice {
        text: "a notice nobody asked for".into(),
    });
    let screen = h.screen(80, 24);
    assert!(!screen.contains("a notice nobody asked for"), "{screen}");
}

#[test]
fn new_conversation_resets_the_token_count_and_context_meter() {
    let mut h = harness();
    h.event(Event::TokenUsage {
        last: Usage {
            input_tokens: 64_000,
            output_tokens: 1_000,
            ..Usage::default()
        },
        total: Usage {
            input_tokens: 90_000,
            output_tokens: 2_345,
            ..Usage::default()
        },
        context: None,
    });
    let screen = h.screen(120, 10);
    assert!(
        screen.contains("92.3k tokens") && screen.contains("50% context left"),
        "{screen}"
    );
    typed_command(&mut h, "/new");
    assert_eq!(h.sent(), vec![Op::NewConversation]);
    let screen = h.screen(120, 10);
    assert!(
        !screen.contains("tokens") && !screen.contains("context left"),
        "{screen}"
    );
}

#[test]
fn ctrl_c_hint_lasts_as_long_as_a_second_press_quits() {
    let mut h = harness();
    h.press(ctrl('c'));
    let screen = h.screen(80, 5);
    assert!(screen.contains("press Ctrl+C again to quit"), "{screen}");
    let deadline = h.app.wake_at().unwrap();
    let lasts = deadline - Instant::now();
    assert!(lasts <= DOUBLE_CTRL_C, "{lasts:?}");
    assert!(!h.app.quit);
    // Drawn at the deadline (the loop's one wake-up), the message is gone and nothing more is scheduled.
    h.app.state.expire_flash(deadline);
    assert_eq!(h.app.state.flash_text(deadline), None);
    assert_eq!(h.app.wake_at(), None);
}

#[test]
fn interrupting_goes_away_when_the_turn_ends() {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "go".into(),
    });
    h.press(key(KeyCode::Esc));
    assert_eq!(h.sent(), vec![Op::Interrupt]);
    assert!(h.screen(100, 5).contains("interrupting…"));
    h.event(Event::TurnFinished {
        reason: TurnEnd::Interrupted,
    });
    let screen = h.screen(100, 5);
    assert!(!screen.contains("interrupting"), "{screen}");
}

#[test]
fn f2_turns_mouse_capture_off_and_on_and_the_status_bar_says_so() {
    let mut h = harness();
    assert!(!h.screen(100, 5).contains("mouse off"));
    h.press(key(KeyCode::F(2)));
    assert!(h.app.state.status.mouse_off);
    let screen = h.screen(100, 5);
    assert!(screen.contains("mouse off"), "{screen}");
    h.press(key(KeyCode::F(2)));
    assert!(!h.app.state.status.mouse_off);
    let _ = h.screen(100, 5);
    h.app.state.status.flash = None;
    assert!(!h.screen(100, 5).contains("mouse off"));
}

#[test]
fn an_attached_file_goes_to_the_model_and_the_transcript_shows_its_chip() {
    let mut h = harness();
    std::fs::write(h._dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let host = crate::testing::TestHost::new(h._dir.path());
    let file = crate::composer::attach::read_file(&host, "notes.txt").unwrap();
    h.keys("sum up ");
    h.app.composer.attach(file);
    h.press(key(KeyCode::Enter));
    let sent = h.sent();
    let [Op::UserTurn { text }] = &sent[..] else {
        panic!("{sent:?}")
    };
    assert_eq!(
        text,
        "sum up @notes.txt (11 B) \n\n<attachment source=\"notes.txt\">\nalpha\nbeta\n</attachment>"
    );
    h.event(Event::TurnStarted {
        turn: 1,
        text: text.clone(),
    });
    let screen = h.screen(80, 12);
    assert!(screen.contains("› sum up @notes.txt (11 B)"), "{screen}");
    assert!(!screen.contains("alpha") && !screen.contains("attachment"), "{screen}");
}

/// A turn whose reasoning is markdown, then an answer.
fn reasoned_turn(h: &mut Harness) {
    h.event(Event::TurnStarted {
        turn: 1,
        text: "why does the parser panic?".into(),
    });
    h.event(Event::ReasoningDelta {
        text: "## Plan\n\n1. Read `parse()` in **src/parser.rs**.\n2. Check the empty-input path:\n\n```rust\nlet first = tokens[0];\n```\n\nThat indexes without a check.".into(),
    });
    h.event(Event::AssistantMessage {
        text: "`parse(\"\")` indexes `tokens[0]` on empty input.".into(),
        reasoning: None,
    });
    h.event(Event::TurnFinished {
        reason: TurnEnd::Completed,
    });
}

#[test]
fn ctrl_r_shows_reasoning_as_markdown_and_folds_it_again() {
    let mut h = harness();
    reasoned_turn(&mut h);
    let folded = h.screen(80, 24);
    assert!(folded.contains("▸ Thought") && !folded.contains("Plan"), "{folded}");
    h.press(ctrl('r'));
    insta::assert_snapshot!("expanded_reasoning_80x24", h.screen(80, 24));
    insta::assert_snapshot!("expanded_reasoning_120x40", h.screen(120, 40));
    let shown = h.screen(80, 24);
    // Markdown, not its source: no `##`, no `**`, the code block without fences.
    assert!(
        shown.contains("Plan") && !shown.contains("##") && !shown.contains("**"),
        "{shown}"
    );
    assert!(
        shown.contains("let first = tokens[0];") && !shown.contains("```"),
        "{shown}"
    );
    h.press(ctrl('r'));
    assert_eq!(h.screen(80, 24), folded);
}

#[test]
fn ctrl_r_on_a_selected_call_opens_the_reasoning_that_led_to_it() {
    let mut h = harness();
    for turn in 1..=2u64 {
        h.event(Event::TurnStarted {
            turn,
            text: format!("q{turn}"),
        });
        h.event(Event::ReasoningDelta {
            text: format!("reasoning of turn {turn}"),
        });
        begin(&mut h, &format!("c{turn}"), "exec", json!({"command": "ls"}));
        end(&mut h, &format!("c{turn}"), ToolOutput::text("ok"));
        h.event(Event::TurnFinished {
            reason: TurnEnd::Completed,
        });
    }
    // Ctrl+P twice: the first turn's call.
    h.press(ctrl('p'));
    h.press(ctrl('p'));
    h.press(ctrl('r'));
    let screen = h.screen(100, 30);
    assert!(screen.contains("reasoning of turn 1"), "{screen}");
    assert!(!screen.contains("reasoning of turn 2"), "{screen}");
}
