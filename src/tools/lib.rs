//! The tool system: the `Tool` trait, the context a tool runs in, argument casting and validation, the registry, and
//! the built-in tools. Nothing here knows about terminals or providers.

pub mod claude;
pub mod edit;
pub mod effects;
pub mod exec;
pub mod file_state;
pub mod fs;
pub(crate) mod notebook;
pub(crate) mod patch;
pub mod path_policy;
pub mod processes;
pub mod registry;
pub(crate) mod schema;
pub mod search;
pub mod todo;
pub mod web;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use claude::{ClaudeCall, ClaudeTool};
pub use effects::{CommandCall, Effects, ProcessInput, WebRequest};
pub use file_state::FileTracker;
pub use path_policy::{PathError, PathPolicy};
pub use registry::{PreparedCall, ToolRegistry};

use tern_protocol::{ToolKind, ToolOutput};

/// MCP annotations of a tool, as its server reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolHints {
    /// `readOnlyHint`: the server says the tool changes nothing.
    pub read_only: bool,
    /// `openWorldHint` (true when absent, as the MCP spec says): the tool reaches beyond the server.
    pub open_world: bool,
}

/// A tool the model can call. Arguments reach `execute` already cast and validated against `parameters()`.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the arguments: an object with `additionalProperties: false`.
    fn parameters(&self) -> Value;
    /// What kind of tool this is: frontends show its calls by it, and the session records it with each call.
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    /// What a call with these (validated) arguments does: the files it reads and writes, the command it runs, what
    /// it asks of the network. The approval gate, checkpoints and hooks decide by this, never by the tool's name. A
    /// tool that says nothing is treated as unknown: asked about wherever anything is.
    fn effects(&self, _args: &Value) -> Effects {
        Effects::default()
    }
    /// The Claude Code tool this one stands for, so hooks written for Claude Code see its calls under that tool's
    /// name and input (`claude::ClaudeTool`). `None`: hooks see the tool under its own name (an MCP tool under
    /// `mcp__SERVER__TOOL`).
    fn claude(&self) -> Option<ClaudeTool> {
        None
    }
    /// Never changes anything outside the process (files, network state, processes).
    fn read_only(&self) -> bool {
        false
    }
    /// Must run alone: nothing else runs while it does (exec).
    fn exclusive(&self) -> bool {
        false
    }
    /// What an MCP server says about this tool (`readOnlyHint`, `openWorldHint`); `None` for tools that are not
    /// MCP tools. Hints, not guarantees: the approval gate decides MCP calls by mode and rules, never by
    /// `read_only()`.
    fn hints(&self) -> Option<ToolHints> {
        None
    }
    /// For a tool of an MCP server: the server's name and the tool's own name, which approval rules name it by
    /// (`mcp__SERVER__TOOL`), so a rule for one server never reaches another whose name starts the same.
    fn mcp_origin(&self) -> Option<(&str, &str)> {
        None
    }
    /// Called again with the same arguments, it gives the same result as long as nothing changed in between (no
    /// write, no command): only such calls may be refused as repeats. Built-in reads are; a tool whose result
    /// depends on time or the outside is not (MCP tools are only when their server says read-only, idempotent and
    /// closed-world).
    fn stable_result(&self) -> bool {
        self.read_only() && !self.exclusive() && self.hints().is_none()
    }
    /// For a tool that asks the outside for something and changes nothing locally (a web fetch, a search), what makes
    /// two calls the same request (the URL, the query): the repeat guard allows such a request at most twice a turn,
    /// whatever ran in between, and does not count it as a change. `None`: an ordinary tool.
    fn repeat_key(&self, _args: &Value) -> Option<String> {
        None
    }
    /// May run in parallel with other concurrency-safe calls.
    fn concurrency_safe(&self) -> bool {
        self.read_only() && !self.exclusive()
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
    /// For a tool that changes files: the change it would make, computed without writing (`execute` is this and
    /// `ProposedChange::apply`, so a dry run and a real run share every step). `None`: not such a tool.
    async fn propose(&self, _args: Value, _ctx: &ToolContext) -> Option<Result<edit::ProposedChange, ToolError>> {
        None
    }
}

