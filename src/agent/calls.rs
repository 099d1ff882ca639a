//! Running the tool calls of one model step. Calls are prepared in order (an invalid call never runs), checked by the
//! approval gate, then run in batches: consecutive concurrency-safe calls together, anything else alone. Results go
//! back to the conversation in call order. Every call gets `ToolCallBegin` and `ToolCallEnd`, whatever happens.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::approval::Verdict;
use super::runner::Agent;
use super::turn::Flow;
use crate::protocol::{ApprovalDecision, ApprovalRequest, Event, Message, ToolCall, ToolOutput};
use crate::tools::registry::{ERROR_HINT, execute_prepared};
use crate::tools::{OutputSink, PathPolicy, PreparedCall, ToolContext};

/// Results longer than this go to the tool-result store; the model gets a preview.
pub const PERSIST_THRESHOLD: usize = 16_000;
/// How much of a stored result the model sees.
pub const PREVIEW_CHARS: usize = 1_200;
/// The marker for a result with no text.
pub const EMPTY_RESULT: &str = "(tool completed with no output)";
/// A tool gets this long to stop by itself after an interrupt (exec returns its output so far) before it is dropped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// The same call with the same arguments is refused once it was made this many times in a turn.
const REPEAT_LIMIT: u32 = 2;

pub(crate) const INTERRUPTED: &str = "Error: interrupted by the user before this tool finished.";

/// A call after preparation: ready to run, or already answered (invalid, refused).
enum Planned {
    Run(PreparedCall),
    Answered(ToolOutput),
}

