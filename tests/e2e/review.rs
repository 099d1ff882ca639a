//! `/review` against the scripted model over real HTTP, in a real git repository: two turns edit a file; a review of
//! the session reverts one hunk of the first turn, the file keeps the rest, and the model's next request carries the
//! note saying what the user reverted. A review of the last turn offers only that turn's hunks; a file the user
//! changed by hand is never offered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply};
use tern::agent::approval::ApprovalGate;
use tern::agent::{AgentConfig, AgentHandle, spawn};
use tern::protocol::{ApprovalMode, Event, HunkRef, Op, ReviewChange, ReviewFile, ReviewSince};
use tern::provider::{ProviderConfig, ProviderKind};
use tern::session::{SessionLog, SessionMeta, ToolResultStore};
use tern::tools::{PathPolicy, ToolRegistry};

fn numbered(n: usize) -> String {
    (1..=n).map(|k| format!("line {k}\n")).collect()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
}

struct Session {
    mock: MockLlm,
    agent: AgentHandle,
    work: tempfile::TempDir,
    _data: tempfile::TempDir,
    log: std::path::PathBuf,
}

async fn session(script: Vec<Reply>) -> Session {
    let mock = MockLlm::start(script).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), numbered(20)).unwrap();
    std::fs::write(work.path().join("notes.txt"), "mine\n").unwrap();
    git(work.path(), &["init", "-q"]);
    git(work.path(), &["add", "-A"]);
    git(work.path(), &["commit", "-q", "-m", "init"]);
    let data = tempfile::tempdir().unwrap();
    let log_path = SessionLog::path_for(data.path(), "s1");
    let meta = SessionMeta::new("s1", &work.path().display().to_string(), "openai", "test-model");
    let log = SessionLog::create(&log_path, &meta).unwrap();
    let mut provider = ProviderConfig::new(ProviderKind::OpenAi, "test-model");
    provider.base_url = mock.openai_base_url();
    provider.api_key = Some("test-key".into());
    let results = ToolResultStore::for_session(data.path(), "s1");
    results.ensure_dir().unwrap();
    let agent = spawn(
        AgentConfig::new(
            tern::provider::build(&provider).unwrap(),
            ToolRegistry::with_builtins(),
            PathPolicy::new(work.path()).unwrap(),
            ApprovalGate::new(ApprovalMode::FullAuto, vec![], vec![]),
            "You are a test.".into(),
            results,
        )
        .with_log(Some(log)),
    );
    Session {
        mock,
        agent,
        work,
        _data: data,
        log: log_path,
    }
}

impl Session {
    async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(30), self.agent.events.recv())
            .await
            .expect("an event within 30 s")
            .expect("the agent is running")
    }

    async fn until(&mut self, done: impl Fn(&Event) -> bool) -> Event {
        loop {
            let event = self.next().await;
            if done(&event) {
                return event;
            }
        }
    }

    async fn turn(&mut self, text: &str) {
        self.agent.ops.send(Op::UserTurn { text: text.into() }).unwrap();
        self.until(|e| matches!(e, Event::TurnFinished { .. })).await;
    }

    /// Starts a review: its id and files, or the notice saying there is nothing.
    async fn review(&mut self, since: ReviewSince) -> Result<(u64, Vec<ReviewFile>), String> {
        self.agent.ops.send(Op::ReviewStart { since }).unwrap();
        match self
            .until(|e| matches!(e, Event::ReviewHunks { .. } | Event::Notice { .. }))
            .await
        {
            Event::ReviewHunks { id, files, .. } => Ok((id, files)),
            Event::Notice { text } => Err(text),
            _ => unreachable!(),
        }
    }

    async fn apply(&mut self, id: u64, reverted: Vec<HunkRef>) -> Event {
        self.agent.ops.send(Op::ReviewApply { id, reverted }).unwrap();
        self.until(|e| matches!(e, Event::ReviewApplied { .. })).await
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.work.path().join(name)).unwrap_or_default()
    }
}

/// Turn 1 changes line 2 and creates new.txt; turn 2 changes line 16: three hunks, two turns.
fn script() -> Vec<Reply> {
    let first = numbered(20).replace("line 2\n", "line two\n");
    let second = first.replace("line 16\n", "line sixteen\n");
    vec![
        Reply::ToolCalls(vec![
            ("write_file".into(), json!({"path": "a.txt", "content": first})),
            ("write_file".into(), json!({"path": "new.txt", "content": "fresh\n"})),
        ]),
        Reply::text("first done"),
        Reply::ToolCalls(vec![("write_file".into(), json!({"path": "a.txt", "content": second}))]),
        Reply::text("second done"),
        Reply::text("understood"),
    ]
}