/// Tools that come and go during a session: MCP servers connecting, failing, or changing their lists. The registry
/// asks a source for its current tools whenever it needs them, so a new tool is offered from the next request on.
#[async_trait]
pub trait ToolSource: Send + Sync {
    /// The tools available now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Waits until the source has settled (every server connected or failed), but never longer than the source's own
    /// start-up timeout. Returns at once when already settled.
    async fn wait_ready(&self);
}

/// Everything a running tool may use: where the workspace is and what it may touch, a cancellation token that fires on
/// interrupt, a sink for live output, and what the session has read so far.
#[derive(Clone)]
pub struct ToolContext {
    pub policy: Arc<PathPolicy>,
    pub cancel: CancellationToken,
    pub output: OutputSink,
    pub files: Arc<FileTracker>,
    /// Where a tool may keep its whole output when it is too long to return (exec does, as it runs): a file in the
    /// session's tool-result store that the runner reports with the result when it exists. `None`: keep nothing.
    pub full_output: Option<std::path::PathBuf>,
    /// How the approval step limits a command this call runs (exec only).
    pub limits: exec::ExecLimits,
    /// Where `read_file` gets a file's text when an editor drives the session (`tern acp`); `None`: from disk.
    pub buffers: Option<Arc<dyn Buffers>>,
    /// The session's live processes and this call's id, for `exec` with `background: true`; `None`: no process may
    /// be started from here.
    pub processes: Option<processes::Starter>,
}

/// An editor's view of the files (its unsaved buffers): asked for a file's text once the path policy allowed the
/// read, and, when it takes writes, given an edit's new text once the policy resolved the write and the gate allowed
/// it. It only replaces where the bytes come from and go to; the policy, the gate and the key check still apply.
#[async_trait::async_trait]
pub trait Buffers: Send + Sync {
    /// The editor's text of `path`, or `None` when it has none (the file is then read from disk).
    async fn text(&self, path: &std::path::Path) -> Option<String>;
    /// Whether the editor takes writes (`write`): the edit tools then edit the text it shows and write through it.
    fn writes(&self) -> bool {
        false
    }
    /// Gives the editor `text` as the whole new content of `path` (it creates the file when missing). `Err`: the
    /// editor's reason; nothing falls back to the disk, which could overwrite the buffer.
    async fn write(&self, path: &std::path::Path, _text: &str) -> Result<(), String> {
        Err(format!("the editor takes no writes ({})", path.display()))
    }
}

impl ToolContext {
    /// A context for a workspace with default policy, no live output and a fresh token.
    pub fn new(policy: PathPolicy) -> Self {
        Self {
            policy: Arc::new(policy),
            cancel: CancellationToken::new(),
            output: OutputSink::none(),
            files: Arc::new(FileTracker::default()),
            full_output: None,
            limits: exec::ExecLimits::default(),
            buffers: None,
            processes: None,
        }
    }
}

/// Where a tool sends live output (exec's stdout/stderr as it arrives). Sending never blocks and never fails: a
/// frontend that went away just stops receiving.
#[derive(Clone, Default)]
pub struct OutputSink(Option<UnboundedSender<String>>);

impl OutputSink {
    pub fn none() -> Self {
        Self(None)
    }

    pub fn new(tx: UnboundedSender<String>) -> Self {
        Self(Some(tx))
    }

    pub fn send(&self, chunk: impl Into<String>) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(chunk.into());
        }
    }

    pub fn is_connected(&self) -> bool {
        self.0.as_ref().is_some_and(|tx| !tx.is_closed())
    }
}

/// Why a tool failed. The registry turns it into an error result the model reads; it is never a crash.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    Path(#[from] PathError),
    /// Arguments that pass the schema but make no sense (offset past the end, old_text == new_text ...).
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0}")]
    Failed(String),
    #[error("cancelled")]
    Cancelled,
}

impl ToolError {
    pub(crate) fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        ToolError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Runs blocking filesystem or CPU work on tokio's blocking pool. A panic inside is re-raised here so the registry's
/// panic isolation reports it like any other tool panic.
pub(crate) async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(ToolError::Failed(format!("the work did not finish: {e}"))),
    }
}

/// The built-in tools that need no configuration (the file, edit and search tools, and the plan).
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    tools.extend(fs::tools());
    tools.extend(edit::tools());
    tools.extend(patch::tools());
    tools.extend(search::tools());
    tools.extend(notebook::tools());
    tools.extend(todo::tools());
    tools
}
