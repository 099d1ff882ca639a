//! `tern run`'s tool activity, notices and errors on stderr (text and json formats): "● tool argument" as a call
//! begins, "✓"/"✗" with the result's first line as it ends, in call order (`order`). A result printed right under its
//! own begin line needs no label; one that follows other lines (calls run together) names its tool and argument. A
//! subagent's lines carry its label.

use std::io::Write;

use super::order::AgentKey;
use super::printer::Printer;
use tern_protocol::process::ProcessEnd;
use tern_protocol::{Event, PlanItem, PlanStatus, ToolKind, TurnEnd};
use tern_text::calls::key_argument;

/// What a result line needs of an ended call.
pub(super) struct Ended {
    name: String,
    /// A call of the plan tool.
    plan: bool,
    is_error: bool,
    first_line: String,
    duration_ms: u64,
}

/// The agent an event is about and the event itself: a subagent's is wrapped in `Event::Subagent`.
pub(super) fn agent_of(event: &Event) -> (AgentKey, &Event) {
    match event {
        Event::Subagent { label, inner, .. } => (Some(label.clone()), inner),
        _ => (None, event),
    }
}

impl Printer {
    /// Tool activity, notices and errors, on stderr; a subagent's prefixed with its label.
    pub(super) fn print_progress<E: Write>(&mut self, event: &Event, err: &mut E) {
        if let Some(line) = subagent_line(event) {
            self.last_begin = None;
            let _ = writeln!(err, "{line}");
            return;
        }
        let (agent, inner) = agent_of(event);
        let lines = self.progress_lines(&agent, inner);
        write_lines(&agent, &lines, err);
    }

    /// Results still held when the run ends (a batch cut short), in call order.
    pub(super) fn print_held<E: Write>(&mut self, err: &mut E) {
        for released in self.held.drain() {
            let line = result_line(&released.item, Some(&released.label));
            let _ = writeln!(err, "{line}");
        }
    }

    fn progress_lines(&mut self, agent: &AgentKey, event: &Event) -> Vec<String> {
        let line = match event {
            Event::ToolCallBegin {
                call_id,
                name,
                kind,
                args,
            } => {
                let label = format!("{name} {}", key_argument(args)).trim_end().to_string();
                self.held.begin(agent, call_id, label.clone());
                // The plan is printed whole when it changes; its calls only when one fails.
                if *kind == ToolKind::Plan {
                    self.plan_calls.insert((agent.clone(), call_id.clone()));
                    return Vec::new();
                }
                self.last_begin = Some((agent.clone(), call_id.clone()));
                return vec![format!("● {label}")];
            }
            Event::ToolCallEnd {
                call_id,
                name,
                output,
                duration_ms,
                ..
            } => {
                let limit = if output.is_error { 400 } else { 160 };
                let ended = Ended {
                    name: name.clone(),
                    plan: self.plan_calls.remove(&(agent.clone(), call_id.clone())),
                    is_error: output.is_error,
                    // Shown as the call's line is: a name with a zero-width space must not pass for another.
                    first_line: tern_text::reveal(&headline(&output.text))
                        .0
                        .chars()
                        .take(limit)
                        .collect(),
                    duration_ms: *duration_ms,
                };
                return self.released(agent, call_id, ended);
            }
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => format!(
                "tern: {reason}; retrying in {:.1}s ({attempt}/{max_attempts})",
                *delay_ms as f64 / 1000.0
            ),
            Event::Notice { text } => format!("tern: {text}"),
            Event::ProcessStarted { process } => format!(
                "tern: process {} started: {}",
                process.id,
                tern_text::one_line(&process.command.chars().take(200).collect::<String>())
            ),
            Event::ProcessExited { id, end } => format!("tern: process {id} {}", process_end(end)),
            Event::Error { message } => format!("tern: error: {message}"),
            Event::Elicitation { server, message, .. } => format!(
                "tern: MCP server {server} asked for input ({}); declined: nobody can answer in tern run",
                message
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect::<String>()
            ),
            Event::TurnFinished {
                reason: TurnEnd::Interrupted,
            } => "tern: interrupted".to_string(),
            Event::TurnFinished {
                reason: TurnEnd::Aborted,
            } => "tern: turn aborted".to_string(),
            _ => return Vec::new(),
        };
        self.last_begin = None;
        vec![line]
    }