impl Agent {
    pub(crate) async fn run_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
        cancel: &CancellationToken,
        seen: &mut HashMap<String, u32>,
    ) -> Flow {
        let planned: Vec<Planned> = calls.iter().map(|call| self.plan(call, seen)).collect();
        let mut results: Vec<Option<(ToolOutput, Option<String>)>> = vec![None; calls.len()];
        let mut flow = Flow::Continue;
        let mut i = 0;
        while i < calls.len() {
            // A batch: the run of consecutive concurrency-safe calls starting at i, or the single call at i.
            let mut end = i + 1;
            if is_parallel(&planned[i]) {
                while end < calls.len() && is_parallel(&planned[end]) {
                    end += 1;
                }
            }
            if cancel.is_cancelled() || matches!(flow, Flow::Aborted) {
                let text = if matches!(flow, Flow::Aborted) {
                    "Error: not run: the user aborted the turn."
                } else {
                    INTERRUPTED
                };
                for (k, call) in calls.iter().enumerate().take(end).skip(i) {
                    self.begin(call);
                    results[k] = Some(self.end(call, ToolOutput::error(text), Duration::ZERO));
                }
                i = end;
                continue;
            }
            if end - i > 1 {
                let runnable: Vec<(usize, PreparedCall)> = (i..end)
                    .filter_map(|k| match &planned[k] {
                        Planned::Run(p) => Some((k, p.clone())),
                        Planned::Answered(_) => None,
                    })
                    .collect();
                let batch = runnable.iter().map(|(k, prepared)| {
                    self.begin(&calls[*k]);
                    self.execute(&calls[*k], prepared.clone(), Arc::clone(&self.policy), cancel)
                });
                let done = join_all(batch).await;
                for ((k, _), result) in runnable.iter().zip(done) {
                    results[*k] = Some(result);
                }
            } else {
                let call = &calls[i];
                self.begin(call);
                let started = Instant::now();
                results[i] = Some(match &planned[i] {
                    Planned::Answered(output) => self.end(call, output.clone(), started.elapsed()),
                    Planned::Run(prepared) => match self.approve(call, prepared, cancel).await {
                        Approval::Run(policy) => self.execute(call, prepared.clone(), policy, cancel).await,
                        Approval::Refused(output) => self.end(call, output, started.elapsed()),
                        Approval::Abort => {
                            flow = Flow::Aborted;
                            self.end(
                                call,
                                ToolOutput::error("Error: the user aborted the turn at the approval prompt."),
                                started.elapsed(),
                            )
                        }
                    },
                });
            }
            i = end;
        }
        for (call, result) in calls.iter().zip(results) {
            let (output, _) = result.unwrap_or_else(|| (ToolOutput::error(INTERRUPTED), None));
            self.push_message(Message::Tool {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: output.text,
                is_error: output.is_error,
                images: output.images,
            });
        }
        flow
    }

    fn plan(&self, call: &ToolCall, seen: &mut HashMap<String, u32>) -> Planned {
        let prepared = match self.tools.prepare_call(call) {
            Ok(p) => p,
            Err(text) => return Planned::Answered(ToolOutput::error(text)),
        };
        let key = format!("{}\u{0}{}", call.name, prepared.args);
        let count = seen.entry(key).or_insert(0);
        *count += 1;
        if *count > REPEAT_LIMIT {
            return Planned::Answered(ToolOutput::error(format!(
                "Error: refused: this exact call ({} with the same arguments) was already made {REPEAT_LIMIT} times \
                 this turn and its result will not change. Use the earlier result, or try something different.\n\n\
                 {ERROR_HINT}",
                call.name
            )));
        }
        Planned::Run(prepared)
    }

    fn begin(&self, call: &ToolCall) {
        self.shared.emit(Event::ToolCallBegin {
            call_id: call.id.clone(),
            name: call.name.clone(),
            args: call.arguments.clone(),
        });
    }

    /// Normalises a result (empty marker, large results stored with a preview) and announces the end of the call.
    fn end(&self, call: &ToolCall, mut output: ToolOutput, took: Duration) -> (ToolOutput, Option<String>) {
        if output.text.trim().is_empty() && output.images.is_empty() {
            output.text = EMPTY_RESULT.to_string();
        }
        let mut stored = None;
        if call.name != "read_file" && output.text.len() > PERSIST_THRESHOLD {
            let chars = output.text.chars().count();
            if chars > PERSIST_THRESHOLD {
                let preview: String = output.text.chars().take(PREVIEW_CHARS).collect();
                output.text = match self.results.save(&call.id, &call.name, &output.text) {
                    Ok(path) => {
                        let shown = path.display().to_string();
                        stored = Some(shown.clone());
                        format!(
                            "{preview}\n…\n[Output too large for context: {chars} chars in total, saved to {shown}. \
                             Use read_file on that path with offset/limit to see the rest.]"
                        )
                    }
                    Err(e) => {
                        let tail: String = output.text.chars().skip(chars - PREVIEW_CHARS).collect();
                        format!(
                            "{preview}\n… ({} chars omitted; saving the full output failed: {e}) …\n{tail}",
                            chars - 2 * PREVIEW_CHARS
                        )
                    }
                };
            }
        }
        self.shared.emit(Event::ToolCallEnd {
            call_id: call.id.clone(),
            name: call.name.clone(),
            output: output.clone(),
            duration_ms: took.as_millis() as u64,
            full_output_path: stored.clone(),
        });
        (output, stored)
    }

    /// Runs one call, streaming its live output as events. On interrupt the tool gets a short grace to stop by itself
    /// (keeping its output so far) and is dropped after that.
    async fn execute(
        &self,
        call: &ToolCall,
        prepared: PreparedCall,
        policy: Arc<PathPolicy>,
        cancel: &CancellationToken,
    ) -> (ToolOutput, Option<String>) {
        let started = Instant::now();
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let ctx = ToolContext {
            policy,
            cancel: cancel.child_token(),
            output: OutputSink::new(tx),
            files: Arc::clone(&self.files),
        };
        let output = {
            let fut = execute_prepared(prepared, &ctx);
            tokio::pin!(fut);
            let mut deadline: Option<tokio::time::Instant> = None;
            loop {
                let grace = async {
                    match deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    output = &mut fut => break output,
                    Some(chunk) = rx.recv() => self.shared.emit(Event::ToolOutputDelta {
                        call_id: call.id.clone(),
                        chunk,
                    }),
                    _ = cancel.cancelled(), if deadline.is_none() => {
                        deadline = Some(tokio::time::Instant::now() + INTERRUPT_GRACE);
                    }
                    _ = grace => break ToolOutput::error(INTERRUPTED),
                }
            }
        };
        while let Ok(chunk) = rx.try_recv() {
            self.shared.emit(Event::ToolOutputDelta {
                call_id: call.id.clone(),
                chunk,
            });
        }
        let output = if cancel.is_cancelled() && !output.is_error {
            // It finished, but the user stopped the turn meanwhile: say so, keep what it produced.
            ToolOutput {
                text: format!("{}\n\n[The user interrupted the turn while this ran.]", output.text),
                ..output
            }
        } else {
            output
        };
        self.end(call, output, started.elapsed())
    }

    /// Asks the gate, and the user when the gate says so.
    async fn approve(&mut self, call: &ToolCall, prepared: &PreparedCall, cancel: &CancellationToken) -> Approval {
        let verdict = match self.shared.gate.lock() {
            Ok(gate) => gate.check(prepared.tool.as_ref(), &prepared.args, &self.policy),
            Err(_) => Verdict::Deny {
                reason: "internal error: the approval gate is unavailable".into(),
            },
        };
        let (reason, proposed_rule) = match verdict {
            Verdict::Allow => return Approval::Run(Arc::clone(&self.policy)),
            Verdict::Deny { reason } => {
                return Approval::Refused(ToolOutput::error(format!(
                    "Error: not allowed: {reason}. Do not retry this call; tell the user if it is needed."
                )));
            }
            Verdict::Ask { reason, proposed_rule } => (reason, proposed_rule),
        };
        let id = self.next_approval_id;
        self.next_approval_id += 1;
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.shared.pending.lock() {
            pending.insert(id, tx);
        }
        let (command, cwd) = describe(&call.name, &prepared.args, &self.policy);
        self.shared.emit(Event::ApprovalRequest(ApprovalRequest {
            id,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            command,
            cwd,
            reason,
            proposed_rule: proposed_rule.as_ref().map(|r| r.to_string()),
        }));
        let decision = tokio::select! {
            d = rx => d.unwrap_or(ApprovalDecision::Abort),
            _ = cancel.cancelled() => return Approval::Refused(ToolOutput::error(INTERRUPTED)),
        };
        match decision {
            ApprovalDecision::Once => Approval::Run(self.widened_policy(&prepared.args)),
            ApprovalDecision::Always => {
                if let Some(rule) = proposed_rule
                    && let Ok(mut gate) = self.shared.gate.lock()
                {
                    self.shared.emit(Event::Notice {
                        text: format!("allowed for this session: {rule}"),
                    });
                    gate.add_session_rule(rule);
                }
                Approval::Run(self.widened_policy(&prepared.args))
            }
            ApprovalDecision::Deny { feedback } => {
                let text = match feedback.as_deref().map(str::trim) {
                    Some(f) if !f.is_empty() => format!("The user denied this call and said: {f}"),
                    _ => "The user denied this call. Do not retry it; ask or take another approach.".to_string(),
                };
                Approval::Refused(ToolOutput::error(text))
            }
            ApprovalDecision::Abort => Approval::Abort,
        }
    }

    /// The user approved writes outside the workspace: allow exactly the directories those paths go to, for this
    /// one call.
    fn widened_policy(&self, args: &Value) -> Arc<PathPolicy> {
        let mut policy: Option<PathPolicy> = None;
        for path in target_paths(args) {
            let Ok(resolved) = self.policy.resolve(path) else {
                continue;
            };
            if self.policy.writable(&resolved) {
                continue;
            }
            let mut dir = resolved.parent().map(Path::to_path_buf);
            while let Some(d) = &dir {
                if d.is_dir() {
                    break;
                }
                dir = d.parent().map(Path::to_path_buf);
            }
            if let Some(d) = dir {
                policy = Some(policy.unwrap_or_else(|| (*self.policy).clone()).allow_write_root(d));
            }
        }
        policy.map(Arc::new).unwrap_or_else(|| Arc::clone(&self.policy))
    }
}

