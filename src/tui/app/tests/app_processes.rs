//! Live processes on the app harness of `app.rs`: the pane under the call that started one, `/ps`, the focused view
//! with its keys and resizes, and giving the keys back.

use super::*;
use tern_protocol::process::{ProcessEnd, ProcessInfo};

/// The model's `exec` with `background: true` started `p1` (80 x 24 on a PTY), as the agent tells it.
fn started(h: &mut Harness) {
    begin(h, "c1", "exec", json!({"command": "npm run dev", "background": true}));
    h.event(Event::ProcessStarted {
        process: ProcessInfo {
            id: "p1".into(),
            call_id: "c1".into(),
            command: "npm run dev".into(),
            pty: true,
            cols: 80,
            rows: 24,
        },
    });
    end(h, "c1", ToolOutput::text("started live process p1"));
}

fn output(h: &mut Harness, chunk: &str) {
    h.event(Event::ProcessOutput {
        id: "p1".into(),
        chunk: chunk.into(),
    });
}

fn open_ps(h: &mut Harness) {
    h.app.command("ps", "");
    assert_eq!(h.app.layers.last().map(|l| l.name()), Some("ps"));
}

fn input(ops: &[Op]) -> String {
    ops.iter()
        .filter_map(|op| match op {
            Op::ProcessInput { id, data } if id == "p1" => Some(data.as_str()),
            _ => None,
        })
        .collect()
}

