//! The app: input, agent events and the frame scheduler in one `select!`. A frame is drawn only when something changed
//! (input, an event, a resize, a loaded file) or an animation is on screen, at most one per `FRAME`; idle means no
//! wake-ups at all. Keys go to the top layer first, then to global actions, then to the composer.

use std::io::Write;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use tokio::sync::mpsc;

use super::composer::{Composer, ComposerAction, SlashCommand};
use super::diff::DiffLayer;
use super::history::HistoryLayer;
use super::keymap::{Action, Keymap};
use super::layer::{Answers, Ctx, Effect, Handled, Layer, View};
use super::state::{AppState, Level};
use super::theme::Theme;
use super::view::approval::ApprovalLayer;
use super::view::help::HelpLayer;
use super::view::transcript::TranscriptView;
use tern_protocol::{ApprovalMode, Event, Op, ToolDetails, TurnEnd};

mod bottom;
mod commands;
mod focus;
mod reveal;
pub(crate) mod thumbs;
mod toggles;

/// The shortest time between two frames (~60 per second).
pub(crate) const FRAME: Duration = Duration::from_millis(16);
/// The shortest time between two frames when only the agent's output changed them (~30 per second): streamed text
/// reads the same at half the rate and costs half the drawing. Keys and resizes are still drawn at `FRAME`.
pub(crate) use tern_protocol::{STREAM_EARLY, STREAM_FRAME};
/// The frame interval while only an animation (spinner, timer) moves.
pub(crate) const ANIMATION: Duration = Duration::from_millis(80);
/// A second Ctrl+C within this time quits.
const DOUBLE_CTRL_C: Duration = Duration::from_secs(2);

pub fn slash_commands() -> Vec<SlashCommand> {
    vec![
        SlashCommand::new("help", "", "keys and commands"),
        SlashCommand::new("model", "[name]", "show or switch the model"),
        SlashCommand::new(
            "mode",
            "[read-only|ask|auto-edit|full-auto]",
            "show or set what may run without asking",
        ),
        SlashCommand::new("history", "", "browse every tool call and its result"),
        SlashCommand::new("diff", "", "every edit of this session, full screen"),
        SlashCommand::new("mcp", "", "MCP servers, their state and tools"),
        SlashCommand::new(
            "ps",
            "",
            "live processes: type into one (Ctrl+] gives the keys back), stop one",
        ),
        SlashCommand::new(
            "trust",
            "",
            "trust this project's own configuration (asks with what it enables)",
        ),
        SlashCommand::new(
            "remember",
            super::memory::REMEMBER_ARGS,
            "add a fact to AGENTS.md (also: a message starting with # or ##)",
        ),
        SlashCommand::new("init", "", "have the model write a starter AGENTS.md"),
        SlashCommand::new(
            "context",
            "[reload]",
            "what the model receives and its share of the window",
        ),
        SlashCommand::new("clear", "", "clear the screen (the model keeps the conversation)"),
        SlashCommand::new(
            "compact",
            "[focus]",
            "summarise the older conversation now, optionally focused",
        ),
        SlashCommand::new("new", "", "start a new conversation"),
        SlashCommand::new(
            "undo",
            "",
            "revert the file changes of the last turn (again: the turn before)",
        ),
        SlashCommand::new(
            "rewind",
            "",
            "go back to an earlier message: code, conversation, or both",
        ),
        SlashCommand::new(
            "review",
            "[turn|session]",
            "keep or revert each hunk the agent changed: this turn or this session",
        ),
        SlashCommand::new("resume", "", "switch to another session of this workspace"),
        SlashCommand::new(
            "fork",
            "",
            "continue in a copy of this session (the original stays as it is)",
        ),
        SlashCommand::new(
            "export",
            "[file|dir]",
            "write this session to Markdown (or .json): prompts, answers, calls, diffs",
        ),
        SlashCommand::new("quit", "", "leave tern"),
    ]
}

/// The names the built-in commands keep: a command file of one of these names is not read.
pub fn builtin_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = slash_commands()
        .into_iter()
        .filter_map(|c| match c.name {
            std::borrow::Cow::Borrowed(name) => Some(name),
            std::borrow::Cow::Owned(_) => None,
        })
        .collect();
    names.push("exit");
    names
}

