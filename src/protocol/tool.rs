//! Tools as the protocol carries them: a call as the model made it, a tool as the model sees it, what kind of thing
//! a tool does, and what a call gives back (its output, details for frontends, images, file diffs).

use crate::PlanItem;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call as the model made it. `arguments` is the raw value from the wire: usually an object, but it may be a
/// string of JSON, null or garbage; `ToolRegistry::prepare_call` turns it into validated arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// What kind of thing a tool does, as the tool itself says (`Tool::kind`): frontends show and group calls by it, and
/// the session records it with each call, so nothing downstream compares tool names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files or directories (`read_file`, `list_dir`).
    Read,
    /// Searches the workspace (`grep`, `find_files`).
    Search,
    /// Changes files (`write_file`, `edit_file`, `apply_patch`, `notebook_edit`; `/undo` and `/review` reverts).
    Edit,
    /// Runs a command (`exec`).
    Command,
    /// Fetches a page from the web.
    Fetch,
    /// Searches the web.
    WebSearch,
    /// Keeps the plan (`todo_write`).
    Plan,
    /// Starts a subagent.
    Agent,
    /// A tool of an MCP server.
    Mcp,
    /// Anything else. Also what a call recorded before calls carried their kind reads as, until the session loader
    /// puts in the kind its name had then (`ToolKind::recorded_by_name`).
    #[default]
    Other,
}

impl ToolKind {
    /// Reads, searches and plans: calls a frontend may show together as one group.
    pub fn only_looks(self) -> bool {
        matches!(self, ToolKind::Read | ToolKind::Search)
    }

    /// The kind a built-in tool had by its name, for sessions written before calls carried their kind (before
    /// 2026-11-27). Nothing else may decide by name; this table is frozen with those sessions.
    pub fn recorded_by_name(name: &str) -> ToolKind {
        match name {
            "read_file" | "list_dir" => ToolKind::Read,
            "grep" | "find_files" => ToolKind::Search,
            "write_file" | "edit_file" | "apply_patch" | "notebook_edit" | "undo" | "review" => ToolKind::Edit,
            "exec" => ToolKind::Command,
            "web_fetch" => ToolKind::Fetch,
            "web_search" => ToolKind::WebSearch,
            "todo_write" => ToolKind::Plan,
            "spawn" => ToolKind::Agent,
            name if name.starts_with("mcp__") => ToolKind::Mcp,
            _ => ToolKind::Other,
        }
    }
}

/// A tool as the model sees it: what the registry offers and every provider sends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// What a tool returns: text for the model plus structured details that only frontends see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model reads.
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Rich data for the UI; the model never sees it.
    #[serde(default, skip_serializing_if = "ToolDetails::is_none")]
    pub details: ToolDetails,
    /// Images returned to the model as attachments (read_file on a picture, MCP image content).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            details: ToolDetails::None,
            images: Vec::new(),
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(text)
        }
    }

    pub fn with_details(mut self, details: ToolDetails) -> Self {
        self.details = details;
        self
    }
}

/// Structured data a frontend renders (a diff pane, a match count ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolDetails {
    #[default]
    None,
    /// read_file: the range shown. `total_lines` is known once the file was read to its end.
    Read {
        path: String,
        first_line: u64,
        last_line: u64,
        total_lines: Option<u64>,
    },
    /// edit_file, write_file, apply_patch, notebook_edit: one diff per file touched.
    Diffs { diffs: Vec<FileDiff> },
    /// grep and find_files.
    Search {
        matches: u64,
        files: u64,
        skipped_binary: u64,
        truncated: bool,
    },
    /// list_dir.
    List { entries: u64, truncated: bool },
    /// exec.
    Exec {
        exit_code: Option<i32>,
        duration_ms: u64,
        timed_out: bool,
        /// Whether it ran in the OS sandbox (absent in sessions written before the sandbox: false).
        #[serde(default)]
        sandboxed: bool,
        /// Git repositories the command created, relative to the workspace: git obeys their hooks and config outside
        /// the sandbox, so the user is told (absent when none, and in sessions written before).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        new_git_repos: Vec<String>,
        /// The live process it started and left running (`exec` with `background: true`): `p1`. Its end comes as
        /// `Event::ProcessExited`, not as this call's exit code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        background: Option<String>,
    },
    /// todo_write: the plan as saved.
    Plan { items: Vec<PlanItem> },
}

impl ToolDetails {
    pub fn is_none(&self) -> bool {
        matches!(self, ToolDetails::None)
    }
}

/// An image for the model, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    pub media_type: String,
    pub data_base64: String,
}

impl Image {
    /// The file name endings of the images a user may attach with `@path` (the content decides whether it is one).
    pub const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

    /// Whether `path` names an image by its extension.
    pub fn is_image_path(path: &str) -> bool {
        std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| Self::EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
    }

    /// How a message names image `path` so that sending it attaches it: `@path`, or `@"path"` when the path holds
    /// whitespace (a screenshot's name, macOS's `Application Support`); `None` for a path with both whitespace and a
    /// double quote, which no mention can hold.
    pub fn mention(path: &str) -> Option<String> {
        if !path.chars().any(char::is_whitespace) {
            Some(format!("@{path}"))
        } else if path.contains('"') {
            None
        } else {
            Some(format!("@\"{path}\""))
        }
    }

    /// The image paths `text` names, each once, in order: the words `@path` with an image extension and the quoted
    /// `@"path"` (see `mention`). An `@` inside a word (`me@x.png`) names nothing.
    pub fn mentions(text: &str) -> Vec<&str> {
        let mut paths: Vec<&str> = Vec::new();
        let mut rest = text;
        let mut at_word_start = true;
        while let Some(c) = rest.chars().next() {
            let (path, len) = match rest.strip_prefix("@\"") {
                Some(quoted) if at_word_start => match quoted.find('"') {
                    Some(end) => (Some(&quoted[..end]), end + 3),
                    None => (None, 1),
                },
                _ if c == '@' && at_word_start => {
                    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                    (Some(&rest[1..end]), end)
                }
                _ => (None, c.len_utf8()),
            };
            if let Some(path) = path
                && Self::is_image_path(path)
                && !paths.contains(&path)
            {
                paths.push(path);
            }
            at_word_start = path.is_none() && c.is_whitespace();
            rest = &rest[len..];
        }
        paths
    }
}

/// One file's change. `old` is `None` for a file that did not exist; `new` is `None` for a file removed. Frontends
/// compute hunks and word-level highlights from the two texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
    pub added: usize,
    pub removed: usize,
    /// What the project's language server reported for the file after the change, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticCount>,
}

/// Errors and warnings a language server reported for a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticCount {
    pub errors: usize,
    pub warnings: usize,
}

impl FileDiff {
    /// Builds a diff and counts added and removed lines.
    pub fn new(path: impl Into<String>, old: Option<String>, new: Option<String>) -> Self {
        let (added, removed) = count_changed_lines(old.as_deref().unwrap_or(""), new.as_deref().unwrap_or(""));
        Self {
            path: path.into(),
            old,
            new,
            added,
            removed,
            diagnostics: None,
        }
    }

    /// A unified diff with `context` lines around each change, for text a model or a log reads.
    pub fn unified(&self, context: usize) -> String {
        let old = self.old.as_deref().unwrap_or("");
        let new = self.new.as_deref().unwrap_or("");
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(context)
            .header(&format!("a/{}", self.path), &format!("b/{}", self.path))
            .to_string()
    }
}

fn count_changed_lines(old: &str, new: &str) -> (usize, usize) {
    use similar::ChangeTag;
    let diff = similar::TextDiff::from_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
}