fn resizes(ops: &[Op]) -> Vec<(u16, u16)> {
    ops.iter()
        .filter_map(|op| match op {
            Op::ProcessResize { id, cols, rows } if id == "p1" => Some((*cols, *rows)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_call_that_started_a_process_shows_its_screen_live() {
    let mut h = harness();
    started(&mut h);
    output(
        &mut h,
        "\u{1b}[1;32m  VITE\u{1b}[0m ready in 300 ms\r\n\r\n  ➜  Local: http://localhost:5173/\r\n",
    );
    output(
        &mut h,
        "\u{1b}]0;hijacked title\u{7}building [##   ] 40%\rbuilding [#####] 100%",
    );
    let screen = h.screen(80, 16);
    assert!(!screen.contains("hijacked"), "{screen}");
    insta::assert_snapshot!("live_process_pane_80x16", screen);
    h.event(Event::ProcessExited {
        id: "p1".into(),
        end: ProcessEnd::Exited { code: 0 },
    });
    let screen = h.screen(80, 16);
    assert!(screen.contains("exited 0 · last screen"), "{screen}");
    assert!(screen.contains("building [#####] 100%"), "{screen}");
}

#[test]
fn ps_lists_processes_and_stops_one() {
    let mut h = harness();
    started(&mut h);
    open_ps(&mut h);
    let screen = h.screen(100, 20);
    assert!(screen.contains("Live processes: 1"), "{screen}");
    assert!(screen.contains("p1    running"), "{screen}");
    h.keys("s");
    assert_eq!(h.sent(), vec![Op::ProcessStop { id: "p1".into() }]);
    // The list shows what the agent tells once it has ended.
    h.event(Event::ProcessExited {
        id: "p1".into(),
        end: ProcessEnd::Stopped { by: "user".into() },
    });
    let screen = h.screen(100, 20);
    assert!(screen.contains("p1    stopped by user"), "{screen}");
    h.keys("s");
    assert!(h.sent().is_empty());
    h.keys("q");
    assert!(h.app.layers.is_empty());
}

#[test]
fn a_focused_process_gets_every_key_and_its_terminal_follows_the_view() {
    let mut h = harness();
    started(&mut h);
    output(&mut h, "$ ");
    open_ps(&mut h);
    h.press(key(KeyCode::Enter));
    assert!(h.app.layers.is_empty());
    assert_eq!(h.app.focused_process(), Some("p1"));
    // The first frame sizes the process's terminal to the view: all rows but the header and the status bar.
    let screen = h.screen(100, 30);
    assert_eq!(resizes(&h.sent()), vec![(100, 28)]);
    assert_eq!(h.app.state.processes.get("p1").unwrap().size(), (100, 28));
    assert!(screen.contains("keys go to p1 · Ctrl+] gives them back"), "{screen}");
    assert!(
        screen.contains("▶ p1  npm run dev  running · Ctrl+] gives the keys back"),
        "{screen}"
    );
    // The same size is not asked again.
    h.screen(100, 30);
    assert!(h.sent().is_empty());
    h.keys("ls");
    h.press(key(KeyCode::Enter));
    h.press(key(KeyCode::Backspace));
    h.press(key(KeyCode::Up));
    h.press(ctrl('c'));
    h.press(key(KeyCode::Esc));
    h.press(TermEvent::Key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::ALT)));
    assert_eq!(input(&h.sent()), "ls\r\x7f\x1b[A\x03\x1b\x1bq");
    assert!(!h.app.quit);
    assert!(h.app.composer.is_empty());
    // A terminal resize resizes the process's terminal.
    h.screen(90, 20);
    assert_eq!(resizes(&h.sent()), vec![(90, 18)]);
    // Ctrl+] gives the keys back: the terminal returns to its own size, and keys go to the composer again.
    h.press(ctrl(']'));
    assert_eq!(h.app.focused_process(), None);
    assert_eq!(resizes(&h.sent()), vec![(80, 24)]);
    h.keys("hi");
    assert!(h.sent().is_empty());
    assert_eq!(h.app.composer.text(), "hi");
}

#[test]
fn the_focused_view_shows_the_whole_screen_with_its_cursor() {
    let mut h = harness();
    started(&mut h);
    h.app.focus_process("p1");
    h.screen(60, 12);
    output(
        &mut h,
        "\u{1b}[?1049h\u{1b}[H\u{1b}[2J\u{1b}[7m top - load average: 0.42 \u{1b}[0m\r\n  PID USER  %CPU\r\n    1 root   0.3\r\n:",
    );
    let screen = h.screen(60, 12);
    insta::assert_snapshot!("live_process_focused_60x12", screen);
    // The cursor, after the prompt `:` on the screen's fourth row, is drawn there and the terminal's own is put there.
    let mut terminal = Terminal::new(TestBackend::new(60, 12)).unwrap();
    terminal.draw(|f| h.app.render(f)).unwrap();
    let cursor = ratatui::layout::Position::new(1, 4);
    assert!(
        terminal.backend().buffer()[cursor]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    );
    assert_eq!(terminal.get_cursor_position().unwrap(), cursor);
}

#[test]
fn a_paste_is_bracketed_when_the_program_asked() {
    let mut h = harness();
    started(&mut h);
    h.app.focus_process("p1");
    h.press(TermEvent::Paste("echo one\n".into()));
    output(&mut h, "\u{1b}[?2004h");
    h.press(TermEvent::Paste("echo two\n".into()));
    assert_eq!(input(&h.sent()), "echo one\n\x1b[200~echo two\n\x1b[201~");
}

#[test]
fn an_approval_prompt_takes_keys_from_a_focused_process() {
    let mut h = harness();
    started(&mut h);
    h.app.focus_process("p1");
    h.request(7, "rm -rf build");
    h.settle_prompt();
    h.keys("y");
    let sent = h.sent();
    assert!(input(&sent).is_empty(), "{sent:?}");
    assert!(
        sent.iter().any(|op| matches!(op, Op::Approve { id: 7, .. })),
        "{sent:?}"
    );
    assert_eq!(h.app.focused_process(), Some("p1"));
}

#[test]
fn once_a_focused_process_ended_any_key_gives_the_keys_back() {
    let mut h = harness();
    started(&mut h);
    h.app.focus_process("p1");
    h.screen(80, 20);
    h.sent();
    h.event(Event::ProcessExited {
        id: "p1".into(),
        end: ProcessEnd::Exited { code: 2 },
    });
    let screen = h.screen(80, 20);
    assert!(screen.contains("exited 2"), "{screen}");
    h.keys("x");
    assert_eq!(h.app.focused_process(), None);
    // Nothing goes to an ended process, not even its size.
    assert!(h.sent().is_empty());
    assert!(h.app.composer.is_empty());
}

#[test]
fn focusing_an_unknown_process_says_so() {
    let mut h = harness();
    h.app.focus_process("p9");
    assert_eq!(h.app.focused_process(), None);
    assert_eq!(
        h.app.state.flash_text(std::time::Instant::now()),
        Some("no live process p9")
    );
}

#[test]
fn a_focus_whose_process_went_away_ends_at_the_next_frame() {
    let mut h = harness();
    started(&mut h);
    h.app.focus_process("p1");
    // Another session came on screen (`/resume` replaces the state).
    h.app.state = crate::state::AppState::new();
    let screen = h.screen(80, 12);
    assert_eq!(h.app.focused_process(), None);
    assert!(screen.contains("Ctrl+T history"), "{screen}");
    assert!(h.sent().is_empty());
}
