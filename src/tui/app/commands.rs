//! The slash commands: what each one does when the user runs it (`/help` lists them). A custom command (a prompt
//! file) or an MCP server's prompt is sent as the user's message.

use super::{App, ApprovalMode};
use crate::history::HistoryLayer;
use crate::state::Level;
use crate::view::transcript::TranscriptView;
use tern_protocol::Op;

impl App {
    /// Runs slash command `name` with `args`.
    pub(super) fn command(&mut self, name: &str, args: &str) {
        match name {
            "help" => self.open_help(),
            "trust" => match self.host.trust_offer() {
                Some(offer) => self
                    .layers
                    .push(Box::new(crate::view::trust::TrustLayer::new(offer, self.host.clone()))),
                None => self.state.notice(
                    "nothing to trust: this project has no configuration of its own",
                    Level::Info,
                ),
            },
            "quit" | "exit" => self.quit = true,
            "history" => self.layers.push(Box::new(HistoryLayer::new())),
            "mcp" => self
                .layers
                .push(Box::new(crate::view::mcp::McpLayer::new(self.mcp.clone()))),
            "diff" => self.open_diff(true),
            "ps" => self.layers.push(Box::new(crate::view::ps::ProcessesLayer::new())),
            "remember" => match crate::memory::remember_command(args) {
                Ok(op) => self.send(op),
                Err(usage) => self.state.notice(usage, Level::Error),
            },
            "init" => self.submit(tern_commands::INIT_PROMPT.trim_end().to_string()),
            "context" => match crate::memory::context_command(args) {
                Ok(op) => self.send(op),
                Err(usage) => self.state.notice(usage, Level::Error),
            },
            "clear" => {
                self.state.cells.clear();
                self.transcript = TranscriptView::new();
            }
            "compact" => self.compact(args),
            "new" => self.new_conversation(),
            "undo" | "rewind" | "review" if self.state.status.busy => {
                self.state
                    .flash("a turn is running: wait for it to end, or interrupt it (Esc) first");
            }
            "undo" => self.send(Op::Undo { force: false }),
            "rewind" => self.send(Op::ListRewindPoints),
            "review" => self.review(args),
            "mode" => self.mode(args),
            "model" => self.model(args),
            "resume" | "fork" if self.state.status.busy => {
                self.state.flash("wait for the turn to end, or interrupt it first");
            }
            "resume" => {
                let sessions = self.host.sessions();
                self.layers
                    .push(Box::new(crate::picker::PickerLayer::new(sessions, self.host.clone())));
            }
            "fork" => self.switch = Some(crate::host::SessionSwitch::Fork),
            "export" => self.export = Some(args.to_string()),
            other if other.starts_with(tern_protocol::mcp::COMMAND_PREFIX) => self.mcp_prompt(other, args),
            other => self.custom_command(other, args),
        }
    }

    /// `/compact [focus]`: asks the agent to compact the conversation, not while a turn runs.
    fn compact(&mut self, args: &str) {
        if self.state.status.busy {
            self.state.flash("a turn is running; /compact after it ends");
            return;
        }
        let focus = Some(args.trim().to_string()).filter(|f| !f.is_empty());
        self.send(Op::Compact { focus });
        self.state.flash("compacting the conversation…");
    }

    /// `/new`: starts a new conversation with an empty transcript, plan and token count, not while a turn runs.
    fn new_conversation(&mut self) {
        if self.state.status.busy {
            self.state.flash("wait for the turn to end, or interrupt it first");
            return;
        }
        self.send(Op::NewConversation);
        self.state.forget_usage();
        self.state.cells.clear();
        self.state.clear_plan();
        self.transcript = TranscriptView::new();
        self.state.flash("new conversation");
    }

    /// `/review [turn|session]`: the review of the edits since then, or without an argument, the choice of when.
    fn review(&mut self, args: &str) {
        match args.trim() {
            "" => self
                .layers
                .push(Box::new(crate::view::review::ReviewChooseLayer::new())),
            "turn" => self.send(Op::ReviewStart {
                since: tern_protocol::ReviewSince::Turn,
            }),
            "session" => self.send(Op::ReviewStart {
                since: tern_protocol::ReviewSince::Session,
            }),
            other => self.state.notice(
                format!("unknown /review '{other}': expected /review, /review turn or /review session"),
                Level::Error,
            ),
        }
    }

    /// `/mode [MODE]`: sets the approval mode, or without an argument, says which it is.
    fn mode(&mut self, args: &str) {
        if args.is_empty() {
            let mode = self.state.status.mode;
            self.state.notice(
                format!("mode: {mode} (set with /mode {})", tern_protocol::ApprovalMode::NAMES),
                Level::Info,
            );
            return;
        }
        match args.parse::<ApprovalMode>() {
            Ok(mode) => {
                self.send(Op::SetApprovalMode { mode });
                self.state.status.mode = mode;
                self.state.flash(format!("mode: {mode}"));
            }
            Err(_) => self.state.notice(
                format!("unknown mode '{args}': expected {}", tern_protocol::ApprovalMode::NAMES),
                Level::Error,
            ),
        }
    }

    /// `/model [NAME]`: switches the model, or without an argument, says which it is.
    fn model(&mut self, args: &str) {
        if args.is_empty() {
            let model = self.state.status.model.clone();
            self.state
                .notice(format!("model: {model} (switch with /model NAME)"), Level::Info);
            return;
        }
        self.send(Op::SetModel {
            model: args.to_string(),
        });
        self.state.status.model = args.to_string();
        self.state.flash(format!("model: {args}"));
    }

    /// An MCP server's prompt: fetched by the agent, then shown and sent as the user's message.
    fn mcp_prompt(&mut self, name: &str, args: &str) {
        let statuses = self.mcp.borrow().clone();
        match tern_commands::mcp_prompts::resolve(name, args, &statuses) {
            _ if self.state.status.busy => self.state.flash("wait for the turn to end, or interrupt it first"),
            Some(Ok(op)) => {
                self.transcript.scroll_to_bottom();
                self.send(op);
            }
            Some(Err(e)) => self.state.notice(e, Level::Error),
            None => {}
        }
    }

    /// A custom command: starts its turn (`Op::CommandTurn`), whose prompt the transcript shows as the user's
    /// message; while a turn runs it waits as `/name args`, like a message.
    fn custom_command(&mut self, name: &str, args: &str) {
        match self.custom.get(name) {
            Some(command) if self.state.status.busy && !self.state.agent_gone => {
                self.transcript.scroll_to_bottom();
                let line = command.turn(args).line;
                self.state.queued.push_back(line);
            }
            Some(command) => {
                let command = command.turn(args);
                if self.state.agent_gone {
                    self.state.notice("the agent has stopped; restart tern", Level::Error);
                    return;
                }
                self.transcript.scroll_to_bottom();
                self.send(Op::CommandTurn { command });
            }
            None => self
                .state
                .notice(format!("unknown command /{name}; /help lists them"), Level::Error),
        }
    }
}
