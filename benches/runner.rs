//! Runner overhead per tool call, excluding the tool's own work: one turn in which a scripted in-process model calls a
//! no-op tool N times (one call per step, each through prepare, the approval gate, execution, events and the
//! conversation), then answers. Run with `cargo bench --bench runner`; `TERN_BENCH_CALLS` sets N (default 2,000).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::json;
use tern::agent::approval::{ApprovalGate, ApprovalMode};
use tern::agent::{AgentConfig, spawn};
use tern::protocol::{Event, FinishReason, Op, ToolCall, Usage};
use tern::provider::{Completion, PreparedRequest, Provider, ProviderError, ProviderEvent};
use tern::session::ToolResultStore;
use tern::tools::{PathPolicy, ToolRegistry};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

#[path = "common/noop.rs"]
mod noop;
use noop::Noop;

/// Calls `noop` `batch` times per request until `calls` calls were made, then answers.
struct Scripted {
    calls: usize,
    batch: usize,
    step: AtomicUsize,
}

#[async_trait]
impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn model(&self) -> &str {
        "bench"
    }
    async fn complete(
        &self,
        _request: &PreparedRequest<'_>,
        _events: &UnboundedSender<ProviderEvent>,
        _cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        let done = self.step.fetch_add(1, Ordering::SeqCst) * self.batch;
        let tool_calls: Vec<ToolCall> = (done..(done + self.batch).min(self.calls))
            .map(|i| ToolCall {
                id: format!("c{i}"),
                name: "noop".into(),
                arguments: json!({"i": i}),
            })
            .collect();
        let finish_reason = if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        let content = if tool_calls.is_empty() {
            "done".to_string()
        } else {
            String::new()
        };
        Ok(Completion {
            content,
            reasoning: None,
            tool_calls,
            finish_reason,
            usage: Usage::default(),
        })
    }
}

/// Runs one turn and returns its wall time.
async fn turn(calls: usize, batch: usize) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Noop("ok")));
    let results = ToolResultStore::new(dir.path().join("results"));
    let scripted = Scripted {
        calls,
        batch,
        step: AtomicUsize::new(0),
    };
    let mut agent = spawn(
        AgentConfig::new(
            Arc::new(scripted),
            tools,
            PathPolicy::new(dir.path()).unwrap(),
            ApprovalGate::new(ApprovalMode::FullAuto, vec![], vec![]),
            "bench".into(),
            results,
        )
        .with_max_iterations(u32::MAX)
        .with_context_window(u64::MAX / 2)
        .with_reserve_tokens(0),
    );
    let start = Instant::now();
    agent.ops.send(Op::UserTurn { text: "go".into() }).unwrap();
    while let Some(event) = agent.events.recv().await {
        if let Event::TurnFinished { .. } = event {
            break;
        }
    }
    start.elapsed()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let calls: usize = std::env::var("TERN_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        turn(100, 100).await; // warm-up
        let mut batched = Vec::new();
        for _ in 0..5 {
            let t = turn(calls, calls).await;
            batched.push(t.as_secs_f64() * 1e6 / calls as f64);
        }
        let steps = (calls / 10).max(10);
        let mut stepped = Vec::new();
        for _ in 0..5 {
            let t = turn(steps, 1).await;
            stepped.push(t.as_secs_f64() * 1e6 / steps as f64);
        }
        println!("runner overhead per tool call (a no-op tool; median of 5 turns)");
        println!(
            "  {calls} calls in one model step:     {:.1} µs per call   (goal: under 100 µs)",
            median(batched)
        );
        println!(
            "  {steps} steps of one call each:      {:.1} µs per step (request building, context repair, call)",
            median(stepped)
        );
    });
}
