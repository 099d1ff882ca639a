//! The long-lived session: the op loop. Every op a frontend sends is sorted once (`sort`), the same way whether the
//! agent is idle or busy with a turn: answers, mode and model changes and MCP server actions are done at once; a
//! message is a turn (queued while one runs); memory ops wait for the work to end; what needs the conversation to
//! itself (a new conversation, `/compact`, undo and rewind, `/review`, an MCP prompt) is done when idle and refused
//! with a word while busy; an interrupt cancels the work; a shutdown ends the session.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::shared::Shared;
use tern_protocol::{CommandTurn, Event, Op, Usage};
use tern_session::SessionLog;

/// How long the session's end waits for its MCP servers to exit (each gets a moment, then its group is killed).
const MCP_SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// What an op asks, once the session has done what it can do at once.
enum Sorted {
    /// Already done: an answer, a mode or model change, an MCP server action.
    Done,
    /// A message or a custom command: the next turn.
    Turn(Request),
    /// A memory or context op: done now when idle, when the work ends while busy.
    Memory(Op),
    Interrupt,
    Shutdown,
    /// Needs the conversation to itself: done when idle, refused with a word while busy.
    Exclusive(Op),
}

/// What a turn is asked to do.
pub(super) enum Request {
    Message(String),
    /// Subagent reports that start a turn: a message, but not the user's.
    Reports(String),
    Command(CommandTurn),
}

/// Sorts `op`, doing at once what needs no turn. Every op is named: a new one must be sorted here.
fn sort(shared: &Shared, op: Op) -> Sorted {
    match op {
        Op::UserTurn { text } => Sorted::Turn(Request::Message(text)),
        Op::CommandTurn { command } => Sorted::Turn(Request::Command(command)),
        Op::Approve { id, decision } => {
            shared.answer(id, decision);
            Sorted::Done
        }
        Op::Elicit { id, answer: reply } => {
            shared.answer_elicitation(id, reply);
            Sorted::Done
        }
        Op::BufferText { id, text } => {
            shared.answer_buffer(id, text);
            Sorted::Done
        }
        Op::BufferWritten { id, error } => {
            shared.answer_write(id, error);
            Sorted::Done
        }
        Op::SetApprovalMode { mode } => {
            shared.set_mode(mode);
            Sorted::Done
        }
        Op::SetModel { model } => {
            shared.set_model(model);
            Sorted::Done
        }
        Op::McpServer { name, action } => {
            super::mcp::server_action(shared, &name, action);
            Sorted::Done
        }
        op @ (Op::ProcessInput { .. } | Op::ProcessResize { .. } | Op::ProcessStop { .. }) => {
            process_op(shared, op);
            Sorted::Done
        }
        op @ (Op::Remember { .. } | Op::ReloadContext | Op::ShowContext) => Sorted::Memory(op),
        Op::Interrupt => Sorted::Interrupt,
        Op::Shutdown => Sorted::Shutdown,
        op @ (Op::NewConversation
        | Op::Compact { .. }
        | Op::Undo { .. }
        | Op::ListRewindPoints
        | Op::Rewind { .. }
        | Op::ReviewStart { .. }
        | Op::ReviewApply { .. }
        | Op::McpPrompt { .. }) => Sorted::Exclusive(op),
    }
}

/// What the user does to a live process, done at once and unasked (the user chose it): keys to its input, a resize,
/// a stop. Writing (in order, see `ProcessTable::user_input`) and stopping wait on the process, so they run beside
/// the op loop.
fn process_op(shared: &Shared, op: Op) {
    let table = shared.processes().clone();
    match op {
        Op::ProcessInput { id, data } => table.user_input(&id, &data),
        Op::ProcessResize { id, cols, rows } => table.resize(&id, cols, rows),
        Op::ProcessStop { id } => {
            tokio::spawn(async move { table.stop(&id, "the user").await });
        }
        _ => {}
    }
}

/// What the busy agent tells the user it cannot do now.
fn busy_refusal(op: &Op) -> &'static str {
    match op {
        Op::NewConversation => "start a new conversation",
        Op::Compact { .. } => "/compact",
        Op::Undo { .. } | Op::ListRewindPoints | Op::Rewind { .. } => "undo or rewind",
        Op::ReviewStart { .. } | Op::ReviewApply { .. } => "/review",
        _ => "run an MCP prompt",
    }
}

