//! What one call of a tool does, as the tool says it from the call's arguments. The approval gate, checkpoints, hooks,
//! compaction and the approval prompt ask a tool this; none of them compares tool names.

use serde_json::Value;

/// What one call does. A tool that declares nothing (the default) is asked about in every mode that asks, as an
/// unknown tool is: a tool that forgets to say what it writes is never let through as harmless.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effects {
    /// Files or directories the call reads, as the model named them.
    pub reads: Vec<String>,
    /// Files the call writes, as the model named them. A dry run writes none and says so (`dry_run`).
    pub writes: Vec<String>,
    /// Only reports what it would change: writes nothing.
    pub dry_run: bool,
    /// The command the call runs.
    pub command: Option<CommandCall>,
    /// What the call asks of the network.
    pub request: Option<WebRequest>,
    /// Input the call writes to a live process (`process_input`): a shell or REPL may do anything with it.
    pub input: Option<ProcessInput>,
    /// The live process the call stops (`process_stop`): one the model started, so stopping it is harmless.
    pub stops: Option<String>,
}

/// Input for a live process, as the approval prompt shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessInput {
    /// The process's id (`p1`).
    pub process: String,
    /// Its command, as approved when it started; empty when there is no such process.
    pub command: String,
    /// It runs outside the OS sandbox.
    pub unsandboxed: bool,
    /// What would be written, exactly (keys as the bytes a terminal sends).
    pub data: String,
}

/// A command a call runs, with where and how.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandCall {
    /// The command line, as the shell gets it.
    pub text: String,
    /// The directory it runs in, as the model named it; `None`: the workspace root.
    pub working_dir: Option<String>,
    /// The model asked for it to run outside the OS sandbox.
    pub unsandboxed: bool,
}

/// What leaves the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebRequest {
    /// A page to fetch.
    Fetch { url: String },
    /// Words to search the web for.
    Search { query: String },
}

impl Effects {
    /// A call that reads `path` (when the argument is there).
    pub fn reads(path: Option<&str>) -> Self {
        Self {
            reads: path.map(str::to_string).into_iter().collect(),
            ..Self::default()
        }
    }

    /// Every path the call names, read or written, each once.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let mut seen: Vec<&str> = Vec::new();
        self.reads
            .iter()
            .chain(&self.writes)
            .map(String::as_str)
            .filter(move |p| {
                let new = !seen.contains(p);
                if new {
                    seen.push(p);
                }
                new
            })
    }
}

/// A string argument, when present.
pub(crate) fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A boolean argument; absent is false.
pub(crate) fn flag(args: &Value, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin_tools;
    use serde_json::json;
    use tern_protocol::ToolKind;

    fn tool(name: &str) -> std::sync::Arc<dyn crate::Tool> {
        builtin_tools().into_iter().find(|t| t.name() == name).unwrap()
    }

    #[test]
    fn each_builtin_says_what_it_is() {
        for tool in builtin_tools() {
            assert_eq!(
                tool.kind(),
                ToolKind::recorded_by_name(tool.name()),
                "{} and the kind sessions recorded for it by name disagree",
                tool.name()
            );
        }
    }

    #[test]
    fn edits_name_every_file_they_write() {
        let write = tool("write_file").effects(&json!({"path": "a.txt", "content": "x"}));
        assert_eq!(write.writes, ["a.txt"]);
        let patch = tool("apply_patch").effects(&json!({"edits": [
            {"path": "a.rs", "old_text": "x", "new_text": "y"},
            {"path": "b.rs", "move_to": "c.rs"},
        ]}));
        assert_eq!(patch.writes, ["a.rs", "b.rs", "c.rs"]);
        assert!(!patch.dry_run);
        let dry = tool("apply_patch").effects(&json!({"dry_run": true, "edits": [{"path": "a.rs"}]}));
        assert!(dry.dry_run && dry.writes.is_empty() && dry.reads == ["a.rs"]);
        let notebook = tool("notebook_edit").effects(&json!({"path": "n.ipynb"}));
        assert_eq!(notebook.writes, ["n.ipynb"]);
    }

    #[test]
    fn reads_name_what_they_read_and_nothing_else() {
        for (name, args) in [
            ("read_file", json!({"path": ".env"})),
            ("list_dir", json!({"path": ".env"})),
            ("grep", json!({"pattern": "x", "path": ".env"})),
            ("find_files", json!({"pattern": "*", "path": ".env"})),
        ] {
            let effects = tool(name).effects(&args);
            assert_eq!(effects.reads, [".env"], "{name}");
            assert!(effects.writes.is_empty() && effects.command.is_none() && effects.request.is_none());
        }
    }

    #[test]
    fn paths_are_each_named_once() {
        let effects = Effects {
            reads: vec!["a".into(), "b".into()],
            writes: vec!["b".into(), "c".into(), "a".into()],
            ..Effects::default()
        };
        assert_eq!(effects.paths().collect::<Vec<_>>(), ["a", "b", "c"]);
    }
}
