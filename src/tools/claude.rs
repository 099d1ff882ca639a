//! What Claude Code calls each of tern's tools and how it spells their arguments: the one table that lets hook
//! scripts written for Claude Code (matchers like `Bash` or `Edit|Write`, a guard reading `tool_input.file_path`) see
//! tern's calls as they see Claude Code's. Each built-in tool names its counterpart (`Tool::claude`); the table here
//! turns its arguments into that tool's input and back (a hook's `updatedInput`). Paths go out absolute, as Claude
//! Code's do, and resolved as the tool will resolve them (`~`, symlinks), so a guard sees the file the call touches:
//! `notes.txt` that links to `.env` is shown as `.env`. Arguments Claude Code has no word for are passed along under tern's names, so nothing a hook might
//! check is hidden from it.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::PathPolicy;

/// A Claude Code tool that one of tern's tools stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaudeTool {
    /// `exec` (`background: true` is `run_in_background`).
    Bash,
    /// `process_output`.
    BashOutput,
    /// `process_stop`.
    KillShell,
    /// `read_file`.
    Read,
    /// `write_file`.
    Write,
    /// `edit_file`.
    Edit,
    /// `apply_patch`: shown file by file, as `Edit`, `MultiEdit`, `Write` or (a deletion) `Bash` calls.
    Patch,
    /// `find_files`.
    Glob,
    /// `grep`.
    Grep,
    /// `list_dir`.
    Ls,
    /// `web_fetch`.
    WebFetch,
    /// `web_search`.
    WebSearch,
    /// `spawn` (a subagent).
    Task,
    /// `todo_write`.
    TodoWrite,
    /// `notebook_edit`.
    NotebookEdit,
}

/// One call as Claude Code would have made it: the name a matcher sees and the input a hook reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaudeCall {
    pub name: String,
    pub input: Value,
}

impl ClaudeTool {
    /// The tool Claude Code calls `name` (`Bash`, `Read`, `MultiEdit`, ...), as a custom agent's `tools` list names
    /// it; `None` for a name no tern tool stands for. `MultiEdit` is `Edit`'s; `apply_patch` answers to neither
    /// (`Patch` is its own: a list lets it in with `Edit` and `Write` both).
    pub fn named(name: &str) -> Option<Self> {
        Some(match name {
            "Bash" => ClaudeTool::Bash,
            "BashOutput" => ClaudeTool::BashOutput,
            "KillShell" => ClaudeTool::KillShell,
            "Read" => ClaudeTool::Read,
            "Write" => ClaudeTool::Write,
            "Edit" | "MultiEdit" => ClaudeTool::Edit,
            "Glob" => ClaudeTool::Glob,
            "Grep" => ClaudeTool::Grep,
            "LS" => ClaudeTool::Ls,
            "WebFetch" => ClaudeTool::WebFetch,
            "WebSearch" => ClaudeTool::WebSearch,
            "Task" => ClaudeTool::Task,
            "TodoWrite" => ClaudeTool::TodoWrite,
            "NotebookEdit" => ClaudeTool::NotebookEdit,
            _ => return None,
        })
    }

