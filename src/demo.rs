//! `tern --demo`: a built-in scripted model that drives the real runner and the real tools in a temporary copy of a
//! small sample project (assets/demo). It needs no key and no network, and touches nothing outside its temporary
//! directory: it finds a bug, reads the code, fixes it (a diff), asks to run the tests, and sums up.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::protocol::{FinishReason, Message, Reasoning, ToolCall, Usage};
use crate::provider::{Completion, PreparedRequest, Provider, ProviderError, ProviderEvent};

/// The sample project: (path, content).
pub const PROJECT: &[(&str, &str)] = &[
    ("calc.py", include_str!("../assets/demo/calc.py")),
    ("test_calc.py", include_str!("../assets/demo/test_calc.py")),
    ("README.md", include_str!("../assets/demo/README.md")),
];

/// Writes the sample project into `dir`.
pub fn write_project(dir: &std::path::Path) -> std::io::Result<()> {
    for (path, content) in PROJECT {
        std::fs::write(dir.join(path), content)?;
    }
    Ok(())
}

/// What the demo model says first when the user has not typed anything.
pub const FIRST_PROMPT: &str = "The tests fail. Find the bug in calc.py and fix it.";

struct Step {
    reasoning: &'static str,
    text: &'static str,
    calls: fn() -> Vec<(&'static str, Value)>,
}

const STEPS: &[Step] = &[
    Step {
        reasoning: "The user says the tests fail. I should look at the project layout and find where `average` is \
                    defined before reading anything in full.",
        text: "Let me look around the project first.",
        calls: || {
            vec![
                ("list_dir", json!({"path": "."})),
                (
                    "grep",
                    json!({"pattern": "def (average|total)", "path": ".", "output_mode": "content"}),
                ),
            ]
        },
    },
    Step {
        reasoning: "",
        text: "`average` lives in `calc.py`. Reading it:",
        calls: || vec![("read_file", json!({"path": "calc.py"}))],
    },
    Step {
        reasoning: "The mean divides by `len(values) + 1`: an off-by-one. It should divide by `len(values)`.",
        text: "Found it: `average` divides by `len(values) + 1`. Fixing the off-by-one:",
        calls: || {
            vec![(
                "edit_file",
                json!({
                    "path": "calc.py",
                    "old_text": "    return total(values) / (len(values) + 1)",
                    "new_text": "    return total(values) / len(values)"
                }),
            )]
        },
    },
    Step {
        reasoning: "",
        text: "Now the tests, to be sure:",
        calls: || vec![("exec", json!({"command": "python3 test_calc.py"}))],
    },
];

const SUMMARY: &str = "## Fixed\n\n`average` in `calc.py` divided by `len(values) + 1`, so every mean came out too \
small. It now divides by `len(values)`:\n\n```python\ndef average(values):\n    if not values:\n        raise \
ValueError(\"average of an empty list\")\n    return total(values) / len(values)\n```\n\n| test | before | after |\n\
|---|---|---|\n| `test_total` | ok | ok |\n| `test_average` | **fail** | ok |\n| `test_spread` | ok | ok |\n\n\
This was the demo: a scripted model driving tern's real tools in a temporary copy of a sample project. Press \
**Ctrl+T** to browse every tool call, **Ctrl+D** for the diff, and run `tern` without `--demo` to work with a real \
model.";

const DENIED_SUMMARY: &str = "The fix is in place (`average` now divides by `len(values)`), but I did not run the \
tests because you denied the command. Run `python3 test_calc.py` yourself to check.\n\nThis was the demo; run `tern` \
without `--demo` to work with a real model.";

const DONE: &str = "That was the whole demo. Run `tern` without `--demo` to work with a real model.";

/// The scripted model. It streams like a real one (text in small pieces) so the UI shows the same motion.
pub struct DemoProvider {
    step: Mutex<usize>,
    /// Pause between streamed pieces.
    pace: Duration,
}

impl DemoProvider {
    pub fn new(pace: Duration) -> Self {
        Self {
            step: Mutex::new(0),
            pace,
        }
    }
}

#[async_trait]
impl Provider for DemoProvider {
    fn name(&self) -> &str {
        "demo"
    }

    fn model(&self) -> &str {
        "scripted-demo"
    }

    async fn complete(
        &self,
        request: &PreparedRequest<'_>,
        events: &UnboundedSender<ProviderEvent>,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        let index = {
            let mut step = self
                .step
                .lock()
                .map_err(|_| ProviderError::Stream("demo state poisoned".into()))?;
            let index = *step;
            *step += 1;
            index
        };
        let last_denied = request.messages.iter().rev().find_map(|m| match m {
            Message::Tool { name, is_error, .. } if name == "exec" => Some(*is_error),
            _ => None,
        });
        let (reasoning, text, calls) = match STEPS.get(index) {
            Some(step) if request.tools.is_empty() => (step.reasoning, SUMMARY, Vec::new()),
            Some(step) => (step.reasoning, step.text, (step.calls)()),
            None if index == STEPS.len() && last_denied == Some(true) => ("", DENIED_SUMMARY, Vec::new()),
            None if index == STEPS.len() => ("", SUMMARY, Vec::new()),
            None => ("", DONE, Vec::new()),
        };
        for piece in pieces(reasoning) {
            self.pause(cancel).await?;
            let _ = events.send(ProviderEvent::ReasoningDelta(piece));
        }
        for piece in pieces(text) {
            self.pause(cancel).await?;
            let _ = events.send(ProviderEvent::TextDelta(piece));
        }
        let tool_calls: Vec<ToolCall> = calls
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| ToolCall {
                id: format!("demo_{index}_{i}"),
                name: name.to_string(),
                arguments,
            })
            .collect();
        let finish_reason = if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        Ok(Completion {
            content: text.to_string(),
            reasoning: (!reasoning.is_empty()).then(|| Reasoning::text(reasoning)),
            tool_calls,
            finish_reason,
            usage: Usage {
                input_tokens: 1_200 + 400 * index as u64,
                output_tokens: (text.len() / 4) as u64 + 20,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            },
        })
    }
}

impl DemoProvider {
    async fn pause(&self, cancel: &CancellationToken) -> Result<(), ProviderError> {
        if self.pace.is_zero() {
            return if cancel.is_cancelled() {
                Err(ProviderError::Cancelled)
            } else {
                Ok(())
            };
        }
        tokio::select! {
            _ = tokio::time::sleep(self.pace) => Ok(()),
            _ = cancel.cancelled() => Err(ProviderError::Cancelled),
        }
    }
}

/// Splits text into streaming pieces of a few words.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, word) in text.split_inclusive(' ').enumerate() {
        current.push_str(word);
        if i % 3 == 2 {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_rebuild_the_text() {
        let text = "one two three four five six seven";
        assert_eq!(pieces(text).concat(), text);
        assert!(pieces("").is_empty());
    }

    #[test]
    fn the_edit_matches_the_sample_project() {
        let calc = PROJECT[0].1;
        let edit = (STEPS[2].calls)();
        let old = edit[0].1["old_text"].as_str().unwrap();
        assert_eq!(calc.matches(old).count(), 1);
    }
}
