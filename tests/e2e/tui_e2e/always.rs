//! "Always" in a real terminal: a compound command offers one rule per program; `a` keeps them for the session, and a
//! resumed session (`tern run -c`, the real binary) runs the same command unasked; `p` saves them to the project's
//! `.tern/config.toml`, which stays trusted, and a later session runs the command unasked too.

use std::time::Duration;

use serde_json::json;

use super::BIN;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tern::{output, tool_results};
use super::support::tmux::{Tmux, tern_command, tmux_available};

/// A compound command of two programs neither on the read-only list: `touch` and `mkdir`.
fn compound(n: u32) -> String {
    format!("touch made-{n}.txt && mkdir -p dir-{n}")
}

/// The screen once the prompt has been up past its guard time (typed-ahead keys never answer it).
async fn prompt(tmux: &Tmux) -> String {
    let screen = tmux.wait_for("Allow exec?").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    screen
}

/// `tern run -c <prompt>` in `work` with `home`, pointed at `mock`: the last session of the workspace, continued
/// headless (nobody to answer a prompt there: a command the rules do not cover is refused).
async fn continue_headless(work: &std::path::Path, home: &std::path::Path, mock: &MockLlm, args: &[&str]) -> String {
    let mut cmd = super::support::tern::command(work, home);
    cmd.env("OPENAI_API_KEY", "k")
        .args(super::support::tern::model_flags(mock))
        .arg("run")
        .args(args);
    let out = output(cmd, Duration::from_secs(60)).await;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn always_for_a_compound_command_survives_a_resume() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Making them.".into(),
            vec![("exec".into(), json!({"command": compound(1)}))],
        ),
        Reply::text("First session done."),
        // The resumed session: the same command, and one the rules do not cover.
        Reply::tool("exec", json!({"command": compound(2)})),
        Reply::tool("exec", json!({"command": "rm made-1.txt && mkdir -p dir-3"})),
        Reply::text("Resumed session done."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let url = mock.openai_base_url();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &url,
        "",
        "echo TERN-EXITED; sleep 30",
    );
    let tmux = Tmux::start("always-resume", (120, 36), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["make them", "Enter"]);
    let screen = prompt(&tmux).await;
    assert!(
        screen.contains("a always `touch` `mkdir`  p save to project  u save for me"),
        "{screen}"
    );
    tmux.keys(&["a"]);
    let screen = tmux.wait_for("First session done.").await;
    assert!(
        screen.contains("allowed for this session: `touch`, `mkdir`"),
        "{screen}"
    );
    assert!(work.path().join("made-1.txt").exists() && work.path().join("dir-1").is_dir());
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED").await;

    let said = continue_headless(work.path(), home.path(), &mock, &["-c", "again"]).await;
    assert!(said.contains("Resumed session done."), "{said}");
    assert!(
        work.path().join("made-2.txt").exists() && work.path().join("dir-2").is_dir(),
        "the same command ran unasked after the resume: {said}"
    );
    // A command with a part no rule covers is still refused: nobody can approve it headless.
    assert!(work.path().join("made-1.txt").exists(), "{said}");
    assert!(!work.path().join("dir-3").exists(), "{said}");
    let requests = mock.requests();
    let results = tool_results(requests.last().unwrap());
    let last = results.last().unwrap();
    assert!(last.contains("Refused"), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn always_saved_to_the_project_keeps_it_trusted_and_holds_in_later_sessions() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Making them.".into(),
            vec![("exec".into(), json!({"command": compound(1)}))],
        ),
        // Saved rules hold at once: the next call runs unasked.
        Reply::tool("exec", json!({"command": compound(2)})),
        Reply::text("First session done."),
        // A new session (not a resume): the project's config allows it now.
        Reply::tool("exec", json!({"command": compound(3)})),
        Reply::text("Second session done."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let workspace = std::fs::canonicalize(work.path()).unwrap();
    let config = workspace.join(".tern/config.toml");
    std::fs::create_dir(workspace.join(".tern")).unwrap();
    std::fs::write(&config, "# the project's settings\nmax_iterations = 30\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let user_config = home.path().join("config/tern/config.toml");
    tern::config::write::trust_project(&user_config, &workspace, &tern::config::trust::digest(&workspace)).unwrap();
    let trusted = || {
        let entries = tern::config::ConfigFile::load(&user_config)
            .unwrap()
            .unwrap()
            .trusted_projects;
        tern::config::trust::standing(&entries, &workspace)
    };
    assert_eq!(trusted(), tern::config::trust::Standing::Trusted);

    let url = mock.openai_base_url();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &url,
        "",
        "echo TERN-EXITED; sleep 30",
    );
    let tmux = Tmux::start("always-project", (120, 36), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["make them", "Enter"]);
    prompt(&tmux).await;
    tmux.keys(&["p"]);
    let screen = tmux.wait_for("First session done.").await;
    assert!(screen.contains("allowed in this project, saved to"), "{screen}");
    assert!(!screen.contains("not trusted"), "{screen}");
    assert!(
        work.path().join("dir-2").is_dir(),
        "the saved rules held at once: {screen}"
    );
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("# the project's settings\nmax_iterations = 30\n"),
        "{written}"
    );
    let loaded = tern::config::ConfigFile::load(&config).unwrap().unwrap();
    assert_eq!(loaded.approval.allow, ["touch", "mkdir"]);
    assert_eq!(
        trusted(),
        tern::config::trust::Standing::Trusted,
        "tern's own write keeps the project trusted"
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED").await;

    let said = continue_headless(work.path(), home.path(), &mock, &["again"]).await;
    assert!(said.contains("Second session done."), "{said}");
    assert!(
        work.path().join("made-3.txt").exists() && work.path().join("dir-3").is_dir(),
        "{said}"
    );
}
