//! Persistence: what a command writes must not run later outside the sandbox, or reach the prompt, unseen. Real git
//! repositories with a planted `core.fsmonitor` (a script that touches a marker file), a planted hook and pager; the
//! real `tern` binary against the scripted model; a real sandbox for read-only mode. Every attack is shown to work
//! without tern in the way (a plain `git status` fires it) before tern is shown not to fire it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tern::sandbox::SandboxPolicy;
use tern::tools::exec::{ExecConfig, ExecLimits, ExecTool};
use tern::tools::{PathPolicy, Tool, ToolContext};

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{Scratch, tool_results};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A script that touches `marker` when run.
fn toucher(dir: &Path, name: &str, marker: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `repo` becomes a git repository with one commit; its config gets `extra` as a command would have planted it.
fn planted_repo(repo: &Path, extra: &str) {
    git(repo, &["init", "-q", "."]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(repo, &["add", "a.txt"]);
    git(repo, &["commit", "-qm", "first"]);
    let config = repo.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(extra);
    std::fs::write(config, text).unwrap();
}

/// A plain `git status` of the user's, outside tern: what fires the planted config.
fn users_git_status(repo: &Path) {
    let _ = Command::new("git")
        .arg("status")
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
}

fn user_config(scratch: &Scratch, text: &str) {
    let dir = scratch.home.path().join("config/tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn exec_call(command: &str) -> Reply {
    Reply::tool("exec", json!({ "command": command }))
}

/// The system prompt of one request the scripted model received.
fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn without_the_sandbox_the_read_only_lists_git_asks_instead_of_firing_a_planted_fsmonitor() {
    let scratch = Scratch::new();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("fsmonitor-ran");
    let script = toucher(outside.path(), "fsmonitor.sh", &marker);
    planted_repo(
        scratch.work.path(),
        &format!("[core]\n\tfsmonitor = {}\n", script.display()),
    );
    user_config(&scratch, "[sandbox]\nenabled = false\n");
    let mock = MockLlm::start(vec![exec_call("git status"), Reply::text("done")]).await;
    let out = scratch
        .run(Some(&mock), &["run", "--mode", "full-auto", "status?"])
        .await;
    assert!(!marker.exists(), "tern's own git fired the planted fsmonitor");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    let result = &tool_results(&requests[1])[0];
    assert!(!result.contains("On branch"), "git status ran unasked: {result}");
    assert!(result.contains("not run") || result.contains("approv"), "{result}");
    // The attack is real: the user's own `git status` fires it.
    users_git_status(scratch.work.path());
    assert!(
        marker.exists(),
        "the planted fsmonitor should fire for a plain git status"
    );
}

#[tokio::test]
async fn tern_own_unasked_git_does_not_fire_a_planted_hook() {
    let scratch = Scratch::new();
    planted_repo(scratch.work.path(), "");
    let marker = scratch.work.path().join("hook-ran");
    let hooks = scratch.work.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    toucher(&hooks, "post-index-change", &marker);
    // The same content with a new time: a status refreshes (and would write) the index, the hook's moment.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(scratch.work.path().join("a.txt"), "a\n").unwrap();
    let mock = MockLlm::start(vec![exec_call("git status"), Reply::text("done")]).await;
    let out = scratch.run(Some(&mock), &["run", "status?"]).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    let result = &tool_results(&requests[1])[0];
    assert!(result.contains("On branch"), "git status ran unasked: {result}");
    assert!(
        !marker.exists(),
        "tern's own git fired the planted post-index-change hook"
    );
    users_git_status(scratch.work.path());
    assert!(marker.exists(), "the planted hook should fire for a plain git status");
}

#[tokio::test]
async fn the_neutral_environment_stops_fsmonitor_hooks_and_pagers() {
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let fsmonitor = outside.path().join("fsmonitor-ran");
    let pager = outside.path().join("pager-ran");
    let hook = outside.path().join("hook-ran");
    let fsmonitor_script = toucher(outside.path(), "fsmonitor.sh", &fsmonitor);
    let pager_script = toucher(outside.path(), "pager.sh", &pager);
    planted_repo(
        work.path(),
        &format!(
            "[core]\n\tfsmonitor = {}\n\tpager = {}\n[pager]\n\tstatus = {}\n",
            fsmonitor_script.display(),
            pager_script.display(),
            pager_script.display()
        ),
    );
    toucher(&work.path().join(".git/hooks"), "post-index-change", &hook);
    std::fs::write(work.path().join("a.txt"), "b\n").unwrap();
    let tool = ExecTool::new(ExecConfig::default());
    let run = |neutral_git: bool| {
        let mut ctx = ToolContext::new(PathPolicy::new(work.path()).unwrap());
        ctx.limits = ExecLimits {
            neutral_git,
            ..ExecLimits::default()
        };
        let tool = &tool;
        async move { tool.execute(json!({ "command": "git status" }), &ctx).await.unwrap() }
    };
    let out = run(true).await;
    assert!(out.text.contains("a.txt"), "{}", out.text);
    for marker in [&fsmonitor, &pager, &hook] {
        assert!(
            !marker.exists(),
            "{} fired under the neutral environment",
            marker.display()
        );
    }
    // The same command as the user approved it runs git as git runs: the planted fsmonitor and hook fire.
    run(false).await;
    assert!(fsmonitor.exists() && hook.exists());
}

#[tokio::test]
async fn a_hooks_git_does_not_fire_a_planted_fsmonitor() {
    let scratch = Scratch::new();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("fsmonitor-ran");
    let hook_ran = outside.path().join("hook-ran");
    let script = toucher(outside.path(), "fsmonitor.sh", &marker);
    planted_repo(
        scratch.work.path(),
        &format!("[core]\n\tfsmonitor = {}\n", script.display()),
    );
    // The hook logs outside the workspace (it runs outside the sandbox) and runs git in the workspace.
    user_config(
        &scratch,
        &format!(
            "[[hooks.UserPromptSubmit]]\ncommand = \"git status > /dev/null; touch '{}'\"\n",
            hook_ran.display()
        ),
    );
    let mock = MockLlm::start(vec![Reply::text("done")]).await;
    let out = scratch.run(Some(&mock), &["run", "hello"]).await;
    assert!(
        hook_ran.exists(),
        "the hook ran: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!marker.exists(), "the hook's git fired the planted fsmonitor");
    users_git_status(scratch.work.path());
    assert!(
        marker.exists(),
        "the planted fsmonitor should fire for a plain git status"
    );
}

#[tokio::test]
async fn a_repository_a_command_creates_is_shown_to_the_user_not_only_told_to_the_model() {
    let scratch = Scratch::new();
    // A submodule's git directory with a planted fsmonitor: `git` in `m/` would run it outside the sandbox.
    let plant = "mkdir -p .git/modules && git init -q --bare .git/modules/m && \
                 git config -f .git/modules/m/config core.fsmonitor 'touch PWNED' && mkdir m && \
                 echo 'gitdir: ../.git/modules/m' > m/.git && echo planted";
    let mock = MockLlm::start(vec![exec_call(plant), Reply::text("done")]).await;
    let out = scratch
        .run(Some(&mock), &["run", "--mode", "full-auto", "set up"])
        .await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    let result = &tool_results(&requests[1])[0];
    assert!(result.contains("created git repositor"), "{result}");
    let shown = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        shown.contains("created git repositor") && shown.contains(".git/modules/m"),
        "the user was told: {shown}"
    );
}

const PLANT: &str = "mkdir -p .tern/skills/evil .tern/commands && printf '%s\\n' --- 'name: evil' \
                     'description: planted' 'always: true' --- PLANTED-SKILL-TEXT > .tern/skills/evil/SKILL.md && \
                     echo PLANTED-COMMAND > .tern/commands/x.md";

#[tokio::test]
async fn a_planted_skill_is_reported_and_kept_out_of_the_next_sessions_prompt() {
    let scratch = Scratch::new();
    let mock = MockLlm::start(vec![exec_call(PLANT), Reply::text("done")]).await;
    let out = scratch
        .run(Some(&mock), &["run", "--mode", "full-auto", "set up"])
        .await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        scratch.work.path().join(".tern/skills/evil/SKILL.md").is_file(),
        "the command ran: {}",
        tool_results(&requests[1])[0]
    );
    // Reported to the model with the result, and to the user.
    let result = &tool_results(&requests[1])[0];
    assert!(
        result.contains("instructions or configuration") && result.contains(".tern/skills/evil/SKILL.md"),
        "{result}"
    );
    let shown = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(shown.contains(".tern/skills/evil"), "the user was told: {shown}");
    assert!(!system_prompt(&requests[1]).contains("PLANTED-SKILL-TEXT"));

    // The next session, with no trust given, does not put it in the prompt.
    let next = MockLlm::start(vec![Reply::text("hi")]).await;
    let out = scratch.run(Some(&next), &["run", "hello"]).await;
    let requests = next.requests();
    assert_eq!(requests.len(), 1, "{}", String::from_utf8_lossy(&out.stderr));
    let body = requests[0].to_string();
    assert!(
        !body.contains("PLANTED-SKILL-TEXT"),
        "the planted skill reached the prompt"
    );
    assert!(!body.contains("evil"), "the planted skill was listed");

    // Once the user trusts the project as it is, the skill is theirs: it reaches the prompt (the check above could
    // see it).
    let trusted = MockLlm::start(vec![Reply::text("hi")]).await;
    scratch.run(Some(&trusted), &["run", "--trust-project", "hello"]).await;
    assert!(system_prompt(&trusted.requests()[0]).contains("PLANTED-SKILL-TEXT"));
}

/// A workspace outside the temp directory (which stays writable in read-only mode).
fn outside_temp() -> tempfile::TempDir {
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        Some("/var/tmp".into()),
        std::env::var_os("HOME").map(PathBuf::from),
    ];
    let base = candidates
        .into_iter()
        .flatten()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .find(|dir| !dir.starts_with(&temp) && tempfile::tempdir_in(dir).is_ok())
        .expect("a writable directory outside the temp directory");
    tempfile::tempdir_in(base).unwrap()
}

#[tokio::test]
async fn read_only_mode_runs_commands_in_a_sandbox_that_writes_nothing() {
    if !tern::sandbox::probe().is_available() {
        eprintln!("skipped: no OS sandbox here");
        return;
    }
    let work = outside_temp();
    let tool = ExecTool::new(ExecConfig {
        sandbox: Some(SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern"))),
        ..ExecConfig::default()
    });
    let mut ctx = ToolContext::new(PathPolicy::new(work.path()).unwrap());
    ctx.limits.writes_nothing = true;
    let out = tool.execute(json!({ "command": "touch x" }), &ctx).await.unwrap();
    assert!(out.is_error, "{}", out.text);
    assert!(!work.path().join("x").exists());
    // Reading still works, and the same sandbox outside read-only mode writes the workspace.
    let out = tool.execute(json!({ "command": "ls" }), &ctx).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    ctx.limits.writes_nothing = false;
    let out = tool.execute(json!({ "command": "touch x" }), &ctx).await.unwrap();
    assert!(!out.is_error && work.path().join("x").exists(), "{}", out.text);
}
