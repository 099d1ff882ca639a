//! The session: one long-lived agent per conversation, owned by its task (`runner::run`). It serves the frontends'
//! ops (`ops.rs`), runs turns (`turn.rs`: a `Turn` borrows the session for one run of the loop), and owns the
//! components a session is made of: the conversation and its measure, the system prompt and memory (`memory.rs`),
//! checkpoints (`undo.rs`), compaction (`compacting.rs`), the pending review (`reviewing.rs`), the subagents
//! (`reports.rs`), the hooks (`hooks.rs`) and the MCP servers' user-side operations (`mcp.rs`). Its fields are private
//! to this module: what a tool call needs, it lends to the call pipeline (`crate::calls::Pipeline`) for one step.

mod command;
mod compacting;
mod hooks;
mod images;
mod mcp;
mod memory;
mod ops;
mod processes;
mod reports;
mod reviewing;
mod turn;
mod undo;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use self::turn::Turn;
use crate::calls::Pipeline;
use crate::checkpoint::Checkpoints;
use crate::compact::{Compaction, ContextMeter};
use crate::conversation::Conversation;
use crate::hooks::HookEvent;
use crate::prompt::SystemPrompt;
use crate::review::PendingReview;
use crate::shared::Shared;
use crate::subagent::SubagentManager;
use tern_protocol::{Event, Message, TurnEnd, Usage};
use tern_provider::Provider;
use tern_session::ToolResultStore;
use tern_tools::{FileTracker, PathPolicy, ToolRegistry};

/// How far a session's turns and prompts may go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Model requests per turn before the model must stop and summarise (at least 1).
    pub max_iterations: u32,
    /// The model's context window in tokens.
    pub context_window: u64,
    /// Tokens kept free for the answer when fitting the prompt into the window.
    pub reserve_tokens: u64,
    /// When and how far the conversation is compacted.
    pub compaction: Compaction,
}

/// What a session is made of; the rest (the conversation, its measure, the turn count, a pending review or note)
/// starts empty and is the session's own.
pub(crate) struct Parts {
    pub provider: Arc<dyn Provider>,
    pub tools: ToolRegistry,
    pub policy: Arc<PathPolicy>,
    pub prompt: SystemPrompt,
    pub limits: Limits,
    pub results: ToolResultStore,
    pub shared: Arc<Shared>,
    pub checkpoints: Checkpoints,
    pub hooks: crate::hooks::Hooks,
}

/// One conversation's agent: the op loop, its turns, and the components it owns.
pub(crate) struct Session {
    provider: Arc<dyn Provider>,
    tools: ToolRegistry,
    policy: Arc<PathPolicy>,
    /// What the model has read of each file this session, for the edit tools' staleness check.
    files: Arc<FileTracker>,
    /// The text sent as the system prompt: `prompt.text`, kept apart so a request borrows it as it is.
    system_prompt: String,
    /// What the system prompt is built from, for memory and `/context`.
    prompt: SystemPrompt,
    limits: Limits,
    /// The prompt's size as last measured (see `compacting.rs`).
    meter: ContextMeter,
    results: ToolResultStore,
    messages: Conversation,
    /// A resumed session's messages until the task starts and makes them the conversation.
    history: Vec<Message>,
    total_usage: Usage,
    turn: u64,
    shared: Arc<Shared>,
    /// File checkpoints and work-tree snapshots per turn, for `/undo` and `/rewind`.
    checkpoints: Checkpoints,
    /// Told to the model with the next user message (the user undid its changes, a hook's session context).
    pending_note: Option<String>,
    hooks: crate::hooks::Hooks,
    /// The session's subagents, when the `spawn` tool is offered.
    subagents: Option<Arc<SubagentManager>>,
    /// The `/review` waiting for the user's answer.
    review: Option<PendingReview>,
    /// A model for this agent's requests over the session's: a custom agent's, or a custom command's for its turn.
    turn_model: Option<String>,
    /// Which models accept images (`None`: none is sent any).
    catalog: Option<Arc<tern_provider::models::Catalog>>,
    /// The custom agent a subagent runs as, named to its SubagentStart and SubagentStop hooks (`None`: the default
    /// subagent, `general-purpose` as Claude Code calls it).
    agent_type: Option<String>,
}

