//! What `tern run` leaves behind in a git repository: a run that changes nothing takes no snapshot, so it leaves
//! the session's own log and no snapshot data.

use super::*;

/// Runs the real `tern run` in `work` with tern's data under `home`, against `mock`.
async fn tern_run(mock: &MockLlm, work: &Path, home: &Path) {
    let status = tokio::process::Command::new(env!("CARGO_BIN_EXE_tern"))
        .args([
            "run",
            "--provider",
            "openai",
            "--base-url",
            &mock.openai_base_url(),
            "--model",
            "m",
            "look",
        ])
        .current_dir(work)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("OPENAI_API_KEY", "k")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .await
        .unwrap();
    assert!(status.success());
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(dir)
        .hidden(false)
        .ignore(false)
        .git_ignore(false)
        .build()
        .flatten()
    {
        if entry.file_type().is_some_and(|t| !t.is_dir()) {
            out.push(entry.path().strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_that_change_nothing_leave_only_their_session_logs() {
    let work = workspace(true);
    let home = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Reply::text("The answer."),
        Reply::tool("read_file", json!({"path": "a.txt"})),
        Reply::text("a.txt says a one."),
    ])
    .await;
    tern_run(&mock, work.path(), home.path()).await;
    tern_run(&mock, work.path(), home.path()).await;
    let left = files_under(&home.path().join("data/tern"));
    assert!(!left.is_empty());
    assert!(
        left.iter()
            .all(|f| (f.starts_with("sessions/") || f.starts_with("logs/")) && !f.contains("shadow")),
        "only the sessions' own files: {left:?}"
    );
}