    /// The result lines a call's end lets out: its own once the calls before it have theirs, and any later ones that
    /// waited for it.
    fn released(&mut self, agent: &AgentKey, call_id: &str, ended: Ended) -> Vec<String> {
        let mut lines = Vec::new();
        for released in self.held.end(agent, call_id, ended) {
            let ended = &released.item;
            if ended.plan {
                if ended.is_error {
                    lines.push(format!("● {}", ended.name));
                    lines.push(result_line(ended, None));
                    self.last_begin = None;
                }
                continue;
            }
            let right_under = self
                .last_begin
                .as_ref()
                .is_some_and(|(a, id)| a == agent && *id == released.call_id);
            let label = (!right_under).then_some(released.label.as_str());
            lines.push(result_line(ended, label));
            self.last_begin = None;
        }
        lines
    }
}

fn write_lines<E: Write>(agent: &AgentKey, lines: &[String], err: &mut E) {
    for line in lines {
        let _ = match agent {
            Some(label) => writeln!(err, "[{label}] {}", line.trim_start()),
            None => writeln!(err, "{line}"),
        };
    }
}

/// A result's first line; one that introduces a list ("Patch applied:") goes on with the list's items, joined.
fn headline(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    if !first.ends_with(':') {
        return first.to_string();
    }
    let items: Vec<&str> = lines
        .map(|l| l.trim().trim_start_matches("- "))
        .filter(|l| !l.is_empty())
        .collect();
    if items.is_empty() {
        return first.to_string();
    }
    format!("{first} {}", items.join("; "))
}

/// "  ✓ first line (0.1s)", or with the call's label when it does not stand right under its begin line.
fn result_line(ended: &Ended, label: Option<&str>) -> String {
    let mark = if ended.is_error { "✗" } else { "✓" };
    let seconds = ended.duration_ms as f64 / 1000.0;
    match label.filter(|l| !l.is_empty()) {
        Some(label) => format!("  {mark} {label} — {} ({seconds:.1}s)", ended.first_line),
        None => format!("  {mark} {} ({seconds:.1}s)", ended.first_line),
    }
}

/// How a live process ended, in words.
fn process_end(end: &ProcessEnd) -> String {
    match end {
        ProcessEnd::Exited { code } => format!("exited with code {code}"),
        ProcessEnd::Signalled { signal } => format!("was killed by signal {signal}"),
        ProcessEnd::Stopped { by } => format!("was stopped by {by}"),
        ProcessEnd::Lost { reason } => format!("was lost: {reason}"),
    }
}

/// The lines for a subagent's start and end.
fn subagent_line(event: &Event) -> Option<String> {
    match event {
        Event::SubagentStarted { label, task, wait, .. } => {
            let task: String = task.lines().next().unwrap_or_default().chars().take(120).collect();
            let how = if *wait { "" } else { " in the background" };
            Some(format!("[{label}] started{how}: {task}"))
        }
        Event::SubagentFinished {
            label,
            end,
            steps,
            elapsed_ms,
            ..
        } => {
            let how = match end {
                TurnEnd::Completed => "done".to_string(),
                TurnEnd::IterationLimit => "done at its iteration limit".to_string(),
                TurnEnd::Interrupted => "interrupted".to_string(),
                TurnEnd::Aborted => "aborted".to_string(),
                TurnEnd::Error { message } => format!("failed: {message}"),
            };
            Some(format!(
                "[{label}] {how} ({steps} steps, {:.1}s)",
                *elapsed_ms as f64 / 1000.0
            ))
        }
        _ => None,
    }
}

/// The plan, compactly: a title with the progress, then one line a step.
pub fn plan_text(items: &[PlanItem]) -> String {
    if items.is_empty() {
        return "plan: cleared\n".to_string();
    }
    let (done, total) = tern_protocol::plan_progress(items);
    let mut text = format!("plan: {done}/{total} done\n");
    for item in items {
        let mark = match item.status {
            PlanStatus::Completed => "☑",
            PlanStatus::InProgress => "◐",
            PlanStatus::Pending => "☐",
        };
        text.push_str(&format!("  {mark} {}\n", item.content));
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_result_that_introduces_a_list_goes_on_with_its_items() {
        assert_eq!(
            super::headline("Patch applied:\n- update a.txt (+2 -2)\n- add new/b.txt (+1)\n"),
            "Patch applied: update a.txt (+2 -2); add new/b.txt (+1)"
        );
        assert_eq!(super::headline("Created a.txt\nmore"), "Created a.txt");
        assert_eq!(super::headline("Found:"), "Found:");
    }
}
