//! `todo_write`: the model's plan for multi-step work, a checklist it rewrites whole each time (pending, in progress,
//! completed). The tool only checks the list and hands it back as `ToolDetails::Plan`; the runner turns that into
//! `Event::PlanUpdated` for the frontends and the session log. It touches no file, process or network, so it is
//! read-only and the gate lets it through in every mode (a plan is most useful in read-only mode). It runs alone, not
//! in parallel, so when the model sends two lists in one step the later one is the plan.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use tern_protocol::{Message, PlanItem, PlanStatus, ToolDetails, ToolKind, ToolOutput};

/// More steps than this is not a plan a person can follow.
pub(crate) const MAX_ITEMS: usize = 50;
/// One step is one line, not a document.
pub(crate) const MAX_CONTENT_CHARS: usize = 300;

const DESCRIPTION: &str = "Keep a checklist of the current task and show it to the user. Use it for work of three or \
more distinct steps, when the user gives a list of things to do, or when the task will take many tool calls: write the \
plan before starting, then call this again whenever a step starts or ends. Skip it for a single quick change or a \
question you can just answer.\n\
\n\
Each call sends the WHOLE list, which replaces the previous one. A step's status is `pending`, `in_progress` or \
`completed`. Keep exactly one step `in_progress` while you work (at most one at any time), mark a step `completed` as \
soon as it is done (not in batches at the end), and only when it is really done: tests pass, nothing left half \
finished. If you hit a blocker, keep the step `in_progress` and add a step for what must be solved. Add steps you \
discover along the way, and remove the ones that no longer matter. Write each step as a short imperative line \
(\"Add the config loader\").";

pub(crate) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(TodoWriteTool)]
}

pub(crate) struct TodoWriteTool;

#[async_trait]
impl Tool for TodoWriteTool {
    fn name(&self) -> &str {
        NAME
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::TodoWrite)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Plan
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The whole plan, in order. An empty list clears it.",
                    "maxItems": MAX_ITEMS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS,
                                "description": "The step, one short imperative line."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                        },
                        "required": ["content", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        })
    }

    /// It writes nothing outside the session: the plan lives in the conversation and the session log.
    fn read_only(&self) -> bool {
        true
    }

    /// Rewriting the plan with the same list is harmless, never a loop worth refusing.
    fn stable_result(&self) -> bool {
        false
    }

    /// One at a time, in call order, so the last list sent is the plan.
    fn concurrency_safe(&self) -> bool {
        false
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let items = parse_plan(&args).map_err(ToolError::Invalid)?;
        let text = saved_text(&items);
        Ok(ToolOutput::text(text).with_details(ToolDetails::Plan { items }))
    }
}

/// The plan in validated arguments, or what is wrong with it in words the model can act on.
pub(crate) fn parse_plan(args: &Value) -> Result<Vec<PlanItem>, String> {
    let list = args
        .get("todos")
        .and_then(Value::as_array)
        .ok_or("`todos` must be the list of steps")?;
    if list.len() > MAX_ITEMS {
        return Err(format!(
            "the plan has {} steps; keep it to {MAX_ITEMS} at most (merge small steps)",
            list.len()
        ));
    }
    let mut items = Vec::with_capacity(list.len());
    for (n, entry) in list.iter().enumerate() {
        let content = entry.get("content").and_then(Value::as_str).unwrap_or("");
        // A key the model copied into its plan goes no further: not to the screen, the session or the next request.
        let content = tern_secrets::mask(content)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if content.is_empty() {
            return Err(format!("step {} has no content", n + 1));
        }
        if content.chars().count() > MAX_CONTENT_CHARS {
            return Err(format!(
                "step {} is longer than {MAX_CONTENT_CHARS} characters; make it one short line",
                n + 1
            ));
        }
        let status = match entry.get("status").and_then(Value::as_str) {
            Some("pending") => PlanStatus::Pending,
            Some("in_progress") => PlanStatus::InProgress,
            Some("completed") => PlanStatus::Completed,
            other => {
                return Err(format!(
                    "step {} has status {}; use pending, in_progress or completed",
                    n + 1,
                    other.map_or("(none)".to_string(), |s| format!("`{s}`"))
                ));
            }
        };
        items.push(PlanItem { content, status });
    }
    let working: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].status == PlanStatus::InProgress)
        .map(|i| i + 1)
        .collect();
    if working.len() > 1 {
        let steps: Vec<String> = working.iter().map(usize::to_string).collect();
        return Err(format!(
            "steps {} are all in_progress; keep at most one step in_progress (finish one, or set the others back to \
             pending)",
            steps.join(", ")
        ));
    }
    Ok(items)
}

