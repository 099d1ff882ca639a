//! Hooks run as real `sh` processes: input on stdin, the environment, caps, timeouts and process groups.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::reply::Outcome;
use super::run::{Ending, run};
use super::*;

fn hooks(list: Vec<Hook>, dir: &Path) -> Hooks {
    Hooks::new(list, "session-1", dir)
}

fn hook(event: HookEvent, matcher: Option<&str>, command: &str) -> Hook {
    Hook::new(event, matcher, command, Duration::from_secs(10)).unwrap()
}

#[tokio::test]
async fn a_hook_reads_its_input_and_runs_in_the_workspace_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let command = "cat > input.json; pwd > cwd.txt; env > env.txt";
    let set = hooks(vec![hook(HookEvent::Stop, None, command)], dir.path());
    let mut fields = Map::new();
    fields.insert("stop_hook_active".into(), json!(true));
    let ran = set
        .run_all(HookEvent::Stop, &[], fields, &CancellationToken::new())
        .await;
    assert_eq!(ran.len(), 1);
    assert!(
        matches!(&ran[0].1, Outcome::Replied(r) if r.decision.is_none()),
        "{:?}",
        ran[0].1
    );
    let input: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("input.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "Stop");
    assert_eq!(input["session_id"], "session-1");
    assert_eq!(input["stop_hook_active"], true);
    assert_eq!(input["cwd"], dir.path().display().to_string());
    let cwd = std::fs::read_to_string(dir.path().join("cwd.txt")).unwrap();
    assert_eq!(
        std::fs::canonicalize(cwd.trim()).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
    let env = std::fs::read_to_string(dir.path().join("env.txt")).unwrap();
    // git in a hook gets the neutral environment: no fsmonitor or hook a command planted runs.
    assert!(
        env.contains("GIT_CONFIG_NOSYSTEM=1") && env.contains("=core.fsmonitor"),
        "{env}"
    );
    assert!(
        env.contains(&format!("TERN_PROJECT_DIR={}", dir.path().display())),
        "{env}"
    );
    for line in env.lines() {
        let name = line.split('=').next().unwrap_or_default();
        assert!(
            !tern_secrets::is_secret_name(std::ffi::OsStr::new(name)) || name.starts_with("GIT_CONFIG_KEY_"),
            "a secret-looking variable reached the hook: {name}"
        );
    }
}

#[tokio::test]
async fn a_slow_hook_is_killed_with_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    // A background child that would outlive the hook, then a shell that never ends.
    let command = format!("sleep 60 & echo $! > {}; sleep 60", pid_file.display());
    let started = Instant::now();
    let ran = run(
        &command,
        b"{}",
        dir.path(),
        &[("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
        Duration::from_millis(300),
        &CancellationToken::new(),
    )
    .await;
    assert!(matches!(ran.ending, Ending::TimedOut(_)), "{:?}", ran.ending);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let child: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    let alive = || unsafe { libc::kill(child, 0) } == 0 && !zombie(child);
    let deadline = Instant::now() + Duration::from_secs(2);
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the hook's background child survived");
}

fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

#[tokio::test]
async fn output_is_capped_and_a_background_child_does_not_hold_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let path = [("PATH".into(), std::env::var_os("PATH").unwrap_or_default())];
    let started = Instant::now();
    // 1 MB on stdout, a child left holding the pipes, exit 0 at once.
    let command = "head -c 1000000 /dev/zero | tr '\\0' x; (sleep 30 &); exit 0";
    let ran = run(
        command,
        b"",
        dir.path(),
        &path,
        Duration::from_secs(20),
        &CancellationToken::new(),
    )
    .await;
    assert!(matches!(ran.ending, Ending::Exit(0)), "{:?}", ran.ending);
    assert_eq!(ran.stdout.len(), 64 * 1024);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    // A hook that ignores a large input is not a problem either.
    let big = vec![b'a'; 1 << 20];
    let ran = run(
        "exit 3",
        &big,
        dir.path(),
        &path,
        Duration::from_secs(20),
        &CancellationToken::new(),
    )
    .await;
    assert!(matches!(ran.ending, Ending::Exit(3)), "{:?}", ran.ending);
}

#[tokio::test]
async fn an_interrupt_ends_a_hook_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
    });
    let started = Instant::now();
    let ran = run("sleep 60", b"", dir.path(), &[], Duration::from_secs(60), &cancel).await;
    assert!(matches!(ran.ending, Ending::Cancelled), "{:?}", ran.ending);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// Matchers read as Claude Code reads them: a plain list of names is exact, anything else a regular expression that
