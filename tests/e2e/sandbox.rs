//! The OS sandbox end to end: real commands through `ExecTool`, with the built `tern` binary as the launcher. These
//! run as whatever user runs the tests (root on CI, and Landlock binds root too), so every refusal here is real.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tern::config::ConfigFile;
use tern::protocol::{ToolDetails, ToolOutput};
use tern::sandbox::SandboxPolicy;
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::{OutputSink, PathPolicy, Tool, ToolContext};

const LAUNCHER: &str = env!("CARGO_BIN_EXE_tern-sandbox");

fn policy() -> SandboxPolicy {
    SandboxPolicy::with_launcher(LAUNCHER)
}

fn tool(policy: SandboxPolicy) -> ExecTool {
    ExecTool::new(ExecConfig {
        sandbox: Some(policy),
        ..ExecConfig::default()
    })
}

/// A workspace (under the temp directory) and its tool context.
fn workspace() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    (dir, ctx)
}

/// A directory outside both the workspace and the temp directory (which the sandbox lets commands write). The
/// build's own temp folder will not do when a clone is checked out under /tmp; `/var/tmp` never does (the sandbox
/// covers it with the session's private temp, so a write there fails for another reason).
fn outside() -> tempfile::TempDir {
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    let candidates = [
        std::env::var_os("HOME").map(std::path::PathBuf::from),
        Some(env!("CARGO_TARGET_TMPDIR").into()),
    ];
    let base = candidates
        .into_iter()
        .flatten()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .find(|dir| !dir.starts_with(&temp) && tempfile::tempdir_in(dir).is_ok())
        .expect("a writable directory outside the temp directory (HOME or the build's temp folder)");
    tempfile::tempdir_in(base).unwrap()
}

async fn run(tool: &ExecTool, ctx: &ToolContext, args: Value) -> ToolOutput {
    tool.execute(args, ctx).await.unwrap()
}

fn exec_details(out: &ToolOutput) -> (Option<i32>, bool) {
    match out.details {
        ToolDetails::Exec {
            exit_code, sandboxed, ..
        } => (exit_code, sandboxed),
        ref other => panic!("not exec details: {other:?}"),
    }
}

