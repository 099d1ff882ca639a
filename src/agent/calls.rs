//! Running the tool calls of one model step. Every call, serial or parallel, takes one road: prepare (find the tool,
//! cast and validate its arguments, refuse a repeat), gate (the approval gate, and the user when it asks, one prompt
//! at a time in call order), run (consecutive concurrency-safe calls together, anything else alone), record (results
//! go back to the conversation in call order). Running needs an `Approved` token that only the gate step makes, so
//! nothing skips the gate. Every call gets `ToolCallBegin` and `ToolCallEnd`, whatever happens.

mod approve;
mod diagnostics;
mod live;
mod refusal;
mod repeat;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::checkpoint::Checkpoints;
use crate::hooks::{HookCall, HookEvent, Hooks};
use crate::shared::Shared;
use approve::{Approved, Gate};
use live::LiveOutput;
pub(crate) use repeat::RepeatGuard;
use tern_protocol::{Event, Message, ToolCall, ToolDetails, ToolKind, ToolOutput};
use tern_session::ToolResultStore;
use tern_tools::registry::{apply_prepared, execute_prepared};
use tern_tools::{FileTracker, OutputSink, PathPolicy, PreparedCall, ToolContext, ToolRegistry};

/// Results longer than this go to the tool-result store; the model gets a preview.
pub(crate) const PERSIST_THRESHOLD: usize = 16_000;
/// How much of a stored result the model sees: its beginning and its end.
pub(crate) const PREVIEW_CHARS: usize = 1_200;
/// The part of the preview taken from the end of the result.
const PREVIEW_TAIL_CHARS: usize = 400;
/// The marker for a result with no text.
pub(crate) const EMPTY_RESULT: &str = "(tool completed with no output)";
/// A tool gets this long to stop by itself after an interrupt (exec returns its output so far) before it is dropped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

pub(crate) const INTERRUPTED: &str = "Error: interrupted by the user before this tool finished.";
const ABORTED: &str = "Error: not run: the user aborted the turn.";
const ABORTED_HERE: &str = "Error: the user aborted the turn at the approval prompt.";
const STOPPED: &str = "Error: not run: a hook of the user's stopped the turn.";

/// A call after preparation: ready for the gate, or already answered (invalid, repeated).
enum Planned {
    Run(PreparedCall),
    Answered(ToolOutput),
}

/// What the tool phase of one step decided.
pub(crate) enum Flow {
    Continue,
    Aborted,
    /// A hook stopped the agent (`continue: false`): the turn ends with this for the user.
    Stopped(String),
}

/// The road of one step's tool calls, over what the session lends it for the step: the tools, the path policy, the
/// files read, the result store, the shared state (gate, events, log), the hooks and the checkpoints. Its fields are
/// private; `run` is the one way in.
pub(crate) struct Pipeline<'a> {
    tools: &'a ToolRegistry,
    policy: &'a Arc<PathPolicy>,
    files: &'a Arc<FileTracker>,
    results: &'a ToolResultStore,
    shared: &'a Arc<Shared>,
    hooks: &'a Hooks,
    checkpoints: &'a Checkpoints,
}

impl<'a> Pipeline<'a> {
    pub(crate) fn new(
        tools: &'a ToolRegistry,
        policy: &'a Arc<PathPolicy>,
        files: &'a Arc<FileTracker>,
        results: &'a ToolResultStore,
        shared: &'a Arc<Shared>,
        hooks: &'a Hooks,
        checkpoints: &'a Checkpoints,
    ) -> Self {
        Self {
            tools,
            policy,
            files,
            results,
            shared,
            hooks,
            checkpoints,
        }
    }

