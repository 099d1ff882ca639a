//! Flow tests of the plan pane and custom commands, on the app harness of `app.rs`.

use serde_json::json;
use tokio::sync::mpsc;

use super::*;

/// A harness whose workspace holds `files` in `.tern/commands/` (name, text).
fn harness_with_commands(files: &[(&str, &str)]) -> Harness {
    let mut h = harness();
    let dir = h._dir.path().join(tern_commands::PROJECT_DIR);
    for (name, text) in files {
        std::fs::create_dir_all(dir.join(name).parent().unwrap()).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }
    let custom = tern_commands::CustomCommands::load_from(
        std::slice::from_ref(&dir),
        Some(h._dir.path()),
        &[],
        &builtin_names(),
    );
    let (notify, _) = mpsc::unbounded_channel();
    let (tx, ops) = mpsc::unbounded_channel();
    let composer = Composer::new(
        h._dir.path().to_path_buf(),
        all_commands(&custom),
        notify,
        std::sync::Arc::new(crate::testing::TestHost::new(h._dir.path())),
    );
    h.app = App::new(tx, composer, Keymap::default(), Theme::dark(), 128_000);
    h.app.custom = custom;
    h.ops = ops;
    h
}

#[test]
fn a_custom_command_sends_its_expanded_prompt() {
    let mut h = harness_with_commands(&[
        (
            "audit.md",
            "---\ndescription: Review a file for bugs\nargument-hint: <path>\n---\nReview $1 and report bugs.\n",
        ),
        ("help.md", "not the help"),
    ]);
    h.keys("/au");
    let screen = h.screen(80, 12);
    assert!(screen.contains("/audit <path>"), "{screen}");
    assert!(screen.contains("Review a file for bugs (project)"), "{screen}");
    h.keys("dit src/lib.rs");
    h.press(key(KeyCode::Enter));
    let mut sent = h.sent();
    if sent.is_empty() && !h.app.composer.is_empty() {
        h.press(key(KeyCode::Enter));
        sent = h.sent();
    }
    assert_eq!(
        sent,
        vec![Op::CommandTurn {
            command: tern_protocol::CommandTurn {
                line: "/audit src/lib.rs".into(),
                body: "Review $1 and report bugs.".into(),
                args: "src/lib.rs".into(),
                allow: Vec::new(),
                model: None,
            }
        }]
    );
    // The built-in wins over help.md.
    h.keys("/help");
    h.press(key(KeyCode::Enter));
    assert!(h.sent().is_empty());
    assert_eq!(h.app.layers.last().map(|l| l.name()), Some("help"));
}

#[test]
fn snapshot_plan_pane_and_status_progress() {
    use tern_protocol::{PlanItem, PlanStatus};
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "add the web tools".into(),
    });
    let step = |content: &str, status| PlanItem {
        content: content.into(),
        status,
    };
    for (done, id) in [(0, "t1"), (1, "t2")] {
        let items = vec![
            step(
                "Read the tool registry",
                if done >= 1 {
                    PlanStatus::Completed
                } else {
                    PlanStatus::InProgress
                },
            ),
            step(
                "Add web_fetch",
                if done >= 1 {
                    PlanStatus::InProgress
                } else {
                    PlanStatus::Pending
                },
            ),
            step("Write the tests", PlanStatus::Pending),
        ];
        h.event(Event::ToolCallBegin {
            call_id: id.into(),
            name: "todo_write".into(),
            kind: tern_protocol::ToolKind::Plan,
            args: json!({}),
        });
        h.event(Event::ToolCallEnd {
            call_id: id.into(),
            name: "todo_write".into(),
            output: ToolOutput::text("Plan saved").with_details(ToolDetails::Plan { items: items.clone() }),
            duration_ms: 1,
            full_output_path: None,
        });
        h.event(Event::PlanUpdated { items });
    }
    h.event(Event::TurnFinished {
        reason: TurnEnd::Completed,
    });
    let screen = h.screen(80, 16);
    assert_eq!(screen.matches("Plan · 1/3 done").count(), 1, "{screen}");
    assert!(screen.contains("1/3 done · "), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn a_custom_command_sent_while_busy_waits_and_then_starts_its_own_turn() {
    let mut h = harness_with_commands(&[("audit.md", "Review $1.\n")]);
    h.event(Event::TurnStarted {
        turn: 1,
        text: "first".into(),
    });
    h.keys("/audit a.rs");
    h.press(key(KeyCode::Enter));
    if !h.app.composer.is_empty() {
        h.press(key(KeyCode::Enter));
    }
    assert!(h.sent().is_empty());
    assert_eq!(h.app.state.queued.iter().collect::<Vec<_>>(), ["/audit a.rs"]);
    h.event(Event::TurnFinished {
        reason: tern_protocol::TurnEnd::Completed,
    });
    assert_eq!(
        h.sent(),
        vec![Op::CommandTurn {
            command: tern_protocol::CommandTurn {
                line: "/audit a.rs".into(),
                body: "Review $1.".into(),
                args: "a.rs".into(),
                allow: Vec::new(),
                model: None,
            }
        }]
    );
}