/// `sleep <marker>` processes on the whole machine (not the launcher or bash, whose command lines hold the marker too).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.rfind(')').is_some_and(|i| s[i + 1..].trim_start().starts_with('Z')))
            .unwrap_or(true);
        if cmdline.starts_with("sleep ") && cmdline.contains(marker) && !zombie {
            found.push(format!("{}: {cmdline}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

fn marker() -> String {
    format!("{}.{}", 1000 + fastrand::u32(..100_000), std::process::id())
}

#[tokio::test]
async fn writes_go_only_to_the_workspace_and_temp_and_a_refusal_says_so() {
    let (dir, ctx) = workspace();
    let outside = outside();
    let target = outside.path().join("escaped");
    let command = format!(
        "echo a > in-workspace && echo b > \"${{TMPDIR:-/tmp}}/tern-sandbox-test-$$\" && rm \"${{TMPDIR:-/tmp}}/tern-sandbox-test-$$\" \
         && echo wrote-inside && echo c > '{}'",
        target.display()
    );
    let out = run(&tool(policy()), &ctx, json!({ "command": command })).await;
    assert!(out.is_error, "{}", out.text);
    assert_eq!(exec_details(&out), (Some(1), true), "{}", out.text);
    assert!(out.text.contains("wrote-inside"), "{}", out.text);
    assert!(dir.path().join("in-workspace").is_file());
    assert!(out.text.contains("Permission denied"), "EACCES expected: {}", out.text);
    assert!(!target.exists());
    assert!(
        out.text
            .contains("writes are allowed only in the workspace and the temp directory"),
        "{}",
        out.text
    );
    assert!(out.text.contains("`unsandboxed: true`"), "{}", out.text);

    // The same write outside the sandbox (which the gate always asks about) goes through.
    let out = run(
        &tool(policy()),
        &ctx,
        json!({ "command": format!("echo c > '{}'", target.display()), "unsandboxed": true }),
    )
    .await;
    assert_eq!(exec_details(&out), (Some(0), false), "{}", out.text);
    assert!(target.is_file());
}

#[tokio::test]
async fn configured_writable_roots_are_writable() {
    let (_dir, ctx) = workspace();
    let outside = outside();
    let mut policy = policy();
    policy.writable_roots.push(outside.path().to_path_buf());
    let target = outside.path().join("allowed");
    let out = run(
        &tool(policy),
        &ctx,
        json!({ "command": format!("echo c > '{}'", target.display()) }),
    )
    .await;
    assert_eq!(exec_details(&out), (Some(0), true), "{}", out.text);
    assert!(target.is_file());
}

#[tokio::test]
async fn git_is_read_only_when_configured_even_from_inside_it() {
    let (dir, ctx) = workspace();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    let mut strict = policy();
    strict.git_read_only = true;
    let out = run(
        &tool(strict.clone()),
        &ctx,
        json!({ "command": "touch outside-git && touch .git/hooks/pre-commit" }),
    )
    .await;
    assert_eq!(exec_details(&out).0, Some(1), "{}", out.text);
    assert!(out.text.contains("Read-only file system"), "{}", out.text);
    assert!(out.text.contains(".git and .tern are read-only"), "{}", out.text);
    assert!(dir.path().join("outside-git").is_file());
    assert!(!dir.path().join(".git/hooks/pre-commit").exists());

    // Started inside .git, the command still sees the read-only mount rather than what lies beneath it.
    let out = run(
        &tool(strict),
        &ctx,
        json!({ "command": "touch pre-commit", "working_dir": ".git/hooks" }),
    )
    .await;
    assert_eq!(exec_details(&out).0, Some(1), "{}", out.text);
    assert!(!dir.path().join(".git/hooks/pre-commit").exists());

    // By default only what git obeys (hooks, config, info) is read-only; the rest of `.git` is writable.
    let out = run(
        &tool(policy()),
        &ctx,
        json!({ "command": "touch .git/ORIG_HEAD && touch .git/hooks/pre-commit" }),
    )
    .await;
    assert_eq!(exec_details(&out).0, Some(1), "{}", out.text);
    assert!(out.text.contains("Read-only file system"), "{}", out.text);
    assert!(dir.path().join(".git/ORIG_HEAD").is_file());
    assert!(!dir.path().join(".git/hooks/pre-commit").exists());
}

#[tokio::test]
async fn the_projects_tern_settings_are_read_only_to_commands() {
    let (dir, ctx) = workspace();
    std::fs::create_dir_all(dir.path().join(".tern")).unwrap();
    std::fs::write(dir.path().join(".tern/config.toml"), "mode = \"ask\"\n").unwrap();
    let out = run(
        &tool(policy()),
        &ctx,
        json!({ "command": "echo 'mode = \"full-auto\"' > .tern/config.toml || mv .tern .tern-old" }),
    )
    .await;
    assert_ne!(exec_details(&out).0, Some(0), "{}", out.text);
    assert!(out.text.contains(".tern is read-only"), "{}", out.text);
    let kept = std::fs::read_to_string(dir.path().join(".tern/config.toml")).unwrap();
    assert_eq!(kept, "mode = \"ask\"\n");
}

#[tokio::test]
async fn terns_own_config_and_data_are_hidden_from_commands() {
    let (_dir, ctx) = workspace();
    let tern_home = outside();
    std::fs::write(tern_home.path().join("config.toml"), "api_key = \"sk-hidden-123\"\n").unwrap();
    let mut hiding = policy();
    hiding.hidden = vec![std::fs::canonicalize(tern_home.path()).unwrap()];
    let listing = format!("ls -A {0}; cat {0}/config.toml", tern_home.path().display());
    let out = run(&tool(hiding), &ctx, json!({ "command": listing })).await;
    assert!(!out.text.contains("sk-hidden-123"), "{}", out.text);
    assert!(
        !out.text.contains("config.toml\n"),
        "the directory looks empty: {}",
        out.text
    );
    assert!(out.text.contains("No such file"), "{}", out.text);
    // Outside the sandbox the file is there, untouched.
    let kept = std::fs::read_to_string(tern_home.path().join("config.toml")).unwrap();
    assert!(kept.contains("sk-hidden-123"));
}

/// A bash command that connects to 127.0.0.1:`port` and prints `connected`.
fn connect(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[tokio::test]
async fn there_is_no_network_but_loopback_of_its_own_unless_configured() {
    let (_dir, ctx) = workspace();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();

    let out = run(&tool(policy()), &ctx, json!({ "command": connect(port) })).await;
    assert_ne!(exec_details(&out).0, Some(0), "{}", out.text);
    assert!(!out.text.contains("connected\n"), "{}", out.text);
    assert!(out.text.contains("there is no network"), "{}", out.text);

    // Servers the command starts itself are reachable on its own loopback.
    let own = "python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); \
               socket.create_connection(s.getsockname()); print('own-loopback-ok')\"";
    let out = run(&tool(policy()), &ctx, json!({ "command": own })).await;
    assert!(out.text.contains("own-loopback-ok"), "{}", out.text);

    let mut open = policy();
    open.network = true;
    let out = run(&tool(open), &ctx, json!({ "command": connect(port) })).await;
    assert_eq!(exec_details(&out), (Some(0), true), "{}", out.text);
    assert!(out.text.contains("connected"), "{}", out.text);
}

#[tokio::test]
async fn daemons_and_setsid_children_end_with_the_command() {
    let (_dir, ctx) = workspace();
    let (daemon, double) = (marker(), marker());
    let command = format!(
        "setsid sleep {daemon} & (setsid bash -c 'sleep {double} & exit 0' &); sleep 0.3; echo started; sleep 1"
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut live = ctx.clone();
    live.output = OutputSink::new(tx);
    let exec = tool(policy());
    let call = tokio::spawn(async move { exec.execute(json!({ "command": command }), &live).await });
    let mut seen = String::new();
    while !seen.contains("started") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap();
        seen.push_str(&chunk.unwrap());
    }
    // Both are running, in sessions of their own, while the command runs...
    assert_eq!(processes_with(&daemon).len(), 1, "{seen}");
    assert_eq!(processes_with(&double).len(), 1, "{seen}");
    let out = call.await.unwrap().unwrap();
    assert_eq!(exec_details(&out), (Some(0), true), "{}", out.text);
    // ...and gone as soon as it has returned.
    assert_eq!(processes_with(&daemon), Vec::<String>::new());
    assert_eq!(processes_with(&double), Vec::<String>::new());
}

#[tokio::test]
async fn a_timeout_ends_the_whole_namespace() {
    let (_dir, ctx) = workspace();
    let daemon = marker();
    let command = format!("setsid sleep {daemon} & sleep 100");
    let out = run(&tool(policy()), &ctx, json!({ "command": command, "timeout": 1 })).await;
    assert!(out.text.contains("timed out"), "{}", out.text);
    assert_eq!(processes_with(&daemon), Vec::<String>::new());
}

#[tokio::test]
async fn a_timed_out_command_gets_sigterm_and_time_to_clean_up() {
    let (_dir, ctx) = workspace();
    let command = "trap 'sleep 0.2; echo cleaned-up; exit 3' TERM; echo waiting; sleep 100 & wait";
    let out = run(&tool(policy()), &ctx, json!({ "command": command, "timeout": 1 })).await;
    assert!(out.text.contains("timed out"), "{}", out.text);
    assert!(out.text.contains("cleaned-up"), "{}", out.text);
}

#[tokio::test]
async fn tern_and_its_environment_are_not_visible() {
    let (_dir, ctx) = workspace();
    let me = std::process::id();
    let command =
        format!("cat /proc/{me}/environ; echo pids: $(ls /proc | grep -cE '^[0-9]+$'); kill -0 {me} && echo signalled");
    let out = run(&tool(policy()), &ctx, json!({ "command": command })).await;
    assert!(
        out.text.contains(&format!("/proc/{me}/environ: No such file")),
        "{}",
        out.text
    );
    assert!(!out.text.contains("signalled"), "{}", out.text);
    // init, bash, ls and grep at most: nothing outside the sandbox's own PID namespace.
    let pids: u32 = out.text.split("pids: ").nth(1).unwrap()[..1].parse().unwrap();
    assert!(pids <= 5, "{}", out.text);
}

#[tokio::test]
async fn exit_codes_and_signals_pass_through() {
    let (_dir, ctx) = workspace();
    let exec = tool(policy());
    let out = run(&exec, &ctx, json!({ "command": "echo fine; echo also > /dev/stderr" })).await;
    assert_eq!(exec_details(&out), (Some(0), true), "{}", out.text);
    assert!(
        !out.is_error && out.text.contains("fine\nSTDERR:\nalso\n"),
        "{}",
        out.text
    );

    let out = run(&exec, &ctx, json!({ "command": "exit 7" })).await;
    assert_eq!(exec_details(&out), (Some(7), true), "{}", out.text);
    assert!(out.text.contains("Exit code: 7"), "{}", out.text);
    assert!(!out.text.contains("sandbox"), "no refusal, no note: {}", out.text);

    let out = run(&exec, &ctx, json!({ "command": "kill -TERM $$" })).await;
    assert_eq!(exec_details(&out), (None, true), "{}", out.text);
    assert!(out.text.contains("Killed by signal 15 (SIGTERM)"), "{}", out.text);

    let out = run(&exec, &ctx, json!({ "command": "no-such-program-here" })).await;
    assert_eq!(exec_details(&out).0, Some(127), "{}", out.text);
}

#[tokio::test]
async fn a_launcher_that_cannot_start_is_an_error_not_an_unconfined_run() {
    let (dir, ctx) = workspace();
    let broken = SandboxPolicy::with_launcher(Path::new("/nonexistent/tern"));
    let out = run(&tool(broken), &ctx, json!({ "command": "touch made" })).await;
    assert!(out.is_error, "{}", out.text);
    assert!(out.text.contains("could not start"), "{}", out.text);
    assert!(!dir.path().join("made").exists());

    let refused = tool(policy())
        .execute(json!({ "command": "true", "unsandboxed": "yes" }), &ctx)
        .await;
    assert!(
        matches!(&refused, Err(e) if e.to_string().contains("unsandboxed must be true or false")),
        "{refused:?}"
    );
}

#[test]
fn an_untrusted_project_cannot_loosen_the_sandbox() {
    let loosening = "[sandbox]\nenabled = false\nnetwork = true\nwritable_roots = [\"/\"]\ngit_read_only = false\n";
    let project = ConfigFile::parse(loosening, &PathBuf::from(".tern/config.toml")).unwrap();
    let (kept, dropped) = project.without_loosening();
    assert_eq!(
        dropped,
        [
            "sandbox.enabled",
            "sandbox.network",
            "sandbox.writable_roots",
            "sandbox.git_read_only"
        ]
    );
    let settings = tern::config::resolve(kept, Vec::new(), |_| Some("k".into()), || None).unwrap();
    assert_eq!(settings.sandbox, tern::config::SandboxSettings::default());

    let tightening = "[sandbox]\nenabled = true\nnetwork = false\ngit_read_only = true\n";
    let project = ConfigFile::parse(tightening, &PathBuf::from(".tern/config.toml")).unwrap();
    let (kept, dropped) = project.without_loosening();
    assert!(dropped.is_empty(), "{dropped:?}");
    let settings = tern::config::resolve(kept, Vec::new(), |_| Some("k".into()), || None).unwrap();
    assert!(settings.sandbox.enabled && !settings.sandbox.network && settings.sandbox.git_read_only);
}

#[test]
fn the_model_is_told_about_the_sandbox_and_the_way_out() {
    let strict = tool(policy());
    assert!(strict.description().contains("OS sandbox"), "{}", strict.description());
    assert!(strict.description().contains("no network"), "{}", strict.description());
    assert_eq!(strict.parameters()["properties"]["unsandboxed"]["type"], "boolean");
    let mut open = policy();
    open.network = true;
    assert!(!tool(open).description().contains("no network"));
    assert!(!ExecTool::default().description().contains("sandbox"));
}

#[tokio::test]
async fn hidden_files_read_as_empty_and_cannot_be_written() {
    let (dir, ctx) = workspace();
    let home = outside();
    let netrc = home.path().join(".netrc");
    std::fs::write(&netrc, "machine example.com password hunter2\n").unwrap();
    let env_file = dir.path().join(".env");
    std::fs::write(&env_file, "API_KEY=sk-live-999\n").unwrap();
    let mut hiding = policy();
    hiding.hidden = vec![
        std::fs::canonicalize(&netrc).unwrap(),
        std::fs::canonicalize(&env_file).unwrap(),
    ];
    let command = format!(
        "cat '{0}' .env; echo size=$(stat -c %s '{0}'); echo x >> .env; echo x >> '{0}'; echo done",
        netrc.display()
    );
    let out = run(&tool(hiding), &ctx, json!({ "command": command })).await;
    assert!(out.text.contains("size=0"), "{}", out.text);
    assert!(out.text.contains("done"), "{}", out.text);
    assert!(
        !out.text.contains("hunter2") && !out.text.contains("sk-live"),
        "{}",
        out.text
    );
    // The cover is a read-only mount of a mode-0444 file: with no capabilities left, the mode refuses first.
    assert!(
        out.text.contains("Read-only file system") || out.text.contains("Permission denied"),
        "{}",
        out.text
    );
    assert_eq!(std::fs::read_to_string(&env_file).unwrap(), "API_KEY=sk-live-999\n");
    assert!(std::fs::read_to_string(&netrc).unwrap().contains("hunter2"));
}

#[tokio::test]
async fn a_sandbox_that_writes_nothing_writes_only_its_private_temp() {
    let (dir, ctx) = workspace();
    let mut read_only = policy();
    read_only.writes_nothing = true;
    let exec = tool(read_only);
    let out = run(
        &exec,
        &ctx,
        json!({ "command": "ls >/dev/null && echo scratch > /tmp/scratch && cat /tmp/scratch && touch in-workspace" }),
    )
    .await;
    assert_eq!(exec_details(&out), (Some(1), true), "{}", out.text);
    assert!(out.text.contains("scratch\n"), "{}", out.text);
    // Landlock refuses (EACCES), or, for a workspace under /tmp bound back into the private temp, its read-only
    // mount (EROFS).
    assert!(
        out.text.contains("Permission denied") || out.text.contains("Read-only file system"),
        "{}",
        out.text
    );
    assert!(out.text.contains("this session is read-only"), "{}", out.text);
    assert!(!dir.path().join("in-workspace").exists());
}

/// The session's holders (`launcher::hold`) for `workspace`: this process's children started with `--hold` in it.
fn holders(workspace: &Path) -> Vec<u32> {
    let me = std::process::id().to_string();
    let workspace = std::fs::canonicalize(workspace).unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid ...`: the fields after the last `)`.
        let ppid = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(1));
        let args = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = args.split(|&b| b == 0).collect();
        if ppid == Some(me.as_str())
            && args.contains(&b"--hold".as_slice())
            && args.contains(&workspace.as_os_str().as_encoded_bytes())
        {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn commands_join_one_holder_per_session_which_ends_with_it() {
    let (dir, ctx) = workspace();
    let exec = tool(policy());
    for i in 0..3 {
        let out = run(
            &exec,
            &ctx,
            json!({ "command": format!("echo {i} >> /tmp/count; wc -l < /tmp/count") }),
        )
        .await;
        assert!(
            out.text.contains(&format!("{}", i + 1)),
            "the private temp is the session's: {}",
            out.text
        );
    }
    let first = holders(dir.path());
    assert_eq!(first.len(), 1, "one holder for the session's commands: {first:?}");
    // The commands cannot see it: they have a PID namespace of their own.
    let out = run(&exec, &ctx, json!({ "command": "ls /proc | grep '^[0-9]'" })).await;
    assert!(out.text.lines().any(|l| l.trim() == "1"), "{}", out.text);
    assert!(
        !out.text.lines().any(|l| l.trim() == first[0].to_string()),
        "{}",
        out.text
    );
    // A holder that went away is replaced; the command still runs sandboxed.
    // SAFETY: kill takes plain values.
    unsafe { libc::kill(first[0] as libc::pid_t, libc::SIGKILL) };
    let out = run(
        &exec,
        &ctx,
        json!({ "command": "cat /tmp/count | wc -l; touch /etc/tern-probe" }),
    )
    .await;
    assert!(
        out.text.contains('3') && out.text.contains("/etc/tern-probe"),
        "{}",
        out.text
    );
    assert!(!Path::new("/etc/tern-probe").exists());
    // That command may have found the holder dying and made its own namespaces; the next one starts a new holder.
    run(&exec, &ctx, json!({ "command": "true" })).await;
    let second = holders(dir.path());
    assert!(second.len() == 1 && second != first, "{first:?} then {second:?}");
    drop(exec);
    // It ends once it has read the end of its control socket (and been reaped off tern's thread).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !holders(dir.path()).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(holders(dir.path()).is_empty(), "the holder ends with the session");
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test]
async fn the_holder_starts_commands_with_their_own_stdio_environment_and_directory_and_nothing_of_its_own() {
    let (dir, ctx) = workspace();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut live = ctx.clone();
    live.output = OutputSink::new(tx);
    let exec = tool(policy());
    // Its descriptors: nothing but stdio (and the directory `ls` reads), no socket of the holder's.
    let out = run(&exec, &ctx, json!({ "command": "exec ls -l /proc/self/fd" })).await;
    let fds: Vec<&str> = out
        .text
        .lines()
        .filter(|l| l.contains(" -> ") && !l.contains("-> /proc/"))
        .collect();
    assert_eq!(fds.len(), 3, "stdin, stdout and stderr only: {}", out.text);
    assert!(fds[0].ends_with("/dev/null"), "{}", out.text);
    assert!(fds[1..].iter().all(|fd| fd.contains("pipe:")), "{}", out.text);
    // Init's are out of its reach: it cannot open them through /proc (to write a wait status of its choosing into the
    // pipe to its launcher, say), nor read init's environment.
    let out = run(
        &exec,
        &ctx,
        json!({ "command": "ls /proc/1/fd; cat /proc/1/environ; for f in /proc/1/fd/*; do printf '\\0\\0\\0\\0' > $f; done; exit 3" }),
    )
    .await;
    assert_eq!(exec_details(&out), (Some(3), true), "{}", out.text);
    assert!(
        !out.text.contains(" -> ") && out.text.contains("Permission denied"),
        "{}",
        out.text
    );
    let holder = holders(dir.path());
    assert_eq!(holder.len(), 1, "{holder:?}");
    // A second's sleep whose command line is this test's own (GNU sleep adds its arguments up).
    let sleeper = format!("0.0000{}{}", std::process::id(), fastrand::u32(..1000));
    // The SIGPIPE a pipeline ends with, the variables and directory it was given.
    let command = format!(
        "pwd; yes | head -1 >/dev/null; echo \"pipe=${{PIPESTATUS[0]}}\"; echo \"path=$PATH\"; echo started; \
         sleep 1 {sleeper}; true"
    );
    let call = tokio::spawn(async move {
        exec.execute(json!({ "command": command, "working_dir": "sub" }), &live)
            .await
    });
    let mut seen = String::new();
    while !seen.contains("started") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap();
        seen.push_str(&chunk.unwrap());
    }
    // The command runs under init, under the launcher the holder forked: not under a launcher tern spawned. (The
    // shell printed "started" before it started sleep: on a busy machine the sleep may take a moment to appear.)
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let found = loop {
        let found = processes_with(&sleeper);
        if !found.is_empty() || std::time::Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let sleep: u32 = found[0].split(':').next().unwrap().parse().unwrap();
    // sleep, bash, init, the launcher.
    let launcher = parent_of(sleep).and_then(parent_of).and_then(parent_of);
    assert_eq!(launcher.and_then(parent_of), Some(holder[0]), "{seen}");
    let out = call.await.unwrap().unwrap();
    assert_eq!(exec_details(&out), (Some(0), true), "{}", out.text);
    let canonical = std::fs::canonicalize(dir.path().join("sub")).unwrap();
    assert!(
        out.text.starts_with(&format!("{}\n", canonical.display())),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("pipe=141"),
        "yes ends by SIGPIPE, as outside: {}",
        out.text
    );
    let path = std::env::var("PATH").unwrap();
    assert!(out.text.contains(&format!("path={path}\n")), "{}", out.text);
}

#[tokio::test]
async fn a_command_outlives_a_holder_replaced_while_it_runs() {
    let (_dir, ctx) = workspace();
    let mut read_only = ctx.clone();
    read_only.limits.writes_nothing = true;
    let exec = tool(policy());
    let long = exec.execute(json!({ "command": "sleep 1; echo survived" }), &ctx);
    // A read-only command needs other shared mounts, so another holder, which replaces the first.
    let switch = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        exec.execute(json!({ "command": "echo read-only" }), &read_only).await
    };
    let (long, switch) = tokio::join!(long, switch);
    let (long, switch) = (long.unwrap(), switch.unwrap());
    assert!(switch.text.contains("read-only"), "{}", switch.text);
    assert_eq!(exec_details(&long), (Some(0), true), "{}", long.text);
    assert!(long.text.contains("survived"), "{}", long.text);
}

#[test]
fn a_launcher_told_to_join_a_process_that_is_not_the_holder_makes_its_own_namespaces() {
    let (dir, _ctx) = workspace();
    // This test's own id, with a start time it does not have: as if the holder had ended and its id been reused.
    let not_the_holder = format!("{}:1", std::process::id());
    let out = std::process::Command::new(LAUNCHER)
        .args(["--join", &not_the_holder, "--write"])
        .arg(dir.path())
        .args(["--", "sh", "-c", "touch /etc/tern-join-probe 2>/dev/null; echo ran"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("ran"),
        "{out:?}"
    );
    assert!(!Path::new("/etc/tern-join-probe").exists(), "ran outside the sandbox");
}

#[tokio::test]
async fn a_repository_a_command_made_without_a_config_cannot_get_one_from_the_next_command() {
    let (dir, ctx) = workspace();
    let exec = tool(policy());
    let out = run(
        &exec,
        &ctx,
        json!({ "command": "mkdir -p sub/.git/hooks && echo made" }),
    )
    .await;
    assert!(out.text.contains("created git repository"), "{}", out.text);
    let out = run(
        &exec,
        &ctx,
        json!({ "command": "printf '[core]\\n\\thooksPath = /tmp\\n' >> sub/.git/config" }),
    )
    .await;
    assert_eq!(exec_details(&out), (Some(1), true), "{}", out.text);
    // Made empty, and read-only from then on.
    assert_eq!(std::fs::read_to_string(dir.path().join("sub/.git/config")).unwrap(), "");
}
