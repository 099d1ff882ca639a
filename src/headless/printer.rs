//! Turns the agent's events into `tern run`'s output in one format: text (the answer on stdout as it streams, a blank
//! line between messages; tool activity on stderr, see `progress`), json (one object at the end) or events (one
//! object per event, then a `result` object like json's). Tool results come out in the order the model made the calls
//! (`order`), and json output names the session `tern resume` and `tern run --resume` take.

use std::io::Write;

use serde_json::{Value, json};

use super::OutputFormat;
use super::order::{AgentKey, CallOrder};
use super::progress::{Ended, plan_text};
use tern_protocol::Prices;
use tern_protocol::{Event, PlanItem, TurnEnd, Usage};
use tern_text::calls::key_argument;

pub(super) struct Printer {
    pub(super) format: OutputFormat,
    /// The session's id, when it has a log to resume from.
    session_id: Option<String>,
    /// The text of the last assistant message (the answer, for json).
    answer: String,
    /// Whether the text on stdout ends mid-line.
    open_line: bool,
    /// The current assistant message as far as it is on stdout (text format).
    shown: String,
    /// After a retry: the new attempt's text so far, while it only repeats what `shown` already holds.
    replaying: Option<String>,
    /// A message ended on stdout: the next one starts after a blank line.
    gap_due: bool,
    usage: Usage,
    /// What subagents used, part of the session's totals.
    subagent_usage: Usage,
    /// The main agent's calls in call order (json's `tool_calls`).
    calls: Vec<Value>,
    errors: Vec<String>,
    /// The model's plan as last printed (`todo_write`); `None` before it has one.
    pub(super) plan: Option<Vec<PlanItem>>,
    /// Text and json formats: results on stderr waiting for earlier calls of their batch.
    pub(super) held: CallOrder<Ended>,
    /// The plan's calls that began and have not ended (the plan is printed whole, not as calls).
    pub(super) plan_calls: std::collections::HashSet<(AgentKey, String)>,
    /// Stream-json: `tool_call_end` lines waiting for earlier calls of their batch.
    held_lines: CallOrder<String>,
    /// The call whose begin line is the last line on stderr: its result follows it unlabelled.
    pub(super) last_begin: Option<(AgentKey, String)>,
    /// The session's model, once it started: its prices give the run's cost.
    pub(super) model: Option<String>,
    prices: Option<std::sync::Arc<dyn Prices>>,
    /// When the run began, for json's `duration_ms`.
    began: std::time::Instant,
    /// Claude Code's stream, for `OutputFormat::ClaudeStream`.
    claude: super::claude_stream::ClaudeStream,
}

impl Printer {
    pub(super) fn new(format: OutputFormat, session_id: Option<String>) -> Self {
        Self {
            format,
            session_id,
            answer: String::new(),
            open_line: false,
            shown: String::new(),
            replaying: None,
            gap_due: false,
            usage: Usage::default(),
            subagent_usage: Usage::default(),
            calls: Vec::new(),
            plan_calls: Default::default(),
            errors: Vec::new(),
            plan: None,
            held: CallOrder::default(),
            held_lines: CallOrder::default(),
            last_begin: None,
            model: None,
            prices: None,
            began: std::time::Instant::now(),
            claude: Default::default(),
        }
    }

    /// The prices the run's cost is worked out with.
    pub(super) fn with_prices(mut self, prices: Option<std::sync::Arc<dyn Prices>>) -> Self {
        self.prices = prices;
        self
    }

