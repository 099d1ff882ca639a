//! A custom slash command and the plan in a real terminal: tmux runs `tern` against the scripted model over HTTP, the
//! test picks a project command from the `/` popup, types its arguments, and checks the model received the expanded
//! prompt; the model's `todo_write` then shows as the plan pane and `n/m done` in the status bar. Needs tmux (`.ci/run`
//! installs it); without it the test is skipped outside CI and fails in CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply};
use support::tmux::{Tmux, tern_command, tmux_available};

const BIN: &str = env!("CARGO_BIN_EXE_tern");

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_command_with_arguments_and_the_plan_pane() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::tool(
            "todo_write",
            json!({"todos": [
                {"content": "Read notes.txt", "status": "completed"},
                {"content": "List the risky lines", "status": "in_progress"},
                {"content": "Suggest fixes", "status": "pending"},
            ]}),
        ),
        Reply::text("Reviewed the notes."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "alpha\n").unwrap();
    let commands = work.path().join(".tern/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("audit.md"),
        "---\ndescription: Review a file for risky lines\nargument-hint: <path> [focus]\n---\n\
         Review $1 with a focus on $2. Everything asked: $ARGUMENTS\n",
    )
    .unwrap();
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
    let tmux = Tmux::start("commands", (100, 30), &command);
    tmux.wait_for("Ask tern").await;

    tmux.keys(&["/aud"]);
    let screen = tmux.wait_for("Review a file for risky lines (project)").await;
    assert!(screen.contains("/audit <path> [focus]"), "{screen}");
    // Tab completes the name from the popup; the arguments follow.
    tmux.keys(&["Tab"]);
    tmux.keys(&["notes.txt errors"]);
    tmux.wait_for("/audit notes.txt errors").await;
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Reviewed the notes.").await;
    // The transcript shows what the model was sent; the plan is one pane, with its progress in the status bar.
    assert!(screen.contains("Review notes.txt with a focus on errors."), "{screen}");
    assert!(screen.contains("Plan · 1/3 done"), "{screen}");
    assert!(screen.contains("◐ List the risky lines"), "{screen}");
    assert!(screen.contains("1/3 done ·"), "{screen}");

    let requests = mock.requests();
    let user = requests[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        user,
        "Review notes.txt with a focus on errors. Everything asked: notes.txt errors"
    );

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
