//! `/review` in a real terminal: a turn edits a file in two places (auto-edit mode: no prompt), `/review` of the turn
//! keeps the first hunk and reverts the second, and the file on disk holds exactly the kept hunk.

use serde_json::json;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tmux::{Tmux, tmux_available};

fn numbered(n: usize) -> String {
    (1..=n).map(|k| format!("line {k}\n")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn review_keeps_one_hunk_and_reverts_the_other() {
    if !tmux_available() {
        return;
    }
    let base = numbered(20);
    let edited = base
        .replace("line 2\n", "line two\n")
        .replace("line 16\n", "line sixteen\n");
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![("write_file".into(), json!({"path": "a.txt", "content": edited}))]),
        Reply::text("edited both places"),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), &base).unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {bin} \
         --provider openai --base-url {url} --model scripted; echo TERN-EXITED-$?; sleep 30",
        work = work.path().display(),
        home = home.path().display(),
        url = mock.openai_base_url(),
        bin = super::BIN,
    );
    let tmux = Tmux::start("review", (100, 32), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["edit the file", "Enter"]);
    tmux.wait_for("edited both places").await;
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), edited);

    tmux.keys(&["/review", "Enter"]);
    tmux.wait_for("Review the agent's changes of").await;
    tmux.keys(&["1"]);
    let screen = tmux.wait_for("hunk 1/2").await;
    assert!(screen.contains("a.txt") && screen.contains("line two"), "{screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("hunk 2/2").await;
    assert!(screen.contains("line sixteen"), "{screen}");
    tmux.keys(&["n"]);
    tmux.wait_for("reverted 1 hunk in 1 file").await;
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
        base.replace("line 2\n", "line two\n"),
        "only the kept hunk stays"
    );
    // `/quit` rather than Ctrl+C thrice: a third Ctrl+C can reach the shell after tern exits and end the pane.
    tmux.keys(&["/quit", "Enter"]);
    tmux.wait_for("TERN-EXITED-0").await;
}

/// Three edits within six lines are one hunk; `s` splits it, and keeping the first and last while reverting the
/// middle one leaves exactly those lines on disk.
#[tokio::test(flavor = "multi_thread")]
async fn review_splits_a_hunk_and_reverts_only_the_middle_edit() {
    if !tmux_available() {
        return;
    }
    let base = numbered(12);
    let edited = base
        .replace("line 4\n", "line FOUR\n")
        .replace("line 6\n", "line SIX\n")
        .replace("line 8\n", "line EIGHT\n");
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![("write_file".into(), json!({"path": "a.txt", "content": edited}))]),
        Reply::text("edited three lines"),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), &base).unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {bin} \
         --provider openai --base-url {url} --model scripted; echo TERN-EXITED-$?; sleep 30",
        work = work.path().display(),
        home = home.path().display(),
        url = mock.openai_base_url(),
        bin = super::BIN,
    );
    let tmux = Tmux::start("review-split", (100, 32), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["edit the file", "Enter"]);
    tmux.wait_for("edited three lines").await;

    tmux.keys(&["/review", "Enter"]);
    tmux.wait_for("Review the agent's changes of").await;
    tmux.keys(&["1"]);
    let screen = tmux.wait_for("hunk 1/1").await;
    assert!(screen.contains("s split"), "the key hint: {screen}");
    tmux.keys(&["s"]);
    let screen = tmux.wait_for("hunk 1/3").await;
    assert!(screen.contains("line FOUR"), "{screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("hunk 2/3").await;
    assert!(screen.contains("line SIX"), "{screen}");
    tmux.keys(&["n"]);
    tmux.wait_for("hunk 3/3").await;
    tmux.keys(&["y"]);
    tmux.wait_for("reverted 1 hunk in 1 file").await;
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
        base.replace("line 4\n", "line FOUR\n")
            .replace("line 8\n", "line EIGHT\n"),
        "only the middle edit is reverted"
    );
    tmux.keys(&["/quit", "Enter"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
