//! A live process in a real terminal: the model starts `cat` in the background on a pseudo-terminal, after output with
//! colours and hostile escape sequences (a window title, a clipboard write); the pane under its call shows it running;
//! `/ps` lists it, Enter gives it the keys, typed text reaches it and comes back, Ctrl+] gives the keys back, and `s`
//! in `/ps` stops it. tmux's title and paste buffers stay untouched: the sequences reached only tern's emulator.

use serde_json::json;

use super::BIN;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tmux::{Tmux, tern_command, tmux_available};

#[tokio::test(flavor = "multi_thread")]
async fn a_live_process_is_listed_typed_into_given_back_and_stopped() {
    if !tmux_available() {
        return;
    }
    let script =
        r"printf '\033[32mready-to-echo\033[0m\n'; printf '\033]0;HACKED-TITLE\007\033]52;c;aGFja2Vk\007'; exec cat";
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Starting it.".into(),
            vec![("exec".into(), json!({"command": script, "background": true}))],
        ),
        Reply::text("It runs in the background."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "--mode full-auto",
        "echo TERN-EXITED-$?; sleep 30",
    );
    let tmux = Tmux::start("processes", (120, 40), &command);
    tmux.run(&["set-option", "-g", "set-clipboard", "on"]);
    let title_before = tmux.display("#{pane_title}");
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["start the echo", "Enter"]);
    tmux.wait_for("It runs in the background.").await;
    let screen = tmux.wait_for("ready-to-echo").await;
    assert!(screen.contains("p1") && screen.contains("running"), "{screen}");
    assert!(screen.contains("started p1"), "the call says what it started: {screen}");
    assert!(!screen.contains("killed"), "{screen}");

    tmux.keys(&["/ps", "Enter"]);
    tmux.wait_for("Live processes: 1").await;
    tmux.keys(&["Enter"]);
    tmux.wait_for("Ctrl+] gives the keys back").await;
    tmux.keys(&["-l", "typed-into-cat"]);
    tmux.keys(&["Enter"]);
    // The terminal echoes the line as typed, then cat prints it back: two lines.
    let start = std::time::Instant::now();
    loop {
        let screen = tmux.screen();
        if screen.matches("typed-into-cat").count() >= 2 {
            break;
        }
        assert!(start.elapsed().as_secs() < 30, "cat never echoed: {screen}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    tmux.keys(&["C-]"]);
    tmux.wait_gone("Ctrl+] gives the keys back").await;

    tmux.keys(&["/ps", "Enter"]);
    tmux.wait_for("Live processes: 1").await;
    tmux.keys(&["s"]);
    tmux.wait_for("stopped by").await;
    tmux.keys(&["q"]);

    assert_eq!(tmux.display("#{pane_title}"), title_before, "the title was not set");
    let buffers = tmux.run(&["list-buffers"]);
    assert!(!buffers.contains("hacked"), "the clipboard was not written: {buffers}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
