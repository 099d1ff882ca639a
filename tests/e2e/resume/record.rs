//! What the runner records for a resume beyond messages: mode and model switches and how each approval request was
//! answered, read back with `load`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::support::mock_llm::{MockLlm, Reply};
use tern::agent::approval::ApprovalGate;
use tern::agent::{AgentConfig, spawn};
use tern::protocol::{ApprovalDecision, ApprovalMode, Event, Op};
use tern::provider::{ProviderConfig, ProviderKind};
use tern::session::{SessionLog, SessionMeta, ToolResultStore};
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::{PathPolicy, ToolRegistry};

#[tokio::test(flavor = "multi_thread")]
async fn mode_and_model_switches_and_approval_answers_are_in_the_log() {
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch one.txt"})),
        Reply::tool("exec", json!({"command": "touch two.txt"})),
        Reply::text("stopped"),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut provider = ProviderConfig::new(ProviderKind::OpenAi, "first");
    provider.base_url = mock.openai_base_url();
    provider.api_key = Some("k".into());
    let path = SessionLog::path_for(data.path(), "s1");
    let meta = SessionMeta {
        id: "s1".into(),
        workspace: work.path().display().to_string(),
        provider: "openai".into(),
        model: "first".into(),
        forked_from: None,
        forked_messages: None,
    };
    let results = ToolResultStore::new(data.path().join("results"));
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig::default())));
    let mut agent = spawn(
        AgentConfig::new(
            tern::provider::build(&provider).unwrap(),
            tools,
            PathPolicy::new(work.path()).unwrap(),
            ApprovalGate::new(ApprovalMode::AutoEdit, vec![], vec![]),
            "test".into(),
            results,
        )
        .with_max_iterations(10)
        // A resumed session's totals so far: the new requests add to them.
        .with_history_usage(tern::protocol::Usage {
            input_tokens: 1_000_000,
            ..Default::default()
        })
        .with_log(Some(SessionLog::create(&path, &meta).unwrap())),
    );
    agent
        .ops
        .send(Op::SetApprovalMode {
            mode: ApprovalMode::Ask,
        })
        .unwrap();
    agent.ops.send(Op::SetModel { model: "second".into() }).unwrap();
    agent.ops.send(Op::UserTurn { text: "go".into() }).unwrap();
    let mut answers = vec![
        ApprovalDecision::Abort,
        ApprovalDecision::Deny {
            feedback: Some("use the other script".into()),
        },
    ];
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            Event::ApprovalRequest(request) => agent
                .ops
                .send(Op::Approve {
                    id: request.id,
                    decision: answers.pop().unwrap(),
                })
                .unwrap(),
            Event::TurnFinished { .. } => break,
            _ => {}
        }
    }
    agent.ops.send(Op::Shutdown).unwrap();
    tokio::time::timeout(Duration::from_secs(10), agent.task)
        .await
        .unwrap()
        .unwrap();

    let loaded = tern::session::log::load(&path).unwrap();
    let totals: Vec<u64> = loaded
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::TokenUsage { total, .. } => Some(total.input_tokens),
            _ => None,
        })
        .collect();
    assert!(
        !totals.is_empty() && totals.iter().all(|&t| t >= 1_000_000),
        "{totals:?}"
    );
    assert_eq!(loaded.model(), "second");
    assert_eq!(loaded.mode(), Some(ApprovalMode::Ask));
    let decisions: Vec<&ApprovalDecision> = loaded
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ApprovalDecided { decision, .. } => Some(decision),
            _ => None,
        })
        .collect();
    assert_eq!(
        decisions,
        [
            &ApprovalDecision::Deny {
                feedback: Some("use the other script".into())
            },
            &ApprovalDecision::Abort
        ]
    );
    // The requests the answers belong to are recorded before them.
    let first_request = loaded
        .events
        .iter()
        .position(|(_, e)| matches!(e, Event::ApprovalRequest(_)))
        .unwrap();
    let first_answer = loaded
        .events
        .iter()
        .position(|(_, e)| matches!(e, Event::ApprovalDecided { .. }))
        .unwrap();
    assert!(first_request < first_answer);
    assert_eq!(mock.requests()[0]["model"], "second");
}

/// Compaction is one `replace` line: a crash while it is written (a torn last line) costs the compaction, never the
/// conversation, and the next record after a resume is not lost to it.
#[test]
fn a_compaction_cut_short_by_a_crash_leaves_the_whole_conversation() {
    use std::io::Write;
    let data = tempfile::tempdir().unwrap();
    let path = SessionLog::path_for(data.path(), "s1");
    let user = |t: &str| tern::protocol::Message::User {
        content: t.into(),
        images: vec![],
    };
    let mut log = SessionLog::create(&path, &SessionMeta::new("s1", "/w", "openai", "m")).unwrap();
    for t in ["one", "two", "three"] {
        log.record(&user(t)).unwrap();
    }
    drop(log);
    // The summary's line, torn by SIGKILL halfway.
    let line = r#"{"type":"replace","from":0,"to":2,"with":[{"role":"user","content":"summary of one and two"}]}"#;
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(&line.as_bytes()[..line.len() / 2]).unwrap();
    drop(file);
    let loaded = tern::session::log::load(&path).unwrap();
    assert_eq!(loaded.messages, vec![user("one"), user("two"), user("three")]);
    // Resumed: the next record lands on a line of its own.
    let mut log = SessionLog::append_to(&path).unwrap();
    log.record(&user("four")).unwrap();
    drop(log);
    let loaded = tern::session::log::load(&path).unwrap();
    assert_eq!(
        loaded.messages,
        vec![user("one"), user("two"), user("three"), user("four")]
    );
}