    /// Takes `calls` down the road; returns their results for the conversation, in call order, and whether the user
    /// aborted the turn at a prompt. `seen` refuses a call repeated within the turn.
    pub(crate) async fn run(
        &self,
        calls: &[ToolCall],
        cancel: &CancellationToken,
        seen: &mut RepeatGuard,
    ) -> (Vec<Message>, Flow) {
        let planned: Vec<Planned> = calls.iter().map(|call| self.plan(call, seen)).collect();
        let mut results: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        let mut flow = Flow::Continue;
        let mut planned = planned.into_iter().enumerate().peekable();
        while let Some((first, head)) = planned.next() {
            // A batch: the run of consecutive concurrency-safe calls starting here, or this call alone.
            let parallel = is_parallel(&head);
            let mut batch = vec![(first, head)];
            while parallel && planned.peek().is_some_and(|(_, next)| is_parallel(next)) {
                batch.extend(planned.next());
            }
            for (k, output) in self.run_batch(calls, batch, cancel, &mut flow).await {
                results[k] = Some(output);
            }
        }
        let answers = calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let output = result.unwrap_or_else(|| ToolOutput::error(INTERRUPTED));
                Message::Tool {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: output.text,
                    is_error: output.is_error,
                    images: output.images,
                }
            })
            .collect();
        (answers, flow)
    }

    /// One batch down the road: each call announced and gated in call order (the user is asked one call at a time),
    /// then the approved ones run together. Returns each call's result by its index in `calls`.
    async fn run_batch(
        &self,
        calls: &[ToolCall],
        batch: Vec<(usize, Planned)>,
        cancel: &CancellationToken,
        flow: &mut Flow,
    ) -> Vec<(usize, ToolOutput)> {
        let mut answered = Vec::new();
        let mut approved: Vec<(usize, Approved)> = Vec::new();
        for (k, planned) in batch {
            let call = &calls[k];
            self.begin(call);
            let refused = if matches!(flow, Flow::Stopped(_)) {
                ToolOutput::error(STOPPED)
            } else if !matches!(flow, Flow::Continue) {
                ToolOutput::error(ABORTED)
            } else if cancel.is_cancelled() {
                ToolOutput::error(INTERRUPTED)
            } else {
                match planned {
                    Planned::Answered(output) => output,
                    Planned::Run(prepared) => match self.approve(call, prepared, cancel).await {
                        Gate::Run(token) => {
                            approved.push((k, token));
                            continue;
                        }
                        Gate::Refused(output) => output,
                        Gate::Abort => {
                            *flow = Flow::Aborted;
                            ToolOutput::error(ABORTED_HERE)
                        }
                        Gate::Stop(reason) => {
                            let output = ToolOutput::error(format!("[Not run: {reason}.]"));
                            *flow = Flow::Stopped(reason);
                            output
                        }
                    },
                }
            };
            // Durations count from the approval: a refused call ran for no time, however long the prompt waited.
            answered.push((k, self.end(call, refused, Duration::ZERO, None).0));
        }
        // A call approved earlier in the batch does not run once a later prompt stopped the turn.
        let stopped = match flow {
            Flow::Aborted => Some(ABORTED),
            Flow::Stopped(_) => Some(STOPPED),
            Flow::Continue if cancel.is_cancelled() => Some(INTERRUPTED),
            Flow::Continue => None,
        };
        if let Some(text) = stopped {
            for (k, _) in approved {
                answered.push((k, self.end(&calls[k], ToolOutput::error(text), Duration::ZERO, None).0));
            }
            return answered;
        }
        let indices: Vec<usize> = approved.iter().map(|(k, _)| *k).collect();
        let runs = approved
            .into_iter()
            .map(|(k, token)| self.execute(&calls[k], token, cancel));
        let done = join_all(runs).await;
        for (k, (output, stop)) in indices.into_iter().zip(done) {
            if let Some(reason) = stop
                && matches!(flow, Flow::Continue)
            {
                *flow = Flow::Stopped(reason);
            }
            answered.push((k, output));
        }
        answered
    }

    fn plan(&self, call: &ToolCall, seen: &mut RepeatGuard) -> Planned {
        let prepared = match self.tools.prepare_call(call) {
            Ok(p) => p,
            Err(text) => return Planned::Answered(ToolOutput::error(text)),
        };
        if let Some(refusal) = seen.check(&call.name, &prepared) {
            return Planned::Answered(ToolOutput::error(refusal));
        }
        Planned::Run(prepared)
    }

    fn begin(&self, call: &ToolCall) {
        self.shared.emit(Event::ToolCallBegin {
            call_id: call.id.clone(),
            name: call.name.clone(),
            kind: self.tools.get(&call.name).map_or(ToolKind::Other, |tool| tool.kind()),
            args: call.arguments.clone(),
        });
    }

    /// Normalises a result (empty marker, large results stored with a preview) and announces the end of the call.
    /// `kept` is the file where the tool itself kept its whole output (exec), if it did.
    fn end(
        &self,
        call: &ToolCall,
        mut output: ToolOutput,
        took: Duration,
        kept: Option<PathBuf>,
    ) -> (ToolOutput, Option<String>) {
        // A key that reached a result anyway (a command printing a config file that holds one) goes no further: not to
        // the model, the screen, the session or the result store.
        if let std::borrow::Cow::Owned(masked) = tern_secrets::mask(&output.text) {
            output.text = masked;
        }
        if output.text.trim().is_empty() && output.images.is_empty() {
            output.text = EMPTY_RESULT.to_string();
        }
        let mut stored = kept.map(|path| path.display().to_string());
        // A page of a file (read_file's own, with offsets to read on) is not stored again to be read with read_file.
        let a_page = matches!(output.details, ToolDetails::Read { .. });
        if stored.is_none() && !a_page && output.text.len() > PERSIST_THRESHOLD {
            let chars = output.text.chars().count();
            if chars > PERSIST_THRESHOLD {
                let head: String = output.text.chars().take(PREVIEW_CHARS - PREVIEW_TAIL_CHARS).collect();
                let tail: String = output.text.chars().skip(chars - PREVIEW_TAIL_CHARS).collect();
                let omitted = chars - PREVIEW_CHARS;
                output.text = match self.results.save(&call.id, &call.name, &output.text) {
                    Ok(path) => {
                        let shown = path.display().to_string();
                        stored = Some(shown.clone());
                        format!(
                            "{head}\n… ({omitted} chars omitted) …\n{tail}\n[Output too large for context: {chars} chars \
                             in total, saved whole to {shown}. Use read_file on that path with offset/limit to see \
                             the rest.]"
                        )
                    }
                    Err(e) => {
                        format!("{head}\n… ({omitted} chars omitted; saving the full output failed: {e}) …\n{tail}")
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
        // The plan (todo_write) goes to the frontends as an event of its own, recorded so a resume shows it.
        if let ToolDetails::Plan { items } = &output.details
            && !output.is_error
        {
            self.shared.emit(Event::PlanUpdated { items: items.clone() });
        }
        (output, stored)
    }

    /// Runs one call, streaming its live output as events. On interrupt the tool gets a short grace to stop by itself
    /// (keeping its output so far) and is dropped after that.
    /// Only an approved call can run: the token comes from the gate step.
    async fn execute(
        &self,
        call: &ToolCall,
        approved: Approved,
        cancel: &CancellationToken,
    ) -> (ToolOutput, Option<String>) {
        let (prepared, policy, change, limits, effects) = approved.into_parts();
        let buffers = self.shared.buffers(policy.root());
        // Approved and about to run: what it will write is saved first (the work tree snapshotted, for a call whose
        // writes are not known), so /undo can put it back.
        if let Some(text) = self
            .checkpoints
            .before_call(prepared.tool.as_ref(), &effects, &policy, buffers.as_ref())
            .await
        {
            self.shared.emit(Event::Notice { text });
        }
        // What tern reads as instructions, stat'ed around a command: a change is reported, never loaded unseen.
        let root = policy.root().to_path_buf();
        let instructions = effects
            .command
            .is_some()
            .then(|| crate::planted::Fingerprint::take(&root));
        // The PostToolUse (or PostToolUseFailure) hooks are told the arguments the call ran with.
        let hook_call = (!self.hooks.is_empty())
            .then(|| HookCall::new(call, prepared.tool.as_ref(), &prepared.args, &policy))
            .filter(|seen| {
                self.hooks.wants_call(HookEvent::PostToolUse, seen)
                    || self.hooks.wants_call(HookEvent::PostToolUseFailure, seen)
            });
        let started = Instant::now();
        // A file left by an earlier call with this id must not pass for this call's output.
        let full_output = self.results.path_for(&call.id, &call.name);
        let _ = std::fs::remove_file(&full_output);
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let ctx = ToolContext {
            policy,
            cancel: cancel.child_token(),
            output: OutputSink::new(tx),
            files: Arc::clone(self.files),
            full_output: Some(full_output.clone()),
            limits,
            buffers,
            processes: Some(tern_tools::processes::Starter {
                table: self.shared.processes().clone(),
                call_id: call.id.clone(),
            }),
        };
        // An edit the user was shown writes exactly that change (or the hunks of it they accepted).
        let run = async {
            match change {
                Some(change) => apply_prepared(&call.name, change, &ctx).await,
                None => execute_prepared(prepared, &ctx).await,
            }
        };
        let mut shown = LiveOutput::default();
        let output = self.run_streaming(call, run, (&mut rx, &mut shown), cancel).await;
        while let Ok(chunk) = rx.try_recv() {
            self.output_delta(call, shown.shown(&chunk));
        }
        let mut output = interrupted_meanwhile(output, cancel.is_cancelled());
        if let Some(servers) = self.shared.lsp().filter(|_| !cancel.is_cancelled()) {
            // An interrupt does not wait for the server.
            tokio::select! {
                () = diagnostics::add(servers, &effects, &ctx.policy, &mut output) => {}
                () = cancel.cancelled() => {}
            }
        }
        if let Some(note) = instructions.and_then(|before| crate::planted::after_command(&root, &before)) {
            self.shared.emit(Event::Notice { text: note.clone() });
            output.text = format!("{}\n\n{note}", output.text);
        }
        // Repositories a command made run their hooks outside the sandbox when the user next runs git there: the user
        // is told, not only the model.
        if let ToolDetails::Exec { new_git_repos, .. } = &output.details
            && !new_git_repos.is_empty()
        {
            self.shared.emit(Event::Notice {
                text: format!(
                    "a command created git repositor{} at {}: git runs their hooks and config outside the sandbox, so \
                     look at them before you run git there",
                    if new_git_repos.len() == 1 { "y" } else { "ies" },
                    new_git_repos.join(", ")
                ),
            });
        }
        let mut stop = None;
        if let Some(seen) = hook_call {
            stop = self.post_tool_hooks(&seen, &mut output, cancel).await;
        }
        let kept = full_output.is_file().then_some(full_output);
        (self.end(call, output, started.elapsed(), kept).0, stop)
    }

    /// Runs the tool future `run` to its end, its live output from `live` shown as it comes. On interrupt it gets
    /// `INTERRUPT_GRACE` to stop by itself, and is dropped after that.
    async fn run_streaming(
        &self,
        call: &ToolCall,
        run: impl Future<Output = ToolOutput>,
        (live, shown): (&mut mpsc::UnboundedReceiver<String>, &mut LiveOutput),
        cancel: &CancellationToken,
    ) -> ToolOutput {
        tokio::pin!(run);
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
                output = &mut run => break output,
                Some(chunk) = live.recv() => self.output_delta(call, shown.shown(&chunk)),
                _ = cancel.cancelled(), if deadline.is_none() => {
                    deadline = Some(tokio::time::Instant::now() + INTERRUPT_GRACE);
                }
                _ = grace => break ToolOutput::error(INTERRUPTED),
            }
        }
    }

    /// Shows a chunk of a call's live output (masked for secrets, colours kept, other escapes dropped: `live.rs`).
    fn output_delta(&self, call: &ToolCall, chunk: String) {
        if !chunk.is_empty() {
            self.shared.emit(Event::ToolOutputDelta {
                call_id: call.id.clone(),
                chunk,
            });
        }
    }
    /// The PostToolUse (or PostToolUseFailure) hooks on a call that ran: their feedback and blocks are appended to
    /// its result. Returns what to tell the user when one stopped the agent.
    async fn post_tool_hooks(
        &self,
        call: &HookCall,
        output: &mut ToolOutput,
        cancel: &CancellationToken,
    ) -> Option<String> {
        if cancel.is_cancelled() {
            return None;
        }
        let shared = Arc::clone(self.shared);
        let notify = move |text| shared.emit(Event::Notice { text });
        let notes = self.hooks.post_tool_use(call, output, cancel, &notify).await;
        notes.apply(output);
        notes.stop
    }
}

/// A call's `output`, saying the user interrupted the turn while it ran when it finished anyway after `cancelled`.
fn interrupted_meanwhile(output: ToolOutput, cancelled: bool) -> ToolOutput {
    if cancelled && !output.is_error {
        // It finished, but the user stopped the turn meanwhile: say so, keep what it produced.
        ToolOutput {
            text: format!("{}\n\n[The user interrupted the turn while this ran.]", output.text),
            ..output
        }
    } else {
        output
    }
}

fn is_parallel(planned: &Planned) -> bool {
    matches!(planned, Planned::Run(p) if p.tool.concurrency_safe())
}