    pub(super) fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    pub(super) fn print<O: Write, E: Write>(&mut self, event: &Event, out: &mut O, err: &mut E) {
        match event {
            Event::AssistantMessage { text, .. } => self.answer = text.clone(),
            Event::TokenUsage { total, .. } => self.usage = *total,
            Event::Subagent { inner, .. } => {
                if let Event::TokenUsage { last, .. } = &**inner {
                    add_usage(&mut self.subagent_usage, last);
                }
            }
            Event::Error { message } => self.errors.push(message.clone()),
            Event::PlanUpdated { items } if self.plan.as_ref() != Some(items) => {
                self.plan = Some(items.clone());
                if self.format != OutputFormat::Events {
                    let _ = write!(err, "{}", plan_text(items));
                    self.last_begin = None;
                }
            }
            Event::ToolCallBegin {
                call_id, name, args, ..
            } => self.calls.push(json!({
                "call_id": call_id, "name": name, "summary": key_argument(args),
            })),
            Event::ToolCallEnd {
                call_id,
                name,
                output,
                duration_ms,
                ..
            } => {
                // Filled in where the call began, so the list is in call order whatever finished first.
                let begun = self
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| c["call_id"] == json!(call_id) && c.get("is_error").is_none());
                match begun {
                    Some(call) => {
                        call["is_error"] = json!(output.is_error);
                        call["duration_ms"] = json!(duration_ms);
                    }
                    None => self.calls.push(json!({
                        "call_id": call_id, "name": name, "is_error": output.is_error, "duration_ms": duration_ms,
                    })),
                }
            }
            _ => {}
        }
        match self.format {
            OutputFormat::Events => self.print_line(event, out),
            OutputFormat::ClaudeStream => {
                if let Some(line) = self.claude.line(event, self.session_id.as_deref()) {
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                }
            }
            OutputFormat::Json => self.print_progress(event, err),
            OutputFormat::Text => self.print_text(event, out, err),
        }
    }

    /// Stream-json: the event as one line; `session_started` with the session's id, and a `tool_call_end` held until
    /// the calls before it in its batch have theirs.
    fn print_line<O: Write>(&mut self, event: &Event, out: &mut O) {
        let Ok(mut value) = serde_json::to_value(event) else {
            return;
        };
        if matches!(event, Event::SessionStarted { .. }) {
            value["session_id"] = json!(self.session_id);
        }
        let line = value.to_string();
        let (agent, inner) = super::progress::agent_of(event);
        let lines = match inner {
            Event::ToolCallBegin { call_id, .. } => {
                self.held_lines.begin(&agent, call_id, String::new());
                vec![line]
            }
            Event::ToolCallEnd { call_id, .. } => self
                .held_lines
                .end(&agent, call_id, line)
                .into_iter()
                .map(|r| r.item)
                .collect(),
            _ => vec![line],
        };
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }

    /// Text output streams the answer, and stdout cannot take back what a failed attempt printed. After a retry
    /// (`Event::Retrying`), the new attempt's text is therefore matched against what is already shown: as long as it
    /// repeats it, nothing is printed, and once it goes further only the new part is. Should the new attempt say
    /// something else, stdout gets a line break and the new answer in full, and stderr says why.
    fn print_text<O: Write, E: Write>(&mut self, event: &Event, out: &mut O, err: &mut E) {
        match event {
            Event::AssistantDelta { text } => self.print_delta(text, out, err),
            Event::AssistantMessage { text, .. } => {
                if self.replaying.is_some() && *text != self.shown {
                    // The new attempt ended short of what the failed one had shown.
                    self.restart(text, out, err);
                }
                if !text.is_empty() && self.open_line {
                    let _ = writeln!(out);
                    self.open_line = false;
                }
                // Messages of separate steps are separate paragraphs.
                self.gap_due |= !self.shown.is_empty();
                self.shown.clear();
                self.replaying = None;
            }
            Event::Retrying { .. } => {
                if !self.shown.is_empty() {
                    self.replaying = Some(String::new());
                }
                // The notice goes to stderr on a line of its own; stdout keeps only the answer.
                if self.open_line {
                    let _ = writeln!(err);
                }
                self.print_progress(event, err);
            }
            Event::ToolCallBegin { .. } if self.open_line => {
                let _ = writeln!(out);
                let _ = out.flush();
                self.open_line = false;
                self.print_progress(event, err);
            }
            _ => self.print_progress(event, err),
        }
    }

    fn print_delta<O: Write, E: Write>(&mut self, text: &str, out: &mut O, err: &mut E) {
        let new = match self.replaying.take() {
            None => text.to_string(),
            Some(mut fresh) => {
                fresh.push_str(text);
                if self.shown.starts_with(&fresh) {
                    self.replaying = Some(fresh);
                    return;
                }
                match fresh.strip_prefix(self.shown.as_str()) {
                    Some(rest) => rest.to_string(),
                    None => {
                        self.restart(&fresh, out, err);
                        return;
                    }
                }
            }
        };
        self.write_answer(&new, out);
    }

    /// The retried answer differs from the text already on stdout: start it afresh on a new line.
    fn restart<O: Write, E: Write>(&mut self, text: &str, out: &mut O, err: &mut E) {
        self.replaying = None;
        if self.open_line {
            let _ = writeln!(out);
            self.open_line = false;
        }
        let _ = writeln!(
            err,
            "tern: the retried answer differs from the partial one printed before it; here it is in full"
        );
        self.shown.clear();
        self.write_answer(text, out);
    }

    fn write_answer<O: Write>(&mut self, text: &str, out: &mut O) {
        if text.is_empty() {
            return;
        }
        if std::mem::take(&mut self.gap_due) {
            let _ = writeln!(out);
        }
        let _ = write!(out, "{text}");
        let _ = out.flush();
        self.shown.push_str(text);
        self.open_line = !text.ends_with('\n');
    }

    /// The end of the run: results still held go out in call order, then json's object (the events' `result`).
    pub(super) fn finish<O: Write, E: Write>(&mut self, end: Option<&TurnEnd>, out: &mut O, err: &mut E) {
        match self.format {
            OutputFormat::Events => {
                for released in self.held_lines.drain() {
                    let _ = writeln!(out, "{}", released.item);
                }
                let mut value = self.result(end);
                value["event"] = json!("result");
                let _ = writeln!(out, "{value}");
            }
            OutputFormat::ClaudeStream => {
                let usage = total_usage(&self.usage, &self.subagent_usage);
                let ended = super::claude_stream::Ended {
                    answer: &self.answer,
                    session_id: self.session_id.as_deref(),
                    usage: &usage,
                    cost: self.cost(),
                    duration_ms: u64::try_from(self.began.elapsed().as_millis()).unwrap_or(u64::MAX),
                };
                let _ = writeln!(out, "{}", self.claude.result(end, &ended));
            }
            OutputFormat::Json => {
                self.print_held(err);
                let _ = writeln!(out, "{}", self.result(end));
            }
            OutputFormat::Text => {
                self.print_held(err);
                if self.open_line {
                    let _ = writeln!(out);
                }
            }
        }
    }

    /// What the run came to, as json prints it.
    fn result(&self, end: Option<&TurnEnd>) -> Value {
        let (reason, error) = match end {
            Some(TurnEnd::Error { message }) => ("error", Some(message.clone())),
            Some(TurnEnd::Completed) => ("completed", None),
            Some(TurnEnd::Interrupted) => ("interrupted", None),
            Some(TurnEnd::Aborted) => ("aborted", None),
            Some(TurnEnd::IterationLimit) => ("iteration_limit", None),
            None => ("error", Some("the agent stopped unexpectedly".to_string())),
        };
        let mut value = json!({
            "result": self.answer,
            "reason": reason,
            "error": error,
            "is_error": !matches!(end, Some(TurnEnd::Completed | TurnEnd::IterationLimit)),
            "session_id": self.session_id,
            "usage": total_usage(&self.usage, &self.subagent_usage),
            "total_cost_usd": self.cost(),
            "duration_ms": u64::try_from(self.began.elapsed().as_millis()).unwrap_or(u64::MAX),
            "tool_calls": self.calls,
            "errors": self.errors,
        });
        if let Some(plan) = &self.plan {
            value["plan"] = json!(plan);
        }
        value
    }
}

impl Printer {
    /// What the run's tokens cost in USD on the session's model (subagents' tokens priced the same), when its prices
    /// are known; rounded to a millionth of a dollar.
    fn cost(&self) -> Option<f64> {
        let usage = total_usage(&self.usage, &self.subagent_usage);
        let cost = self.prices.as_ref()?.cost(self.model.as_deref()?, &usage)?;
        Some((cost * 1e6).round() / 1e6)
    }
}

fn add_usage(total: &mut Usage, more: &Usage) {
    total.input_tokens += more.input_tokens;
    total.output_tokens += more.output_tokens;
    total.cache_read_tokens += more.cache_read_tokens;
    total.cache_write_tokens += more.cache_write_tokens;
}

fn total_usage(main: &Usage, subagents: &Usage) -> Usage {
    let mut total = *main;
    add_usage(&mut total, subagents);
    total
}
