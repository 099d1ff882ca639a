//! `/undo` and `/rewind` after a resume: the agent shuts down, a new one starts from the session log (as `config_for`
//! does), and the turns of the earlier run are still undoable and rewindable, with their numbers kept; compaction
//! before the resume moves the rewind points with it; a fork reaches them too.

use super::*;
use tern::agent::compact::SUMMARY_HEADER;

impl Session {
    /// Shuts the agent down and continues the session logged at `path` with a new one, as a resume does.
    async fn resume_at(&mut self, path: PathBuf) {
        self.send(Op::Shutdown);
        self.until(|e| matches!(e, Event::ShutdownComplete)).await;
        let loaded = tern::session::log::load(&path).unwrap();
        let log = SessionLog::append_to(&path).unwrap();
        let agent = start_agent(&self.mock, self.work.path(), self.data.path(), log, Some(loaded));
        let old = std::mem::replace(&mut self.agent, agent);
        tokio::time::timeout(Duration::from_secs(10), old.task)
            .await
            .unwrap()
            .unwrap();
        self.log = path;
    }

    async fn resume(&mut self) {
        self.resume_at(self.log.clone()).await;
    }
}

fn turn_numbers(events: &[Event]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TurnStarted { turn, .. } => Some(*turn),
            _ => None,
        })
        .collect()
}

/// Every message of the last request but the system prompt, as (role, text).
fn last_request(s: &Session) -> Vec<(String, String)> {
    let requests = s.mock.requests();
    requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn undo_and_rewind_reach_the_turns_of_the_run_before_a_resume() {
    let mut s = after_two_turns(true, vec![Reply::text("again done")]).await;
    s.resume().await;

    let events = s.revert(Op::Undo { force: false }).await;
    assert_eq!(diffs_of(&events), vec![("c.txt".to_string(), None)]);
    assert_eq!(s.read("c.txt"), None);
    assert_eq!(s.read("a.txt").as_deref(), Some("a two\n"), "only the second turn");

    assert_eq!(
        shown(&s.points().await),
        vec![
            (1, "first".to_string(), true, true),
            (2, "second".to_string(), true, false)
        ]
    );

    let events = s.revert(rewind(1, true, true)).await;
    assert!(
        events.contains(&Event::Rewound {
            turns: 2,
            text: "first".into()
        }),
        "{events:?}"
    );
    assert_eq!(
        diffs_of(&events),
        vec![
            ("a.txt".to_string(), Some("a one\n".to_string())),
            ("b.txt".to_string(), Some("b one\n".to_string())),
            ("made.txt".to_string(), None),
        ],
        "the edit and the command's changes of the earlier run"
    );
    assert_eq!(s.read("made.txt"), None);

    let events = s.turn("first, again").await;
    assert_eq!(turn_numbers(&events), vec![3], "numbers go on after the restored turns");
    assert_eq!(
        last_request(&s),
        vec![("user".to_string(), "first, again".to_string())],
        "the model gets only what came before the rewind point"
    );
}

#[tokio::test]
async fn turns_after_a_resume_take_new_numbers_and_undo_before_the_restored_ones() {
    let mut s = after_two_turns(
        true,
        vec![
            Reply::ToolCalls(vec![(
                "write_file".into(),
                json!({"path": "a.txt", "content": "a three\n"}),
            )]),
            Reply::text("third done"),
        ],
    )
    .await;
    s.resume().await;
    let events = s.turn("third").await;
    assert_eq!(turn_numbers(&events), vec![3]);
    assert_eq!(s.read("a.txt").as_deref(), Some("a three\n"));
    // No collision: the new turn's saved file is its own, the first turn's is untouched.
    let saved = |turn: u64| {
        std::fs::read_to_string(s.data.path().join(format!("sessions/s1/checkpoints/turn-{turn}/0"))).unwrap()
    };
    assert_eq!((saved(1), saved(3)), ("a one\n".to_string(), "a two\n".to_string()));

    let events = s.revert(Op::Undo { force: false }).await;
    assert_eq!(
        diffs_of(&events),
        vec![("a.txt".to_string(), Some("a two\n".to_string()))]
    );
    let events = s.revert(Op::Undo { force: false }).await;
    assert_eq!(diffs_of(&events), vec![("c.txt".to_string(), None)]);
    let events = s.revert(Op::Undo { force: false }).await;
    assert_eq!(diffs_of(&events).len(), 3, "{events:?}");
    assert_eq!(s.read("a.txt").as_deref(), Some("a one\n"));
    assert_eq!(s.read("made.txt"), None);

    // The log holds each turn once, undone; a later resume has nothing left to undo.
    let loaded = tern::session::log::load(&s.log).unwrap();
    let turns: Vec<(u64, bool)> = loaded.checkpoints.iter().map(|r| (r.turn, r.code)).collect();
    assert_eq!(turns, vec![(1, false), (2, false), (3, false)]);
    s.resume().await;
    let events = s.revert(Op::Undo { force: false }).await;
    assert!(
        matches!(events.last(), Some(Event::Notice { text }) if text.starts_with("nothing to undo")),
        "{events:?}"
    );
}

#[tokio::test]
async fn after_compaction_and_a_resume_rewind_goes_to_the_right_message() {
    let mut s = session(
        vec![
            Reply::text("A1"),
            Reply::text("A2"),
            Reply::text("A3"),
            Reply::text("SUMMARY of one and two"),
            Reply::text("A4"),
        ],
        false,
    )
    .await;
    for text in ["one", "two", "three"] {
        s.turn(text).await;
    }
    s.send(Op::Compact { focus: None });
    s.until(|e| matches!(e, Event::Notice { text } if text.starts_with("compacted")))
        .await;
    s.resume().await;

    let points = s.points().await;
    let conversation: Vec<(u64, bool)> = points.iter().map(|p| (p.turn, p.conversation)).collect();
    assert_eq!(
        conversation,
        vec![(1, false), (2, false), (3, true)],
        "turns inside the summary can no longer be rewound to"
    );
    s.send(rewind(3, true, false));
    s.until(|e| matches!(e, Event::Rewound { turns: 1, .. })).await;
    s.turn("three, again").await;
    let request = last_request(&s);
    let (last, before) = request.split_last().unwrap();
    assert_eq!(last, &("user".to_string(), "three, again".to_string()));
    assert!(!before.is_empty());
    assert!(
        before
            .iter()
            .all(|(_, text)| text.contains(SUMMARY_HEADER) || text.contains("SUMMARY")),
        "only the summary is left before the rewind point: {request:?}"
    );
}

#[tokio::test]
async fn a_fork_undoes_the_turns_of_before_the_fork_with_the_originals_snapshots() {
    let mut s = after_two_turns(true, vec![]).await;
    let fork = tern::session::list::fork(s.data.path(), &s.log).unwrap();
    s.resume_at(fork.clone()).await;
    s.revert(Op::Undo { force: false }).await;
    assert_eq!(s.read("c.txt"), None);
    let events = s.revert(Op::Undo { force: false }).await;
    assert_eq!(
        diffs_of(&events),
        vec![
            ("a.txt".to_string(), Some("a one\n".to_string())),
            ("b.txt".to_string(), Some("b one\n".to_string())),
            ("made.txt".to_string(), None),
        ],
        "the command's changes too, from the original session's snapshots"
    );
    // The workspace's one shadow repository holds both sessions' snapshots: nothing is copied.
    assert!(!fork.parent().unwrap().join("shadow.git").exists());
    assert_eq!(std::fs::read_dir(s.data.path().join("shadow")).unwrap().count(), 1);
}
