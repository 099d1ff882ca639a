//! A full disk: tern runs in a private mount namespace (`unshare -Urm`) where a tiny tmpfs is mounted over the
//! workspace or over the data directory. Writing a file fails with a clear "disk is full" result and leaves the
//! original intact (no temp file left); writing the session fails with a notice, and the log stays loadable. tern
//! never panics and the turn finishes (exit 0).

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::faults::common::*;
use crate::support::mock_llm::{MockLlm, Reply};

fn unshare_available() -> bool {
    let ok = std::process::Command::new("unshare")
        .args(["-Urm", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var("CI").is_err(), "unshare -Urm is required in CI");
        eprintln!("skipping: cannot make a mount namespace here");
    }
    ok
}

/// Runs `tern run <prompt>` inside a new mount namespace, after `setup` (a shell snippet that mounts the tmpfs). After
/// tern exits, `collect` (another snippet) copies what the test needs into `$OUT`, which outlives the namespace.
async fn run_in_namespace(
    sb: &Sandbox,
    mock: &MockLlm,
    setup: &str,
    collect: &str,
    args: &[&str],
) -> std::process::Output {
    let out = sb.home.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let script = format!("{setup}\n\"$@\"\ncode=$?\n{collect}\nexit $code");
    let cmd = sb.command(Some(mock), args);
    let tern = cmd.as_std().get_program().to_owned();
    let tern_args: Vec<_> = cmd.as_std().get_args().map(|a| a.to_owned()).collect();
    let mut wrapped = tokio::process::Command::new("unshare");
    wrapped
        .args(["-Urm", "sh", "-c", &script, "sh"])
        .arg(tern)
        .args(tern_args)
        .envs(
            cmd.as_std()
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .env("WORK", sb.work.path())
        .env("DATA", sb.data())
        .env("OUT", &out)
        .current_dir(sb.work.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    drop(cmd);
    let child = wrapped.spawn().unwrap();
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("tern finishes on a full disk")
        .unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_under_the_workspace_fails_the_write_and_keeps_the_file() {
    if !unshare_available() {
        return;
    }
    let big = "x".repeat(96 * 1024);
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![
            ("write_file".into(), json!({"path": "keep.txt", "content": big})),
            ("write_file".into(), json!({"path": "sub/new.txt", "content": big})),
        ]),
        Reply::tool("read_file", json!({"path": "keep.txt"})),
        Reply::tool(
            "edit_file",
            json!({"path": "keep.txt", "old_text": "original", "new_text": big}),
        ),
        Reply::text("The disk is full."),
    ])
    .await;
    let sb = sandbox();
    // 128 KiB with 96 KiB taken: no room for either big file (each is written whole to a temp file first).
    let setup = "mount -t tmpfs -o size=128k tmpfs \"$WORK\" || exit 99\n\
                 printf 'original\\n' > \"$WORK/keep.txt\"\n\
                 dd if=/dev/zero of=\"$WORK/filler\" bs=1k count=96 2>/dev/null";
    let collect = "cp \"$WORK/keep.txt\" \"$OUT/keep.after\"; (cd \"$WORK\" && find . | sort) > \"$OUT/files.after\"";
    let out = run_in_namespace(&sb, &mock, setup, collect, &["run", "fill the disk"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(text(&out.stdout), "The disk is full.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "the turn went on");
    let writes = tool_results(&requests[1]);
    assert_eq!(writes.len(), 2);
    for result in writes.iter().chain(tool_results(&requests[3]).last()) {
        assert!(result.contains("the disk is full"), "a clear error: {result}");
    }
    let out_dir = sb.home.path().join("out");
    assert_eq!(
        read(&out_dir.join("keep.after")),
        "original\n",
        "the original is intact"
    );
    // No temp file left behind; the new file never appeared, nor the directory made for it.
    assert_eq!(read(&out_dir.join("files.after")), ".\n./filler\n./keep.txt\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_under_the_session_keeps_the_log_loadable() {
    if !unshare_available() {
        return;
    }
    let long = "y".repeat(80 * 1024);
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text(format!("Here is a long answer: {long}")),
    ])
    .await;
    let sb = sandbox();
    let setup = "mkdir -p \"$DATA\" && mount -t tmpfs -o size=64k tmpfs \"$DATA\" || exit 99";
    let collect = "cp -r \"$DATA/tern/sessions\" \"$OUT/sessions\"";
    let out = run_in_namespace(&sb, &mock, setup, collect, &["run", "answer at length"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("cannot write the session log"),
        "the user is told: {stderr}"
    );
    assert!(text(&out.stdout).contains("Here is a long answer"));
    let sessions = sb.home.path().join("out/sessions");
    let id = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let log = sessions.join(id).join("session.jsonl");
    let lines = session_lines(&log);
    assert!(
        lines.len() >= 2,
        "the meta line and the question were written: {lines:?}"
    );
    let tern::session::log::Loaded { meta, messages, .. } = tern::session::log::load(&log).unwrap();
    assert!(!meta.id.is_empty());
    assert!(format!("{messages:?}").contains("answer at length"));
}
