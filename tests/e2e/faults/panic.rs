//! A panic in a view, in a real terminal: the terminal is restored (normal screen, cursor shown, cooked mode, mouse
//! off), the panic text is readable on the normal screen and in the log, and the session resumes. Uses the debug-build
//! hook `TERN_TEST_PANIC_IN_VIEW=<text>`, which panics the first frame whose answer contains `<text>`.

use crate::faults::common::*;
use crate::support::mock_llm::{MockLlm, Reply};

#[tokio::test(flavor = "multi_thread")]
async fn a_panic_in_a_view_restores_the_terminal_and_the_session_resumes() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::text("Here it comes: PANIC-MARKER-7."),
        Reply::text("resumed-after-panic"),
    ])
    .await;
    let sb = sandbox();
    let command = tern_in_terminal(&sb, &mock, "", "TERN_TEST_PANIC_IN_VIEW=PANIC-MARKER-7");
    let tmux = Tmux::start("faults-panic", (110, 36), &command).with_history(200);
    tmux.wait_for("Ask tern").await;
    assert_eq!(tmux.display("#{mouse_any_flag}"), "1", "mouse captured while running");
    tmux.keys(&["trigger it", "Enter"]);
    let screen = tmux.wait_for("TTY-").await;
    assert!(screen.contains("TERN-EXITED-101"), "{screen}");
    assert!(
        screen.contains("a view panicked on purpose"),
        "the panic text is shown: {screen}"
    );
    assert!(screen.contains("TTY-icanon"), "raw mode left: {screen}");
    assert_eq!(tmux.display("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(tmux.display("#{cursor_flag}"), "1", "cursor visible again");
    assert_eq!(tmux.display("#{mouse_any_flag}"), "0", "mouse capture off");
    let log = std::fs::read_to_string(sb.data().join("tern/logs/tern.log")).unwrap();
    assert!(
        log.contains("a view panicked on purpose"),
        "the panic is in the log: {log}"
    );
    drop(tmux);

    let (_, session) = sb.session();
    session_lines(&session);
    resume_and_continue(&sb, &mock, "panic-resume", "trigger it", "resumed-after-panic").await;
    let request = mock.requests().pop().unwrap();
    assert!(request.to_string().contains("trigger it") && request.to_string().contains("and now?"));
}
