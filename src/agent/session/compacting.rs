//! The session side of compaction (`crate::compact`): measuring the prompt, and replacing older messages by what
//! the plan says.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::compact::*;
use crate::context::message_tokens;
use tern_protocol::{Event, Message, ToolKind};
use tern_provider::{ChatRequest, ProviderError};

impl Session {
    /// The prompt's size in tokens: the provider's count for what it last received plus an estimate of the messages
    /// added since. Only the new messages are walked.
    pub(crate) fn prompt_tokens(&mut self, tools_json_len: usize) -> u64 {
        self.meter.measure(&self.messages, &self.system_prompt, tools_json_len)
    }

    /// Takes the provider's count of the prompt it just answered, which held the first `sent` messages (and tool
    /// definitions of `tools_json_len` bytes), checked against tern's own estimate; returns the prompt's measure now.
    pub(crate) fn prompt_counted(&mut self, input_tokens: u64, sent: usize, tools_json_len: usize) -> u64 {
        let estimate = crate::context::estimate_tokens(&[], &self.system_prompt, tools_json_len)
            + self.messages.estimated_tokens();
        let count = self.meter.counted(input_tokens, sent, self.messages.len(), estimate);
        if count == (Count::Doubted { first: true }) {
            self.shared.emit(Event::Notice {
                text: format!(
                    "the server reported {input_tokens} prompt tokens for a prompt of about {estimate}: tern measures \
                     the context with its own estimate from now on (compaction and the context figures follow it)"
                ),
            });
        }
        self.prompt_tokens(tools_json_len)
    }

    /// Compacts before a request when the prompt has passed `compact_at` of the window (or would not leave room for
    /// the answer).
    pub(crate) async fn fit_context(&mut self, cancel: &CancellationToken, tools_json_len: usize) {
        if self.prompt_tokens(tools_json_len) > self.compact_limit() {
            self.compact(cancel, tools_json_len, None, Trigger::Threshold).await;
        }
    }

    fn compact_limit(&self) -> u64 {
        let threshold = (self.limits.context_window as f64 * self.limits.compaction.compact_at) as u64;
        threshold.min(self.limits.context_window.saturating_sub(self.limits.reserve_tokens))
    }

    fn keep_tokens(&self) -> u64 {
        (self.limits.context_window as f64 * self.limits.compaction.keep_recent) as u64
    }

    /// Shrinks the conversation; returns whether anything changed. Old tool results go first (no model call, and
    /// they can be had again), then a summary of the older turns, then, if the recent part alone is still too
    /// large, the results of all but the last step.
    pub(crate) async fn compact(
        &mut self,
        cancel: &CancellationToken,
        tools_json_len: usize,
        focus: Option<String>,
        trigger: Trigger,
    ) -> bool {
        let before = self.prompt_tokens(tools_json_len);
        let limit = self.compact_limit();
        // Far enough below the threshold that the next steps do not compact again at once.
        let low_water = match trigger {
            Trigger::Threshold => (limit + self.keep_tokens()) / 2,
            Trigger::Overflow | Trigger::Manual => 0,
        };
        let split = self.split_for(trigger, before);
        let mut cleared = 0;
        if trigger != Trigger::Manual {
            cleared += self.clear_results(split, low_water, tools_json_len);
        }
        let mut summarised = 0;
        let summarise = match trigger {
            Trigger::Threshold => {
                self.prompt_tokens(tools_json_len) > limit && self.meter.may_summarise(self.messages.len())
            }
            Trigger::Overflow | Trigger::Manual => true,
        };
        // PreCompact hooks may block the summary (Claude Code's compaction); clearing old results goes on.
        let summarise = summarise && self.pre_compact_hooks(trigger, focus.as_deref(), cancel).await;
        let mut failed = false;
        if summarise {
            // Clearing results replaced messages one for one, so `split` still marks the same place.
            match self.summarise(cancel, focus.as_deref(), split, tools_json_len).await {
                Ok(n) => summarised = n,
                Err(problem) => {
                    failed = true;
                    self.meter.summary_failed(self.messages.len());
                    self.shared.emit(Event::Notice {
                        text: format!("could not summarise the conversation ({problem}); it is unchanged"),
                    });
                }
            }
        }
        if trigger != Trigger::Manual && self.prompt_tokens(tools_json_len) > limit {
            let last_step = self
                .messages
                .iter()
                .rposition(|m| !matches!(m, Message::Tool { .. }))
                .unwrap_or(0);
            cleared += self.clear_results(last_step, low_water, tools_json_len);
        }
        if cleared == 0 && summarised == 0 {
            if trigger == Trigger::Manual && !failed {
                self.shared.emit(Event::Notice {
                    text: "nothing to compact: the conversation is all recent".into(),
                });
            }
            return false;
        }
        self.files.forget_all();
        let after = self.prompt_tokens(tools_json_len);
        self.shared.emit(Event::Notice {
            text: compacted_notice(trigger, summarised, cleared, before, after),
        });
        true
    }