/// The tool's name, by which its own earlier calls are found in a conversation.
const NAME: &str = "todo_write";

/// The plan as `messages` last saved it: the list of the last `todo_write` call that did not fail.
pub(crate) fn saved_plan(messages: &[Message]) -> Option<Vec<PlanItem>> {
    let call_id = messages.iter().rev().find_map(|m| match m {
        Message::Tool {
            call_id,
            name,
            is_error: false,
            ..
        } if name == NAME => Some(call_id),
        _ => None,
    })?;
    let args = messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls.iter().find(|c| &c.id == call_id).map(|c| &c.arguments),
        _ => None,
    })?;
    let args = match args {
        Value::String(raw) => serde_json::from_str(raw).ok()?,
        other => other.clone(),
    };
    parse_plan(&args).ok()
}

/// What a compaction adds to its summary so the model keeps its plan: the plan saved in the `summarised` messages,
/// word for word, when the `kept` ones do not save a newer one. `None` when there is nothing to carry.
pub fn carried_plan(summarised: &[Message], kept: &[Message]) -> Option<String> {
    if saved_plan(kept).is_some() {
        return None;
    }
    let items = saved_plan(summarised).filter(|items| !items.is_empty())?;
    let mut note = String::from("\n\nYour plan (todo_write) as you last saved it:\n");
    for item in &items {
        note.push_str(&format!("- [{}] {}\n", item.status.as_str(), item.content));
    }
    Some(note)
}