impl Session {
    /// A session of `parts`, with an empty conversation.
    pub(crate) fn new(parts: Parts) -> Self {
        let Parts {
            provider,
            tools,
            policy,
            prompt,
            limits,
            results,
            shared,
            checkpoints,
            hooks,
        } = parts;
        Self {
            provider,
            tools,
            policy,
            files: Arc::new(FileTracker::default()),
            system_prompt: prompt.text.clone(),
            prompt,
            limits: Limits {
                max_iterations: limits.max_iterations.max(1),
                ..limits
            },
            meter: Default::default(),
            results,
            messages: Default::default(),
            history: Vec::new(),
            total_usage: Usage::default(),
            // After a resumed session's turns: their checkpoints keep their numbers.
            turn: checkpoints.last_turn(),
            shared,
            checkpoints,
            pending_note: None,
            hooks,
            subagents: None,
            review: None,
            turn_model: None,
            catalog: None,
            agent_type: None,
        }
    }

    /// Continues a resumed conversation of `history` that has spent `usage` so far. It is repaired (every call
    /// answered) when the op loop starts, not here: a resumed day's session takes milliseconds, which the frontend's
    /// first frame need not wait for.
    pub(crate) fn with_history(mut self, history: Vec<Message>, usage: Usage) -> Self {
        self.history = history;
        self.total_usage = usage;
        self
    }

    /// Runs on `model` (`None`: the session's), a custom agent's choice, over the model chosen for the session.
    pub(crate) fn with_model(mut self, model: Option<String>) -> Self {
        self.turn_model = model;
        self
    }

    /// Runs as the custom agent `name` (a subagent's), as its hooks are told.
    pub(crate) fn with_agent_type(mut self, name: Option<String>) -> Self {
        self.agent_type = name;
        self
    }

    /// The subagent type this session's SubagentStart and SubagentStop hooks are told.
    pub(crate) fn agent_type(&self) -> &str {
        self.agent_type.as_deref().unwrap_or(crate::hooks::SUBAGENT_TYPE)
    }

    /// Offers subagents through `manager` (its `spawn` tool is already among the session's tools).
    pub(crate) fn with_subagents(mut self, manager: Option<Arc<SubagentManager>>) -> Self {
        self.subagents = manager;
        self
    }

