//! The turn loop: ask the model, run the tools it calls, feed back the results, until it answers without tools, the
//! user interrupts, or the iteration limit asks it to summarise. Model quirks are handled here: an empty reply is
//! retried once, a reply cut by the output limit is continued.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::calls::{Flow, RepeatGuard};
use crate::compact::Trigger;
use tern_protocol::{Event, FinishReason, Message, Reasoning, TurnEnd};
use tern_provider::{Completion, Delta, PreparedRequest, ProviderError, ProviderEvent};

/// How many times a reply cut by the output limit is continued.
const MAX_LENGTH_CONTINUES: u32 = 3;

pub(crate) const CONTINUE_PROMPT: &str =
    "[Your last reply was cut off by the output limit. Continue exactly where it stopped, without repeating.]";

pub(crate) const LIMIT_PROMPT: &str = "[You have reached the tool-call limit for this turn. Do not call more tools. \
     Summarise what you did, what you found, and what is left to do.]";

/// How a request failed: the turn ends, or the prompt did not fit and compaction may save the turn.
enum Sent {
    End(TurnEnd),
    Overflow { message: String, tools_len: usize },
}

impl Sent {
    fn into_end(self) -> TurnEnd {
        match self {
            Sent::End(end) => end,
            Sent::Overflow { message, .. } => TurnEnd::Error { message },
        }
    }
}

/// One run of the turn loop, over the session it borrows: what the loop keeps between its steps (the calls refused as
/// repeats, whether an empty reply was asked for again, how many cut replies were continued) and the turn's cancel.
pub(super) struct Turn<'s> {
    session: &'s mut Session,
    cancel: &'s CancellationToken,
    seen: RepeatGuard,
    empty_retried: bool,
    continues: u32,
}

/// What one step of the loop decided.
enum Step {
    /// Ask the model again.
    Next,
    /// The turn is over.
    End(TurnEnd),
}

impl<'s> Turn<'s> {
    pub(super) fn new(session: &'s mut Session, cancel: &'s CancellationToken) -> Self {
        Self {
            session,
            cancel,
            seen: RepeatGuard::default(),
            empty_retried: false,
            continues: 0,
        }
    }

    /// Runs the loop to its end: the model answers without calls, the user interrupts or aborts, a request fails, or
    /// the iteration limit asks for a summary.
    pub(super) async fn run(mut self) -> TurnEnd {
        // Tool sources still starting (MCP servers) get their bounded start-up time before the first request.
        tokio::select! {
            _ = self.session.tools.wait_ready() => {}
            _ = self.cancel.cancelled() => return TurnEnd::Interrupted,
        }
        for _ in 0..self.session.limits.max_iterations {
            if let Step::End(end) = self.step().await {
                return end;
            }
        }
        self.summarise_at_the_limit().await
    }

    /// One step: a request, and the calls it makes.
    async fn step(&mut self) -> Step {
        // What subagents started without waiting found since the last step.
        self.session.deliver_subagent_reports();
        self.session.deliver_process_exits();
        let completion = match self.request(true).await {
            Ok(c) => c,
            Err(end) => return Step::End(end),
        };
        let silent =
            completion.content.trim().is_empty() && completion.tool_calls.is_empty() && completion.reasoning.is_none();
        if silent {
            if !self.empty_retried {
                self.empty_retried = true;
                self.session.shared.emit(Event::Notice {
                    text: "the model returned an empty reply; asking again".into(),
                });
                return Step::Next;
            }
            self.session.shared.emit(Event::Notice {
                text: "the model returned an empty reply twice; ending the turn".into(),
            });
            return Step::End(TurnEnd::Completed);
        }
        let calls = completion.tool_calls.clone();
        let cut = completion.finish_reason == FinishReason::Length;
        self.push_assistant(completion);
        if calls.is_empty() {
            if cut && self.continues < MAX_LENGTH_CONTINUES {
                self.continues += 1;
                self.session.push_message(Message::User {
                    content: CONTINUE_PROMPT.into(),
                    images: Vec::new(),
                });
                return Step::Next;
            }
            return Step::End(TurnEnd::Completed);
        }
        let (answers, flow) = self.session.pipeline().run(&calls, self.cancel, &mut self.seen).await;
        for answer in answers {
            self.session.push_message(answer);
        }
        match flow {
            Flow::Aborted => Step::End(TurnEnd::Aborted),
            Flow::Stopped(message) => Step::End(TurnEnd::Error { message }),
            Flow::Continue if self.cancel.is_cancelled() => Step::End(TurnEnd::Interrupted),
            Flow::Continue => Step::Next,
        }
    }