/// The built-in commands, then the custom ones.
pub(crate) fn all_commands(custom: &tern_commands::CustomCommands) -> Vec<SlashCommand> {
    let mut commands = slash_commands();
    commands.extend(custom.iter().map(SlashCommand::custom));
    commands
}

/// Everything on screen and how input changes it. Owns no terminal: `run` feeds it and draws it, tests drive it
/// directly.
pub struct App {
    pub state: AppState,
    pub transcript: TranscriptView,
    pub composer: Composer,
    pub(crate) layers: Vec<Box<dyn Layer>>,
    pub(super) keymap: Keymap,
    /// The status bar's key hints, from `keymap` (which never changes).
    hints: String,
    pub theme: Theme,
    ops: mpsc::UnboundedSender<Op>,
    pub(crate) context_window: u64,
    last_ctrl_c: Option<Instant>,
    pub(crate) quit: bool,
    /// Text waiting to be copied with OSC 52 after the next frame.
    pub(crate) clipboard: Vec<String>,
    /// Tells the user when tern needs them (written after the next frame, like the clipboard).
    pub(crate) notifier: super::notify::Notifier,
    /// The MCP servers' states as the agent last told them (`Event::McpServers`), for `/mcp`, which follows them
    /// live (opened before the first word, it shows them as it comes); none until the agent tells any (a session
    /// without servers never does).
    pub(crate) mcp: tokio::sync::watch::Receiver<Vec<tern_protocol::mcp::ServerStatus>>,
    /// Where those states are put as they come.
    mcp_feed: tokio::sync::watch::Sender<Vec<tern_protocol::mcp::ServerStatus>>,
    /// Which MCP failures were shown as notices.
    pub(crate) mcp_watch: tern_protocol::mcp::report::ServerWatch,
    /// A session switch the user asked for (`/resume`, `/fork`), for the terminal loop to carry out.
    pub(crate) switch: Option<crate::host::SessionSwitch>,
    /// Where `/export` was asked to write the session (as typed), for the terminal loop, which knows its log.
    pub(crate) export: Option<String>,
    /// Text a layer asked to edit in `$EDITOR`; the event loop runs the editor and hands the result back.
    pub(crate) edit_request: Option<String>,
    /// Starts other sessions and answers what the UI cannot know by itself (the same host the composer has).
    pub(crate) host: std::sync::Arc<dyn crate::host::Host>,
    /// The prompt files that are slash commands too (`tern_commands`).
    pub(crate) custom: tern_commands::CustomCommands,
    /// A subagent's transcript shown in place of the main one.
    pub(crate) viewer: Option<super::view::subagent::SubagentViewer>,
    /// What the start screen shows beyond the state (the instruction files loaded).
    pub(crate) start: super::view::start::StartInfo,
    /// A slash command waits for the agent's answer, to be scrolled into view (`reveal.rs`).
    awaiting_reply: bool,
    /// What the last frame drew under the transcript, and what this one will (`bottom.rs`).
    shown_bottom: bottom::Shown,
    planned_bottom: Option<bottom::Planned>,
    /// The live process that has the keys (`focus.rs`).
    pub(crate) focus: Option<focus::Focus>,
    /// Thumbnails of attached images, where the terminal has a graphics protocol (`thumbs.rs`).
    pub(crate) pictures: Option<thumbs::Pictures>,
}

impl App {
    pub fn new(
        ops: mpsc::UnboundedSender<Op>,
        composer: Composer,
        keymap: Keymap,
        theme: Theme,
        context_window: u64,
    ) -> Self {
        let (mcp_feed, mcp) = tokio::sync::watch::channel(Vec::new());
        let hints = format!(
            "{} history · {} help",
            keymap.hint(Action::History),
            keymap.hint(Action::Help)
        );
        Self {
            host: composer.host().clone(),
            hints,
            state: AppState::new(),
            transcript: TranscriptView::new(),
            composer,
            layers: Vec::new(),
            keymap,
            theme,
            ops,
            context_window,
            last_ctrl_c: None,
            quit: false,
            clipboard: Vec::new(),
            notifier: Default::default(),
            mcp,
            mcp_feed,
            mcp_watch: Default::default(),
            switch: None,
            export: None,
            edit_request: None,
            custom: Default::default(),
            viewer: None,
            start: Default::default(),
            awaiting_reply: false,
            shown_bottom: Default::default(),
            planned_bottom: None,
            focus: None,
            pictures: None,
        }
    }

