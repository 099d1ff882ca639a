//! Switching sessions inside the running UI: `/fork` continues in a copy (the original log is untouched) and
//! `/resume` switches back to the original through the picker, with the old agent shut down and the new one started.

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{BIN, Scratch};
use crate::support::tmux::{Tmux, tmux_available};
use tern::protocol::Message;

fn users(path: &std::path::Path) -> Vec<String> {
    tern::session::log::load(path)
        .unwrap()
        .messages
        .into_iter()
        .filter_map(|m| match m {
            Message::User { content, .. } => Some(content),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_then_resume_the_original_in_the_same_ui() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::text("original-answer"),
        Reply::text("fork-answer"),
        Reply::text("back-answer"),
    ])
    .await;
    let sb = Scratch::new();
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={data} XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {BIN} \
         --provider openai --base-url {url} --model m; echo TERN-EXITED-$?; sleep 30",
        work = sb.work.path().display(),
        home = sb.home.path().display(),
        data = sb.data().display(),
        url = mock.openai_base_url(),
    );
    let tmux = Tmux::start("resume-switch", (110, 40), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["the original question", "Enter"]);
    tmux.wait_for("original-answer").await;
    let sessions = sb.data().join("tern/sessions");
    let original_id = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let original = sessions.join(&original_id).join("session.jsonl");
    let before = std::fs::read(&original).unwrap();

    tmux.keys(&["/fork", "Enter"]);
    let screen = tmux.wait_for("a fork of").await;
    assert!(
        screen.contains("the original question") && screen.contains("original-answer"),
        "{screen}"
    );
    tmux.keys(&["a question in the fork", "Enter"]);
    tmux.wait_for("fork-answer").await;
    let body = mock.requests()[1].to_string();
    assert!(body.contains("the original question") && body.contains("a question in the fork"));
    assert_eq!(
        std::fs::read(&original).unwrap(),
        before,
        "the original log is untouched"
    );

    tmux.keys(&["/resume", "Enter"]);
    let screen = tmux.wait_for("Resume a session").await;
    assert!(screen.contains("2 of 2 sessions"), "{screen}");
    // Newest first: the fork, then the original.
    tmux.keys(&["Down", "Enter"]);
    let screen = tmux.wait_for("resumed a session of 1 turn;").await;
    assert!(
        !screen.contains("a question in the fork"),
        "the original's transcript only: {screen}"
    );
    tmux.keys(&["back to the original", "Enter"]);
    tmux.wait_for("back-answer").await;
    let body = mock.requests()[2].to_string();
    assert!(
        body.contains("the original question") && !body.contains("a question in the fork"),
        "{body}"
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("TERN-EXITED-0").await;
    let original_name = original_id.to_string_lossy().to_string();
    assert!(screen.contains(&format!("Session {original_name} saved")), "{screen}");

    assert_eq!(users(&original), ["the original question", "back to the original"]);
    let fork = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .find(|id| *id != original_id)
        .unwrap();
    let fork = sessions.join(fork).join("session.jsonl");
    assert_eq!(users(&fork), ["the original question", "a question in the fork"]);
    let meta = tern::session::log::read_meta(&fork).unwrap();
    assert_eq!(meta.forked_from.as_deref(), Some(original_name.as_str()));
    assert_eq!(meta.forked_messages, Some(2));
}
