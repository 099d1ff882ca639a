//! The state a session's agents share between the op loop and the running turn: the approval gate, the questions
//! waiting for the user, the model chosen during the session, the event channel and the session log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalGate, CommandRule, RuleStore, SaveTo};

use tern_protocol::{ApprovalDecision, ElicitationAnswer, Event};
use tern_session::SessionLog;
use tern_tools::processes::ProcessTable;

/// State shared between the op loop and the running turn. Locks are held only for a map insert, a mode read or one
/// line written to the session log. A subagent's `Shared` holds the same gate, questions waiting for the user and
/// model as its parent's (`child`): one gate and one set of "always" answers per session.
pub(crate) struct Shared {
    gate: Arc<Mutex<ApprovalGate>>,
    /// The questions waiting for the user, and the next id to give one.
    questions: Arc<Mutex<Questions>>,
    /// A model chosen during the session, replacing the configured one.
    model: Arc<Mutex<Option<String>>>,
    events: mpsc::UnboundedSender<Event>,
    record: Arc<Mutex<Recorder>>,
    /// The main agent's log, where "always" rules are recorded whichever agent asked (a subagent's own log is not
    /// what a resume reads them from).
    session_record: Arc<Mutex<Recorder>>,
    /// Cancelled by an interrupt or shutdown, then replaced: work that outlives a turn (subagents started without
    /// waiting) runs under a child of it.
    background: Mutex<CancellationToken>,
    /// The session's MCP servers, for what the user does to them (`Op::McpServer`, `Op::McpPrompt`).
    mcp: Option<Arc<tern_mcp::McpManager>>,
    /// Where "always" answers that save their rules write them; `None`: they hold for the session only.
    rules: Option<Arc<dyn RuleStore>>,
    /// The session's language servers (one per language, shared with its subagents); `None`: no diagnostics.
    lsp: Option<Arc<tern_lsp::Servers>>,
    /// The session's live processes (shared with its subagents); their events go out through the main agent's `emit`.
    processes: ProcessTable,
    /// The main agent's state (a subagent's is not): the one told of processes' exits.
    main: bool,
}

/// The questions the session's agents wait on the user for: approvals and MCP servers' requests for input, by the id
/// of their event. The ids are unique across the session's agents; one lock gives an id and keeps its waiter.
struct Questions {
    next_id: u64,
    approvals: HashMap<u64, oneshot::Sender<ApprovalDecision>>,
    /// MCP servers' requests for input waiting for the user, by the id of their `Event::Elicitation`.
    elicitations: HashMap<u64, oneshot::Sender<ElicitationAnswer>>,
    /// Reads waiting for the editor's text, by the id of their `Event::ReadBuffer`.
    buffers: HashMap<u64, oneshot::Sender<Option<String>>>,
    /// Edits waiting for the editor to write their text, by the id of their `Event::WriteBuffer`.
    writes: HashMap<u64, oneshot::Sender<Result<(), String>>>,
    /// The frontend offered an editor's buffers: reads ask it (`buffers.rs`).
    editor: bool,
    /// The editor also takes writes: the edit tools edit its text and write through it.
    editor_writes: bool,
}

impl Default for Questions {
    fn default() -> Self {
        Self {
            next_id: 1,
            approvals: HashMap::new(),
            elicitations: HashMap::new(),
            buffers: HashMap::new(),
            writes: HashMap::new(),
            editor: false,
            editor_writes: false,
        }
    }
}

impl Questions {
    fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }
}

/// The session log and how many transcript events it holds since the conversation began (what a rewind keeps).
struct Recorder {
    /// `None` keeps the session in memory only (no log, or writing it failed).
    log: Option<SessionLog>,
    events: usize,
}