    /// The call (for `Patch`, the calls: one per file) a hook is shown for arguments `args`. Longer than most
    /// functions on purpose: it is the table, one short arm per tool, read best whole.
    pub fn calls(self, args: &Value, policy: &PathPolicy) -> Vec<ClaudeCall> {
        let path = |key: &str| args.get(key).and_then(Value::as_str).map(|p| absolute(policy, p));
        let mut input = Map::new();
        let name = match self {
            ClaudeTool::Bash => {
                copy(args, &mut input, &[("command", "command")]);
                if let Some(secs) = args.get("timeout").and_then(Value::as_u64) {
                    input.insert("timeout".into(), json!(secs.saturating_mul(1000)));
                }
                let background = args.get("background").and_then(Value::as_bool) == Some(true);
                input.insert("run_in_background".into(), json!(background));
                copy(
                    args,
                    &mut input,
                    &[
                        ("unsandboxed", "dangerouslyDisableSandbox"),
                        ("working_dir", "working_dir"),
                        ("tty", "tty"),
                    ],
                );
                "Bash"
            }
            ClaudeTool::BashOutput => {
                copy(args, &mut input, &[("id", "bash_id"), ("wait", "wait")]);
                "BashOutput"
            }
            ClaudeTool::KillShell => {
                copy(args, &mut input, &[("id", "shell_id")]);
                "KillShell"
            }
            ClaudeTool::Read => {
                input.insert("file_path".into(), json!(path("path")));
                copy(args, &mut input, &[("offset", "offset"), ("limit", "limit")]);
                "Read"
            }
            ClaudeTool::Write => {
                input.insert("file_path".into(), json!(path("path")));
                copy(args, &mut input, &[("content", "content")]);
                "Write"
            }
            ClaudeTool::Edit => {
                input.insert("file_path".into(), json!(path("path")));
                copy(args, &mut input, EDIT_KEYS);
                copy(args, &mut input, EDIT_EXTRAS);
                "Edit"
            }
            ClaudeTool::Patch => return patch_calls(args, policy),
            ClaudeTool::Glob => {
                let pattern = args
                    .get("glob")
                    .or_else(|| args.get("query"))
                    .cloned()
                    .unwrap_or(json!("*"));
                input.insert("pattern".into(), pattern);
                if let Some(dir) = path("path") {
                    input.insert("path".into(), json!(dir));
                }
                copy(args, &mut input, &[("query", "query")]);
                "Glob"
            }
            ClaudeTool::Grep => {
                copy(args, &mut input, &[("pattern", "pattern")]);
                if let Some(dir) = path("path") {
                    input.insert("path".into(), json!(dir));
                }
                copy(
                    args,
                    &mut input,
                    &[
                        ("glob", "glob"),
                        ("type", "type"),
                        ("output_mode", "output_mode"),
                        ("case_insensitive", "-i"),
                        ("multiline", "multiline"),
                        ("head_limit", "head_limit"),
                        ("offset", "offset"),
                        ("fixed_strings", "fixed_strings"),
                    ],
                );
                "Grep"
            }
            ClaudeTool::Ls => {
                let dir = path("path").unwrap_or_else(|| policy.root().display().to_string());
                input.insert("path".into(), json!(dir));
                copy(
                    args,
                    &mut input,
                    &[("recursive", "recursive"), ("max_entries", "max_entries")],
                );
                "LS"
            }
            ClaudeTool::WebFetch => {
                copy(args, &mut input, &[("url", "url")]);
                input.insert("prompt".into(), json!(""));
                "WebFetch"
            }
            ClaudeTool::WebSearch => {
                copy(args, &mut input, &[("query", "query")]);
                "WebSearch"
            }
            ClaudeTool::Task => {
                let task = args.get("task").cloned().unwrap_or(json!(""));
                let label = args.get("label").cloned().unwrap_or_else(|| task.clone());
                input.insert("description".into(), label);
                input.insert("prompt".into(), task);
                // A custom agent by its name, as Claude Code's Task names it; else Claude Code's default subagent.
                let agent = args.get("agent").filter(|a| a.is_string());
                input.insert(
                    "subagent_type".into(),
                    agent.cloned().unwrap_or(json!("general-purpose")),
                );
                copy(args, &mut input, &[("wait", "wait")]);
                "Task"
            }
            ClaudeTool::TodoWrite => {
                let todos: Vec<Value> = args
                    .get("todos")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|todo| {
                        let content = todo.get("content").cloned().unwrap_or(json!(""));
                        let status = todo.get("status").cloned().unwrap_or(json!("pending"));
                        json!({"content": content, "status": status, "activeForm": content})
                    })
                    .collect();
                input.insert("todos".into(), json!(todos));
                "TodoWrite"
            }
            ClaudeTool::NotebookEdit => {
                input.insert("notebook_path".into(), json!(path("path")));
                copy(
                    args,
                    &mut input,
                    &[
                        ("new_source", "new_source"),
                        ("cell_type", "cell_type"),
                        ("edit_mode", "edit_mode"),
                        ("cell_index", "cell_index"),
                    ],
                );
                if let Some(index) = args.get("cell_index").and_then(Value::as_u64) {
                    input.insert("cell_id".into(), json!(index.to_string()));
                }
                "NotebookEdit"
            }
        };
        vec![ClaudeCall {
            name: name.into(),
            input: Value::Object(input),
        }]
    }

    /// Arguments for tern's tool from a Claude Code input (a hook's `updatedInput`): the reverse of `calls`, for the
    /// tools shown as one call. `None` for `Patch` (shown as several calls, it cannot be rebuilt from one) and for an
    /// input that is not an object. The result is prepared (cast and validated) like any call before it is used.
    /// The reverse table, one arm per tool like `calls`.
    pub fn args(self, input: &Value) -> Option<Value> {
        let input = input.as_object()?;
        let mut args = Map::new();
        let mut from = |pairs: &[(&str, &str)]| {
            for (claude, tern) in pairs {
                if let Some(value) = input.get(*claude) {
                    args.insert((*tern).to_string(), value.clone());
                }
            }
        };
        match self {
            ClaudeTool::Patch => return None,
            ClaudeTool::Bash => {
                from(&[
                    ("command", "command"),
                    ("dangerouslyDisableSandbox", "unsandboxed"),
                    ("working_dir", "working_dir"),
                    ("tty", "tty"),
                ]);
                if let Some(ms) = input.get("timeout").and_then(Value::as_u64) {
                    args.insert("timeout".into(), json!(ms.div_ceil(1000).max(1)));
                }
                if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
                    args.insert("background".into(), json!(true));
                }
            }
            ClaudeTool::BashOutput => from(&[("bash_id", "id"), ("wait", "wait")]),
            ClaudeTool::KillShell => from(&[("shell_id", "id")]),
            ClaudeTool::Read => from(&[("file_path", "path"), ("offset", "offset"), ("limit", "limit")]),
            ClaudeTool::Write => from(&[("file_path", "path"), ("content", "content")]),
            ClaudeTool::Edit => {
                from(&[("file_path", "path")]);
                from(&reversed(EDIT_KEYS));
                from(EDIT_EXTRAS);
            }
            ClaudeTool::Glob => {
                from(&[("path", "path"), ("query", "query")]);
                if !input.contains_key("query") {
                    from(&[("pattern", "glob")]);
                }
            }
            ClaudeTool::Grep => from(&[
                ("pattern", "pattern"),
                ("path", "path"),
                ("glob", "glob"),
                ("type", "type"),
                ("output_mode", "output_mode"),
                ("-i", "case_insensitive"),
                ("multiline", "multiline"),
                ("head_limit", "head_limit"),
                ("offset", "offset"),
                ("fixed_strings", "fixed_strings"),
            ]),
            ClaudeTool::Ls => from(&[
                ("path", "path"),
                ("recursive", "recursive"),
                ("max_entries", "max_entries"),
            ]),
            ClaudeTool::WebFetch => from(&[("url", "url")]),
            ClaudeTool::WebSearch => from(&[("query", "query")]),
            ClaudeTool::Task => {
                from(&[("prompt", "task"), ("description", "label"), ("wait", "wait")]);
                if let Some(agent) = input.get("subagent_type").filter(|t| *t != "general-purpose") {
                    args.insert("agent".into(), agent.clone());
                }
            }
            ClaudeTool::TodoWrite => {
                let todos: Vec<Value> = input
                    .get("todos")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|todo| json!({"content": todo.get("content"), "status": todo.get("status")}))
                    .collect();
                args.insert("todos".into(), json!(todos));
            }
            ClaudeTool::NotebookEdit => {
                from(&[
                    ("notebook_path", "path"),
                    ("new_source", "new_source"),
                    ("cell_type", "cell_type"),
                    ("edit_mode", "edit_mode"),
                    ("cell_index", "cell_index"),
                ]);
                if !args.contains_key("cell_index")
                    && let Some(index) = input
                        .get("cell_id")
                        .and_then(Value::as_str)
                        .and_then(|s| s.parse::<u64>().ok())
                {
                    args.insert("cell_index".into(), json!(index));
                }
            }
        }
        Some(Value::Object(args))
    }
}