    /// At the iteration limit: one more request, without tools, for a summary of the turn.
    async fn summarise_at_the_limit(&mut self) -> TurnEnd {
        self.session.shared.emit(Event::Notice {
            text: format!(
                "reached the limit of {} model requests in one turn; asking for a summary",
                self.session.limits.max_iterations
            ),
        });
        self.session.push_message(Message::User {
            content: LIMIT_PROMPT.into(),
            images: Vec::new(),
        });
        match self.request(false).await {
            Ok(completion) => {
                // Without tools offered, any calls it still makes cannot run: keep only the text.
                let summary = Completion {
                    tool_calls: Vec::new(),
                    ..completion
                };
                self.push_assistant(summary);
                TurnEnd::IterationLimit
            }
            Err(end) => end,
        }
    }

    fn push_assistant(&mut self, completion: Completion) {
        self.session.shared.emit(Event::AssistantMessage {
            text: completion.content.clone(),
            // Reasoning carried only as encrypted items has nothing to show.
            reasoning: completion
                .reasoning
                .as_ref()
                .map(|r| r.text.clone())
                .filter(|t| !t.is_empty()),
        });
        self.session.push_message(Message::Assistant {
            content: completion.content,
            reasoning: completion.reasoning,
            tool_calls: completion.tool_calls,
        });
    }

    /// One model request over the conversation, compacted first when it has grown past its share of the window. A
    /// context overflow reported by the provider compacts the conversation and tries once more.
    async fn request(&mut self, with_tools: bool) -> Result<Completion, TurnEnd> {
        match self.send_request(with_tools).await {
            Err(Sent::Overflow { message, tools_len }) => {
                let compacted = self
                    .session
                    .compact(self.cancel, tools_len, None, Trigger::Overflow)
                    .await;
                if self.cancel.is_cancelled() {
                    return Err(TurnEnd::Interrupted);
                }
                if compacted {
                    match self.send_request(with_tools).await {
                        Err(Sent::Overflow { message, .. }) => Err(self.fail(message)),
                        other => other.map_err(Sent::into_end),
                    }
                } else {
                    Err(self.fail(message))
                }
            }
            other => other.map_err(Sent::into_end),
        }
    }

    fn fail(&self, message: String) -> TurnEnd {
        self.session.shared.emit(Event::Error {
            message: message.clone(),
        });
        TurnEnd::Error { message }
    }

    /// One model request, with its deltas forwarded as events. On interrupt, what the user already saw of the reply
    /// is kept in the conversation.
    async fn send_request(&mut self, with_tools: bool) -> Result<Completion, Sent> {
        // An MCP server that became ready (or failed) since the last request brings (or takes) its instructions, as
        // it does its tools.
        if self.session.prompt.mcp_changed() {
            self.session.prompt = self.session.prompt.with_current_mcp();
            self.session.system_prompt = self.session.prompt.text.clone();
        }
        let tools = if with_tools {
            self.session.tools.definitions()
        } else {
            Vec::new()
        };
        let tools_len = serde_json::to_string(&tools).map(|s| s.len()).unwrap_or(0);
        self.session.fit_context(self.cancel, tools_len).await;
        // The conversation is kept valid as it grows: this checks only what the last step added. The request borrows
        // it and the wire forms of its messages, serialised once each (`Conversation`), so a step costs the same
        // whatever the history's length.
        self.session.messages.ensure_valid();
        let sent = self.session.messages.len();
        let model = self.session.turn_model.clone().or_else(|| self.session.shared.model());
        let model = model.unwrap_or_else(|| self.session.provider.model().to_string());
        self.session.messages.encode_with(&*self.session.provider);
        let request = PreparedRequest {
            model: &model,
            system: &self.session.system_prompt,
            messages: &self.session.messages,
            encoded: self.session.messages.encoded(),
            tools: &tools,
            max_tokens: None,
            history: Some(self.session.messages.history()),
        };
        let (result, shown) = self.stream(&request).await;
        self.settle(result, shown, sent, tools_len)
    }

