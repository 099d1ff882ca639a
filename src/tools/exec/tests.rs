//! End-to-end tests with real bash processes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::*;
use crate::{OutputSink, PathPolicy};

/// Whether the group `pgid` still has a running process.
fn group_alive(pgid: i32) -> bool {
    tern_process::group::Group::led_by(pgid as u32).is_some_and(|group| group.alive())
}

fn setup() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    (dir, ctx)
}

fn with_sink(ctx: &ToolContext) -> (ToolContext, UnboundedReceiver<String>) {
    let (tx, rx) = unbounded_channel();
    let mut ctx = ctx.clone();
    ctx.output = OutputSink::new(tx);
    (ctx, rx)
}

async fn exec(ctx: &ToolContext, args: Value) -> ToolOutput {
    ExecTool::default().execute(args, ctx).await.unwrap()
}

fn details(out: &ToolOutput) -> (Option<i32>, u64, bool) {
    match out.details {
        ToolDetails::Exec {
            exit_code,
            duration_ms,
            timed_out,
            ..
        } => (exit_code, duration_ms, timed_out),
        ref other => panic!("not exec details: {other:?}"),
    }
}

/// The number after `key=` in the output (commands print `PGID=$$`: bash's pid is its group id).
fn number_after(text: &str, key: &str) -> i32 {
    let at = text
        .find(&format!("{key}="))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
        + key.len()
        + 1;
    text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// Waits until no process of the group runs (zombies left to a non-reaping init do not count).
async fn gone(pgid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !group_alive(pgid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

fn process_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .is_some_and(|i| !stat[i + 1..].trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Reads live chunks until one contains `needle`.
async fn wait_for_live(rx: &mut UnboundedReceiver<String>, needle: &str) -> String {
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = rx.recv().await {
            seen.push_str(&chunk);
            if seen.contains(needle) {
                return;
            }
        }
    })
    .await;
    assert!(found.is_ok(), "live output never showed {needle:?}: {seen:?}");
    seen
}

#[test]
fn flags_and_schema() {
    let tool = ExecTool::default();
    assert_eq!(tool.name(), "exec");
    assert!(tool.exclusive() && !tool.read_only() && !tool.concurrency_safe());
    let schema = tool.parameters();
    assert_eq!(schema["required"], json!(["command"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["properties"]["timeout"]["maximum"], json!(600));
    assert!(tool.description().contains("read_file"));
}

#[tokio::test]
async fn stdout_exit_code_and_duration() {
    let (_d, ctx) = setup();
    let out = exec(&ctx, json!({"command": "echo hello"})).await;
    assert!(!out.is_error);
    assert!(out.text.starts_with("hello\nExit code: 0 (took "), "{}", out.text);
    assert_eq!(details(&out).0, Some(0));

    let out = exec(&ctx, json!({"command": "echo oops; exit 3"})).await;
    assert!(out.is_error);
    assert!(out.text.starts_with("oops\nExit code: 3 (took "), "{}", out.text);
    assert_eq!(details(&out), (Some(3), details(&out).1, false));

    let out = exec(&ctx, json!({"command": "true"})).await;
    assert!(out.text.starts_with("(no output)\nExit code: 0"), "{}", out.text);
}

#[tokio::test]
async fn stderr_gets_its_own_section() {
    let (_d, ctx) = setup();
    let out = exec(
        &ctx,
        json!({"command": "echo out; echo err >&2; printf 'no newline' >&2"}),
    )
    .await;
    assert!(
        out.text.starts_with("out\nSTDERR:\nerr\nno newline\nExit code: 0"),
        "{}",
        out.text
    );
    let out = exec(&ctx, json!({"command": "echo only-err >&2; exit 1"})).await;
    assert!(out.text.starts_with("STDERR:\nonly-err\nExit code: 1"), "{}", out.text);
}

#[tokio::test]
async fn killed_by_a_signal_is_reported() {
    let (_d, ctx) = setup();
    let out = exec(&ctx, json!({"command": "kill -9 $$"})).await;
    assert!(out.is_error);
    assert!(out.text.contains("Killed by signal 9 (SIGKILL)"), "{}", out.text);
    assert_eq!(details(&out).0, None);
}

#[tokio::test]
async fn output_that_is_not_utf8_survives() {
    let (_d, ctx) = setup();
    let out = exec(&ctx, json!({"command": r"printf 'a\377b\n'; printf '\376x\n' >&2"})).await;
    assert!(out.text.starts_with("a\u{FFFD}b\nSTDERR:\n\u{FFFD}x\n"), "{}", out.text);
}

#[tokio::test]
async fn working_dir_must_be_a_directory_inside() {
    let (d, ctx) = setup();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::write(d.path().join("file.txt"), "x").unwrap();
    let out = exec(&ctx, json!({"command": "pwd", "working_dir": "sub"})).await;
    assert!(
        out.text
            .starts_with(&format!("{}\n", ctx.policy.root().join("sub").display())),
        "{}",
        out.text
    );
    let out = exec(&ctx, json!({"command": "pwd"})).await;
    assert!(
        out.text.starts_with(&format!("{}\n", ctx.policy.root().display())),
        "{}",
        out.text
    );

    let tool = ExecTool::default();
    for (dir, expect) in [
        ("..", "outside the workspace"),
        ("/tmp", "outside the workspace"),
        ("file.txt", "is not a directory"),
        ("missing", "does not exist"),
    ] {
        let err = tool
            .execute(json!({"command": "pwd", "working_dir": dir}), &ctx)
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("'{dir}'")) && msg.contains(expect),
            "{dir}: {msg}"
        );
    }
}

#[tokio::test]
async fn bad_arguments_are_refused() {
    let (_d, ctx) = setup();
    let tool = ExecTool::default();
    for args in [
        json!({"command": "   "}),
        json!({}),
        json!({"command": "true", "timeout": 0}),
        json!({"command": "true", "timeout": 601}),
        json!({"command": "true", "timeout": "soon"}),
        json!({"command": "a\u{0}b"}),
    ] {
        assert!(
            matches!(tool.execute(args.clone(), &ctx).await, Err(ToolError::Invalid(_))),
            "{args}"
        );
    }
    let cancelled = ctx.clone();
    cancelled.cancel.cancel();
    assert!(matches!(
        tool.execute(json!({"command": "true"}), &cancelled).await,
        Err(ToolError::Cancelled)
    ));
}

#[tokio::test]
async fn a_missing_workspace_is_a_start_failure() {
    let (d, ctx) = setup();
    drop(d);
    let out = exec(&ctx, json!({"command": "true"})).await;
    assert!(out.is_error);
    assert!(
        out.text.starts_with("Error: could not start bash in '.'"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn stdin_is_closed() {
    let (_d, ctx) = setup();
    let started = Instant::now();
    let out = exec(&ctx, json!({"command": "cat; read line; echo after-$?", "timeout": 5})).await;
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(out.text.starts_with("after-1\nExit code: 0"), "{}", out.text);
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let (_d, ctx) = setup();
    let started = Instant::now();
    let command = "echo PGID=$$; sleep 100 & echo CHILD=$!; sleep 100";
    let out = exec(&ctx, json!({"command": command, "timeout": 1})).await;
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert!(out.is_error);
    assert!(
        out.text.starts_with("Error: Command timed out after 1 seconds"),
        "{}",
        out.text
    );
    assert!(out.text.contains("PGID="), "output so far is kept: {}", out.text);
    let (code, ms, timed_out) = details(&out);
    assert!(code.is_none() && timed_out && ms >= 1000);
    assert!(gone(number_after(&out.text, "PGID")).await);
    assert!(!process_running(number_after(&out.text, "CHILD")));
}

#[tokio::test]
async fn a_child_that_ignores_sigterm_is_killed() {
    let (_d, ctx) = setup();
    let started = Instant::now();
    let command = "trap '' TERM; echo PGID=$$; while :; do sleep 0.05; done";
    let out = exec(&ctx, json!({"command": command, "timeout": 1})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(details(&out).2);
    assert!(gone(number_after(&out.text, "PGID")).await);
}

#[tokio::test]
async fn children_left_in_the_background_are_killed() {
    let (_d, ctx) = setup();
    let started = Instant::now();
    // One child holds the pipes, one does not.
    let command = "echo PGID=$$; sleep 100 & sleep 101 >/dev/null 2>&1 & echo done";
    let out = exec(&ctx, json!({"command": command})).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("done\nExit code: 0"), "{}", out.text);
    assert!(
        out.text
            .contains("processes it left running in the background were killed"),
        "{}",
        out.text
    );
    assert!(gone(number_after(&out.text, "PGID")).await);

    // A quick background job finishes inside the grace and its output is kept.
    let out = exec(&ctx, json!({"command": "(sleep 0.05; echo late) & echo early"})).await;
    assert!(out.text.starts_with("early\nlate\nExit code: 0"), "{}", out.text);
    assert!(!out.text.contains("Note:"), "{}", out.text);
}

#[tokio::test]
async fn interrupt_returns_promptly_with_output_and_kills_the_group() {
    let (_d, ctx) = setup();
    let (ctx, mut rx) = with_sink(&ctx);
    let tool = Arc::new(ExecTool::default());
    let task = {
        let (tool, ctx) = (Arc::clone(&tool), ctx.clone());
        tokio::spawn(async move { tool.execute(json!({"command": "echo PGID=$$; sleep 100"}), &ctx).await })
    };
    let seen = wait_for_live(&mut rx, "PGID=").await;
    let pgid = number_after(&seen, "PGID");
    assert!(group_alive(pgid));
    let cancelled_at = Instant::now();
    ctx.cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(3), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
    assert!(out.is_error);
    assert!(
        out.text.starts_with("Error: Command interrupted by the user"),
        "{}",
        out.text
    );
    assert!(out.text.contains("PGID="), "{}", out.text);
    assert!(gone(pgid).await);
}

#[tokio::test]
async fn dropping_the_future_kills_the_group() {
    let (_d, ctx) = setup();
    let (ctx, mut rx) = with_sink(&ctx);
    let task = tokio::spawn(async move {
        ExecTool::default()
            .execute(json!({"command": "echo PGID=$$; sleep 100 & sleep 100"}), &ctx)
            .await
    });
    let seen = wait_for_live(&mut rx, "PGID=").await;
    assert!(group_alive(number_after(&seen, "PGID")));
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert!(gone(number_after(&seen, "PGID")).await);
}

#[tokio::test]
async fn live_output_arrives_on_the_sink() {
    let (_d, ctx) = setup();
    let (ctx, mut rx) = with_sink(&ctx);
    let out = exec(&ctx, json!({"command": "echo one; echo two >&2; printf three"})).await;
    let mut live = String::new();
    while let Ok(chunk) = rx.try_recv() {
        live.push_str(&chunk);
    }
    for line in ["one\n", "two\n", "three"] {
        assert!(live.contains(line), "{live:?}");
    }
    assert!(out.text.starts_with("one\nthree\nSTDERR:\ntwo\n"), "{}", out.text);
}

#[tokio::test]
async fn only_allowlisted_and_allowed_variables_reach_a_command() {
    let (_d, ctx) = setup();
    // Names unique to this test: other tests running in parallel never read them.
    // SAFETY: std serialises set_var with its own environment reads (Command::spawn takes the same lock), and no
    // other code in this test binary reads these names.
    unsafe {
        std::env::set_var("TERN_EXEC_TEST_FILTERED_API_KEY", "hidden-value-1");
        std::env::set_var("TERN_EXEC_TEST_ALLOWED_TOKEN", "visible-value-2");
        std::env::set_var("TERN_EXEC_TEST_PLAIN", "plain-value-3");
    }
    let tool = ExecTool::new(ExecConfig {
        env_allow: vec!["TERN_EXEC_TEST_ALLOWED_TOKEN".into()],
        ..ExecConfig::default()
    });
    let out = tool.execute(json!({"command": "env"}), &ctx).await.unwrap();
    assert!(!out.text.contains("hidden-value-1"), "{}", out.text);
    // Not on the allowlist: a name that says nothing may hold a secret all the same.
    assert!(!out.text.contains("plain-value-3"), "{}", out.text);
    for expected in [
        "TERN_EXEC_TEST_ALLOWED_TOKEN=visible-value-2",
        "PATH=",
        "PAGER=cat",
        "GIT_PAGER=cat",
        "TERM=dumb",
    ] {
        assert!(out.text.contains(expected), "{expected} missing: {}", out.text);
    }
}

#[tokio::test]
async fn huge_output_is_truncated_with_bounded_memory() {
    let (_d, ctx) = setup();
    let (ctx, mut rx) = with_sink(&ctx);
    let started = Instant::now();
    let command = "echo first-line; head -c 200000000 /dev/zero | tr '\\0' a; echo; echo last-line";
    let out = exec(&ctx, json!({"command": command})).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert!(!out.is_error, "{}", &out.text[..200.min(out.text.len())]);
    assert!(out.text.starts_with("first-line\naaaa"), "{}", &out.text[..100]);
    assert!(out.text.contains("last-line\nExit code: 0"));
    let truncated = number_after(&out.text.replace("... (", "TRUNC="), "TRUNC") as u64;
    let kept = out.text.matches('a').count() as u64;
    // Every 'a' is either shown or counted ('a's in the footer make the sum slightly larger).
    assert!(
        (200_000_000..200_000_100).contains(&(truncated + kept)),
        "{truncated} + {kept}"
    );
    assert!(out.text.len() < ExecConfig::default().max_output_chars + 500);
    let mut live = 0;
    while let Ok(chunk) = rx.try_recv() {
        live += chunk.len();
    }
    // The live sink got a bounded trickle (256 KiB/s plus a burst), not 200 MB.
    let bound = 256 * 1024 * (took.as_secs() as usize + 1) + 128 * 1024;
    assert!(live < bound, "{live} live bytes in {took:?}");
}

#[tokio::test]
async fn a_large_stream_does_not_crowd_out_a_small_one() {
    let (_d, ctx) = setup();
    let tool = ExecTool::new(ExecConfig {
        max_output_chars: 2000,
        ..ExecConfig::default()
    });
    let command = "seq 1 100000 >&2; echo the-only-stdout-line";
    let out = tool.execute(json!({"command": command}), &ctx).await.unwrap();
    assert!(
        out.text.starts_with("the-only-stdout-line\nSTDERR:\n1\n2\n"),
        "{}",
        out.text
    );
    assert!(out.text.contains("chars truncated) ...\n"), "{}", out.text);
    assert!(out.text.contains("99999\n100000\nExit code: 0"), "{}", out.text);
    assert!(out.text.len() < 2300, "{}", out.text.len());
}
