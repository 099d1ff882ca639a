//! A project with its own configuration is trusted from the start-up prompt: `t` writes the workspace to the user
//! config's `trusted_projects`, the session restarts on the project's configuration (its allow rule lets a command
//! run without asking), and the next start does not ask again.

use serde_json::json;

use super::BIN;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tmux::{Tmux, tern_command, tmux_available};

#[tokio::test(flavor = "multi_thread")]
async fn a_project_is_trusted_from_the_prompt_once() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Running it.".into(),
            vec![("exec".into(), json!({"command": "echo trusted-run-marker"}))],
        ),
        Reply::text("Ran without asking."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".tern")).unwrap();
    std::fs::write(
        work.path().join(".tern/config.toml"),
        "[approval]\nallow = [\"echo\"]\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join(".mcp.json"),
        r#"{"mcpServers": {"projdocs": {"command": "sh", "args": ["-c", "exit 0"]}}}"#,
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let user_config = home.path().join("config/tern/config.toml");
    let env = format!(
        "cd {work} && export HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k",
        work = work.path().display(),
        home = home.path().display(),
    );
    let flags = format!(
        "--provider openai --base-url {} --model scripted",
        mock.openai_base_url()
    );
    let command = format!("{env}; {BIN} {flags}; echo FIRST-EXITED; {BIN} {flags}; echo SECOND-EXITED; sleep 30");
    let tmux = Tmux::start("trust", (100, 32), &command);

    let screen = tmux.wait_for("Trust this project?").await;
    assert!(
        screen.contains(".tern/config.toml") && screen.contains(".mcp.json"),
        "{screen}"
    );
    assert!(
        screen.contains("projdocs") && screen.contains("sh -c exit 0"),
        "{screen}"
    );
    assert!(screen.contains("commands run without asking: echo"), "{screen}");
    assert!(!user_config.exists(), "nothing is written before the answer");
    tmux.keys(&["t"]);
    let screen = tmux.wait_for("project trusted").await;
    assert!(!screen.contains("Trust this project?"), "{screen}");
    let written = std::fs::read_to_string(&user_config).unwrap();
    let workspace = std::fs::canonicalize(work.path()).unwrap();
    assert!(
        written.contains("trusted_projects") && written.contains(&workspace.display().to_string()),
        "{written}"
    );

    // The project's allow rule now applies: the command runs without a prompt.
    tmux.keys(&["run it", "Enter"]);
    let screen = tmux.wait_for("Ran without asking.").await;
    assert!(screen.contains("trusted-run-marker"), "{screen}");
    assert!(!screen.contains("Allow exec?"), "{screen}");

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    // The second start: a fresh start screen (the first one's conversation is gone from it).
    let screen = second_start(&tmux).await;
    assert!(
        !screen.contains("Trust this project?"),
        "a trusted project is not asked about again: {screen}"
    );
    assert!(
        screen.contains("projdocs"),
        "its MCP server is the session's now: {screen}"
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("SECOND-EXITED").await;
}

/// The screen once the second tern shows its start screen.
async fn second_start(tmux: &Tmux) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let screen = tmux.screen();
        if screen.contains("Shift+Enter newline") && !screen.contains("run it") {
            // One more moment for a prompt that would open with the first frame.
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            return tmux.screen();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the second start never showed; screen:\n{screen}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// "Not now" is not the last word: `/trust` opens the same prompt later in the session.
#[tokio::test(flavor = "multi_thread")]
async fn a_project_left_untrusted_is_trusted_later_with_slash_trust() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("ok")]).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".tern")).unwrap();
    std::fs::write(
        work.path().join(".tern/config.toml"),
        "[approval]\nallow = [\"echo\"]\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let user_config = home.path().join("config/tern/config.toml");
    let url = mock.openai_base_url();
    let command = tern_command("", BIN, work.path(), home.path(), &url, "", "sleep 30");
    let tmux = Tmux::start("trust-later", (100, 32), &command);
    tmux.wait_for("Trust this project?").await;
    tmux.keys(&["n"]);
    // The prompt closes (the composer was on screen behind it all along).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while tmux.screen().contains("Trust this project?") {
        assert!(std::time::Instant::now() < deadline, "the prompt did not close");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!user_config.exists());
    tmux.keys(&["/trust", "Enter"]);
    let screen = tmux.wait_for("Trust this project?").await;
    assert!(screen.contains("commands run without asking: echo"), "{screen}");
    tmux.keys(&["t"]);
    tmux.wait_for("project trusted").await;
    assert!(
        std::fs::read_to_string(&user_config)
            .unwrap()
            .contains("trusted_projects")
    );
}