    /// The agent told the MCP servers' states: kept for `/mcp` (and any view following them), and acted on.
    fn servers_told(&mut self, servers: Vec<tern_protocol::mcp::ServerStatus>) {
        self.mcp_feed.send_replace(servers);
        self.mcp_changed();
    }

    /// Shows a warning for each MCP server that failed or was not started since the last look, and offers the ready
    /// servers' prompts as slash commands.
    fn mcp_changed(&mut self) {
        let statuses = self.mcp.borrow_and_update().clone();
        for failure in self.mcp_watch.failures(&statuses) {
            self.state.notice(failure.line(), Level::Warning);
        }
        for problem in self.mcp_watch.problems(&statuses) {
            self.state.notice(problem, Level::Warning);
        }
        let mut commands = all_commands(&self.custom);
        commands.extend(
            tern_commands::mcp_prompts::commands(&statuses)
                .into_iter()
                .map(SlashCommand::mcp_prompt),
        );
        self.composer.set_commands(commands);
        self.composer
            .set_mcp_resources(super::composer::mcp_mentions::entries(&statuses));
    }

    fn send(&mut self, op: Op) {
        if self.ops.send(op).is_err() {
            self.state.agent_gone = true;
        }
    }

    /// Applies an agent event, and raises the approval prompt when one waits.
    pub fn on_agent_event(&mut self, mut event: Event) {
        super::cell_guard::clean_event(&mut event);
        self.notifier.on_event(&event, Instant::now());
        match &event {
            Event::RewindPoints { points } if points.is_empty() => {
                self.state.flash("nothing to rewind to yet");
            }
            Event::RewindPoints { points } => {
                self.layers
                    .push(Box::new(super::view::rewind::RewindLayer::new(points.clone())));
            }
            Event::ReviewHunks { id, from, files, .. } => self.layers.push(Box::new(
                super::view::review::ReviewLayer::new(*id, from.clone(), files.clone()),
            )),
            Event::ConfirmRevert { files, retry } => self.layers.push(Box::new(
                super::view::rewind::ConfirmRevertLayer::new(files.clone(), retry.clone()),
            )),
            _ => {}
        }
        if let Event::McpServers { servers } = &event {
            self.servers_told(servers.clone());
        }
        let rewound = match &event {
            Event::Rewound { text, .. } => Some(text.clone()),
            _ => None,
        };
        let answer = reveal::is_answer(&event);
        self.awaiting_reply &= !matches!(event, Event::TurnStarted { .. });
        if matches!(event, Event::TurnStarted { .. }) {
            // The answer may hold code: the syntax definitions load meanwhile.
            super::highlight::warm_up_soon();
        }
        if matches!(event, Event::TurnFinished { .. }) {
            // What the turn's answer and tools freed goes back to the system, not kept for the next turn.
            crate::heap::give_back_soon();
        }
        let finished = match &event {
            Event::TurnFinished { reason } => Some(reason.clone()),
            _ => None,
        };
        let before = self.state.cells.len();
        self.state.apply(event);
        self.reveal_reply(answer, before);
        if let Some(reason) = finished {
            self.turn_finished(&reason);
        }
        if let Some(text) = rewound {
            // The cut transcript starts afresh, and the message is back in the composer for editing.
            self.transcript = TranscriptView::new();
            self.composer.set_text(&text);
        }
        self.raise_approval();
        self.raise_elicitation();
    }

    fn raise_approval(&mut self) {
        let behind = self.state.approvals.len().saturating_sub(1);
        let mut showing = false;
        for layer in self.layers.iter_mut().filter(|l| l.answers() == Answers::Approval) {
            layer.set_waiting(behind);
            showing = true;
        }
        if !showing && let Some(request) = self.state.approvals.front().cloned() {
            let queued = self.state.approvals.len() - 1;
            let from = self
                .state
                .approval_from
                .get(&request.id)
                .map(|(_, label)| label.clone());
            self.layers
                .push(Box::new(ApprovalLayer::new(request, queued).with_subagent(from)));
        }
    }

