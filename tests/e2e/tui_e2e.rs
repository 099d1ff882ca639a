//! The TUI in a real terminal: tmux runs `tern` against the scripted model over HTTP; the test types a prompt, sees
//! a tool pane, approves a command, sees its output, opens the history browser, quits, and checks the terminal is
//! restored. Needs tmux (`.ci/run` installs it); without it the test is skipped outside CI and fails in CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod always;
mod approve;
mod colours;
mod image;
mod processes;
mod review;
mod stream;
use crate::support;
mod trust;

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply};
use support::tmux::{Tmux, tern_command, tmux_available};

const BIN: &str = env!("CARGO_BIN_EXE_tern");

#[tokio::test(flavor = "multi_thread")]
async fn approve_a_command_browse_history_and_quit() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Running the check.".into(),
            vec![("exec".into(), json!({"command": "echo e2e-$((40+2))-marker"}))],
        ),
        Reply::text("All **done** here."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("README.md"), "# e2e\n").unwrap();
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
    let tmux = Tmux::start("e2e", (110, 36), &command);
    tmux.wait_for("Ask tern").await;
    assert_eq!(tmux.display("#{alternate_on}"), "1", "full screen");

    tmux.keys(&["run the check", "Enter"]);
    let screen = tmux.wait_for("Allow exec?").await;
    assert!(screen.contains("› run the check"), "{screen}");
    assert!(screen.contains("$ echo e2e-$((40+2))-marker"), "{screen}");
    // The prompt ignores keys for a moment after it appears (typed-ahead keys never answer it).
    tokio::time::sleep(Duration::from_millis(600)).await;
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("All done here.").await;
    assert!(screen.contains("e2e-42-marker"), "the command's output shows: {screen}");
    assert!(screen.contains("exit 0"), "{screen}");

    tmux.keys(&["C-t"]);
    let screen = tmux.wait_for("Tool history").await;
    assert!(screen.contains("exec") && screen.contains("echo e2e"), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Result").await;
    tmux.keys(&["Escape"]);
    // An ESC with a `q` right behind it in the same read is Alt+q to the terminal parser (it happened under load), so
    // the two keys go apart.
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.keys(&["q"]);
    tmux.wait_for("Ask tern").await;

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("TERN-EXITED-0").await;
    assert!(
        screen.contains("› run the check"),
        "the last exchange is printed: {screen}"
    );
    assert!(screen.contains("tern resume"), "how to resume is printed: {screen}");
    assert_eq!(tmux.display("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(tmux.display("#{cursor_flag}"), "1", "cursor visible again");
    // The model got the command's output.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].to_string().contains("e2e-42-marker"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_plays_and_the_terminal_is_restored_after_sigterm() {
    if !tmux_available() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let command = format!(
        "HOME={home} XDG_DATA_HOME={home}/data {BIN} --demo; echo TERN-EXITED-$?; sleep 30",
        home = home.path().display()
    );
    let tmux = Tmux::start("demo", (110, 40), &command);
    tmux.wait_for("Allow exec?").await;
    let screen = tmux.screen();
    assert!(screen.contains("edit_file"), "{screen}");
    let shell = tmux.display("#{pane_pid}");
    let pid = Command::new("pgrep")
        .args(["-P", shell.trim(), "-x", "tern"])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&pid.stdout)
        .lines()
        .next()
        .expect("tern runs in the pane")
        .trim()
        .to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    tmux.wait_for("TERN-EXITED-").await;
    assert_eq!(tmux.display("#{alternate_on}"), "0");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_resumes_with_its_conversation() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("The answer is 42."), Reply::text("Still 42.")]).await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = format!(
        "cd {work} && export HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k",
        work = work.path().display(),
        home = home.path().display(),
    );
    let flags = format!(
        "--provider openai --base-url {} --model scripted",
        mock.openai_base_url()
    );
    let command =
        format!("{env}; {BIN} {flags}; echo FIRST-EXITED; {BIN} --continue {flags}; echo SECOND-EXITED; sleep 30");
    let tmux = Tmux::start("resume", (100, 30), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["what is the answer?", "Enter"]);
    tmux.wait_for("The answer is 42.").await;
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    // The resumed session shows the old exchange and sends it to the model with the new message.
    let screen = tmux.wait_for("resumed a session").await;
    assert!(
        screen.contains("what is the answer?") && screen.contains("The answer is 42."),
        "{screen}"
    );
    tmux.keys(&["and now?", "Enter"]);
    tmux.wait_for("Still 42.").await;
    let second = mock.requests()[1].to_string();
    assert!(
        second.contains("what is the answer?") && second.contains("The answer is 42.") && second.contains("and now?")
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("SECOND-EXITED").await;
}

mod keys;

/// A launch the user quits without a prompt leaves no session behind: nothing to resume, nothing in the picker, and
/// `--continue` goes on with the last session that has a conversation.
#[tokio::test(flavor = "multi_thread")]
async fn quitting_without_a_prompt_leaves_no_session() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("The answer is 42."), Reply::text("Still 42.")]).await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = format!(
        "cd {work} && export HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k",
        work = work.path().display(),
        home = home.path().display(),
    );
    let flags = format!(
        "--provider openai --base-url {} --model scripted",
        mock.openai_base_url()
    );
    let launch = |name: &str, extra: &str| {
        let command = format!("{env}; {BIN} {extra} {flags}; echo TERN-EXITED; sleep 30");
        Tmux::start(name, (100, 30), &command)
    };
    let quit = |tmux: &Tmux| {
        tmux.keys(&["C-c"]);
        tmux.keys(&["C-c"]);
    };
    let first = launch("empty-1", "");
    first.wait_for("Ask tern").await;
    first.keys(&["what is the answer?", "Enter"]);
    first.wait_for("The answer is 42.").await;
    quit(&first);
    first.wait_for("TERN-EXITED").await;
    // The second launch is quit at once.
    let second = launch("empty-2", "");
    second.wait_for("Ask tern").await;
    quit(&second);
    second.wait_for("TERN-EXITED").await;
    let sessions: Vec<_> = std::fs::read_dir(home.path().join("data/tern/sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    // `--continue` finds the session with the conversation, not the empty one.
    let third = launch("empty-3", "--continue");
    let screen = third.wait_for("resumed a session").await;
    assert!(screen.contains("The answer is 42."), "{screen}");
    quit(&third);
    third.wait_for("TERN-EXITED").await;
}
