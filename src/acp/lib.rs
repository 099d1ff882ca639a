//! `tern acp`: tern driven by an editor (Zed, Neovim, Emacs, JetBrains) over the Agent Client Protocol, JSON-RPC 2.0
//! one message a line on stdin and stdout. A frontend over the protocol alone, like `tern run`: each ACP session is
//! one of tern's sessions, its ops sent and its events mapped to `session/update`s; tern's approval prompts become
//! `session/request_permission`s the editor answers. Starting and loading a session is asked of the `Host` the
//! composition root gives. Nothing but protocol messages is written to stdout, masked and escaped (`rpc`).

mod permission;
mod rpc;
mod server;
mod updates;

use std::path::Path;

use tern_protocol::{ApprovalMode, Event, Op};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

pub use server::serve;

/// The ACP version spoken (the stable one).
pub const PROTOCOL_VERSION: u64 = 1;

/// What the frontend asks of the composition root: sessions, started from the configuration of their directory.
pub trait Host {
    /// Starts a new session working in `cwd` (an absolute directory). `editor_reads`: the editor offered its buffers
    /// (`fs.readTextFile`), so the session's reads ask for them (`Event::ReadBuffer`).
    fn start(&self, cwd: &Path, editor_reads: bool) -> Result<Started, String>;
    /// Loads session `id` of the workspace `cwd` to continue it.
    fn load(&self, id: &str, cwd: &Path, editor_reads: bool) -> Result<Started, String>;
}

/// A session the host started or loaded.
pub struct Started {
    /// Its id, which `session/load` takes back.
    pub id: String,
    pub ops: UnboundedSender<Op>,
    pub events: UnboundedReceiver<Event>,
    /// The approval mode it starts in.
    pub mode: ApprovalMode,
    /// A loaded session's recorded events, replayed to the editor; empty for a new one.
    pub history: Vec<Event>,
}