    /// Opens the form of the oldest request for input, and closes a form whose request went away (interrupted).
    fn raise_elicitation(&mut self) {
        let pending = &self.state.elicitations;
        self.layers.retain(|l| match l.answers() {
            Answers::Elicitation(id) => pending.iter().any(|p| p.id == id),
            _ => true,
        });
        let showing = self
            .layers
            .iter()
            .any(|l| matches!(l.answers(), Answers::Elicitation(_)));
        if !showing && let Some(request) = self.state.elicitations.front() {
            self.layers
                .push(Box::new(super::view::elicit::ElicitLayer::new(request)));
        }
    }

    /// Nothing on screen moves and no deadline waits: the terminal loop sleeps, drawing no frame, until input or an
    /// agent event comes (a live process that prints nothing costs nothing).
    pub fn at_rest(&self) -> bool {
        !self.animating() && self.wake_at().is_none()
    }

    pub(crate) fn animating(&self) -> bool {
        self.state.animating() || self.layers.iter().any(|l| l.animating())
    }

    /// When to draw again with nothing happening (a status message's deadline), for a loop that is otherwise idle.
    pub(crate) fn wake_at(&self) -> Option<Instant> {
        self.state.wake_at()
    }

    pub fn on_terminal_event(&mut self, event: TermEvent) {
        match event {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
            TermEvent::Paste(text) => self.on_paste(&text),
            TermEvent::FocusGained => self.notifier.focus(true),
            TermEvent::FocusLost => self.notifier.focus(false),
            TermEvent::Mouse(mouse) => match mouse.kind {
                MouseEventKind::ScrollUp if self.layers.is_empty() => self.transcript.scroll_up(3),
                MouseEventKind::ScrollDown if self.layers.is_empty() => self.transcript.scroll_down(3),
                _ => {}
            },
            _ => {}
        }
    }

    fn on_paste(&mut self, text: &str) {
        if let Some(layer) = self.layers.last_mut() {
            let mut ctx = Ctx::new(View {
                calls: &self.state.calls,
                processes: &self.state.processes,
                theme: &self.theme,
            });
            let handled = layer.handle_paste(text, &mut ctx);
            let effects = ctx.effects;
            self.apply_effects(effects);
            if handled == Handled::Consumed {
                return;
            }
        }
        if self.focus_paste(text) {
            return;
        }
        self.composer.handle_paste(text);
    }

