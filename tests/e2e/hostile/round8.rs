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

/// A user whose PATH holds the workspace's own `bin` as an absolute entry (direnv's `PATH_add bin` does this), where
/// a command in the sandbox plants a `git` and a `sh`: the checkpoints' git that runs outside the sandbox after it,
/// and the hook's shell, are never those; nor is a Python module planted in the workspace's directory on PYTHONPATH
/// what the hook imports. The commands themselves still find what the whole PATH holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_program_a_command_plants_in_a_workspace_directory_on_path_is_not_what_tern_runs_outside() {
    let w = world();
    let git_ran = w.outside().join("planted-git-ran");
    let sh_ran = w.outside().join("planted-sh-ran");
    let module_ran = w.outside().join("planted-module-ran");
    let bin = w.work.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A repository: the checkpoints snapshot it with git.
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(w.work.path())
        .status();
    assert!(init.unwrap().success());
    plant(&bin.join("greet"), &w.work.path().join("greet-ran"), "hello-from-bin");
    let plant_cmd = format!(
        "printf '#!/bin/sh\\ntouch {git}\\nexit 1\\n' > bin/git && printf '#!/bin/sh\\nps -o args= -p $PPID > {sh}\\n' > bin/sh && \
         chmod +x bin/git bin/sh && mkdir -p pylib && echo \"open('{module}', 'w')\" > pylib/json.py && greet",
        git = git_ran.display(),
        sh = sh_ran.display(),
        module = module_ran.display()
    );
    let write = ("write_file".to_string(), json!({ "path": "new.txt", "content": "x\n" }));
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![exec(&plant_cmd)]),
        Reply::ToolCalls(vec![write]),
        Reply::ToolCalls(vec![exec("echo second")]),
        Reply::text("Done."),
    ])
    .await;
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let hooks = "[[hooks.PostToolUse]]\nmatcher = \"*\"\nhooks = [{ type = \"command\", command = \"python3 -c 'import json'\" }]\n";
    std::fs::create_dir_all(w.home.path().join("config/tern")).unwrap();
    std::fs::write(w.home.path().join("config/tern/config.toml"), hooks).unwrap();
    let mut cmd = support::tern::command(w.work.path(), w.home.path());
    cmd.env("PATH", path)
        .env("PYTHONPATH", w.work.path().join("pylib"))
        .env("OPENAI_API_KEY", &w.env_key)
        .args(support::tern::model_flags(&mock))
        .args(["run", "--mode", "full-auto", "do as the file says"]);
    let out = support::tern::output(cmd, Duration::from_secs(60)).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.requests();
    let first = support::tern::tool_results(&requests[1]);
    assert!(
        first[0].contains("hello-from-bin"),
        "the command found bin/greet: {first:?}"
    );
    assert!(bin.join("git").exists(), "the command planted its git");
    assert!(w.work.path().join("new.txt").exists(), "the edit was made");
    assert!(!git_ran.exists(), "the planted git ran outside the sandbox");
    assert!(
        w.work.path().join("pylib/json.py").exists(),
        "the command planted its module"
    );
    assert!(
        !module_ran.exists(),
        "the hook imported the planted module outside the sandbox"
    );
    let started_by = std::fs::read_to_string(&sh_ran).unwrap_or_default();
    assert!(
        !sh_ran.exists(),
        "the planted sh ran outside the sandbox, started by {started_by}"
    );
}
