//! Eighth round, on the newest roads (`tern acp`, live processes, pasting) and what the older rounds did not try:
//! programs a cloned repository plants under the names tern and its rules run.

use super::*;

/// A program at `path` that leaves `marker` (in the directory outside) when it runs, and prints `said`.
fn plant(path: &Path, marker: &Path, said: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\ntouch '{}'\necho {said}\n", marker.display())).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A user whose PATH starts with `.` (or holds an empty entry, which means the same) works in a repository that
/// ships its own `git` and `ls`. The checkpoints' git runs outside the sandbox before every command and edit, and the
/// rule `ls` allows `ls`: neither may find the repository's file of that name.
#[tokio::test(flavor = "multi_thread")]
async fn programs_planted_in_the_workspace_are_not_found_through_a_relative_path_entry() {
    let w = world();
    let git_ran = w.outside().join("planted-git-ran");
    let ls_ran = w.outside().join("planted-ls-ran");
    plant(&w.work.path().join("git"), &git_ran, "planted-git");
    plant(&w.work.path().join("ls"), &ls_ran, "planted-ls");
    let write = ("write_file".to_string(), json!({ "path": "new.txt", "content": "x\n" }));
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![exec("ls")]),
        Reply::ToolCalls(vec![write]),
        Reply::text("Done."),
    ])
    .await;
    let path = format!(".::{}", std::env::var("PATH").unwrap_or_default());
    let mut cmd = support::tern::command(w.work.path(), w.home.path());
    cmd.env("PATH", path)
        .env("OPENAI_API_KEY", &w.env_key)
        .args(support::tern::model_flags(&mock))
        .args(["run", "--mode", "auto-edit", "do as the file says"]);
    let out = support::tern::output(cmd, Duration::from_secs(60)).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.requests();
    let ls = support::tern::tool_results(&requests[1]);
    assert!(ls[0].contains("notes.txt") && !ls[0].contains("planted-ls"), "{ls:?}");
    assert!(w.work.path().join("new.txt").exists(), "the edit was made");
    assert!(!git_ran.exists(), "the repository's git ran outside the sandbox");
    assert!(!ls_ran.exists(), "the rule `ls` ran the repository's ls");
}