impl Shared {
    /// The state of a session's main agent: `gate` decides its calls, events go to `events`, the log to `log` (which
    /// holds `logged` transcript events so far). The frontends are told `mcp`'s server states as they change, and its
    /// servers' requests for input (`elicitations`) are shown to them, each told to the Notification hooks of `hooks`
    /// (`elicitation_dialog`) too.
    pub(crate) fn start(
        gate: ApprovalGate,
        events: mpsc::UnboundedSender<Event>,
        (log, logged): (Option<SessionLog>, usize),
        mcp: Option<Arc<tern_mcp::McpManager>>,
        (elicitations, hooks): (Option<tern_mcp::ElicitationInbox>, crate::hooks::Hooks),
        rules: Option<Arc<dyn RuleStore>>,
        lsp: Option<Arc<tern_lsp::Servers>>,
    ) -> Arc<Shared> {
        let record = Arc::new(Mutex::new(Recorder { log, events: logged }));
        let shared = Arc::new(Shared {
            gate: Arc::new(Mutex::new(gate)),
            questions: Arc::default(),
            model: Arc::default(),
            events,
            session_record: Arc::clone(&record),
            record,
            background: Mutex::default(),
            mcp,
            rules,
            lsp,
            processes: ProcessTable::new(),
            main: true,
        });
        let weak = Arc::downgrade(&shared);
        shared.processes.set_events(Arc::new(move |event| {
            if let Some(shared) = weak.upgrade() {
                shared.emit(event);
            }
        }));
        if let Some(inbox) = elicitations {
            forward_elicitations(inbox, Arc::downgrade(&shared), hooks);
        }
        if let Some(mcp) = &shared.mcp {
            forward_server_states(mcp.subscribe(), Arc::downgrade(&shared));
        }
        shared
    }

    /// The state of a subagent of this agent: the same gate, questions and model; its own events and log.
    pub(crate) fn child(&self, events: mpsc::UnboundedSender<Event>, log: Option<SessionLog>) -> Shared {
        Shared {
            gate: Arc::clone(&self.gate),
            questions: Arc::clone(&self.questions),
            model: Arc::clone(&self.model),
            events,
            record: Arc::new(Mutex::new(Recorder { log, events: 0 })),
            session_record: Arc::clone(&self.session_record),
            background: Mutex::new(CancellationToken::new()),
            mcp: self.mcp.clone(),
            rules: self.rules.clone(),
            lsp: self.lsp.clone(),
            processes: self.processes.clone(),
            main: false,
        }
    }

    /// The session's live processes.
    pub(crate) fn processes(&self) -> &ProcessTable {
        &self.processes
    }

    /// The notes on processes that exited since the model was last told, for the main agent's next request (a
    /// subagent gets none: they are the main agent's to read).
    pub(crate) fn process_exits(&self) -> Vec<String> {
        if self.main {
            self.processes.take_exits()
        } else {
            Vec::new()
        }
    }

    /// `f` done with the session's approval gate; `None` when the gate is unavailable (a panic poisoned it).
    pub(crate) fn with_gate<R>(&self, f: impl FnOnce(&mut ApprovalGate) -> R) -> Option<R> {
        self.gate.lock().ok().map(|mut gate| f(&mut gate))
    }

    /// The gate's mode now.
    pub(crate) fn mode(&self) -> tern_protocol::ApprovalMode {
        self.with_gate(|g| g.mode()).unwrap_or_default()
    }

    /// The model chosen during the session, if one was.
    pub(crate) fn model(&self) -> Option<String> {
        self.model.lock().ok().and_then(|m| m.clone())
    }

    /// The session's MCP servers, if it has any.
    pub(crate) fn mcp(&self) -> Option<&Arc<tern_mcp::McpManager>> {
        self.mcp.as_ref()
    }

    /// The session's language servers, when it has them.
    pub(crate) fn lsp(&self) -> Option<&Arc<tern_lsp::Servers>> {
        self.lsp.as_ref()
    }

    /// A new approval question: its id (unique across the session's agents), and where the user's answer arrives.
    pub(crate) fn new_approval(&self) -> (u64, oneshot::Receiver<ApprovalDecision>) {
        let (tx, rx) = oneshot::channel();
        let mut questions = self.questions.lock().unwrap_or_else(PoisonError::into_inner);
        let id = questions.next_id();
        questions.approvals.insert(id, tx);
        (id, rx)
    }

    /// A token for background work, cancelled by the next interrupt or shutdown.
    pub(crate) fn background_token(&self) -> CancellationToken {
        self.background.lock().map(|t| t.child_token()).unwrap_or_default()
    }

    /// Stops the background work running now; work started later gets a fresh token.
    pub(crate) fn interrupt_background(&self) {
        if let Ok(mut token) = self.background.lock() {
            std::mem::take(&mut *token).cancel();
        }
    }
    /// Sends an event to the frontend, and records it in the session log when a resumed session must show it.
    pub(crate) fn emit(&self, event: Event) {
        if recorded(&event) {
            let at = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            self.write_log(|log| log.event(at, &event));
            if let Ok(mut record) = self.record.lock() {
                record.events += 1;
            }
        }
        let _ = self.events.send(event);
    }

