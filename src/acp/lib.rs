//! `tern acp`: tern driven by an editor (Zed, Neovim, Emacs, JetBrains) over the Agent Client Protocol, JSON-RPC 2.0
//! one message a line on stdin and stdout. A frontend over the protocol alone, like `tern run`: each ACP session is
//! one of tern's sessions, its ops sent and its events mapped to `session/update`s; tern's approval prompts become
//! `session/request_permission`s the editor answers. Starting and loading a session is asked of the `Host` the
//! composition root gives. Nothing but protocol messages is written to stdout, masked and escaped (`rpc`).

mod permission;
mod requests;
mod rpc;
mod server;
mod servers;
mod updates;

use std::path::Path;

use tern_protocol::{ApprovalMode, Event, Op};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

pub use server::serve;
pub use servers::EditorServer;

/// The ACP version spoken (the stable one).
pub const PROTOCOL_VERSION: u64 = 1;

/// What the frontend asks of the composition root: sessions, started from the configuration of their directory.
pub trait Host {
    /// Starts a new session working in `cwd` (an absolute directory) with what the editor offers it.
    fn start(&self, cwd: &Path, offer: &Offer) -> Result<Started, String>;
    /// Loads session `id` of the workspace `cwd` to continue it, with what the editor offers it.
    fn load(&self, id: &str, cwd: &Path, offer: &Offer) -> Result<Started, String>;
}

/// What the editor brings to a session.
#[derive(Debug, Default)]
pub struct Offer {
    /// It offered its buffers (`fs.readTextFile`): the session's reads ask for them (`Event::ReadBuffer`).
    pub editor_reads: bool,
    /// It takes writes (`fs.writeTextFile`): with its buffers offered, the session's edits are made to its text and
    /// written through it (`Event::WriteBuffer`, sent as `fs/write_text_file`).
    pub editor_writes: bool,
    /// MCP servers for the session, beside the configured ones (an editor's replaces a configured one of its name).
    pub servers: Vec<EditorServer>,
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