    pub(crate) fn on_key(&mut self, key: KeyEvent) {
        let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(layer) = self.layers.last_mut() {
            let mut ctx = Ctx::new(View {
                calls: &self.state.calls,
                processes: &self.state.processes,
                theme: &self.theme,
            });
            let handled = layer.handle_key(key, &mut ctx);
            let guarded = layer.answers() == Answers::Approval;
            let effects = ctx.effects;
            self.apply_effects(effects);
            if handled == Handled::Consumed {
                return;
            }
            // The call's pane and the diff view stay at hand while the prompt is open (it sits below the pane).
            if guarded && matches!(self.keymap.action(&key), Some(Action::ToggleCall | Action::Diff)) {
                if let Some(action) = self.keymap.action(&key) {
                    self.on_action(action);
                }
                return;
            }
            // An approval prompt that just appeared lets keys pass to the composer (typed before it was seen).
            if guarded && !ctrl_c {
                self.composer_key(key);
                return;
            }
        }
        // A process with the keys gets them all, Ctrl+C too (it is the program's to interrupt).
        if self.focus_key(key) {
            return;
        }
        if ctrl_c {
            self.ctrl_c();
            return;
        }
        if self.viewer_key(key) {
            return;
        }
        if self.composer.popup_open() {
            self.composer_key(key);
            return;
        }
        let composer_empty = self.composer.is_empty();
        match self.keymap.action(&key) {
            Some(Action::Interrupt)
                if key.code == KeyCode::Esc && (self.state.status.busy || self.state.subagents_running()) =>
            {
                self.send(Op::Interrupt);
                self.unqueue_to_composer();
                self.state.flash_while_turn("interrupting…");
            }
            Some(Action::Interrupt) => self.composer_key(key),
            Some(Action::Help) if key.code == KeyCode::Char('?') && !composer_empty => self.composer_key(key),
            Some(Action::Top | Action::Bottom) if !composer_empty && !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.composer_key(key)
            }
            Some(action) => self.on_action(action),
            None => self.composer_key(key),
        }
    }

    fn ctrl_c(&mut self) {
        if self.state.status.busy {
            self.send(Op::Interrupt);
            self.unqueue_to_composer();
            self.state.flash_while_turn("interrupting… (Ctrl+C again to quit)");
        } else if !self.composer.is_empty() {
            self.composer.set_text("");
            return;
        }
        match self.last_ctrl_c {
            Some(at) if at.elapsed() < DOUBLE_CTRL_C => self.quit = true,
            _ => {
                self.last_ctrl_c = Some(Instant::now());
                if !self.state.status.busy {
                    // True only as long as a second press would quit.
                    self.state.flash_for("press Ctrl+C again to quit", DOUBLE_CTRL_C);
                }
            }
        }
    }

    fn on_action(&mut self, action: Action) {
        match action {
            Action::Interrupt => {}
            Action::PageUp => self.transcript.page_up(),
            Action::PageDown => self.transcript.page_down(),
            Action::LineUp => self.transcript.scroll_up(1),
            Action::LineDown => self.transcript.scroll_down(1),
            Action::Top => self.transcript.scroll_to_top(),
            Action::Bottom => self.transcript.scroll_to_bottom(),
            Action::PrevCall => self.transcript.select_call(&self.state, false),
            Action::NextCall => self.transcript.select_call(&self.state, true),
            Action::ToggleCall => {
                let target = self.transcript.selected_call.or(self.state.calls.len().checked_sub(1));
                if let Some(call) = target
                    && !self.open_subagent(call)
                {
                    self.state.toggle_call(call);
                }
            }
            Action::ToggleReasoning => self.toggle_reasoning(),
            Action::Diff => self.open_diff(false),
            Action::History => self.layers.push(Box::new(HistoryLayer::new())),
            Action::Help => self.open_help(),
            Action::Quit => self.quit = true,
            Action::ToggleMouse => self.toggle_mouse(),
        }
    }

    fn open_help(&mut self) {
        self.layers.push(Box::new(HelpLayer::new(
            self.keymap.describe_all(),
            all_commands(&self.custom),
        )));
    }

    /// The diff of the selected call (or the last edit), or with `all`, every edit of the session.
    fn open_diff(&mut self, all: bool) {
        let diffs_of = |i: usize| match self
            .state
            .calls
            .get(i)
            .and_then(|c| c.output.as_ref())
            .map(|o| &o.details)
        {
            Some(ToolDetails::Diffs { diffs }) => diffs.clone(),
            _ => Vec::new(),
        };
        let diffs = if all {
            (0..self.state.calls.len()).flat_map(diffs_of).collect()
        } else {
            let selected = self.transcript.selected_call.map(diffs_of).unwrap_or_default();
            if selected.is_empty() {
                (0..self.state.calls.len())
                    .rev()
                    .map(diffs_of)
                    .find(|d| !d.is_empty())
                    .unwrap_or_default()
            } else {
                selected
            }
        };
        if diffs.is_empty() {
            self.state.flash("no edits to show yet");
        } else {
            self.layers.push(Box::new(DiffLayer::new(diffs)));
        }
    }

    fn composer_key(&mut self, key: KeyEvent) {
        match self.composer.handle_key(key) {
            ComposerAction::Submit(text) => self.submit(text),
            ComposerAction::Command { name, args } => self.run_command(&name, args.trim()),
            ComposerAction::Notice(text) => self.state.flash(text),
            ComposerAction::Consumed | ComposerAction::Ignored => {}
        }
    }

    fn submit(&mut self, text: String) {
        if self.state.agent_gone {
            self.state.notice("the agent has stopped; restart tern", Level::Error);
            return;
        }
        if let Some(op) = super::memory::composer_memory(&text) {
            self.send(op);
            return;
        }
        self.transcript.scroll_to_bottom();
        // While a turn runs, a message waits here, not in the agent: it goes when the turn ends, and an interrupt
        // gives it back to the composer instead of sending it.
        if self.state.status.busy {
            self.state.queued.push_back(text);
            return;
        }
        self.send(Op::UserTurn { text });
    }

    /// A turn ended: the next waiting message goes, unless the user stopped the turn (then the waiting messages are
    /// back in the composer, already there since the interrupt).
    fn turn_finished(&mut self, reason: &TurnEnd) {
        if matches!(reason, TurnEnd::Interrupted | TurnEnd::Aborted) {
            self.unqueue_to_composer();
            return;
        }
        if let Some(text) = self.state.queued.pop_front() {
            // A custom command waited as its line: it starts its own turn.
            match self.custom.turn_for_line(&text) {
                Some(command) => self.send(Op::CommandTurn { command }),
                None => self.send(Op::UserTurn { text }),
            }
        }
    }

    /// The messages waiting for the turn to end go back to the composer (before what it holds), unsent.
    fn unqueue_to_composer(&mut self) {
        if self.state.queued.is_empty() {
            return;
        }
        let mut parts: Vec<String> = self.state.queued.drain(..).collect();
        let typed = self.composer.text();
        if !typed.trim().is_empty() {
            parts.push(typed);
        }
        self.composer.set_text(&parts.join("\n"));
    }

    fn apply_effects(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Close => {
                    self.layers.pop();
                }
                Effect::Push(layer) => self.layers.push(layer),
                Effect::Op(op) => {
                    if let Op::Approve { id, .. } = &op {
                        self.state.approvals.retain(|r| r.id != *id);
                    }
                    if let Op::Elicit { id, .. } = &op {
                        self.state.elicitations.retain(|r| r.id != *id);
                    }
                    self.send(op);
                }
                Effect::JumpToCall(call_id) => {
                    self.layers.clear();
                    if let Some(i) = self.state.calls.iter().position(|c| c.call_id == call_id) {
                        self.transcript.selected_call = Some(i);
                    }
                    if let Some(cell) = self.state.cell_of_call(&call_id) {
                        self.transcript.show_cell(cell);
                    }
                }
                Effect::Copy(text) => {
                    self.clipboard.push(text);
                    self.state.flash("copied to the clipboard");
                }
                Effect::Notice(text) => self.state.flash(text),
                Effect::Switch(path) => self.switch = Some(crate::host::SessionSwitch::Resume(path)),
                Effect::Reload => self.switch = Some(crate::host::SessionSwitch::Reload),
                Effect::EditText(text) => self.edit_request = Some(text),
                Effect::Focus(id) => self.focus_process(&id),
            }
        }
        self.raise_approval();
        self.raise_elicitation();
    }

    /// Draws everything.
    /// The start screen at the top of `area` while there is no conversation yet; returns what is left for the
    /// transcript (its notices).
    fn render_start(&self, frame: &mut Frame<'_>, area: Rect) -> Rect {
        use super::view::start;
        if !start::shown(&self.state) {
            return area;
        }
        let servers = self.mcp.borrow().clone();
        let lines = start::lines(
            &self.state.status,
            &self.start,
            &servers,
            &self.keymap,
            area.width,
            &self.theme,
        );
        // Notices (warnings at start-up) keep a few rows below it.
        let notices = self.state.cells.len() as u16;
        let keep = if notices > 0 {
            notices.saturating_mul(2).min(6)
        } else {
            0
        };
        let height = (lines.len() as u16).min(area.height.saturating_sub(keep));
        frame.render_widget(Paragraph::new(lines), Rect { height, ..area });
        Rect {
            y: area.y + height,
            height: area.height - height,
            ..area
        }
    }

    /// Renders the frame. Whatever path wrote a cell, nothing a terminal would act on reaches the terminal: `Screen`
    /// guards each cell it writes (`cell_guard::guard_cell`), which are only the cells that changed.
    pub fn render(&mut self, frame: &mut Frame<'_>) {
        self.render_reusing(frame, false);
    }

    /// Before a frame of `area` is drawn: the transcript rows it will show as the last frame did, for `Screen` to
    /// take over (then `render_reusing` is told so and leaves them). None while something may draw over the transcript
    /// (a popup, a layer that is not docked, the history viewer) or the start screen shows above it.
    pub(crate) fn plan(&mut self, area: Rect) -> Option<super::screen::Reuse> {
        self.planned_bottom = None;
        self.update_thumbnails();
        self.state.expire_flash(Instant::now());
        self.forget_gone_focus();
        let areas = self.areas(area);
        if self.overlaid(&areas) || super::view::start::shown(&self.state) {
            return None;
        }
        // Planning lays out what the frame shows: as part of the frame (`highlight::frame`).
        let (transcript, state, theme) = (&mut self.transcript, &self.state, &self.theme);
        let reuse = super::highlight::frame(|| transcript.plan(area, areas.transcript, state, theme));
        let kept = self.plan_bottom(area, areas.composer, areas.status);
        match reuse {
            Some(reuse) => Some(super::screen::Reuse { kept, ..reuse }),
            None => (!kept.is_empty()).then(|| super::screen::Reuse::kept(area, kept)),
        }
    }

    /// Draws one frame on `terminal` as the terminal loop does: planned (the transcript rows the last frame drew that
    /// still show are taken over), rendered, and written by `Screen`. The caller flushes.
    pub fn draw<B: super::screen::Scroll>(
        &mut self,
        terminal: &mut ratatui::Terminal<super::screen::Screen<B>>,
    ) -> Result<(), B::Error> {
        let size = terminal.size()?;
        let reuse = self.plan(Rect::new(0, 0, size.width, size.height));
        super::screen::draw(terminal, reuse, |frame, reused| self.render_reusing(frame, reused))
    }

    /// Renders the frame; `reused`: `Screen` takes the transcript rows `plan` named from the last frame.
    pub(crate) fn render_reusing(&mut self, frame: &mut Frame<'_>, reused: bool) {
        super::highlight::frame(|| self.render_frame(frame, reused));
    }

    /// Whether anything draws over the transcript this frame (or instead of it).
    fn overlaid(&self, areas: &Areas) -> bool {
        self.viewer.is_some()
            || self.focus.is_some()
            || self.composer.popup_open()
            || self.layers.len() > usize::from(areas.docked.is_some())
    }

    /// Where each part of a frame of `area` goes.
    fn areas(&mut self, area: Rect) -> Areas {
        let composer_h = self
            .composer
            .desired_height(area.width)
            .min(area.height.saturating_sub(3));
        let queued_h = (self.state.queued.len() as u16).min(3);
        // A docked layer (the approval prompt) gets rows above the composer, leaving a few transcript rows.
        let theme = &self.theme;
        let docked = self
            .layers
            .iter_mut()
            .enumerate()
            .find_map(|(i, l)| l.dock_height(area.width, theme).map(|h| (i, h)));
        // On a very short screen the prompt still gets a few rows, taken from the transcript.
        let below = composer_h + queued_h + 1;
        let dock_room = area
            .height
            .saturating_sub(below + MIN_TRANSCRIPT_ROWS)
            .max(MIN_DOCK_ROWS.min(area.height.saturating_sub(below)));
        let dock_h = docked.map_or(0, |(_, h)| h.min(dock_room));
        let plan_h = super::view::plan::height(
            &self.state.plan,
            area.height.saturating_sub(composer_h + queued_h + dock_h + 1),
        );
        let transcript_h = area.height.saturating_sub(composer_h + queued_h + dock_h + plan_h + 1);
        let transcript = Rect {
            height: transcript_h,
            ..area
        };
        let plan = Rect {
            y: area.y + transcript_h,
            height: plan_h,
            ..area
        };
        let dock = Rect {
            y: plan.y + plan_h,
            height: dock_h,
            ..area
        };
        let queued = Rect {
            y: dock.y + dock_h,
            height: queued_h,
            ..area
        };
        let composer = Rect {
            y: queued.y + queued_h,
            height: composer_h,
            ..area
        };
        let status = Rect {
            y: composer.y + composer_h,
            height: 1,
            ..area
        };
        Areas {
            transcript,
            plan,
            dock,
            queued,
            composer,
            status,
            docked: docked.map(|(i, _)| i),
        }
    }

    fn render_frame(&mut self, frame: &mut Frame<'_>, reused: bool) {
        #[cfg(debug_assertions)]
        test_panic_in_view(&self.state);
        self.state.expire_flash(Instant::now());
        self.forget_gone_focus();
        let area = frame.area();
        let areas = self.areas(area);
        let overlaid = self.overlaid(&areas);
        let Areas {
            transcript: transcript_area,
            plan: plan_area,
            dock: dock_area,
            queued: queued_area,
            composer: composer_area,
            status: status_area,
            docked,
        } = areas;
        let queued_h = queued_area.height;
        let viewed = match &mut self.viewer {
            Some(viewer) => viewer.render(frame, transcript_area, &self.state, &self.theme),
            None => false,
        };
        if !viewed {
            let transcript_area = self.render_start(frame, transcript_area);
            self.transcript
                .render(frame, transcript_area, &self.state, &self.theme, reused);
        }
        super::view::plan::render(frame, plan_area, &self.state.plan, &self.theme);
        if queued_h > 0 {
            let lines: Vec<Line> = self
                .state
                .queued
                .iter()
                .take(3)
                .map(|q| {
                    Line::from(vec![
                        Span::styled("  queued › ", self.theme.dim),
                        Span::styled(q.lines().next().unwrap_or("").to_string(), self.theme.dim),
                    ])
                })
                .collect();
            frame.render_widget(Paragraph::new(lines), queued_area);
        }
        let focused = self.layers.is_empty();
        self.render_bottom(frame, composer_area, status_area, reused, overlaid);
        self.render_focus(
            frame,
            Rect {
                height: status_area.y.saturating_sub(area.y),
                ..area
            },
        );
        if focused && self.focus.is_none() {
            self.composer.render_popup(frame, composer_area, &self.theme);
        }
        let view = View {
            calls: &self.state.calls,
            processes: &self.state.processes,
            theme: &self.theme,
        };
        for (i, layer) in self.layers.iter_mut().enumerate() {
            let docked_here = docked == Some(i);
            layer.render(frame, if docked_here { dock_area } else { area }, &view);
        }
        if overlaid || viewed {
            self.transcript.forget_rows();
            self.transcript.placements.clear();
        }
    }
}

