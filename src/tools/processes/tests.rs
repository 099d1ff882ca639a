use std::time::Duration;

use serde_json::json;

use super::keys::key_bytes;
use super::ring::Ring;
use super::screen::for_model;
use super::*;
use crate::{PathPolicy, Tool, ToolContext};
use tern_protocol::process::ProcessEnd;

#[test]
fn the_ring_keeps_the_last_bytes_and_counts_what_was_dropped_unread() {
    let mut ring = Ring::new(8);
    ring.push(b"abcd");
    let first = ring.read_new();
    assert_eq!((first.bytes.as_slice(), first.dropped), (&b"abcd"[..], 0));
    ring.push(b"0123456789xy");
    let next = ring.read_new();
    assert_eq!(next.bytes, b"456789xy");
    assert_eq!(next.dropped, 4, "0123 came after the last read and fell out");
    assert!(!ring.has_unread());
    assert_eq!(ring.read_new().bytes, b"");
    assert_eq!(ring.tail(3), b"9xy");
}

#[test]
fn the_model_reads_no_escape_codes_and_a_progress_line_in_its_last_state() {
    let raw = "\x1b[32mok\x1b[0m\nDownloading  10%\rDownloading  55%\rDownloading 100%\ndone\x08\x08NE\n";
    assert_eq!(for_model(raw.as_bytes()), "ok\nDownloading 100%\ndoNE\n");
    assert_eq!(
        for_model(b"a\r\nb\r\n"),
        "a\nb\n",
        "a terminal's line ends are plain line ends"
    );
}

#[test]
fn named_keys_are_the_bytes_a_terminal_sends() {
    assert_eq!(key_bytes("Enter").unwrap(), b"\r");
    assert_eq!(key_bytes("ctrl+c").unwrap(), [3]);
    assert_eq!(key_bytes("Ctrl-D").unwrap(), [4]);
    assert_eq!(key_bytes("Up").unwrap(), b"\x1b[A");
    assert_eq!(key_bytes("Esc").unwrap(), [0x1b]);
    assert!(key_bytes("Hyper+Q").is_none());
}

fn context(dir: &std::path::Path, table: &ProcessTable) -> ToolContext {
    let mut ctx = ToolContext::new(PathPolicy::new(dir).unwrap());
    ctx.processes = Some(Starter {
        table: table.clone(),
        call_id: "call-1".into(),
    });
    ctx
}

async fn start(table: &ProcessTable, dir: &std::path::Path, command: &str, tty: bool) -> String {
    let exec = crate::exec::ExecTool::default();
    let args = json!({"command": command, "background": true, "tty": tty});
    let out = exec.execute(args, &context(dir, table)).await.unwrap();
    out.text.to_string()
}

#[tokio::test]
async fn a_prompt_on_a_terminal_is_answered_and_its_exit_noted_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::new();
    let started = start(
        &table,
        dir.path(),
        "[ -t 0 ] && echo on-a-tty; read -p 'name? ' n; echo \"hello $n\"; sleep 1; exit 3",
        true,
    )
    .await;
    assert!(started.contains("Started process p1"), "{started}");
    assert!(started.contains("on-a-tty") && started.contains("name?"), "{started}");
    let input = ProcessInputTool::new(table.clone());
    let args = json!({"id": "p1", "text": "tern", "keys": ["Enter"], "wait": 5});
    assert_eq!(input.effects(&args).input.unwrap().data, "tern\r");
    let said = input.execute(args, &context(dir.path(), &table)).await.unwrap();
    assert!(said.text.contains("hello tern"), "{}", said.text);
    let live = table.get("p1").unwrap();
    assert!(live.wait_for_end(Duration::from_secs(5)).await);
    assert_eq!(live.end(), Some(ProcessEnd::Exited { code: 3 }));
    let exits = table.take_exits();
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert!(exits[0].contains("p1") && exits[0].contains("exited with code 3") && exits[0].contains("hello tern"));
    assert!(table.take_exits().is_empty(), "each exit is told once");
}