    /// Writes to the session log. A log that cannot be written is reported once and then left alone: the session
    /// goes on in memory.
    pub(crate) fn write_log(&self, write: impl FnOnce(&mut SessionLog) -> std::io::Result<()>) {
        self.write_to(&self.record, write);
    }

    /// Saves `rules` where `to` says (see `RuleStore`).
    pub(crate) fn save_rules(&self, to: SaveTo, rules: &[CommandRule]) -> Result<String, String> {
        match &self.rules {
            Some(store) => store.save(to, rules),
            None => Err("this session has nowhere to save rules".to_string()),
        }
    }

    /// Records an "always for this session" rule in the session's (the main agent's) log.
    pub(crate) fn record_grant(&self, rule: &tern_session::log::Granted) {
        self.write_to(&self.session_record, |log| log.granted(rule));
    }

    fn write_to(&self, recorder: &Mutex<Recorder>, write: impl FnOnce(&mut SessionLog) -> std::io::Result<()>) {
        let failed = {
            let Ok(mut record) = recorder.lock() else {
                return;
            };
            let Some(log) = record.log.as_mut() else {
                return;
            };
            match write(log) {
                Ok(()) => None,
                Err(e) => {
                    let path = log.path().display().to_string();
                    record.log = None;
                    Some(format!(
                        "cannot write the session log {path}: {e}; this session will not be resumable"
                    ))
                }
            }
        };
        // Sent after the lock is gone: the notice itself is recorded through `emit`.
        if let Some(text) = failed {
            let _ = self.events.send(Event::Notice { text });
        }
    }

    /// How many transcript events the log holds for the current conversation.
    pub(crate) fn recorded_events(&self) -> usize {
        self.record.lock().map(|r| r.events).unwrap_or(0)
    }

    /// The log now holds `events` transcript events for the current conversation (after a reset or a rewind).
    pub(crate) fn set_recorded_events(&self, events: usize) {
        if let Ok(mut record) = self.record.lock() {
            record.events = events;
        }
    }

    /// The directory of the session log; `None` when the session has none.
    pub(crate) fn log_dir(&self) -> Option<std::path::PathBuf> {
        let record = self.record.lock().ok()?;
        Some(record.log.as_ref()?.path().parent()?.to_path_buf())
    }
}

/// Events a resumed session replays: what the transcript showed, without the deltas it was streamed in.
fn recorded(event: &Event) -> bool {
    matches!(
        event,
        Event::TurnStarted { .. }
            | Event::AssistantMessage { .. }
            | Event::ToolCallBegin { .. }
            | Event::ToolCallEnd { .. }
            | Event::ApprovalRequest(_)
            | Event::TokenUsage { .. }
            | Event::Notice { .. }
            | Event::Error { .. }
            | Event::TurnFinished { .. }
            | Event::ModeChanged { .. }
            | Event::ModelChanged { .. }
            | Event::ApprovalDecided { .. }
            | Event::PlanUpdated { .. }
            | Event::SubagentStarted { .. }
            | Event::SubagentFinished { .. }
            | Event::SubagentDelivered { .. }
            | Event::ReviewApplied { .. }
            | Event::ProcessStarted { .. }
            | Event::ProcessExited { .. }
    ) || recorded_in_parent(event)
}

/// The tagged subagent events the main agent's log keeps, besides `SubagentStarted`/`Finished`/`Delivered`: tokens
/// (session totals and the pane's step count after a resume) and prompts (so an answer recorded later says what it
/// answered). The rest is in the subagent's own log.
pub(crate) fn recorded_in_parent(event: &Event) -> bool {
    matches!(event, Event::Subagent { inner, .. }
        if matches!(**inner, Event::TokenUsage { .. } | Event::ApprovalRequest(_)))
}

impl Shared {
    /// Changes the gate's mode, and records the change so a resumed session knows it (and what it does not restore).
    pub(crate) fn set_mode(&self, mode: tern_protocol::ApprovalMode) {
        self.with_gate(|gate| gate.set_mode(mode));
        self.emit(Event::ModeChanged { mode });
    }

