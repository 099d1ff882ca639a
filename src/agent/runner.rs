//! The agent task: one tokio task per session that owns the conversation. Frontends talk to it only through `Op`s in
//! and `Event`s out (protocol.rs). While a turn runs, the task keeps listening for ops: an interrupt cancels the turn,
//! approvals reach the waiting call, a new user message is queued as the next turn.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::approval::ApprovalGate;
use super::prompt::SystemPrompt;
use super::session::{Limits, Parts, Session};
use super::shared::Shared;
use tern_protocol::{Event, Message, Op, Usage};
use tern_provider::Provider;
use tern_session::{SessionLog, ToolResultStore};
use tern_tools::{PathPolicy, ToolRegistry};

/// Everything a session's agent needs: built with `AgentConfig::new` from what every agent has, and the `with_…`
/// methods for the rest (a new session in memory, 20 model requests a turn and a 200k window unless told otherwise).
pub struct AgentConfig {
    provider: Arc<dyn Provider>,
    tools: ToolRegistry,
    policy: PathPolicy,
    gate: ApprovalGate,
    system_prompt: SystemPrompt,
    limits: Limits,
    results: ToolResultStore,
    history: Vec<Message>,
    history_events: usize,
    history_usage: Usage,
    history_checkpoints: Vec<tern_session::checkpoint::TurnCheckpoint>,
    log: Option<SessionLog>,
    hooks: crate::hooks::Hooks,
    subagents: Option<crate::subagent::SubagentSettings>,
    agents: Vec<crate::subagent::agents::AgentDef>,
    mcp_elicitations: Option<tern_mcp::ElicitationInbox>,
    mcp: Option<Arc<tern_mcp::McpManager>>,
    lsp: Option<Arc<tern_lsp::Servers>>,
    catalog: Option<Arc<tern_provider::models::Catalog>>,
    rules: Option<Arc<dyn crate::approval::RuleStore>>,
    /// Reads ask the frontend for an editor's text (`Event::ReadBuffer`).
    editor_buffers: bool,
    /// Edits are made to the editor's text and written through it (`Event::WriteBuffer`).
    editor_writes: bool,
}

impl AgentConfig {
    /// A new session's agent on `provider`, offering `tools` within `policy`, asking through `gate`, with
    /// `system_prompt` (built from context files and rebuilt as they change, or fixed: `"text".into()`); large tool
    /// results go to `results`. It runs no hooks, offers no subagents, has no MCP servers and keeps no log.
    pub fn new(
        provider: Arc<dyn Provider>,
        tools: ToolRegistry,
        policy: PathPolicy,
        gate: ApprovalGate,
        system_prompt: SystemPrompt,
        results: ToolResultStore,
    ) -> Self {
        Self {
            provider,
            tools,
            policy,
            gate,
            system_prompt,
            limits: Limits {
                max_iterations: 20,
                context_window: 200_000,
                reserve_tokens: 8_000,
                compaction: Default::default(),
            },
            results,
            history: Vec::new(),
            history_events: 0,
            history_usage: Usage::default(),
            history_checkpoints: Vec::new(),
            log: None,
            hooks: Default::default(),
            subagents: None,
            agents: Vec::new(),
            mcp_elicitations: None,
            mcp: None,
            lsp: None,
            catalog: None,
            rules: None,
            editor_buffers: false,
            editor_writes: false,
        }
    }

    /// The tools to offer, for registering or removing one after the configuration is built.
    pub fn tools_mut(&mut self) -> &mut ToolRegistry {
        &mut self.tools
    }

    /// Model requests per turn before the agent must stop and summarise (20 unless set; at least 1).
    pub fn with_max_iterations(mut self, max_iterations: u32) -> Self {
        self.limits.max_iterations = max_iterations;
        self
    }