/// `edit_file`'s arguments and Claude Code's `Edit` keys for them.
const EDIT_KEYS: &[(&str, &str)] = &[
    ("old_text", "old_string"),
    ("new_text", "new_string"),
    ("replace_all", "replace_all"),
];
/// `edit_file`'s arguments Claude Code has no word for, passed under their own names.
const EDIT_EXTRAS: &[(&str, &str)] = &[
    ("occurrence", "occurrence"),
    ("line_hint", "line_hint"),
    ("expected_replacements", "expected_replacements"),
];

fn reversed(pairs: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    pairs.iter().map(|&(a, b)| (b, a)).collect()
}

/// Copies `args[from]` to `input[to]` for each pair whose argument is there.
fn copy(args: &Value, input: &mut Map<String, Value>, pairs: &[(&str, &str)]) {
    for (from, to) in pairs {
        if let Some(value) = args.get(*from) {
            input.insert((*to).to_string(), value.clone());
        }
    }
}

/// A path as the tool will resolve it (`~` expanded, symlinks followed, missing components kept), or, for one that
/// cannot be resolved (a loop), as the model wrote it made absolute against the workspace.
fn absolute(policy: &PathPolicy, path: &str) -> String {
    match policy.resolve(path) {
        Ok(resolved) => resolved.display().to_string(),
        Err(_) => {
            let path = Path::new(path);
            if path.is_absolute() {
                path.display().to_string()
            } else {
                policy.root().join(path).display().to_string()
            }
        }
    }
}