/// What the model reads back: short, with the counts, so it knows the list was taken as sent.
fn saved_text(items: &[PlanItem]) -> String {
    if items.is_empty() {
        return "Plan cleared.".to_string();
    }
    let done = items.iter().filter(|i| i.status == PlanStatus::Completed).count();
    let current = items.iter().find(|i| i.status == PlanStatus::InProgress);
    let mut text = format!("Plan saved: {done}/{} done.", items.len());
    match current {
        Some(item) => text.push_str(&format!(" In progress: {}.", item.content)),
        None if done < items.len() => text.push_str(" Mark the next step in_progress when you start it."),
        None => {}
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PathPolicy, ToolRegistry};
    use tern_protocol::ToolCall;

    fn call(args: Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "todo_write".into(),
            arguments: args,
        }
    }

    async fn run(args: Value) -> ToolOutput {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(TodoWriteTool));
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
        registry.run(&call(args), &ctx).await
    }

    #[tokio::test]
    async fn saves_a_plan_and_reports_it() {
        let out = run(json!({"todos": [
            {"content": "Read the loader", "status": "completed"},
            {"content": "  Add the [web]\n section ", "status": "in_progress"},
            {"content": "Write tests", "status": "pending"},
        ]}))
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(out.text, "Plan saved: 1/3 done. In progress: Add the [web] section.");
        let ToolDetails::Plan { items } = out.details else {
            panic!("no plan in {:?}", out.details)
        };
        assert_eq!(items.len(), 3);
        assert_eq!(items[1].content, "Add the [web] section");
        assert_eq!(items[1].status, PlanStatus::InProgress);
    }

    #[tokio::test]
    async fn refuses_two_steps_in_progress() {
        let out = run(json!({"todos": [
            {"content": "a", "status": "in_progress"},
            {"content": "b", "status": "pending"},
            {"content": "c", "status": "in_progress"},
        ]}))
        .await;
        assert!(out.is_error);
        assert!(out.text.contains("steps 1, 3 are all in_progress"), "{}", out.text);
        assert!(out.details.is_none());
    }

    #[tokio::test]
    async fn refuses_bad_shapes_through_the_schema() {
        for args in [
            json!({}),
            json!({"todos": [{"content": "a", "status": "done"}]}),
            json!({"todos": [{"content": "", "status": "pending"}]}),
            json!({"todos": [{"content": "a"}]}),
            json!({"todos": [{"content": "a", "status": "pending", "priority": "high"}]}),
            json!({"todos": [{"content": "x".repeat(MAX_CONTENT_CHARS + 1), "status": "pending"}]}),
            json!({"todos": vec![json!({"content": "a", "status": "pending"}); MAX_ITEMS + 1]}),
        ] {
            let out = run(args.clone()).await;
            assert!(out.is_error, "accepted {args}");
            assert!(out.text.contains("Invalid parameters"), "{args}: {}", out.text);
        }
    }

    #[test]
    fn parse_checks_what_the_schema_cannot() {
        assert!(
            parse_plan(&json!({"todos": [{"content": " \n ", "status": "pending"}]}))
                .unwrap_err()
                .contains("step 1 has no content")
        );
        assert!(
            parse_plan(&json!({"todos": [{"content": "a", "status": "later"}]}))
                .unwrap_err()
                .contains("`later`")
        );
        assert_eq!(parse_plan(&json!({"todos": []})).unwrap(), Vec::new());
    }

    #[tokio::test]
    async fn an_empty_list_clears_and_all_done_says_so() {
        assert_eq!(run(json!({"todos": []})).await.text, "Plan cleared.");
        let out = run(json!({"todos": [{"content": "a", "status": "completed"}]})).await;
        assert_eq!(out.text, "Plan saved: 1/1 done.");
        let out = run(json!({"todos": [{"content": "a", "status": "pending"}]})).await;
        assert_eq!(
            out.text,
            "Plan saved: 0/1 done. Mark the next step in_progress when you start it."
        );
    }

    #[test]
    fn a_key_in_a_step_is_masked() {
        tern_secrets::register("tern-unit-todo-secret-value");
        let items = parse_plan(&json!({"todos": [
            {"content": "Use token tern-unit-todo-secret-value", "status": "pending"}
        ]}))
        .unwrap();
        assert_eq!(items[0].content, "Use token [redacted]");
    }

    fn saved(id: &str, args: Value, is_error: bool) -> [Message; 2] {
        [
            Message::Assistant {
                content: String::new(),
                reasoning: None,
                tool_calls: vec![ToolCall {
                    id: id.into(),
                    name: "todo_write".into(),
                    arguments: args,
                }],
            },
            Message::Tool {
                call_id: id.into(),
                name: "todo_write".into(),
                content: String::new(),
                is_error,
                images: Vec::new(),
            },
        ]
    }

    #[test]
    fn a_compaction_carries_the_last_saved_plan() {
        let mut old = Vec::new();
        old.extend(saved(
            "a",
            json!({"todos": [{"content": "First", "status": "in_progress"}]}),
            false,
        ));
        // Sent as a string of JSON, as some providers do.
        let later = json!({"todos": [
            {"content": "First", "status": "completed"},
            {"content": "Second", "status": "in_progress"}
        ]});
        old.extend(saved("b", Value::String(later.to_string()), false));
        old.extend(saved(
            "c",
            json!({"todos": [{"content": "x", "status": "in_progress"}, {"content": "y", "status": "in_progress"}]}),
            true,
        ));
        assert_eq!(
            carried_plan(&old, &[]).as_deref(),
            Some("\n\nYour plan (todo_write) as you last saved it:\n- [completed] First\n- [in_progress] Second\n")
        );
        let kept = saved("d", json!({"todos": [{"content": "New", "status": "pending"}]}), false);
        assert_eq!(carried_plan(&old, &kept), None);
        assert_eq!(carried_plan(&kept[..1], &[]), None);
        let cleared = saved("e", json!({"todos": []}), false);
        assert_eq!(carried_plan(&cleared, &[]), None);
    }

    #[test]
    fn flags_keep_it_on_the_serial_unasked_road() {
        let tool = TodoWriteTool;
        assert!(tool.read_only());
        assert!(!tool.concurrency_safe());
        assert!(!tool.stable_result());
        assert!(!tool.exclusive());
    }
}
