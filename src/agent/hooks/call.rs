//! A tool call as hooks see it: as the Claude Code call it stands for (`tern_tools::ClaudeTool`), so a script written
//! for Claude Code reads `tool_name: "Bash"` and `tool_input.command`, or `tool_input.file_path` for an edit; a patch
//! as one call per file it touches; an MCP tool as `mcp__SERVER__TOOL` with its own arguments. A hook's matcher is
//! tried on the Claude Code name and on tern's, so `Edit|Write` and `edit_file` both select an edit. What a call
//! returned goes to PostToolUse hooks in the shape Claude Code gives its tools' results (`tool_response`).

use serde_json::{Value, json};

use tern_protocol::{ToolCall, ToolDetails, ToolOutput};
use tern_tools::{ClaudeCall, ClaudeTool, PathPolicy, Tool};

/// One call, as hooks are told about it.
#[derive(Debug, Clone)]
pub(crate) struct HookCall {
    /// The model's id for the call (`tool_use_id`).
    pub id: String,
    /// tern's name for the tool.
    pub tool: String,
    /// What hooks are shown: one call, or for a patch one per file.
    pub shown: Vec<ClaudeCall>,
    /// The Claude Code tool the call was shown as, when one call shows it whole: a hook's `updatedInput` can then be
    /// turned back into arguments for tern's tool.
    pub claude: Option<ClaudeTool>,
}

impl HookCall {
    /// `call` of `tool` with its prepared arguments `args`.
    pub(crate) fn new(call: &ToolCall, tool: &dyn Tool, args: &Value, policy: &PathPolicy) -> Self {
        let (shown, claude) = match (tool.claude(), tool.mcp_origin()) {
            (Some(claude), _) => {
                let shown = claude.calls(args, policy);
                let whole = (shown.len() == 1 && claude != ClaudeTool::Patch).then_some(claude);
                (shown, whole)
            }
            (None, Some((server, name))) => (
                vec![ClaudeCall {
                    name: format!("mcp__{server}__{name}"),
                    input: args.clone(),
                }],
                None,
            ),
            (None, None) => (
                vec![ClaudeCall {
                    name: call.name.clone(),
                    input: args.clone(),
                }],
                None,
            ),
        };
        Self {
            id: call.id.clone(),
            tool: call.name.clone(),
            shown,
            claude,
        }
    }

    /// The names a hook's matcher is tried on for `shown`: Claude Code's, then tern's.
    pub(crate) fn names<'a>(&'a self, shown: &'a ClaudeCall) -> [&'a str; 2] {
        [shown.name.as_str(), self.tool.as_str()]
    }
}

/// What Claude Code gives a PostToolUse hook as `tool_response` for the call `shown` that returned `output` (a
/// success): a command's output as `stdout`, a file tool's path as `filePath`, an MCP tool's text as content
/// blocks, anything else as `content`.
pub(crate) fn tool_response(shown: &ClaudeCall, output: &ToolOutput, text: &str) -> Value {
    let input = &shown.input;
    let path = input.get("file_path").cloned().unwrap_or(Value::Null);
    match shown.name.as_str() {
        "Bash" => {
            let mut response = json!({"stdout": text, "stderr": "", "interrupted": false, "isImage": false});
            if let ToolDetails::Exec {
                exit_code, timed_out, ..
            } = &output.details
            {
                response["interrupted"] = json!(timed_out);
                response["exit_code"] = json!(exit_code);
            }
            response
        }
        "Read" => json!({"type": "text", "file": {"filePath": path, "content": text}}),
        "Write" => json!({"type": "update", "filePath": path, "content": input.get("content"), "success": true}),
        "Edit" => json!({"filePath": path, "oldString": input.get("old_string"), "newString": input.get("new_string"),
            "replaceAll": input.get("replace_all").cloned().unwrap_or(json!(false)), "success": true}),
        "MultiEdit" => json!({"filePath": path, "edits": input.get("edits"), "success": true}),
        "NotebookEdit" => json!({"notebook_path": input.get("notebook_path"), "new_source": input.get("new_source"),
            "edit_mode": input.get("edit_mode").cloned().unwrap_or(json!("replace"))}),
        name if name.starts_with("mcp__") => json!([{"type": "text", "text": text}]),
        _ => json!({"content": text}),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use tern_tools::exec::ExecTool;

    #[test]
    fn a_command_is_shown_as_bash_and_its_result_as_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let policy = PathPolicy::new(dir.path()).unwrap();
        let tool: Arc<dyn Tool> = Arc::new(ExecTool::default());
        let call = ToolCall {
            id: "c1".into(),
            name: "exec".into(),
            arguments: json!({"command": "rm -rf build"}),
        };
        let seen = HookCall::new(&call, tool.as_ref(), &call.arguments, &policy);
        assert_eq!(seen.shown.len(), 1);
        assert_eq!(seen.names(&seen.shown[0]), ["Bash", "exec"]);
        assert_eq!(seen.shown[0].input["command"], "rm -rf build");
        assert_eq!(seen.claude, Some(ClaudeTool::Bash));
        let output = ToolOutput::text("built\n");
        assert_eq!(
            tool_response(&seen.shown[0], &output, &output.text),
            json!({"stdout": "built\n", "stderr": "", "interrupted": false, "isImage": false})
        );
    }
}
