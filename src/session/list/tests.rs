use super::*;
use tern_protocol::Event;

fn meta(id: &str, ws: &str) -> SessionMeta {
    SessionMeta {
        id: id.into(),
        workspace: ws.into(),
        provider: "openai".into(),
        model: "m".into(),
        forked_from: None,
        forked_messages: None,
    }
}

fn user(text: &str) -> Message {
    Message::User {
        content: text.into(),
        images: vec![],
    }
}

fn answer(text: &str) -> Message {
    Message::Assistant {
        content: text.into(),
        reasoning: None,
        tool_calls: vec![],
    }
}

/// A session of `prompts` turns in `ws`, written `age_s` seconds ago.
fn session(data: &Path, id: &str, ws: &str, prompts: &[&str], age_s: u64) -> PathBuf {
    let path = SessionLog::path_for(data, id);
    let mut log = SessionLog::create(&path, &meta(id, ws)).unwrap();
    for (turn, p) in prompts.iter().enumerate() {
        log.event(
            1,
            &Event::TurnStarted {
                turn: turn as u64 + 1,
                text: p.to_string(),
            },
        )
        .unwrap();
        log.record(&user(p)).unwrap();
        log.record(&answer("ok")).unwrap();
    }
    drop(log);
    let when = SystemTime::now() - std::time::Duration::from_secs(age_s);
    File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .set_modified(when)
        .unwrap();
    path
}

#[test]
fn lists_the_workspace_sessions_with_a_prompt_newest_first_with_titles_sizes_and_turns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    session(
        d,
        "20260101-000000-aaaa",
        "/w",
        &["\n  fix the parser\nplease", "then test"],
        300,
    );
    session(d, "20260102-000000-bbbb", "/w", &[], 100);
    session(d, "20260103-000000-cccc", "/other", &["elsewhere"], 0);
    std::fs::create_dir_all(d.join("sessions/not-a-session")).unwrap();
    session(d, "20260101-120000-dddd", "/w", &["second"], 200);
    let listed = list(d, "/w");
    let ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
    // A session without a prompt (bbbb) is nothing to resume: not listed, not continued.
    assert_eq!(ids, ["20260101-120000-dddd", "20260101-000000-aaaa"]);
    assert_eq!(listed[1].title, "fix the parser");
    assert_eq!(listed[0].title, "second");
    assert_eq!(listed[1].size, std::fs::metadata(&listed[1].path).unwrap().len());
    assert_eq!(count_turns(&listed[1].path).unwrap(), 2);
    assert_eq!(
        count_turns(&d.join("sessions/20260102-000000-bbbb/session.jsonl")).unwrap(),
        0
    );
    assert!(latest(d, "/w").unwrap().ends_with("20260101-120000-dddd/session.jsonl"));
    assert!(matches!(latest(d, "/none"), Err(FindError::NoneHere(_))));
}

#[test]
fn counting_turns_survives_lines_longer_than_the_read_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(200_000);
    let path = session(dir.path(), "s1", "/w", &[&long, "short", &long], 0);
    assert_eq!(count_turns(&path).unwrap(), 3);
}

#[test]
fn finds_by_unique_prefix_and_says_when_none_or_several_match() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    session(d, "20260101-000000-aaaa", "/w", &[], 0);
    session(d, "20260101-000000-abbb", "/w", &[], 0);
    assert!(
        find(d, "20260101-000000-aa")
            .unwrap()
            .ends_with("20260101-000000-aaaa/session.jsonl")
    );
    assert!(find(d, "20260101-000000-abbb").is_ok());
    match find(d, "20260101") {
        Err(FindError::Several { ids, .. }) => assert_eq!(ids.len(), 2),
        other => panic!("{other:?}"),
    }
    assert!(matches!(find(d, "2027"), Err(FindError::None(_))));
    assert!(matches!(find(d, ""), Err(FindError::None(_))));
    assert!(matches!(find(d, "../x"), Err(FindError::None(_))));
}