/// An interrupt: it stops the running work (`cancel`, when there is any), background subagents and the questions
/// MCP servers wait on.
fn interrupt(shared: &Shared, cancel: Option<&CancellationToken>) {
    if let Some(cancel) = cancel {
        cancel.cancel();
    }
    shared.interrupt_background();
    shared.cancel_elicitations();
    shared.cancel_editor_questions();
}

/// What arrived while the agent was busy, for after.
#[derive(Default)]
struct Waiting {
    /// Messages, each the next turn.
    turns: VecDeque<Request>,
    /// Memory and context ops.
    memory: Vec<Op>,
}

/// After an op that needs the conversation to itself.
enum Next {
    /// Back to waiting for ops.
    Idle,
    /// Run this as a turn (an MCP prompt's text).
    Turn(String),
    /// The session ends.
    Stop,
}

impl Session {
    /// The op loop, until a shutdown or until every frontend is gone.
    pub(crate) async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Op>) {
        self.messages = crate::conversation::Conversation::new(std::mem::take(&mut self.history));
        self.announce();
        let mut waiting = Waiting::default();
        let mut stop = self.session_start(&mut ops, &mut waiting).await;
        // Why the session ends, as SessionEnd hooks are told: the user quit, or every frontend is gone.
        let mut reason = "prompt_input_exit";
        while !stop {
            // What was sent during the last turn, now that it has ended.
            for op in std::mem::take(&mut waiting.memory) {
                self.memory_op(op);
            }
            let text = match waiting.turns.pop_front() {
                Some(text) => text,
                None => match self.next_op(&mut ops).await.map(|next| match next {
                    Ok(op) => sort(&self.shared, op),
                    Err(reports) => Sorted::Turn(Request::Reports(reports)),
                }) {
                    Some(Sorted::Turn(request)) => request,
                    Some(Sorted::Done) => continue,
                    Some(Sorted::Memory(op)) => {
                        self.memory_op(op);
                        continue;
                    }
                    // No turn runs: an interrupt stops background subagents, an answer goes to one of them.
                    Some(Sorted::Interrupt) => {
                        interrupt(&self.shared, None);
                        continue;
                    }
                    Some(Sorted::Exclusive(op)) => match self.exclusive(op, &mut ops, &mut waiting).await {
                        Next::Idle => continue,
                        Next::Turn(text) => Request::Message(text),
                        Next::Stop => break,
                    },
                    Some(Sorted::Shutdown) => break,
                    None => {
                        reason = "other";
                        break;
                    }
                },
            };
            stop = self.turn(text, &mut ops, &mut waiting).await;
        }
        self.session_end_hooks(reason).await;
        self.stop_subagents().await;
        // Nothing the model started outlives the session.
        self.shared.processes().stop_all("the session's end").await;
        // The session's MCP servers end with it: stdio servers get a moment to exit, then their groups are killed.
        if let Some(mcp) = self.shared.mcp() {
            let _ = tokio::time::timeout(MCP_SHUTDOWN_WAIT, mcp.shutdown()).await;
        }
        self.shared.emit(Event::ShutdownComplete);
    }

    /// Tells the frontends the session is ready: which model, which mode, which tools.
    fn announce(&self) {
        let mode = self.shared.mode();
        self.shared.emit(Event::SessionStarted {
            provider: self.provider.name().to_string(),
            model: self.provider.model().to_string(),
            mode,
            workspace: self.policy.root().display().to_string(),
            tools: self.tools.names(),
        });
    }

    /// The SessionStart hooks run like a turn: an interrupt ends them, a message sent meanwhile waits for them.
    /// Whether the session must stop.
    async fn session_start(&mut self, ops: &mut mpsc::UnboundedReceiver<Op>, waiting: &mut Waiting) -> bool {
        let source = if self.messages.is_empty() { "startup" } else { "resume" };
        if !self.hooks.wants(crate::hooks::HookEvent::SessionStart, source) {
            return false;
        }
        let (cancel, shared) = (CancellationToken::new(), Arc::clone(&self.shared));
        let work = self.session_start_hooks(source, &cancel);
        while_busy(&shared, work, ops, &cancel, waiting).await.1
    }

    /// One turn for `text`, answering ops meanwhile. Whether the session must stop.
    async fn turn(&mut self, request: Request, ops: &mut mpsc::UnboundedReceiver<Op>, waiting: &mut Waiting) -> bool {
        // Context files may have changed since the last turn (an edit, /init): the turn sees them as they are.
        self.refresh_context(false);
        let cancel = CancellationToken::new();
        let shared = Arc::clone(&self.shared);
        let (end, stop) = match request {
            Request::Message(text) => {
                let turn = self.run_turn(text, cancel.clone());
                while_busy(&shared, turn, ops, &cancel, waiting).await
            }
            Request::Reports(text) => {
                let turn = self.run_report_turn(text, cancel.clone());
                while_busy(&shared, turn, ops, &cancel, waiting).await
            }
            Request::Command(command) => {
                let turn = self.run_command_turn(command, cancel.clone());
                while_busy(&shared, turn, ops, &cancel, waiting).await
            }
        };
        shared.emit(Event::TurnFinished { reason: end });
        stop
    }

    /// An op that needs the conversation to itself, done while the agent is idle.
    async fn exclusive(&mut self, op: Op, ops: &mut mpsc::UnboundedReceiver<Op>, waiting: &mut Waiting) -> Next {
        match op {
            Op::NewConversation => self.new_conversation().await,
            Op::Compact { focus } => {
                let (cancel, shared) = (CancellationToken::new(), Arc::clone(&self.shared));
                let work = self.compact_on_request(focus, &cancel);
                if while_busy(&shared, work, ops, &cancel, waiting).await.1 {
                    return Next::Stop;
                }
            }
            Op::Undo { force } => self.undo(force).await,
            Op::ListRewindPoints => self.rewind_points(),
            Op::Rewind {
                turn,
                conversation,
                code,
                force,
            } => self.rewind(turn, conversation, code, force).await,
            Op::ReviewStart { since } => self.review_start(since).await,
            Op::ReviewApply { id, reverted } => self.review_apply(id, &reverted),
            Op::McpPrompt {
                server,
                prompt,
                arguments,
            } => {
                // Fetched like a turn's work: an interrupt stops it, a message sent meanwhile waits.
                let (cancel, shared) = (CancellationToken::new(), Arc::clone(&self.shared));
                let work = self.mcp_prompt_text(&server, &prompt, arguments, &cancel);
                return match while_busy(&shared, work, ops, &cancel, waiting).await {
                    (_, true) => Next::Stop,
                    (Some(text), false) => Next::Turn(text),
                    (None, false) => Next::Idle,
                };
            }
            // `sort` makes no other op exclusive.
            _ => {}
        }
        Next::Idle
    }

    /// Forgets the conversation (the session and its log go on), and runs the SessionStart hooks for it.
    async fn new_conversation(&mut self) {
        self.session_end_hooks("clear").await;
        // The processes were the old conversation's: the new one could not name them.
        self.shared.processes().stop_all("a new conversation").await;
        self.messages.clear();
        self.shared.write_log(SessionLog::reset);
        self.shared.set_recorded_events(0);
        self.total_usage = Usage::default();
        self.files.forget_all();
        self.checkpoints.forget_conversation();
        self.pending_note = None;
        self.session_start_hooks("clear", &CancellationToken::new()).await;
    }
}