    /// What a tool call needs of the session, lent for one step's calls.
    fn pipeline(&self) -> Pipeline<'_> {
        Pipeline::new(
            &self.tools,
            &self.policy,
            &self.files,
            &self.results,
            &self.shared,
            &self.hooks,
            &self.checkpoints,
        )
    }

    /// Runs one turn and always leaves a conversation the API accepts.
    pub(crate) async fn run_turn(&mut self, text: String, cancel: CancellationToken) -> TurnEnd {
        self.run_turn_of(text, None, cancel, true).await
    }

    /// A turn on subagent reports: like a message, but models wrote it, so it attaches no images.
    pub(crate) async fn run_report_turn(&mut self, text: String, cancel: CancellationToken) -> TurnEnd {
        self.run_turn_of(text, None, cancel, false).await
    }

    /// A turn on `text`; a custom command's (`command`) has its `` !`cmd` `` and `@path` filled in first. The `@`
    /// images of `text` are attached only when the user wrote it (`from_user`).
    async fn run_turn_of(
        &mut self,
        text: String,
        command: Option<tern_protocol::CommandTurn>,
        cancel: CancellationToken,
        from_user: bool,
    ) -> TurnEnd {
        self.turn += 1;
        let (messages, events) = (self.messages.len(), self.shared.recorded_events());
        self.shared.emit(Event::TurnStarted {
            turn: self.turn,
            text: text.clone(),
        });
        let context = match self.prompt_hooks(&text, &cancel).await {
            Ok(context) => context,
            Err(end) => return end,
        };
        let attachments = self.mcp_attachments(&text, &cancel).await;
        // Only the user's own words attach images, not what hooks, resources or a command's files add.
        let attaching = if from_user { text.as_str() } else { "" };
        let images = match self.attached_images(attaching).await {
            Ok(images) => images,
            Err(message) => {
                self.shared.emit(Event::Error {
                    message: message.clone(),
                });
                return TurnEnd::Error { message };
            }
        };
        for (chip, _) in &images {
            self.shared.emit(Event::Notice {
                text: format!("attached {chip}"),
            });
        }
        // The work tree as it is before the model touches it (after the user's message shows).
        if let Some(text) = self.checkpoints.begin_turn(self.turn, &text, messages, events).await {
            self.shared.emit(Event::Notice { text });
        }
        let text = match command {
            Some(command) => match self.fill(&command, &text, &cancel).await {
                Ok(text) => text,
                Err(end) => {
                    if let Some(text) = self.checkpoints.end_turn().await {
                        self.shared.emit(Event::Notice { text });
                    }
                    self.shared.forget_closed_approvals();
                    return end;
                }
            },
            None => text,
        };
        let content = match self.pending_note.take() {
            Some(note) => format!("{note}\n\n{text}"),
            None => text,
        };
        let content = match context {
            Some(context) => format!("{content}\n\n{context}"),
            None => content,
        };
        let content = tern_mcp::resources::with_attachments(content, &attachments);
        self.push_message(Message::User {
            content,
            images: images.into_iter().map(|(_, image)| image).collect(),
        });
        let end = Turn::new(self, &cancel).run().await;
        let end = self.stop_hooks(HookEvent::Stop, end, &cancel).await;
        if let Some(text) = self.checkpoints.end_turn().await {
            self.shared.emit(Event::Notice { text });
        }
        // Whatever happened, every call the model made has an answer before the next request.
        self.messages.ensure_valid();
        // This turn's prompts are over (their receivers are gone); a background subagent's may still wait.
        self.shared.forget_closed_approvals();
        end
    }

    /// A subagent's one turn on `task`: the task as the user message, the turn loop, a conversation left valid.
    /// Returns how it ended, its last answer (its report) and the tokens it spent.
    pub(crate) async fn run_task(
        &mut self,
        task: &str,
        cancel: &CancellationToken,
    ) -> (TurnEnd, Option<String>, Usage) {
        self.turn = 1;
        self.shared.emit(Event::TurnStarted {
            turn: 1,
            text: task.to_string(),
        });
        let content = self.subagent_start_hooks(task, cancel).await;
        self.push_message(Message::User {
            content,
            images: Vec::new(),
        });
        let end = Turn::new(self, cancel).run().await;
        let end = self.stop_hooks(HookEvent::SubagentStop, end, cancel).await;
        self.messages.ensure_valid();
        self.shared.emit(Event::TurnFinished { reason: end.clone() });
        (end, last_answer(&self.messages), self.total_usage)
    }

    /// Counts the tokens one request used (`usage`) and tells the frontends, with the session's total and the
    /// prompt's measure (`context`) when the request was one of the conversation's.
    fn spent(&mut self, usage: Usage, context: Option<u64>) {
        self.total_usage.input_tokens += usage.input_tokens;
        self.total_usage.output_tokens += usage.output_tokens;
        self.total_usage.cache_read_tokens += usage.cache_read_tokens;
        self.total_usage.cache_write_tokens += usage.cache_write_tokens;
        self.shared.emit(Event::TokenUsage {
            last: usage,
            total: self.total_usage,
            context,
        });
    }

    /// Adds a message to the conversation and appends it to the session log.
    fn push_message(&mut self, message: Message) {
        self.shared.write_log(|log| log.record(&message));
        self.messages.push(message);
    }

    /// Replaces messages `from..to` of the conversation with `with` (compaction), and records it in the session log,
    /// which keeps the originals.
    fn replace_messages(&mut self, from: usize, to: usize, with: Vec<Message>) {
        let to = to.min(self.messages.len());
        let from = from.min(to);
        self.shared.write_log(|log| log.replace(from, to, &with));
        self.checkpoints.messages_replaced(from, to, with.len());
        self.messages.replace(from, to, with);
        // The measured prompt no longer matches the conversation.
        self.meter.invalidate();
    }
}

/// The last thing the model said: a subagent's report.
fn last_answer(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        Message::Assistant { content, .. } if !content.trim().is_empty() => Some(content.trim().to_string()),
        _ => None,
    })
}