    /// Sends `request` and forwards the reply's events as they stream (deltas joined, see `Held`) until the provider
    /// is done; returns its result and what of the reply was shown.
    async fn stream(&self, request: &PreparedRequest<'_>) -> (Result<Completion, ProviderError>, Shown) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut shown = Shown::default();
        let mut held = Held::default();
        let result = {
            let fut = self.session.provider.complete(request, &tx, self.cancel);
            tokio::pin!(fut);
            loop {
                tokio::select! {
                    biased;
                    Some(event) = rx.recv() => {
                        // A batch read at once is held whole; when its release is nearly due (the stream thread's
                        // batches come a frame apart), it goes on now rather than on a timer.
                        let mut now = held.take(event);
                        while let Ok(event) = rx.try_recv() {
                            now.extend(held.take(event));
                        }
                        if held.due_within(tern_protocol::STREAM_EARLY) {
                            now.extend(held.release());
                        }
                        for event in now {
                            self.forward(event, &mut shown.text, &mut shown.reasoning);
                        }
                    }
                    () = tokio::time::sleep_until(held.due), if held.is_waiting() => {
                        for event in held.release() {
                            self.forward(event, &mut shown.text, &mut shown.reasoning);
                        }
                    }
                    result = &mut fut => break result,
                }
            }
        };
        while let Ok(event) = rx.try_recv() {
            for event in held.take(event) {
                self.forward(event, &mut shown.text, &mut shown.reasoning);
            }
        }
        for event in held.release() {
            self.forward(event, &mut shown.text, &mut shown.reasoning);
        }
        (result, shown)
    }

    /// What a request's `result` comes to: a completion has its usage counted (its prompt held the first `sent`
    /// messages); an interrupted reply keeps in the conversation what was `shown` of it; a context overflow is left to
    /// compaction; any other error ends the turn.
    fn settle(
        &mut self,
        result: Result<Completion, ProviderError>,
        shown: Shown,
        sent: usize,
        tools_len: usize,
    ) -> Result<Completion, Sent> {
        match result {
            Ok(completion) => {
                let context = self
                    .session
                    .prompt_counted(completion.usage.input_tokens, sent, tools_len);
                self.session.spent(completion.usage, Some(context));
                Ok(completion)
            }
            Err(ProviderError::Cancelled) => {
                let Shown { text, reasoning } = shown;
                if !text.is_empty() || !reasoning.is_empty() {
                    self.session.push_message(Message::Assistant {
                        content: format!("{text}\n\n[interrupted by the user]"),
                        reasoning: (!reasoning.is_empty()).then(|| Reasoning::text(reasoning)),
                        tool_calls: Vec::new(),
                    });
                }
                Err(Sent::End(TurnEnd::Interrupted))
            }
            Err(e @ ProviderError::ContextOverflow(_)) => Err(Sent::Overflow {
                message: e.to_string(),
                tools_len,
            }),
            Err(e) => Err(Sent::End(self.fail(e.to_string()))),
        }
    }

    /// Passes one provider event on to the frontend (deltas come joined, see `Held`).
    fn forward(&self, event: ProviderEvent, partial: &mut String, reasoning: &mut String) {
        match event {
            ProviderEvent::TextDelta(text) => {
                partial.push_str(&text);
                self.session.shared.emit(Event::AssistantDelta { text });
            }
            ProviderEvent::ReasoningDelta(text) => {
                reasoning.push_str(&text);
                self.session.shared.emit(Event::ReasoningDelta { text });
            }
            ProviderEvent::ToolCallStarted { .. } => {}
            ProviderEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => {
                partial.clear();
                reasoning.clear();
                self.session.shared.emit(Event::Retrying {
                    attempt,
                    max_attempts,
                    delay_ms: delay.as_millis() as u64,
                    reason,
                });
            }
        }
    }
}

