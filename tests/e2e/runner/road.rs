//! One road for every call: the calls of a parallel batch each pass the approval gate, in call order, before any of
//! them runs; the approved ones then run together. The probe is an MCP-like tool that may run in parallel but that
//! the gate does not let through unasked, so only a consulted gate can stop it.

use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tern::protocol::{ApprovalRequest, ToolOutput};
use tern::tools::{ToolContext, ToolError};
use tokio::sync::Barrier;

use super::*;

/// Counts its runs and waits for `together` runs to meet at a barrier: it answers `together` when they met, `alone`
/// when the others never came.
struct Lookup {
    runs: Arc<AtomicUsize>,
    barrier: Arc<Barrier>,
}

#[async_trait]
impl Tool for Lookup {
    fn name(&self) -> &str {
        "mcp_probe_lookup"
    }
    fn description(&self) -> &str {
        "Looks a word up on the probe server."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
            "additionalProperties": false
        })
    }
    fn concurrency_safe(&self) -> bool {
        true
    }
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let met = tokio::time::timeout(Duration::from_secs(10), self.barrier.wait())
            .await
            .is_ok();
        let how = if met { "together" } else { "alone" };
        Ok(ToolOutput::text(format!("looked up {} {how}", args["word"])))
    }
}

fn lookups(words: &[&str]) -> Reply {
    Reply::ToolCalls(
        words
            .iter()
            .map(|w| ("mcp_probe_lookup".to_string(), json!({"word": w})))
            .collect(),
    )
}

async fn probe_harness(script: Vec<Reply>, mode: ApprovalMode, together: usize) -> (Harness, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = Lookup {
        runs: Arc::clone(&runs),
        barrier: Arc::new(Barrier::new(together)),
    };
    let h = harness_with(script, mode, ProviderKind::OpenAi, 20, vec![Arc::new(tool)]).await;
    (h, runs)
}

/// Begin and End for every call, every Begin before its End.
fn assert_begin_and_end(events: &[Event], ids: &[&str]) {
    for id in ids {
        let begin = events
            .iter()
            .position(|e| matches!(e, Event::ToolCallBegin { call_id, .. } if call_id == id));
        let end = events
            .iter()
            .position(|e| matches!(e, Event::ToolCallEnd { call_id, .. } if call_id == id));
        assert!(
            matches!((begin, end), (Some(b), Some(e)) if b < e),
            "{id}: {begin:?} {end:?}"
        );
    }
}

fn requests(events: &[Event]) -> Vec<ApprovalRequest> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequest(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_parallel_call_is_gated_in_order_and_the_approved_run_together() {
    let script = vec![lookups(&["alpha", "beta", "gamma"]), Reply::text("Done.")];
    let (mut h, runs) = probe_harness(script, ApprovalMode::AutoEdit, 2).await;
    let events = h
        .turn("look them up", |r| match r.call_id.as_str() {
            "call_2" => ApprovalDecision::Deny { feedback: None },
            _ => ApprovalDecision::Once,
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let asked = requests(&events);
    let order: Vec<&str> = asked.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(order, ["call_1", "call_2", "call_3"]);
    assert!(asked.iter().all(|r| r.tool == "mcp_probe_lookup"));
    assert!(asked.windows(2).all(|w| w[0].id < w[1].id));
    assert_begin_and_end(&events, &["call_1", "call_2", "call_3"]);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "the denied call must not run");
    let reqs = h.mock.requests();
    let results = tool_results(&reqs[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    assert_eq!(results[0].1, "looked up \"alpha\" together");
    assert!(results[1].1.contains("The user denied this call"), "{}", results[1].1);
    assert_eq!(results[2].1, "looked up \"gamma\" together");
    assert_every_call_answered(&reqs[1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_mode_refuses_every_parallel_call() {
    let script = vec![lookups(&["alpha", "beta"]), Reply::text("Could not.")];
    let (mut h, runs) = probe_harness(script, ApprovalMode::ReadOnly, 2).await;
    let events = h
        .turn("look them up", |_| panic!("read-only refuses, it never asks"))
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert_begin_and_end(&events, &["call_1", "call_2"]);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let results = tool_results(&h.mock.requests()[1]);
    assert_eq!(results.len(), 2);
    for (_, text) in &results {
        assert!(text.starts_with("Error: not allowed: read-only mode"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_in_a_parallel_batch_runs_none_of_it() {
    let script = vec![lookups(&["alpha", "beta", "gamma"]), Reply::text("after")];
    let (mut h, runs) = probe_harness(script, ApprovalMode::AutoEdit, 1).await;
    let events = h
        .turn("look them up", |r| match r.call_id.as_str() {
            "call_1" => ApprovalDecision::Once,
            _ => ApprovalDecision::Abort,
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Aborted);
    let asked: Vec<String> = requests(&events).into_iter().map(|r| r.call_id).collect();
    assert_eq!(asked, ["call_1", "call_2"], "nothing is asked after an abort");
    assert_begin_and_end(&events, &["call_1", "call_2", "call_3"]);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "an abort stops the approved call too");
    // The next turn's request carries every call answered, in order.
    let events = h.turn("go on", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let reqs = h.mock.requests();
    let results = tool_results(reqs.last().unwrap());
    let texts: Vec<&str> = results.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "Error: not run: the user aborted the turn.",
            "Error: the user aborted the turn at the approval prompt.",
            "Error: not run: the user aborted the turn.",
        ]
    );
    assert_every_call_answered(reqs.last().unwrap());
}
