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