enum Approval {
    Run(Arc<PathPolicy>),
    Refused(ToolOutput),
    Abort,
}

fn is_parallel(planned: &Planned) -> bool {
    matches!(planned, Planned::Run(p) if p.tool.concurrency_safe())
}

/// The paths a file-writing call targets: `path`, and `edits[].path` for apply_patch.
fn target_paths(args: &Value) -> Vec<&str> {
    let mut paths: Vec<&str> = args.get("path").and_then(Value::as_str).into_iter().collect();
    if let Some(edits) = args.get("edits").and_then(Value::as_array) {
        paths.extend(edits.iter().filter_map(|e| e.get("path").and_then(Value::as_str)));
    }
    paths
}

/// What an approval prompt shows: the exact command, or the tool with the paths it writes; and where it runs.
fn describe(tool: &str, args: &Value, policy: &PathPolicy) -> (String, String) {
    let root = policy.root().display().to_string();
    if let Some(command) = args.get("command").and_then(Value::as_str) {
        let cwd = match args.get("working_dir").and_then(Value::as_str) {
            Some(dir) => policy
                .resolve(dir)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| dir.to_string()),
            None => root,
        };
        return (command.to_string(), cwd);
    }
    let paths = target_paths(args);
    if !paths.is_empty() {
        let shown: Vec<String> = paths
            .iter()
            .map(|p| {
                policy
                    .resolve(p)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| p.to_string())
            })
            .collect();
        return (format!("{tool} {}", shown.join(", ")), root);
    }
    (format!("{tool} {args}"), root)
}
