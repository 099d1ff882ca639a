//! `/export` in a real terminal (tmux): the session on screen is written to `tern-session-<id>.md` in the workspace,
//! the transcript says where; a second `/export` does not overwrite it; `/export FILE.json` writes JSON.

use serde_json::Value;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tmux::{Tmux, tern_command, tmux_available};

const BIN: &str = env!("CARGO_BIN_EXE_tern");

#[tokio::test(flavor = "multi_thread")]
async fn slash_export_writes_the_session_on_screen_and_never_over_a_file() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("The answer is 42.")]).await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "sleep 30",
    );
    let tmux = Tmux::start("export", (120, 30), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["what is the answer?", "Enter"]);
    tmux.wait_for("The answer is 42.").await;

    tmux.keys(&["/export", "Enter"]);
    let screen = tmux.wait_for("session exported to").await;
    let written: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("tern-session-") && n.ends_with(".md"))
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(screen.contains(&written[0]), "the path is shown: {screen}");
    let file = work.path().join(&written[0]);
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.starts_with("# what is the answer?\n"), "{md}");
    assert!(
        md.contains("> what is the answer?") && md.contains("The answer is 42."),
        "{md}"
    );

    tmux.keys(&["/export", "Enter"]);
    tmux.wait_for("tern does not overwrite it").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), md);

    tmux.keys(&["/export out.json", "Enter"]);
    tmux.wait_for("out.json").await;
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(work.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(doc["turns"][0]["prompt"], "what is the answer?");
    assert_eq!(doc["turns"][0]["items"][0]["text"], "The answer is 42.");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
}