/// What the user has been shown of a reply as it streamed.
#[derive(Default)]
struct Shown {
    text: String,
    reasoning: String,
}

/// How often streamed text goes on to the frontend at most.
const RELEASE_EVERY: std::time::Duration = tern_protocol::STREAM_FRAME;

/// Streamed text and reasoning held back for at most a frame and joined, so the frontend wakes, prints or draws once
/// per batch of tokens, not once per token. A delta after a quiet spell goes on at once; any other event first
/// releases what is held, so the order is kept.
struct Held {
    /// Runs of text and reasoning deltas in arrival order, each run joined into one.
    events: Vec<ProviderEvent>,
    /// When what is held goes on.
    due: tokio::time::Instant,
}

impl Default for Held {
    fn default() -> Self {
        Self {
            events: Vec::new(),
            due: tokio::time::Instant::now(),
        }
    }
}

impl Held {
    /// Holds `event` when it is a delta (nothing goes on now); any other event goes on now, after what is held.
    fn take(&mut self, event: ProviderEvent) -> Vec<ProviderEvent> {
        match event {
            ProviderEvent::TextDelta(text) => ProviderEvent::append_delta(&mut self.events, Delta::Text, text.into()),
            ProviderEvent::ReasoningDelta(text) => {
                ProviderEvent::append_delta(&mut self.events, Delta::Reasoning, text.into())
            }
            event => {
                let mut now = self.release();
                now.push(event);
                return now;
            }
        }
        Vec::new()
    }

    /// Something is held until `due`.
    fn is_waiting(&self) -> bool {
        !self.events.is_empty()
    }

    /// Something is held and its release is due within `slack`.
    fn due_within(&self, slack: std::time::Duration) -> bool {
        self.is_waiting() && self.due <= tokio::time::Instant::now() + slack
    }

    /// What is held, to go on now; the next release is a frame from now.
    fn release(&mut self) -> Vec<ProviderEvent> {
        if !self.events.is_empty() {
            self.due = tokio::time::Instant::now() + RELEASE_EVERY;
        }
        std::mem::take(&mut self.events)
    }
}

#[cfg(test)]
mod tests {
    use super::{Held, ProviderEvent};

    fn text(t: &str) -> ProviderEvent {
        ProviderEvent::TextDelta(t.into())
    }

    fn shown(events: &[ProviderEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                ProviderEvent::TextDelta(t) => format!("text:{t}"),
                ProviderEvent::ReasoningDelta(t) => format!("reasoning:{t}"),
                ProviderEvent::ToolCallStarted { name, .. } => format!("call:{name}"),
                ProviderEvent::Retrying { .. } => "retrying".into(),
            })
            .collect()
    }

    #[test]
    fn deltas_are_held_and_joined_by_kind_in_arrival_order() {
        let mut held = Held::default();
        for event in [
            ProviderEvent::ReasoningDelta("think".into()),
            ProviderEvent::ReasoningDelta("ing".into()),
            text("Hel"),
            text("lo"),
        ] {
            assert!(held.take(event).is_empty(), "a delta goes on only when released");
        }
        assert!(held.is_waiting());
        assert_eq!(shown(&held.release()), ["reasoning:thinking", "text:Hello"]);
        assert!(!held.is_waiting());
        assert!(held.release().is_empty());
    }

    #[test]
    fn any_other_event_goes_on_at_once_after_what_is_held() {
        let mut held = Held::default();
        assert!(held.take(text("a")).is_empty());
        assert!(held.take(text("b")).is_empty());
        let call = ProviderEvent::ToolCallStarted {
            index: 0,
            id: "c1".into(),
            name: "exec".into(),
        };
        assert_eq!(shown(&held.take(call)), ["text:ab", "call:exec"]);
        assert!(!held.is_waiting());
    }

    #[test]
    fn a_release_puts_the_next_one_a_frame_later() {
        let mut held = Held::default();
        let before = tokio::time::Instant::now();
        assert!(held.take(text("a")).is_empty());
        held.release();
        assert!(held.due >= before + super::RELEASE_EVERY);
    }
}