    /// The model's context window in tokens (200,000 unless set).
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.limits.context_window = tokens;
        self
    }

    /// Tokens kept free for the answer when fitting the prompt into the window (8,000 unless set).
    pub fn with_reserve_tokens(mut self, tokens: u64) -> Self {
        self.limits.reserve_tokens = tokens;
        self
    }

    /// When and how far the conversation is compacted (`Compaction::default()` unless set).
    pub fn with_compaction(mut self, compaction: crate::compact::Compaction) -> Self {
        self.limits.compaction = compaction;
        self
    }

    /// Conversation to continue (a resumed session); empty for a new one.
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self
    }

    /// How many transcript events the resumed session's log holds (0 for a new one).
    pub fn with_history_events(mut self, events: usize) -> Self {
        self.history_events = events;
        self
    }

    /// The token totals of the resumed session so far (zero for a new one).
    pub fn with_history_usage(mut self, usage: Usage) -> Self {
        self.history_usage = usage;
        self
    }

    /// The resumed session's checkpoint records (empty for a new one; see `checkpoint::restorable`): `/undo` and
    /// `/rewind` reach its earlier turns, and turn numbers go on after them.
    pub fn with_history_checkpoints(mut self, checkpoints: Vec<tern_session::checkpoint::TurnCheckpoint>) -> Self {
        self.history_checkpoints = checkpoints;
        self
    }

    /// Where every message is appended as it happens; `None` (unless set) keeps the session in memory only.
    pub fn with_log(mut self, log: Option<SessionLog>) -> Self {
        self.log = log;
        self
    }

    /// The user's hooks (`crate::hooks`); `Hooks::default()` (unless set) runs none.
    pub fn with_hooks(mut self, hooks: crate::hooks::Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// Offer the `spawn` tool with these limits (`agent::subagent`); unless set, no subagents are offered.
    pub fn with_subagents(mut self, settings: crate::subagent::SubagentSettings) -> Self {
        self.subagents = Some(settings);
        self
    }

    /// The custom agents `spawn` offers by name (`subagent::agents::collect`).
    pub fn with_agents(mut self, agents: Vec<crate::subagent::agents::AgentDef>) -> Self {
        self.agents = agents;
        self
    }

    /// Where the session's MCP servers' requests for input arrive (`McpManager::start_with`); each is shown as
    /// `Event::Elicitation` and answered by `Op::Elicit`. Unless set, no server can ask.
    pub fn with_mcp_elicitations(mut self, inbox: tern_mcp::ElicitationInbox) -> Self {
        self.mcp_elicitations = Some(inbox);
        self
    }

    /// The session's MCP servers (`None` unless set): their tools are offered with the configured ones, their states
    /// told to the frontends (`Event::McpServers`), what the user does to them (`/mcp`, prompts, resources) done, and
    /// they end with the session.
    pub fn with_mcp(mut self, mcp: Option<Arc<tern_mcp::McpManager>>) -> Self {
        self.mcp = mcp;
        self
    }

    /// The model catalog, which says which models accept images a user attaches (without it, none does).
    pub fn with_catalog(mut self, catalog: Arc<tern_provider::models::Catalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// The session's language servers: after an edit, the diagnostics of the files it wrote come back with its
    /// result (`calls/diagnostics.rs`).
    pub fn with_lsp(mut self, lsp: Option<Arc<tern_lsp::Servers>>) -> Self {
        self.lsp = lsp;
        self
    }

    /// Reads ask the frontend for the editor's text of a file (`Event::ReadBuffer`, answered by `Op::BufferText`):
    /// for `tern acp`, when the editor offers it. The path policy and the gate still decide every read.
    pub fn with_editor_buffers(mut self, offered: bool) -> Self {
        self.editor_buffers = offered;
        self
    }

    /// With the editor's buffers offered: the edit tools edit the editor's text of a file and give it the new text
    /// (`Event::WriteBuffer`, answered by `Op::BufferWritten`) instead of writing the disk; for `tern acp`, when the
    /// editor offers `fs/write_text_file`. The path policy, the gate and the checkpoints still see every write.
    pub fn with_editor_writes(mut self, offered: bool) -> Self {
        self.editor_writes = offered;
        self
    }

    /// Where "always" answers that save their rules write them (`None` unless set: they hold for the session).
    pub fn with_rule_store(mut self, rules: Arc<dyn crate::approval::RuleStore>) -> Self {
        self.rules = Some(rules);
        self
    }
}

/// The frontend's ends of the agent's channels.
pub struct AgentHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Starts the agent task.
pub fn spawn(config: AgentConfig) -> AgentHandle {
    let (op_tx, op_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    AgentHandle {
        ops: op_tx,
        events: ev_rx,
        task: tokio::spawn(run(config, op_rx, ev_tx)),
    }
}

/// The agent of `config` on channels made beforehand: a frontend can take ops and show events before the session is
/// ready (a long resume), and the ops sent meanwhile wait in the channel.
pub async fn run(config: AgentConfig, op_rx: mpsc::UnboundedReceiver<Op>, ev_tx: mpsc::UnboundedSender<Event>) {
    // Checkpoints live next to the session log (`<data>/sessions/<id>/`).
    let mut checkpoints = super::checkpoint::Checkpoints::new(
        config.log.as_ref().and_then(|log| log.path().parent()),
        config.policy.root(),
    );
    checkpoints.restore(config.history_checkpoints);
    let shared = Shared::start(
        config.gate,
        ev_tx,
        (config.log, config.history_events),
        config.mcp,
        (config.mcp_elicitations, config.hooks.clone()),
        config.rules,
        config.lsp,
    );
    if config.editor_buffers {
        shared.offer_buffers(config.editor_writes);
    }
    let log = Arc::clone(&shared);
    checkpoints.record_to(move |record| log.write_log(|log| log.checkpoint(record)));
    let policy = Arc::new(config.policy);
    let mut tools = config.tools;
    // The model's tools on the processes `exec` starts in the background, over the session's table.
    for tool in tern_tools::processes::tools(shared.processes()) {
        tools.register(tool);
    }
    // The session's MCP servers offer their tools as they connect: one registration, as `mcp`.
    if let Some(mcp) = shared.mcp() {
        tools.add_source(Arc::clone(mcp) as _);
    }
    let subagents = config.subagents.filter(|s| s.enabled).map(|settings| {
        super::subagent::SubagentManager::attach(
            &mut tools,
            super::subagent::Parent {
                shared: Arc::clone(&shared),
                provider: Arc::clone(&config.provider),
                policy: Arc::clone(&policy),
                results: config.results.clone(),
                settings,
                limits: config.limits,
                hooks: config.hooks.for_subagent(),
                agents: config.agents.clone(),
            },
        )
    });
    let session = Session::new(Parts {
        provider: config.provider,
        tools,
        policy,
        prompt: config.system_prompt,
        limits: config.limits,
        results: config.results,
        shared,
        checkpoints,
        hooks: config.hooks,
    })
    .with_history(config.history, config.history_usage)
    .with_subagents(subagents)
    .with_catalog(config.catalog);
    session.run(op_rx).await;
}
