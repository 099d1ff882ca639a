//! `/undo` and `/rewind` against the scripted model over real HTTP, in a real git repository (and one without git):
//! the agent edits files and runs commands; undo and rewind put the work tree back, cut the conversation, record the
//! cut in the session log, and never touch the user's `.git`. One tmux test drives `/rewind` through the picker.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod quiet;
mod resume;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use support::tmux::{Tmux, tern_command, tmux_available};
use tern::agent::approval::ApprovalGate;
use tern::agent::{AgentConfig, AgentHandle, spawn};
use tern::protocol::{ApprovalMode, Event, Op, RewindPoint, ToolDetails};
use tern::provider::{ProviderConfig, ProviderKind};
use tern::session::log::Loaded;
use tern::session::{SessionLog, SessionMeta, ToolResultStore};
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::{PathPolicy, ToolRegistry};

struct Session {
    mock: MockLlm,
    agent: AgentHandle,
    work: tempfile::TempDir,
    data: tempfile::TempDir,
    log: PathBuf,
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
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .ignore(false)
        .git_ignore(false)
        .build();
    for entry in walk.flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            out.push((entry.path().display().to_string(), std::fs::read(entry.path()).unwrap()));
        }
    }
    out.sort();
    out
}

/// A workspace with `a.txt` and `b.txt`; with `git`, a committed repository whose pre-commit hook would write
/// `HOOK-RAN` if anything ran it.
fn workspace(with_git: bool) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    std::fs::write(root.join("a.txt"), "a one\n").unwrap();
    std::fs::write(root.join("b.txt"), "b one\n").unwrap();
    if with_git {
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "init"]);
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", root.join("HOOK-RAN").display())).unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    work
}

async fn session(script: Vec<Reply>, with_git: bool) -> Session {
    let mock = MockLlm::start(script).await;
    let work = workspace(with_git);
    let data = tempfile::tempdir().unwrap();
    let log_path = SessionLog::path_for(data.path(), "s1");
    let meta = SessionMeta::new("s1", &work.path().display().to_string(), "openai", "test-model");
    let log = SessionLog::create(&log_path, &meta).unwrap();
    let agent = start_agent(&mock, work.path(), data.path(), log, None);
    Session {
        mock,
        agent,
        work,
        data,
        log: log_path,
    }
}

/// An agent on the scripted model in `work`, logging to `log`; with `resumed`, it continues that session as
/// `config_for` does on a resume.
fn start_agent(mock: &MockLlm, work: &Path, data: &Path, log: SessionLog, resumed: Option<Loaded>) -> AgentHandle {
    let mut provider = ProviderConfig::new(ProviderKind::OpenAi, "test-model");
    provider.base_url = mock.openai_base_url();
    provider.api_key = Some("test-key".into());
    let results = ToolResultStore::for_session(data, "s1");
    results.ensure_dir().unwrap();
    let policy = PathPolicy::new(work).unwrap().allow_read_root(results.dir());
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig::default())));
    let (history, history_events, history_checkpoints) = match resumed {
        Some(loaded) => {
            let (checkpoints, notice) =
                tern::agent::checkpoint::restorable(&loaded.meta, loaded.checkpoints, log.path(), work);
            assert_eq!(notice, None);
            (loaded.messages, loaded.events.len(), checkpoints)
        }
        None => (vec![], 0, vec![]),
    };
    spawn(
        AgentConfig::new(
            tern::provider::build(&provider).unwrap(),
            tools,
            policy,
            ApprovalGate::new(ApprovalMode::FullAuto, vec![], vec![]),
            "You are a test.".into(),
            results,
        )
        .with_history(history)
        .with_history_events(history_events)
        .with_history_checkpoints(history_checkpoints)
        .with_log(Some(log)),
    )
}

/// A rewind to before `turn`'s message: its conversation, its code, or both.
fn rewind(turn: u64, conversation: bool, code: bool) -> Op {
    Op::Rewind {
        turn,
        conversation,
        code,
        force: false,
    }
}