    /// Where the older messages end and the ones kept verbatim begin, for a compaction by `trigger` of a prompt of
    /// `before` tokens.
    fn split_for(&self, trigger: Trigger, before: u64) -> usize {
        match trigger {
            Trigger::Threshold => plan::split_point(&self.messages, self.keep_tokens()),
            // The window is evidently smaller than we thought: keep a share of what did not fit.
            Trigger::Overflow => plan::split_point(
                &self.messages,
                self.keep_tokens()
                    .min((before as f64 * self.limits.compaction.keep_recent) as u64),
            ),
            // Asked for: summarise all but the last turn (less when it is large), or all but its last step.
            Trigger::Manual => {
                match plan::split_point(&self.messages, self.keep_tokens()).max(plan::last_turn_start(&self.messages)) {
                    0 => plan::split_point(&self.messages, 0),
                    split => split,
                }
            }
        }
    }

    /// Replaces large results before `protect_from` with notes, oldest first, until the prompt is at most `target`
    /// tokens. Returns how many were replaced.
    fn clear_results(&mut self, protect_from: usize, target: u64, tools_json_len: usize) -> usize {
        let mut cleared = 0;
        for index in plan::compactable_results(&self.messages, protect_from) {
            if self.prompt_tokens(tools_json_len) <= target {
                break;
            }
            let kind_of = |name: &str| self.tools.get(name).map_or(ToolKind::Other, |tool| tool.kind());
            if let Some(note) = plan::compacted_result(&self.messages, index, kind_of) {
                let saved = message_tokens(&self.messages[index]).saturating_sub(message_tokens(&note));
                self.replace_messages(index, index + 1, vec![note]);
                // One message changed in place: adjust the measure instead of estimating everything again.
                self.meter.shrunk(saved, self.messages.len());
                cleared += 1;
            }
        }
        cleared
    }

    /// Asks the model for a summary of the messages before `split` and puts it in their place. Returns
    /// how many messages it replaced (0 when everything is recent); an error says why nothing changed.
    async fn summarise(
        &mut self,
        cancel: &CancellationToken,
        focus: Option<&str>,
        split: usize,
        tools_json_len: usize,
    ) -> Result<usize, String> {
        if plan::only_a_summary(&self.messages, split) {
            return Ok(0);
        }
        self.shared.emit(Event::Notice {
            text: format!("compacting: summarising {split} earlier message(s)…"),
        });
        // The transcript must fit in the window with the instructions and the summary itself.
        let room = self
            .limits
            .context_window
            .saturating_sub(self.limits.reserve_tokens.min(SUMMARY_MAX_TOKENS))
            .saturating_sub(SUMMARY_PROMPT.len() as u64 / 4 + 1_000);
        let transcript = plan::transcript(&self.messages[..split], (room as usize).saturating_mul(3));
        let mut ask = String::from(
            "Summarise the conversation below following your instructions. It is the older part of the session; \
             the newer messages stay as they are after your summary.\n",
        );
        if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
            ask.push_str(&format!("\nThe user asks the summary to focus on: {focus}\n"));
        }
        ask.push_str("\n<conversation>\n");
        ask.push_str(&transcript);
        ask.push_str("</conversation>\n");
        let model = self.shared.model();
        let request = ChatRequest {
            model: model.unwrap_or_else(|| self.provider.model().to_string()),
            system: SUMMARY_PROMPT.to_string(),
            messages: vec![Message::User {
                content: ask,
                images: Vec::new(),
            }],
            tools: Vec::new(),
            max_tokens: Some(self.limits.reserve_tokens.clamp(1_024, SUMMARY_MAX_TOKENS) as u32),
        };
        // The summary is not shown as it streams: the notice says when it is done.
        let (events, _ignored) = mpsc::unbounded_channel();
        let completion = match self.provider.complete(&request.prepared(), &events, cancel).await {
            Ok(completion) => completion,
            Err(ProviderError::Cancelled) => return Err("interrupted".into()),
            Err(e) => return Err(e.to_string()),
        };
        self.spent(completion.usage, None);
        if completion.content.trim().is_empty() {
            return Err("the model returned an empty summary".into());
        }
        // The model's plan lives in todo_write calls the summary replaces: it goes on in the summary as it was.
        let mut summary = completion.content.trim().to_string();
        summary.extend(tern_tools::todo::carried_plan(
            &self.messages[..split],
            &self.messages[split..],
        ));
        self.replace_messages(0, split, vec![plan::summary_message(&summary)]);
        self.meter.invalidate();
        self.prompt_tokens(tools_json_len);
        Ok(split)
    }

    /// `/compact [focus]` between turns, with the tool definitions as the next request would carry them.
    pub(crate) async fn compact_on_request(&mut self, focus: Option<String>, cancel: &CancellationToken) {
        let tools_json_len = serde_json::to_string(&self.tools.definitions())
            .map(|s| s.len())
            .unwrap_or(0);
        self.compact(cancel, tools_json_len, focus, Trigger::Manual).await;
    }
}