#[test]
fn a_fork_copies_the_conversation_and_leaves_the_original_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let original = session(d, "s1", "/w", &["one", "two"], 0);
    // A torn last line stays with the original.
    File::options()
        .append(true)
        .open(&original)
        .unwrap()
        .write_all(b"{\"type\":\"mess")
        .unwrap();
    let before = std::fs::read(&original).unwrap();
    let forked = fork(d, &original).unwrap();
    assert_eq!(std::fs::read(&original).unwrap(), before);
    let a = super::super::log::load(&original).unwrap();
    let b = super::super::log::load(&forked).unwrap();
    assert_eq!((a.messages.clone(), a.events.clone()), (b.messages, b.events));
    assert_eq!(b.meta.forked_from.as_deref(), Some("s1"));
    assert_eq!(b.meta.forked_messages, Some(4));
    assert_ne!(b.meta.id, "s1");
    assert_eq!(b.meta.workspace, "/w");
    let text = std::fs::read_to_string(&forked).unwrap();
    assert!(text.ends_with('\n') && !text.contains("\"mess\n"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&forked).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn only_a_session_without_a_prompt_is_discarded() {
    let dir = tempfile::tempdir().unwrap();
    let empty = session(dir.path(), "s-empty", "/w", &[], 0);
    let used = session(dir.path(), "s-used", "/w", &["hello"], 0);
    assert!(discard_if_empty(&empty));
    assert!(!empty.parent().unwrap().exists(), "its directory is gone");
    assert!(!discard_if_empty(&used));
    assert!(used.is_file());
    assert!(!discard_if_empty(&dir.path().join("sessions/none/session.jsonl")));
}

fn turn(log: &mut SessionLog, n: u64, text: &str) {
    log.event(
        1,
        &Event::TurnStarted {
            turn: n,
            text: text.into(),
        },
    )
    .unwrap();
    log.record(&user(text)).unwrap();
}

/// The picker's count is the resume's: the `TurnStarted` events the loader keeps. The agent's own user messages (a
/// "go on", a Stop hook's reason), rewound turns and turns before a `/clear` are not turns.
#[test]
fn turns_and_the_last_prompt_are_what_a_resume_shows() {
    let dir = tempfile::tempdir().unwrap();
    let path = SessionLog::path_for(dir.path(), "s1");
    let mut log = SessionLog::create(&path, &meta("s1", "/w")).unwrap();
    turn(&mut log, 1, "before the clear");
    log.reset().unwrap();
    turn(&mut log, 1, "first\nsecond line");
    log.record(&user(
        "[The user's Stop hook asks you to go on before you finish:]\nmore",
    ))
    .unwrap();
    log.record(&answer("ok")).unwrap();
    turn(&mut log, 2, "  \n  fix the bug  ");
    log.record(&user("Continue from where you stopped.")).unwrap();
    // Turn 3 is rewound away: the log keeps the first two turns' events.
    turn(&mut log, 3, "rewound at once");
    log.rewind(5, 2).unwrap();
    let _ = log.event(2, &Event::Notice { text: "rewound".into() });
    turn(&mut log, 3, "a third, after the rewind");
    turn(&mut log, 4, "rewound away");
    log.rewind(6, 4).unwrap();
    drop(log);
    let loaded = crate::log::load(&path).unwrap();
    let resumed = loaded
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::TurnStarted { .. }))
        .count();
    let found = details(&path).unwrap();
    assert_eq!(resumed, 3);
    assert_eq!(found.turns, resumed);
    assert_eq!(found.last_prompt.as_deref(), Some("a third, after the rewind"));
    assert_eq!(count_turns(&path).unwrap(), 3);
    // A torn last line is skipped, as the loader skips it.
    let mut file = File::options().append(true).open(&path).unwrap();
    file.write_all(br#"{"type":"event","at":5,"event":{"event":"turn_started","turn":5,"te"#)
        .unwrap();
    assert_eq!(details(&path).unwrap().turns, 3);
}