/// Rewind points as (turn, message, conversation, code).
fn shown(points: &[RewindPoint]) -> Vec<(u64, String, bool, bool)> {
    points
        .iter()
        .map(|p| (p.turn, p.text.clone(), p.conversation, p.code))
        .collect()
}

impl Session {
    fn send(&self, op: Op) {
        self.agent.ops.send(op).unwrap();
    }

    async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(30), self.agent.events.recv())
            .await
            .expect("an event within 30 s")
            .expect("the agent is running")
    }

    /// Events until one matches `done` (included).
    async fn until(&mut self, done: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let stop = done(&event);
            events.push(event);
            if stop {
                return events;
            }
        }
    }

    async fn turn(&mut self, text: &str) -> Vec<Event> {
        self.send(Op::UserTurn { text: text.into() });
        self.until(|e| matches!(e, Event::TurnFinished { .. })).await
    }

    /// Sends an undo or rewind and returns its events, up to the pane with the diff it applied (or a question).
    async fn revert(&mut self, op: Op) -> Vec<Event> {
        self.send(op);
        self.until(|e| {
            matches!(e, Event::ToolCallEnd { name, .. } if name == "undo")
                || matches!(e, Event::ConfirmRevert { .. })
                || matches!(e, Event::Notice { text } if text.starts_with("nothing to undo"))
        })
        .await
    }

    async fn points(&mut self) -> Vec<RewindPoint> {
        self.send(Op::ListRewindPoints);
        let events = self.until(|e| matches!(e, Event::RewindPoints { .. })).await;
        match events.last() {
            Some(Event::RewindPoints { points }) => points.clone(),
            _ => unreachable!(),
        }
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.work.path().join(name)).ok()
    }

    /// The user messages of the last request the model got.
    fn last_request_users(&self) -> Vec<String> {
        let requests = self.mock.requests();
        users(requests.last().unwrap())
    }
}

