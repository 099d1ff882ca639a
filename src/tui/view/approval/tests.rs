//! Snapshots of the docked approval prompt as a person sees it (at 80x24 and 120x40: a command, an edit's diff, a
//! hunk-by-hunk review), and its keys.

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tokio::sync::mpsc;

use super::ApprovalLayer;
use crate::app::{App, slash_commands};
use crate::composer::Composer;
use crate::keymap::Keymap;
use crate::theme::Theme;
use tern_protocol::{ApprovalDecision, ApprovalMode, ApprovalRequest, EditedHunk, Event, FileDiff, Op, SplitHunk};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

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
        mode: ApprovalMode::Ask,
        workspace: "/work/demo".into(),
        tools: vec![],
    });
    app.on_agent_event(Event::TurnStarted {
        turn: 1,
        text: "tidy the greeting".into(),
    });
    Harness { app, ops, _dir: dir }
}

impl Harness {
    /// A call that asks: its pane, then the prompt (settled past the guard time).
    fn ask(&mut self, tool: &str, args: serde_json::Value, request: ApprovalRequest) {
        self.app.on_agent_event(Event::ToolCallBegin {
            call_id: "call_1".into(),
            name: tool.into(),
            kind: tern_protocol::ToolKind::recorded_by_name(tool),
            args,
        });
        self.app.on_agent_event(Event::ApprovalRequest(request.clone()));
        let top = self.app.layers.pop().unwrap();
        assert_eq!(top.name(), "approval");
        self.app.layers.push(Box::new(ApprovalLayer::new(request, 0).settled()));
    }