/// Runs `work` (a turn, a requested compaction, hooks) while answering the ops that arrive meanwhile, sorted as
/// always: an interrupt cancels it, a message waits as the next turn, memory ops wait for the end, and what needs the
/// conversation to itself is refused with a word. Returns its output, and whether the agent must stop.
async fn while_busy<F: std::future::Future>(
    shared: &Shared,
    work: F,
    ops: &mut mpsc::UnboundedReceiver<Op>,
    cancel: &CancellationToken,
    waiting: &mut Waiting,
) -> (F::Output, bool) {
    tokio::pin!(work);
    let mut ops_open = true;
    let mut stop = false;
    let output = loop {
        tokio::select! {
            output = &mut work => break output,
            op = ops.recv(), if ops_open => match op.map(|op| sort(shared, op)) {
                Some(Sorted::Done) => {}
                Some(Sorted::Turn(request)) => waiting.turns.push_back(request),
                Some(Sorted::Memory(op)) => waiting.memory.push(op),
                Some(Sorted::Interrupt) => interrupt(shared, Some(cancel)),
                Some(Sorted::Exclusive(op)) => shared.emit(Event::Notice {
                    text: format!(
                        "the agent is busy: {} after it ends (or interrupt it with Esc)",
                        busy_refusal(&op)
                    ),
                }),
                Some(Sorted::Shutdown) => {
                    stop = true;
                    cancel.cancel();
                    shared.interrupt_background();
                }
                None => {
                    // Every frontend is gone: nobody can answer or watch, so stop.
                    ops_open = false;
                    stop = true;
                    cancel.cancel();
                }
            },
        }
    };
    (output, stop)
}