fn users(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn diffs_of(events: &[Event]) -> Vec<(String, Option<String>)> {
    events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd { name, output, .. } if name == "undo" => match &output.details {
                ToolDetails::Diffs { diffs } => Some(diffs.iter().map(|d| (d.path.clone(), d.new.clone())).collect()),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or_default()
}

/// Turn 1 writes a.txt and runs a command that writes made.txt and appends to b.txt; turn 2 writes c.txt.
fn two_turns() -> Vec<Reply> {
    vec![
        Reply::ToolCalls(vec![(
            "write_file".into(),
            json!({"path": "a.txt", "content": "a two\n"}),
        )]),
        Reply::ToolCalls(vec![(
            "exec".into(),
            json!({"command": "echo made > made.txt && echo 'b two' >> b.txt"}),
        )]),
        Reply::text("first done"),
        Reply::ToolCalls(vec![("write_file".into(), json!({"path": "c.txt", "content": "c\n"}))]),
        Reply::text("second done"),
    ]
}

async fn after_two_turns(with_git: bool, extra: Vec<Reply>) -> Session {
    let mut script = two_turns();
    script.extend(extra);
    let mut s = session(script, with_git).await;
    s.turn("first").await;
    s.turn("second").await;
    assert_eq!(s.read("a.txt").as_deref(), Some("a two\n"));
    assert_eq!(s.read("b.txt").as_deref(), Some("b one\nb two\n"));
    assert_eq!(s.read("made.txt").as_deref(), Some("made\n"));
    assert_eq!(s.read("c.txt").as_deref(), Some("c\n"));
    s
}

#[tokio::test]
async fn undo_reverts_edits_and_commands_a_turn_at_a_time_and_leaves_git_alone() {
    let mut s = session(
        {
            let mut script = two_turns();
            script.push(Reply::text("noted"));
            script
        },
        true,
    )
    .await;
    let git_before = snapshot(&s.work.path().join(".git"));
    s.turn("first").await;
    s.turn("second").await;

    let events = s.revert(Op::Undo { force: false }).await;
    assert_eq!(diffs_of(&events), vec![("c.txt".to_string(), None)]);
    assert_eq!(s.read("c.txt"), None);
    assert_eq!(s.read("a.txt").as_deref(), Some("a two\n"), "only the last turn");

    let events = s.revert(Op::Undo { force: false }).await;
    let diffs = diffs_of(&events);
    assert_eq!(
        diffs,
        vec![
            ("a.txt".to_string(), Some("a one\n".to_string())),
            ("b.txt".to_string(), Some("b one\n".to_string())),
            ("made.txt".to_string(), None),
        ],
        "the command's changes are undone too"
    );
    assert_eq!(s.read("a.txt").as_deref(), Some("a one\n"));
    assert_eq!(s.read("b.txt").as_deref(), Some("b one\n"));
    assert_eq!(s.read("made.txt"), None);

    let events = s.revert(Op::Undo { force: false }).await;
    assert!(diffs_of(&events).is_empty(), "nothing left to undo");

    // The model is told with the next message.
    s.turn("what now?").await;
    let users = s.last_request_users();
    let last = users.last().unwrap();
    assert!(last.contains("undid your changes of turn 1"), "{last}");
    assert!(last.ends_with("what now?"), "{last}");

    assert_eq!(
        git_before,
        snapshot(&s.work.path().join(".git")),
        "the user's .git is byte-identical"
    );
    assert!(!s.work.path().join("HOOK-RAN").exists(), "no hook of the project ran");
    let shadows: Vec<PathBuf> = std::fs::read_dir(s.data.path().join("shadow"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(
        shadows.len(),
        1,
        "one shadow repository for the workspace, in tern's data directory"
    );
    assert!(
        shadows[0].join("refs/sessions/s1").exists(),
        "the session's snapshots on its ref"
    );
}

#[tokio::test]
async fn a_file_changed_after_the_turn_is_not_overwritten_without_confirmation() {
    let mut s = after_two_turns(true, vec![]).await;
    std::fs::write(s.work.path().join("c.txt"), "mine\n").unwrap();
    let events = s.revert(Op::Undo { force: false }).await;
    let Some(Event::ConfirmRevert { files, retry }) = events.last() else {
        panic!("asks first: {events:?}");
    };
    assert_eq!(files, &vec!["c.txt".to_string()]);
    assert_eq!(s.read("c.txt").as_deref(), Some("mine\n"), "untouched until confirmed");
    let retry = retry.clone();
    let events = s.revert(retry).await;
    assert_eq!(diffs_of(&events), vec![("c.txt".to_string(), None)]);
    assert_eq!(s.read("c.txt"), None);
}

#[tokio::test]
async fn rewind_to_the_first_message_restores_code_and_conversation() {
    let mut s = after_two_turns(true, vec![Reply::text("fresh start")]).await;
    assert_eq!(
        shown(&s.points().await),
        vec![
            (1, "first".to_string(), true, true),
            (2, "second".to_string(), true, true)
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
    assert_eq!(s.read("a.txt").as_deref(), Some("a one\n"));
    assert_eq!(s.read("b.txt").as_deref(), Some("b one\n"));
    assert_eq!(s.read("made.txt"), None);
    assert_eq!(s.read("c.txt"), None);

    s.turn("first, again").await;
    assert_eq!(
        s.last_request_users(),
        vec!["first, again".to_string()],
        "nothing before the rewind point"
    );
    let loaded = tern::session::log::load(&s.log).unwrap();
    assert_eq!(loaded.messages.len(), 2, "{:?}", loaded.messages);
    let first_turn = loaded
        .events
        .iter()
        .find_map(|(_, e)| match e {
            Event::TurnStarted { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(first_turn, "first, again", "the log's transcript is cut back too");
}

#[tokio::test]
async fn rewind_only_the_conversation_keeps_the_code() {
    let mut s = after_two_turns(true, vec![Reply::text("ok")]).await;
    s.send(rewind(2, true, false));
    s.until(|e| matches!(e, Event::Rewound { turns: 1, .. })).await;
    assert_eq!(s.read("c.txt").as_deref(), Some("c\n"), "the code stays");
    s.turn("instead").await;
    assert_eq!(s.last_request_users(), vec!["first".to_string(), "instead".to_string()]);
    // The second turn is out of the conversation but its code can still be reverted.
    let points = s.points().await;
    assert!(
        points.iter().any(|p| p.turn == 2 && !p.conversation && p.code),
        "{points:?}"
    );
}

#[tokio::test]
async fn rewind_only_the_code_keeps_the_conversation() {
    let mut s = after_two_turns(true, vec![Reply::text("ok")]).await;
    let events = s.revert(rewind(1, false, true)).await;
    assert!(!events.iter().any(|e| matches!(e, Event::Rewound { .. })));
    assert_eq!(s.read("a.txt").as_deref(), Some("a one\n"));
    assert_eq!(s.read("c.txt"), None);
    s.turn("and now?").await;
    let users = s.last_request_users();
    assert_eq!(users.len(), 3, "{users:?}");
    assert!(
        users[2].contains("put the files back as they were before their message \"first\""),
        "{users:?}"
    );
}

#[tokio::test]
async fn without_git_edits_come_back_from_checkpoints_and_commands_are_named() {
    let mut s = after_two_turns(false, vec![]).await;
    s.revert(Op::Undo { force: false }).await;
    assert_eq!(s.read("c.txt"), None);
    let events = s.revert(Op::Undo { force: false }).await;
    assert_eq!(
        diffs_of(&events),
        vec![("a.txt".to_string(), Some("a one\n".to_string()))]
    );
    assert_eq!(s.read("a.txt").as_deref(), Some("a one\n"));
    assert_eq!(
        s.read("made.txt").as_deref(),
        Some("made\n"),
        "a command's change needs a snapshot"
    );
    let said = s
        .until(|e| matches!(e, Event::Notice { text } if text.contains("commands ran without a work-tree snapshot")))
        .await;
    assert!(!said.is_empty());
    let saved = s.data.path().join("sessions/s1/checkpoints/turn-1/0");
    assert_eq!(std::fs::read_to_string(saved).unwrap(), "a one\n");
    assert!(!s.data.path().join("shadow").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn rewind_through_the_picker_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![(
            "write_file".into(),
            json!({"path": "a.txt", "content": "a two\n"}),
        )]),
        Reply::text("wrote it"),
        Reply::text("second answer"),
    ])
    .await;
    let work = workspace(true);
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        support::tern::BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "echo TERN-EXITED-$?; sleep 30",
    );
    let tmux = Tmux::start("rewind", (100, 32), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["write the file", "Enter"]);
    tmux.wait_for("wrote it").await;
    tmux.keys(&["and another", "Enter"]);
    tmux.wait_for("second answer").await;
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "a two\n");

    tmux.keys(&["/rewind", "Enter"]);
    let screen = tmux.wait_for("Rewind to before").await;
    assert!(
        screen.contains("write the file") && screen.contains("and another"),
        "{screen}"
    );
    // Up to the first message, pick it, then "code and conversation".
    tmux.keys(&["Up"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("code and conversation").await;
    assert!(
        screen.contains("only the conversation") && screen.contains("only the code"),
        "{screen}"
    );
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("rewound the code and conversation").await;
    assert!(
        !screen.contains("second answer"),
        "the transcript is cut back: {screen}"
    );
    assert!(!screen.contains("wrote it"), "{screen}");
    assert!(
        screen.contains("│› write the file"),
        "the message is back in the composer: {screen}"
    );
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "a one\n");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED").await;
}