/// may match anywhere; a call is selected by its Claude Code name or tern's.
#[tokio::test]
async fn matchers_select_hooks_as_claude_code_does() {
    let dir = tempfile::tempdir().unwrap();
    let set = hooks(
        vec![
            hook(HookEvent::PreToolUse, Some("Bash|mcp__github__.*"), "echo a >> ran.txt"),
            hook(HookEvent::PreToolUse, None, "echo b >> ran.txt"),
            hook(HookEvent::PostToolUse, Some("Edit, Write"), "echo c >> ran.txt"),
            hook(HookEvent::PostToolUse, Some("Edit.*"), "echo d >> ran.txt"),
            hook(HookEvent::PostToolUse, Some("exec"), "echo e >> ran.txt"),
        ],
        dir.path(),
    );
    assert!(set.wants(HookEvent::PreToolUse, "Read"));
    assert!(set.wants(HookEvent::PostToolUse, "Write") && set.wants(HookEvent::PostToolUse, "exec"));
    assert!(!set.wants(HookEvent::PostToolUse, "Read") && !set.wants(HookEvent::PostToolUse, "Writer"));
    // A regex may match anywhere, as in Claude Code: `Edit.*` selects NotebookEdit too.
    assert!(set.wants(HookEvent::PostToolUse, "NotebookEdit"));
    assert!(!set.wants(HookEvent::Stop, "Bash"));
    let cancel = CancellationToken::new();
    let ran = set
        .run_all(
            HookEvent::PreToolUse,
            &["mcp__github__list_issues"],
            Map::new(),
            &cancel,
        )
        .await;
    assert_eq!(ran.len(), 2);
    let ran = set
        .run_all(
            HookEvent::PreToolUse,
            &["mcp__gitlab__list_issues"],
            Map::new(),
            &cancel,
        )
        .await;
    assert_eq!(ran.len(), 1);
    // tern's name selects too: an older config keeps working.
    let ran = set
        .run_all(HookEvent::PostToolUse, &["Bash", "exec"], Map::new(), &cancel)
        .await;
    assert_eq!(ran.len(), 1);
    let mut lines: Vec<String> = std::fs::read_to_string(dir.path().join("ran.txt"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    assert_eq!(lines, ["a", "b", "b", "e"]);
}

/// Guards written for Claude Code, as its documentation writes them, see tern's calls as Claude Code's: a command
/// as `Bash` with `tool_input.command`, an edit with an absolute `tool_input.file_path`, a patch once per file.
#[tokio::test]
async fn claude_code_guards_see_tern_calls_as_claude_code_calls() {
    use std::sync::Arc;
    use tern_protocol::{ApprovalMode, ToolCall};
    use tern_tools::{PathPolicy, Tool};

    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(dir.path()).unwrap();
    // The documentation's `rm -rf` guard (a deny in JSON) and its protected-files guard (exit 2 with a reason).
    let block_rm = r#"COMMAND=$(jq -r '.tool_input.command'); if echo "$COMMAND" | grep -q 'rm -rf'; then jq -n '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Destructive command blocked by hook"}}'; else exit 0; fi"#;
    let protect = r#"FILE_PATH=$(jq -r '.tool_input.file_path // empty'); case "$FILE_PATH" in *.env*) echo "Blocked: $FILE_PATH matches protected pattern '.env'" >&2; exit 2;; esac; exit 0"#;
    let set = hooks(
        vec![
            hook(HookEvent::PreToolUse, Some("Bash"), block_rm),
            hook(HookEvent::PreToolUse, Some("Edit|MultiEdit|Write"), protect),
        ],
        dir.path(),
    );
    let notify = |_: String| {};
    let cancel = CancellationToken::new();
    let decide = |tool: Arc<dyn Tool>, name: &str, args: Value| {
        let call = ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: args.clone(),
        };
        HookCall::new(&call, tool.as_ref(), &args, &policy)
    };
    let exec: Arc<dyn Tool> = Arc::new(tern_tools::exec::ExecTool::default());
    let rm = decide(Arc::clone(&exec), "exec", json!({"command": "rm -rf build"}));
    let said = set.pre_tool_use(&rm, ApprovalMode::AutoEdit, &cancel, &notify).await;
    let decision = said.decision.unwrap();
    assert_eq!(decision.permission, reply::Permission::Deny);
    assert_eq!(decision.reason.as_deref(), Some("Destructive command blocked by hook"));
    let ls = decide(exec, "exec", json!({"command": "ls"}));
    assert_eq!(
        set.pre_tool_use(&ls, ApprovalMode::AutoEdit, &cancel, &notify)
            .await
            .decision,
        None
    );
    // A patch whose second file is `.env`: the guard sees that file on its own.
    let patch = tern_tools::builtin_tools()
        .into_iter()
        .find(|t| t.claude() == Some(tern_tools::ClaudeTool::Patch))
        .unwrap();
    let edits = json!({"edits": [{"path": "a.rs", "old_text": "1", "new_text": "2"},
        {"path": "conf/.env", "old_text": "A=1", "new_text": "A=2"}]});
    let said = set
        .pre_tool_use(
            &decide(patch, "apply_patch", edits),
            ApprovalMode::AutoEdit,
            &cancel,
            &notify,
        )
        .await;
    let decision = said.decision.unwrap();
    assert_eq!(decision.permission, reply::Permission::Deny);
    let reason = decision.reason.unwrap();
    assert!(
        reason.contains(&format!("{}/conf/.env", dir.path().display())),
        "{reason}"
    );
}

#[test]
fn a_subagent_keeps_only_the_tool_call_and_subagent_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let set = hooks(
        vec![
            hook(HookEvent::PreToolUse, None, "a"),
            hook(HookEvent::PostToolUse, None, "b"),
            hook(HookEvent::UserPromptSubmit, None, "c"),
            hook(HookEvent::SessionStart, None, "d"),
            hook(HookEvent::Stop, None, "e"),
            hook(HookEvent::PostToolUseFailure, None, "f"),
            hook(HookEvent::SubagentStop, None, "g"),
            hook(HookEvent::SessionEnd, None, "h"),
            hook(HookEvent::PermissionRequest, None, "i"),
            hook(HookEvent::SubagentStart, None, "j"),
            hook(HookEvent::Notification, None, "k"),
        ],
        dir.path(),
    );
    let sub = set.for_subagent();
    assert!(sub.wants(HookEvent::PreToolUse, "exec") && sub.wants(HookEvent::PostToolUse, "exec"));
    assert!(!sub.wants(HookEvent::SessionStart, "startup"));
    let events: Vec<HookEvent> = sub.list.iter().map(|h| h.event).collect();
    assert_eq!(
        events,
        [
            HookEvent::PreToolUse,
            HookEvent::PostToolUse,
            HookEvent::PostToolUseFailure,
            HookEvent::SubagentStop,
            HookEvent::PermissionRequest,
            HookEvent::SubagentStart
        ]
    );
    assert_eq!(sub.session_id, "session-1");
}