#[tokio::test]
async fn a_stop_ends_the_whole_group_and_the_model_is_not_told_of_its_own_stop() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::new();
    let started = start(&table, dir.path(), "sleep 300 & echo child $!; wait", false).await;
    let child: i32 = started
        .split_whitespace()
        .skip_while(|w| *w != "child")
        .nth(1)
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no child pid in {started}"));
    let stop = ProcessStopTool::new(table.clone());
    let out = stop
        .execute(json!({"id": "p1"}), &context(dir.path(), &table))
        .await
        .unwrap();
    assert!(out.text.contains("stopped by the model"), "{}", out.text);
    // The signal is sent when the stop returns; the child's death follows it by a moment on a busy machine.
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !alive(child)
    });
    assert!(gone, "the background sleep ended with its group");
    assert!(table.take_exits().is_empty());
}

#[tokio::test]
async fn the_session_end_kills_what_runs_and_a_ninth_process_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::new();
    let starts = (0..MAX_LIVE).map(|_| start(&table, dir.path(), "sleep 300", false));
    for started in futures_util::future::join_all(starts).await {
        assert!(started.contains("Started"), "{started}");
    }
    let refused = start(&table, dir.path(), "sleep 300", false).await;
    assert!(
        refused.contains("not started") && refused.contains("process_stop"),
        "{refused}"
    );
    let groups: Vec<_> = (1..=MAX_LIVE).map(|n| table.get(&format!("p{n}")).unwrap()).collect();
    table.stop_all("the session's end").await;
    for live in groups {
        assert_eq!(
            live.end(),
            Some(ProcessEnd::Stopped {
                by: "the session's end".into()
            })
        );
    }
    assert!(table.list().is_empty());
}

#[tokio::test]
async fn dropping_the_table_kills_its_processes() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::new();
    let started = start(&table, dir.path(), "echo pid $$; exec sleep 300", false).await;
    let pid: i32 = started
        .split_whitespace()
        .skip_while(|w| *w != "pid")
        .nth(1)
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {started}"));
    drop(table);
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !alive(pid)
    });
    assert!(gone, "the process outlived its table");
}

/// Whether `pid` runs (a zombie does not count).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

#[tokio::test]
async fn the_frontends_get_the_output_as_it_comes_with_secrets_masked() {
    let secret = "tern-proc-test-secret-5b8d1e2f9a";
    tern_secrets::register(secret);
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::new();
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&events);
    table.set_events(std::sync::Arc::new(move |event| sink.lock().unwrap().push(event)));
    let command = format!("printf '\\033[1mkey\\033[0m: {secret}\\n'; echo done; exit 0");
    start(&table, dir.path(), &command, true).await;
    assert!(table.get("p1").unwrap().wait_for_end(Duration::from_secs(5)).await);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let events = events.lock().unwrap().clone();
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            tern_protocol::Event::ProcessOutput { chunk, .. } => Some(chunk.as_str()),
            _ => None,
        })
        .collect();
    assert!(shown.contains("key: [redacted]") && shown.contains("done"), "{shown:?}");
    assert!(!shown.contains(secret));
    assert!(matches!(events.first(), Some(tern_protocol::Event::ProcessStarted { process }) if process.id == "p1"));
    assert!(
        matches!(events.last(), Some(tern_protocol::Event::ProcessExited { id, end: ProcessEnd::Exited { code: 0 } }) if id == "p1")
    );
}

#[tokio::test]
async fn only_the_last_ended_processes_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::new();
    for _ in 0..20 {
        start(&table, dir.path(), "true", false).await;
    }
    start(&table, dir.path(), "sleep 300", false).await;
    let ids: Vec<String> = table.list().into_iter().map(|p| p.id).collect();
    assert_eq!(ids.len(), 17, "{ids:?}");
    assert_eq!(ids.first().map(String::as_str), Some("p5"));
    assert_eq!(ids.last().map(String::as_str), Some("p21"));
    table.stop_all("the test's end").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_keys_reach_the_process_in_the_order_typed() {
    // One key per op, as the TUI sends them: each must arrive after the one before it.
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::new();
    start(&table, dir.path(), "head -c 200 > typed", false).await;
    let typed: String = (0..200).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    for key in typed.chars() {
        table.user_input("p1", &key.to_string());
    }
    let live = table.get("p1").unwrap();
    assert!(
        live.wait_for_end(Duration::from_secs(10)).await,
        "head read its 200 bytes"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("typed")).unwrap(), typed);
}
