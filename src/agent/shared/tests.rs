use tern_session::log::Granted;
use tern_session::{SessionLog, SessionMeta};

use super::*;

/// A subagent's "always" goes to the main session's log, which a resume reads, not to the subagent's own.
#[test]
fn a_subagents_grant_is_recorded_in_the_main_log() {
    let dir = tempfile::tempdir().unwrap();
    let main_path = SessionLog::path_for(dir.path(), "main");
    let sub_path = SessionLog::path_for(dir.path(), "sub");
    let main_log = SessionLog::create(&main_path, &SessionMeta::new("main", "/w", "openai", "m")).unwrap();
    let sub_log = SessionLog::create(&sub_path, &SessionMeta::new("sub", "/w", "openai", "m")).unwrap();
    let (events, _rx) = mpsc::unbounded_channel();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let _guard = runtime.enter();
    let shared = Shared::start(
        ApprovalGate::default(),
        events.clone(),
        (Some(main_log), 0),
        None,
        (None, crate::hooks::Hooks::default()),
        None,
        None,
    );
    let child = shared.child(events, Some(sub_log));
    let rule = Granted::Command {
        rule: "cargo test".into(),
    };
    child.record_grant(&rule);
    drop(child);
    drop(shared);
    assert_eq!(tern_session::log::load(&main_path).unwrap().granted, [rule]);
    assert!(tern_session::log::load(&sub_path).unwrap().granted.is_empty());
}

/// A process's start and end are in the log (the transcript shows them on resume); what it prints is not.
#[test]
fn a_process_is_recorded_but_not_its_output() {
    use tern_protocol::process::{ProcessEnd, ProcessInfo};
    let process = ProcessInfo {
        id: "p1".into(),
        call_id: "c1".into(),
        command: "npm run dev".into(),
        pty: true,
        cols: 120,
        rows: 40,
    };
    assert!(recorded(&Event::ProcessStarted { process }));
    assert!(recorded(&Event::ProcessExited {
        id: "p1".into(),
        end: ProcessEnd::Exited { code: 0 },
    }));
    assert!(!recorded(&Event::ProcessOutput {
        id: "p1".into(),
        chunk: "ready\n".into(),
    }));
}

/// A subagent's process is the session's: its exit is the main agent's to tell the model, never the subagent's.
#[tokio::test]
async fn only_the_main_agent_is_told_of_an_exit() {
    use tern_tools::Tool;
    let (events, _rx) = mpsc::unbounded_channel();
    let shared = Shared::start(
        ApprovalGate::default(),
        events.clone(),
        (None, 0),
        None,
        (None, crate::hooks::Hooks::default()),
        None,
        None,
    );
    let child = shared.child(events, None);
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = tern_tools::ToolContext::new(tern_tools::PathPolicy::new(dir.path()).unwrap());
    ctx.processes = Some(tern_tools::processes::Starter {
        table: child.processes().clone(),
        call_id: "c1".into(),
    });
    let args = serde_json::json!({"command": "sleep 2; exit 5", "background": true, "tty": false});
    let started = tern_tools::exec::ExecTool::default().execute(args, &ctx).await.unwrap();
    assert!(started.text.contains("Started process p1"), "{}", started.text);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let mut exits = Vec::new();
    for _ in 0..100 {
        assert!(child.process_exits().is_empty());
        exits = shared.process_exits();
        if !exits.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(exits.len(), 1);
    assert!(exits[0].contains("exited with code 5"), "{exits:?}");
}