/// An `apply_patch` call, file by file in the order the patch first names them: a file's replacements as one `Edit`
/// (or `MultiEdit` when there are several), a new file as `Write`, a deleted one as the `rm` that deletes it, so a
/// guard that checks one file per call sees every file the patch touches.
fn patch_calls(args: &Value, policy: &PathPolicy) -> Vec<ClaudeCall> {
    let edits = args.get("edits").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut files: Vec<(String, Vec<&Value>)> = Vec::new();
    for edit in &edits {
        let Some(path) = edit.get("path").and_then(Value::as_str) else {
            continue;
        };
        let path = absolute(policy, path);
        match files.iter_mut().find(|(p, _)| *p == path) {
            Some((_, list)) => list.push(edit),
            None => files.push((path, vec![edit])),
        }
    }
    let mut calls = Vec::new();
    for (path, list) in files {
        let action = |e: &Value| e.get("action").and_then(Value::as_str).unwrap_or("replace").to_string();
        let replacements: Vec<Value> = list
            .iter()
            .filter(|e| action(e) == "replace")
            .map(|e| {
                let mut one = Map::new();
                copy(e, &mut one, EDIT_KEYS);
                Value::Object(one)
            })
            .collect();
        for edit in list.iter().filter(|e| action(e) != "replace") {
            calls.push(if action(edit) == "add" {
                ClaudeCall {
                    name: "Write".into(),
                    input: json!({"file_path": path, "content": edit.get("new_text").cloned().unwrap_or(json!(""))}),
                }
            } else {
                ClaudeCall {
                    name: "Bash".into(),
                    input: json!({"command": format!("rm -- {}", shell_quote(&path)),
                        "description": "apply_patch deletes the file", "run_in_background": false}),
                }
            });
        }
        match replacements.len() {
            0 => {}
            1 => {
                let mut input = Map::new();
                input.insert("file_path".into(), json!(path));
                if let Some(Value::Object(one)) = replacements.into_iter().next() {
                    input.extend(one);
                }
                calls.push(ClaudeCall {
                    name: "Edit".into(),
                    input: Value::Object(input),
                });
            }
            _ => calls.push(ClaudeCall {
                name: "MultiEdit".into(),
                input: json!({"file_path": path, "edits": replacements}),
            }),
        }
    }
    calls
}

/// `text` in single quotes for a shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests;
