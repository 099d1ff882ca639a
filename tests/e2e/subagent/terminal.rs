//! The subagent pane in a real terminal: tmux runs `tern` against the scripted model; the pane shows the subagent
//! done with its report, Ctrl+O on the spawn call shows its transcript, and Esc goes back. Skipped without tmux
//! outside CI, as the other terminal tests.

use support::tmux::{Tmux, tern_command, tmux_available};

use super::*;

const BIN: &str = env!("CARGO_BIN_EXE_tern");

#[tokio::test(flavor = "multi_thread")]
async fn the_pane_and_the_transcript_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Asking a subagent.".into(),
            vec![spawn_call("TASK-E: look at the README", "explorer", true)],
        ),
        Reply::for_system("TASK-E", Reply::tool("read_file", json!({"path": "README.md"}))),
        Reply::for_system("TASK-E", Reply::text("The README is a title.")),
        Reply::text("The explorer is back."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("README.md"), "# subagents\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "echo TERN-EXITED-$?; sleep 30",
    );
    let tmux = Tmux::start("subagent", (120, 36), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["explore", "Enter"]);
    let screen = tmux.wait_for("The explorer is back.").await;
    assert!(screen.contains("subagent explorer  done · 2 steps"), "{screen}");
    assert!(screen.contains("⎿ The README is a title."), "{screen}");
    // The spawn call is the last call: Ctrl+O shows the subagent's own transcript.
    tmux.keys(&["C-o"]);
    let screen = tmux.wait_for("read-only · Esc back").await;
    assert!(screen.contains("› TASK-E: look at the README"), "{screen}");
    assert!(screen.contains("read_file"), "{screen}");
    assert!(!screen.contains("The explorer is back."), "{screen}");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("The explorer is back.").await;
    assert!(!screen.contains("read-only · Esc back"), "{screen}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