    fn press(&mut self, code: KeyCode) {
        self.app
            .on_terminal_event(TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    fn screen(&mut self, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| self.app.render(f)).unwrap();
        let text = format!("{}", terminal.backend());
        // The spinner moves: one glyph for all its frames.
        text.chars()
            .map(|c| if ('⠀'..='⣿').contains(&c) { '⠿' } else { c })
            .collect()
    }

    fn answers(&mut self) -> Vec<ApprovalDecision> {
        let mut out = Vec::new();
        while let Ok(op) = self.ops.try_recv() {
            if let Op::Approve { decision, .. } = op {
                out.push(decision);
            }
        }
        out
    }
}

fn long_command() -> String {
    let mut script = String::from("set -e\n");
    for i in 1..=20 {
        script.push_str(&format!("echo step {i} && cargo build -p crate{i} --release\n"));
    }
    script
}

fn command_request() -> ApprovalRequest {
    ApprovalRequest {
        id: 1,
        call_id: "call_1".into(),
        tool: "exec".into(),
        command: long_command(),
        cwd: "/work/demo".into(),
        reason: "runs a shell command".into(),
        proposed_rules: Vec::new(),
        ..Default::default()
    }
}

fn greet_diff() -> FileDiff {
    let old: String = [
        "use std::io;",
        "",
        "/// Greets someone.",
        "pub fn greet(name: &str) -> String {",
        "    let greeting = \"Hello\";",
        "    format!(\"{greeting}, {name}!\")",
        "}",
        "",
        "/// Reads a name.",
        "fn read_name() -> io::Result<String> {",
        "    let mut name = String::new();",
        "    io::stdin().read_line(&mut name)?;",
        "    Ok(name.trim().to_string())",
        "}",
        "",
        "fn main() {",
        "    let name = read_name().unwrap_or_default();",
        "    println!(\"{}\", greet(\"world\"));",
        "}",
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect();
    let new = old
        .replace("\"Hello\"", "\"Welcome\"")
        .replace("greet(\"world\")", "greet(&name)");
    FileDiff::new("src/greet.rs", Some(old), Some(new))
}

fn edit_request() -> ApprovalRequest {
    ApprovalRequest {
        id: 1,
        call_id: "call_1".into(),
        tool: "apply_patch".into(),
        command: "apply_patch /work/demo/src/greet.rs".into(),
        cwd: "/work/demo".into(),
        reason: "edits src/greet.rs".into(),
        proposed_rules: Vec::new(),
        diffs: vec![greet_diff()],
        hunk_review: true,
        always_file: Some("src/greet.rs".into()),
        always_dir: Some("src".into()),
        always_input: None,
    }
}

#[test]
fn a_long_command_is_whole_and_scrolls_in_the_docked_prompt() {
    for (w, h) in SIZES {
        let mut t = harness();
        t.ask("exec", json!({"command": long_command()}), command_request());
        let first = t.screen(w, h);
        assert!(first.contains("waiting for approval"), "{first}");
        // The prompt shows the whole command (the pane's one-line header above it says how many lines it leaves out).
        assert!(
            !first
                .lines()
                .filter(|l| l.starts_with('│'))
                .any(|l| l.contains("more lines")),
            "{first}"
        );
        // The pane it asks about and the composer's border stay in sight.
        assert!(first.contains("⠿ exec"), "{first}");
        assert!(first.contains("│› Ask tern"), "{first}");
        insta::assert_snapshot!(format!("command_{w}x{h}"), first);
        t.press(KeyCode::PageDown);
        t.press(KeyCode::PageDown);
        t.press(KeyCode::PageDown);
        let end = t.screen(w, h);
        assert!(end.contains("step 20"), "{end}");
    }
}

#[test]
fn an_edit_shows_its_diff() {
    for (w, h) in SIZES {
        let mut t = harness();
        t.ask("apply_patch", json!({"edits": []}), edit_request());
        insta::assert_snapshot!(format!("edit_{w}x{h}"), t.screen(w, h));
    }
}

#[test]
fn hunk_review_marks_the_hunk_and_answers_with_the_choices() {
    for (w, h) in SIZES {
        let mut t = harness();
        t.ask("apply_patch", json!({"edits": []}), edit_request());
        t.press(KeyCode::Char('r'));
        t.press(KeyCode::Char('n'));
        let screen = t.screen(w, h);
        assert!(screen.contains("hunk 2/2"), "{screen}");
        insta::assert_snapshot!(format!("review_{w}x{h}"), screen);
        t.press(KeyCode::Char('y'));
        assert_eq!(
            t.answers(),
            [ApprovalDecision::Hunks {
                accepted: vec![1],
                edited: vec![],
                split: vec![]
            }]
        );
    }
}

/// Three changes within six lines: one hunk; `s` splits it, the view marks the part under review and the parts
/// answered, and the answer names the parts.
#[test]
fn a_split_hunk_marks_its_parts_and_answers_part_by_part() {
    let old: String = (1..=12).map(|i| format!("let v{i} = {i};\n")).collect();
    let new = old
        .replace("let v3 = 3;\n", "let v3 = 30;\n")
        .replace("let v5 = 5;\n", "let v5 = 50;\n")
        .replace("let v8 = 8;\n", "");
    let request = ApprovalRequest {
        diffs: vec![FileDiff::new("src/vals.rs", Some(old), Some(new))],
        command: "apply_patch /work/demo/src/vals.rs".into(),
        ..edit_request()
    };
    for (w, h) in SIZES {
        let mut t = harness();
        t.ask("apply_patch", json!({"edits": []}), request.clone());
        t.press(KeyCode::Char('r'));
        let whole = t.screen(w, h);
        assert!(whole.contains("hunk 1/1") && whole.contains("s split"), "{whole}");
        t.press(KeyCode::Char('s'));
        t.press(KeyCode::Char('y'));
        let screen = t.screen(w, h);
        assert!(screen.contains("hunk 1/1 part 2/3"), "{screen}");
        assert!(!screen.contains("s split"), "{screen}");
        insta::assert_snapshot!(format!("review_split_{w}x{h}"), screen);
        // The accepted part is ticked, the one under review marked, the unchanged line between them is neither.
        let row = |text: &str| {
            screen
                .lines()
                .find(|l| l.contains(text))
                .unwrap_or_default()
                .to_string()
        };
        assert!(row("let v3 = 30;").contains("✓"), "{screen}");
        assert!(row("let v5 = 50;").contains("▌"), "{screen}");
        assert!(!row("let v4 = 4;").contains("▌"), "{screen}");
        t.press(KeyCode::Char('n'));
        t.press(KeyCode::Char('y'));
        assert_eq!(
            t.answers(),
            [ApprovalDecision::Hunks {
                accepted: vec![],
                edited: vec![],
                split: vec![SplitHunk {
                    hunk: 0,
                    accepted: vec![0, 2],
                    edited: vec![]
                }]
            }]
        );
    }
}

#[test]
fn always_for_the_file_or_directory_and_an_edited_hunk() {
    let mut t = harness();
    t.ask("apply_patch", json!({"edits": []}), edit_request());
    t.press(KeyCode::Char('d'));
    assert_eq!(
        t.answers(),
        [ApprovalDecision::AlwaysEdits {
            scope: tern_protocol::EditScope::Directory
        }]
    );
    let mut t = harness();
    t.ask("apply_patch", json!({"edits": []}), edit_request());
    t.press(KeyCode::Char('r'));
    t.press(KeyCode::Char('e'));
    let text = t.app.edit_request.take().expect("e asks for the editor");
    assert!(text.contains("\"Welcome\""), "{text}");
    t.app.edited(Ok("    let greeting = \"Hi\";\n".into()));
    t.press(KeyCode::Char('a'));
    assert_eq!(
        t.answers(),
        [ApprovalDecision::Hunks {
            accepted: vec![1],
            edited: vec![EditedHunk {
                hunk: 0,
                text: "    let greeting = \"Hi\";\n".into()
            }],
            split: vec![]
        }]
    );
}

/// A compound command's prompt shows every rule "always" adds, and offers them for the session, the project and the
/// user; without rules, none of those keys answers.
#[test]
fn a_compound_command_offers_its_rules_for_the_session_the_project_or_the_user() {
    let command = "cargo build && cargo test";
    let request = ApprovalRequest {
        command: command.into(),
        proposed_rules: vec!["cargo build".into(), "cargo test".into()],
        ..command_request()
    };
    let mut t = harness();
    t.ask("exec", json!({"command": command}), request.clone());
    let screen = t.screen(120, 40);
    assert!(
        screen.contains("a always `cargo build` `cargo test`  p save to project  u save for me"),
        "{screen}"
    );
    for (key, decision) in [
        ('a', ApprovalDecision::Always),
        (
            'p',
            ApprovalDecision::AlwaysSaved {
                to: tern_protocol::SaveTo::Project,
            },
        ),
        (
            'u',
            ApprovalDecision::AlwaysSaved {
                to: tern_protocol::SaveTo::User,
            },
        ),
    ] {
        let mut t = harness();
        t.ask("exec", json!({"command": command}), request.clone());
        t.press(KeyCode::Char(key));
        assert_eq!(t.answers(), [decision], "{key}");
    }
    let mut t = harness();
    t.ask("exec", json!({"command": command}), command_request());
    assert!(!t.screen(120, 40).contains("save to project"));
    for key in ['a', 'p', 'u'] {
        t.press(KeyCode::Char(key));
    }
    assert_eq!(t.answers(), []);
}

/// Input to a live process offers "always" for input to that process (for the session), and nothing to save.
#[test]
fn input_to_a_process_offers_always_for_that_process_only() {
    let request = ApprovalRequest {
        tool: "process_input".into(),
        command: "process_input p1 (`python3`): print(1)\\r".into(),
        always_input: Some("p1".into()),
        ..command_request()
    };
    let mut t = harness();
    t.ask(
        "process_input",
        json!({"id": "p1", "text": "print(1)"}),
        request.clone(),
    );
    let screen = t.screen(120, 40);
    assert!(screen.contains("a always for input to p1"), "{screen}");
    assert!(!screen.contains("save to project"), "{screen}");
    for key in ['p', 'u'] {
        t.press(KeyCode::Char(key));
    }
    assert_eq!(t.answers(), [], "nothing to save");
    t.press(KeyCode::Char('a'));
    assert_eq!(t.answers(), [ApprovalDecision::Always]);
}

/// A command that reads as a harmless `echo` with a comment, while bash runs `rm` too: a zero-width space inside a word,
/// a right-to-left override that would reverse the rest of the line on screen, a tab, and an escape sequence that
/// would clear the line. The prompt shows each one and says how many there are.
#[test]
fn a_command_with_invisible_characters_shows_them_and_says_so() {
    let command = "echo ok\u{200b} # safe\u{202e} ;\trm -rf ~/.x\x1b[2K";
    let request = ApprovalRequest {
        command: command.into(),
        ..command_request()
    };
    for (w, h) in SIZES {
        let mut t = harness();
        t.ask("exec", json!({"command": command}), request.clone());
        let screen = t.screen(w, h);
        assert!(
            screen.contains("ok\\u{200b} # safe\\u{202e} ;␉rm -rf ~/.x␛[2K"),
            "{screen}"
        );
        assert!(
            screen.contains("this command contains 4 invisible or control characters"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("hidden_characters_{w}x{h}"), screen);
    }
}

#[test]
fn keys_typed_on_into_the_guard_hold_it_up_and_a_pause_ends_it() {
    use std::time::{Duration, Instant};

    use crate::layer::{Ctx, Effect, Handled, Layer, View};

    let request = ApprovalRequest {
        call_id: "c1".into(),
        tool: "exec".into(),
        command: "cargo test".into(),
        proposed_rules: vec!["cargo test".into()],
        ..Default::default()
    };
    let theme = Theme::dark();
    let mut layer = ApprovalLayer::new(request, 0);
    let press = |layer: &mut ApprovalLayer, c: char| {
        let mut ctx = Ctx::new(View {
            calls: &[],
            processes: crate::state::processes::Processes::none(),
            theme: &theme,
        });
        let handled = layer.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), &mut ctx);
        let always = ctx.effects.iter().any(|e| {
            matches!(
                e,
                Effect::Op(Op::Approve {
                    decision: ApprovalDecision::Always,
                    ..
                })
            )
        });
        (handled, always)
    };
    // The guard is about to end when the user, still typing, presses `a` ("always"): it goes to the composer and
    // holds the guard up for a whole guard time from now.
    layer.guard_until = Instant::now() + Duration::from_millis(1);
    let before = Instant::now();
    assert_eq!(press(&mut layer, 'a'), (Handled::Ignored, false));
    assert!(
        layer.guard_until >= before + super::GUARD,
        "the guard goes on after a key typed into it"
    );
    // After a pause the prompt answers.
    layer.guard_until = Instant::now() - Duration::from_millis(1);
    assert_eq!(press(&mut layer, 'a'), (Handled::Consumed, true));
}