/// Where the parts of a frame go (`App::areas`).
struct Areas {
    transcript: Rect,
    plan: Rect,
    dock: Rect,
    queued: Rect,
    composer: Rect,
    status: Rect,
    /// The layer docked above the composer.
    docked: Option<usize>,
}

/// Transcript rows a docked prompt always leaves on screen (when the screen has room for the prompt too).
const MIN_TRANSCRIPT_ROWS: u16 = 3;
/// Rows a docked prompt gets at least, when the screen has them.
const MIN_DOCK_ROWS: u16 = 5;

impl App {
    /// The editor the event loop ran for `Effect::EditText` returned: hand its result to the top layer.
    pub(crate) fn edited(&mut self, result: Result<String, String>) {
        if let Some(layer) = self.layers.last_mut() {
            let mut ctx = Ctx::new(View {
                calls: &self.state.calls,
                processes: &self.state.processes,
                theme: &self.theme,
            });
            layer.edited(result, &mut ctx);
            let effects = ctx.effects;
            self.apply_effects(effects);
        }
    }
}

/// Writes text to the terminal clipboard with OSC 52 (works over SSH and in tmux with set-clipboard on).
pub(crate) fn osc52(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

#[cfg(test)]
mod tests;

/// A test hook for the fault suite, compiled into debug builds only: with `TERN_TEST_PANIC_IN_VIEW=<text>` set, the
/// first frame whose last answer contains `<text>` panics, as a bug in a view would. Unset (always, in release
/// builds), it costs one cached lookup per frame.
#[cfg(debug_assertions)]
fn test_panic_in_view(state: &super::state::AppState) {
    static MARKER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let marker = MARKER.get_or_init(|| std::env::var("TERN_TEST_PANIC_IN_VIEW").ok().filter(|m| !m.is_empty()));
    if let Some(marker) = marker
        && state
            .last_exchange()
            .is_some_and(|(_, answer)| answer.contains(marker.as_str()))
    {
        panic!("TERN_TEST_PANIC_IN_VIEW: a view panicked on purpose");
    }
}
