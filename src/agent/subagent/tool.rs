//! The `spawn` tool: `task` (required), `label` (a short name the user sees), `wait` (default false, as the
//! reference: the subagent works in the background and its report arrives when it is done).
//!
//! Gate verdict: the approval gate allows `spawn` in every mode without asking (an explicit arm in
//! `ApprovalGate::check`). Starting a subagent changes nothing by itself: each call the subagent makes goes through
//! the same gate, in the same mode, with the same rules, and asks the user exactly when the main agent's call would.
//! It is not `read_only()` all the same, so the repeat guard forgets what it saw (the subagent may have written files)
//! and no "read-only" shortcut applies to it. It is `concurrency_safe()`: several waited-for spawns in one step run in
//! parallel, which is the point of them, and nothing they do skips the gate.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::SubagentManager;
use super::run::inline_result;
use tern_protocol::ToolKind;
use tern_protocol::ToolOutput;
use tern_tools::{Tool, ToolContext, ToolError};

pub(crate) const SPAWN_TOOL: &str = "spawn";

/// How much of the task names a subagent that was given no label.
const LABEL_FROM_TASK: usize = 30;

pub(crate) struct SpawnTool {
    manager: Arc<SubagentManager>,
}

impl SpawnTool {
    pub(crate) fn new(manager: Arc<SubagentManager>) -> Self {
        Self { manager }
    }
}

#[async_trait]
impl Tool for SpawnTool {
    fn name(&self) -> &str {
        SPAWN_TOOL
    }
    fn claude(&self) -> Option<tern_tools::ClaudeTool> {
        Some(tern_tools::ClaudeTool::Task)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Agent
    }

    fn description(&self) -> &str {
        "Start a subagent: another agent with its own fresh context that does one self-contained task with the same \
         tools as you (except spawn) and reports back. Use it for work that is independent of your current context, \
         or to do several independent pieces in parallel (several spawn calls in one step with wait=true run at \
         once). Give the task in full: the subagent sees nothing of this conversation. With wait=true its report is \
         this call's result; with wait=false (the default) the call returns at once and the report arrives as a \
         message when the subagent is done. Its tool calls need the same approvals as yours."
    }

    fn parameters(&self) -> Value {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "The whole task, with every path, name and constraint the subagent needs."},
                "label": {"type": "string", "description": "A short name for the user (a few words)."},
                "wait": {"type": "boolean", "description": "Wait for the report and get it as this call's result (default false)."}
            },
            "required": ["task"],
            "additionalProperties": false
        });
        let agents = &self.manager.parent.agents;
        if !agents.is_empty() {
            let listed: Vec<String> = agents
                .iter()
                .map(|a| format!("{}: {}", a.name, a.description.replace('\n', " ")))
                .collect();
            schema["properties"]["agent"] = json!({
                "type": "string",
                "enum": agents.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
                "description": format!(
                    "Run the subagent as one of these specialised agents (its own instructions and tools); leave it out \
                     for a general one.\n- {}",
                    listed.join("\n- ")
                ),
            });
        }
        schema
    }

    fn concurrency_safe(&self) -> bool {
        true
    }

    fn stable_result(&self) -> bool {
        false
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let task = args
            .get("task")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string();
        if task.is_empty() {
            return Err(ToolError::Invalid(
                "task is empty: say what the subagent should do".into(),
            ));
        }
        let label = match args.get("label").and_then(Value::as_str).map(str::trim) {
            Some(label) if !label.is_empty() => one_line(label, 60),
            _ => one_line(&task, LABEL_FROM_TASK),
        };
        let agent = match args.get("agent").and_then(Value::as_str).map(str::trim) {
            Some(name) if !name.is_empty() => match self.manager.agent(name) {
                Some(agent) => Some(agent.clone()),
                None => return Err(ToolError::Invalid(format!("there is no agent `{name}`"))),
            },
            _ => None,
        };
        let wait = args.get("wait").and_then(Value::as_bool).unwrap_or(false);
        // A waited-for subagent stops with the turn; one in the background with the next interrupt or shutdown.
        let cancel = if wait {
            ctx.cancel.child_token()
        } else {
            self.manager.parent.shared.background_token()
        };
        let (id, outcome) = self.manager.start(label.clone(), task, wait, cancel, agent);
        if !wait {
            return Ok(ToolOutput::text(format!(
                "Started subagent '{label}' (id {id}). Its report will arrive as a message when it is done; go on \
                 with other work meanwhile, and do not do its task yourself."
            )));
        }
        match outcome.await {
            Ok(outcome) => Ok(inline_result(&label, &id, &outcome)),
            Err(_) => Err(ToolError::Failed(format!(
                "subagent '{label}' (id {id}) stopped without a result"
            ))),
        }
    }
}

/// The first line of `text`, at most `max` characters, with an ellipsis when cut.
fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    if line.chars().count() > max || text.trim().lines().count() > 1 {
        let cut: String = line.chars().take(max).collect();
        format!("{}…", cut.trim_end())
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn labels_are_one_short_line() {
        assert_eq!(one_line("find the tests", 30), "find the tests");
        assert_eq!(one_line("a very long task that goes on and on", 10), "a very lon…");
        assert_eq!(one_line("first line\nsecond", 30), "first line…");
    }
}