    /// Switches the model, and records it so a resumed session continues on it.
    pub(crate) fn set_model(&self, model: String) {
        if let Ok(mut current) = self.model.lock() {
            *current = Some(model.clone());
        }
        self.emit(Event::ModelChanged { model });
    }

    /// The user's answer to approval question `id`.
    pub(crate) fn answer(&self, id: u64, decision: ApprovalDecision) {
        let waiter = self.questions.lock().ok().and_then(|mut q| q.approvals.remove(&id));
        match waiter {
            Some(tx) => {
                // Recorded before the call runs: a crash while it runs still shows how the user answered.
                self.emit(Event::ApprovalDecided {
                    id,
                    decision: decision.clone(),
                });
                let _ = tx.send(decision);
            }
            None => self.emit(Event::Notice {
                text: format!("approval {id} is no longer pending"),
            }),
        }
    }

    /// Forgets the approval questions nobody waits on any more (a turn's, once it is over).
    pub(crate) fn forget_closed_approvals(&self) {
        if let Ok(mut questions) = self.questions.lock() {
            questions.approvals.retain(|_, waiter| !waiter.is_closed());
        }
    }

    /// The user's answer to an MCP server's request for input `id`.
    pub(crate) fn answer_elicitation(&self, id: u64, answer: ElicitationAnswer) {
        let waiter = self.questions.lock().ok().and_then(|mut q| q.elicitations.remove(&id));
        match waiter {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            None => self.emit(Event::Notice {
                text: format!("the request for input {id} is no longer pending"),
            }),
        }
    }

    /// An interrupt cancels every request for input still waiting (the server hears "cancel").
    pub(crate) fn cancel_elicitations(&self) {
        if let Ok(mut questions) = self.questions.lock() {
            for (_, tx) in questions.elicitations.drain() {
                let _ = tx.send(ElicitationAnswer::Cancel);
            }
        }
    }
}

/// The Notification hooks for an MCP server's request for input (`elicitation_dialog`), run beside it: the request
/// does not wait for them.
fn elicitation_hooks(hooks: &crate::hooks::Hooks, shared: &Arc<Shared>, server: &str, message: &str) {
    const KIND: &str = "elicitation_dialog";
    if !hooks.wants(crate::hooks::HookEvent::Notification, KIND) {
        return;
    }
    let (hooks, shared) = (hooks.clone(), Arc::downgrade(shared));
    let message = format!("MCP server {server} asks for your input: {message}");
    tokio::spawn(async move {
        let notify = move |text| {
            if let Some(shared) = shared.upgrade() {
                shared.emit(Event::Notice { text });
            }
        };
        let cancel = CancellationToken::new();
        hooks
            .tell(
                crate::hooks::HookEvent::Notification,
                KIND,
                Some(&message),
                &cancel,
                &notify,
            )
            .await;
    });
}

/// Tells the frontends the MCP servers' states (`Event::McpServers`): as they are now, then at each change, until the
/// session or the servers are gone.
fn forward_server_states(
    mut states: tokio::sync::watch::Receiver<Vec<tern_protocol::mcp::ServerStatus>>,
    shared: std::sync::Weak<Shared>,
) {
    tokio::spawn(async move {
        loop {
            let servers = states.borrow_and_update().clone();
            let Some(shared) = shared.upgrade() else { break };
            shared.emit(Event::McpServers { servers });
            drop(shared);
            if states.changed().await.is_err() {
                break;
            }
        }
    });
}

/// Shows each MCP server's request for input to the frontend, keeping its reply channel until `Op::Elicit` answers;
/// the Notification hooks hear of it (`elicitation_dialog`), as of an approval that waits.
fn forward_elicitations(
    mut inbox: tern_mcp::ElicitationInbox,
    shared: std::sync::Weak<Shared>,
    hooks: crate::hooks::Hooks,
) {
    tokio::spawn(async move {
        while let Some(request) = inbox.recv().await {
            let Some(shared) = shared.upgrade() else { break };
            let id = {
                let mut questions = shared.questions.lock().unwrap_or_else(PoisonError::into_inner);
                let id = questions.next_id();
                questions.elicitations.insert(id, request.reply);
                id
            };
            elicitation_hooks(&hooks, &shared, &request.server, &request.message);
            shared.emit(Event::Elicitation {
                id,
                server: request.server,
                message: request.message,
                schema: request.schema,
            });
        }
    });
}

mod buffers;
#[cfg(test)]
mod tests;