#[tokio::test]
async fn review_of_the_session_reverts_one_hunk_of_the_first_turn_and_tells_the_model() {
    let mut s = session(script()).await;
    s.turn("first").await;
    s.turn("second").await;
    // A hand edit to a file the agent never touched is not the agent's change.
    std::fs::write(s.work.path().join("notes.txt"), "mine, edited by hand\n").unwrap();

    let (_, last) = s.review(ReviewSince::Turn).await.unwrap();
    assert_eq!(last.len(), 1, "only the last turn's file");
    assert_eq!(last[0].path, "a.txt");
    assert_eq!(
        last[0].hunks.iter().map(|h| h.lines.as_str()).collect::<Vec<_>>(),
        vec!["lines 13-19"]
    );

    let (id, files) = s.review(ReviewSince::Session).await.unwrap();
    let names: Vec<(&str, ReviewChange, usize)> = files
        .iter()
        .map(|f| (f.path.as_str(), f.change, f.hunks.len()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("a.txt", ReviewChange::Modified, 2),
            ("new.txt", ReviewChange::Created, 1)
        ]
    );
    let Event::ReviewApplied { summary, refused, .. } = s
        .apply(
            id,
            vec![HunkRef {
                file: 0,
                hunk: 0,
                part: None,
            }],
        )
        .await
    else {
        unreachable!()
    };
    assert!(files.iter().all(|f| !f.changed_outside));
    assert_eq!((summary.as_str(), refused), ("reverted 1 hunk in 1 file", None));
    assert_eq!(s.read("a.txt"), numbered(20).replace("line 16\n", "line sixteen\n"));
    assert_eq!(s.read("new.txt"), "fresh\n");
    assert_eq!(s.read("notes.txt"), "mine, edited by hand\n");

    s.turn("next").await;
    let requests = s.mock.requests();
    let last = requests.last().unwrap();
    let users: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    let next = users.last().unwrap();
    assert!(
        next.starts_with("[The user reviewed your changes with /review and reverted 1 change: a.txt (lines 1-5).")
            && next.ends_with("\n\nnext"),
        "{next}"
    );
    // The outcome is in the session log, as the transcript showed it.
    let log = std::fs::read_to_string(&s.log).unwrap();
    assert!(log.contains("\"event\":\"review_applied\""), "{log}");
    // The pane showing the diff written is there too, as `/undo` shows its own.
    assert!(log.contains("\"name\":\"review\""), "{log}");
}

#[tokio::test]
async fn a_review_answered_after_the_file_changed_reverts_nothing_and_says_where() {
    let mut s = session(script()).await;
    s.turn("first").await;
    s.turn("second").await;
    let (id, _) = s.review(ReviewSince::Session).await.unwrap();
    let later = s.read("a.txt").replace("line sixteen\n", "line 16 again\n");
    std::fs::write(s.work.path().join("a.txt"), &later).unwrap();
    let reverted = vec![
        HunkRef {
            file: 0,
            hunk: 1,
            part: None,
        },
        HunkRef {
            file: 1,
            hunk: 0,
            part: None,
        },
    ];
    let Event::ReviewApplied { refused, reverted, .. } = s.apply(id, reverted).await else {
        unreachable!()
    };
    assert_eq!(reverted, 0);
    assert_eq!(
        refused.as_deref(),
        Some("a.txt: lines 13-19 changed after the review began, so the revert no longer applies there")
    );
    assert_eq!(s.read("a.txt"), later);
    assert_eq!(
        s.read("new.txt"),
        "fresh\n",
        "atomic: the other file is not reverted either"
    );
}

#[tokio::test]
async fn nothing_to_review_says_so() {
    let mut s = session(vec![Reply::text("just talk")]).await;
    assert_eq!(
        s.review(ReviewSince::Session).await.unwrap_err(),
        "no changes by the agent since this session began"
    );
    s.turn("hello").await;
    assert_eq!(
        s.review(ReviewSince::Turn).await.unwrap_err(),
        "no changes by the agent since turn 1"
    );
}

#[tokio::test]
async fn a_file_also_changed_by_hand_after_the_turn_is_flagged() {
    let mut s = session(script()).await;
    s.turn("first").await;
    let by_hand = s.read("a.txt").replace("line 10\n", "line ten\n");
    std::fs::write(s.work.path().join("a.txt"), by_hand).unwrap();
    let (_, files) = s.review(ReviewSince::Turn).await.unwrap();
    let flags: Vec<(&str, bool)> = files.iter().map(|f| (f.path.as_str(), f.changed_outside)).collect();
    assert_eq!(flags, vec![("a.txt", true), ("new.txt", false)]);
}
