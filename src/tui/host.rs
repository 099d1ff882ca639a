//! What the UI asks of whoever runs its sessions. The UI knows the protocol (ops out, events in) and this trait; the
//! composition root implements it over the configuration, the session store and the agent. Everything that reads
//! settings, the session list or the disk on the agent's terms goes through here, so the UI decides nothing about
//! what a session may do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tern_protocol::{Event, Message, Op, Prices, SessionDetails, SessionSummary};
use tokio::sync::mpsc;

/// The UI's ends of a running session's agent: where its ops go, its events, and its task (to see how it ended).
pub struct Connection {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub task: tokio::task::JoinHandle<()>,
}

/// A session as it is put on screen when it starts or is switched to.
pub struct Session {
    pub id: String,
    /// The conversation so far, shown when the session has no recorded events (one written before events were
    /// recorded); empty otherwise.
    pub history: Vec<Message>,
    /// The transcript's recorded events with their Unix-ms times (empty for a new session).
    pub events: Vec<(u64, Event)>,
    /// Where the log is, when it could be created.
    pub log_path: Option<PathBuf>,
    /// Configuration that was ignored or questionable, for the user to see.
    pub warnings: Vec<String>,
    /// What the user should know of the start (a fork's origin, what a resume did not bring back).
    pub notices: Vec<String>,
    /// What the session's tokens cost.
    pub prices: Arc<dyn Prices>,
}

/// What the user asked to switch to.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionSwitch {
    /// Continue the session logged here.
    Resume(PathBuf),
    /// Copy the current session to a new one and continue the copy.
    Fork,
    /// Continue this same session on the configuration as it is now (the project was just trusted).
    Reload,
}

impl SessionSwitch {
    /// Whether the old agent must stop before the new one starts (it would write the same log).
    pub fn stops_first(&self) -> bool {
        matches!(self, SessionSwitch::Reload)
    }
}

/// What the trust prompt asks at start when a workspace has its own configuration that is not trusted (the host
/// finds it: `tern::config::offer`), and where trust is written (`Host::trust`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrustOffer {
    pub workspace: PathBuf,
    /// The user's config file, where `trusted_projects` is kept.
    pub user_config: PathBuf,
    /// The project's own files found, relative to the workspace.
    pub files: Vec<String>,
    /// The MCP servers that would start: (name, command line or URL as written in the file, unexpanded).
    pub servers: Vec<(String, String)>,
    /// What else would change, one line each (allow rules, hooks, mode, sandbox ...).
    pub changes: Vec<String>,
    /// The digest of the project's files, taken before they were read for the prompt: trust is bound to it.
    pub digest: String,
}

/// A subagent's transcript as its own log holds it.
pub type Transcript = (Vec<Message>, Vec<(u64, Event)>);

/// A small picture of an image a message attaches, for the transcript: pixels that tern decoded and encoded itself
/// (never the file's bytes) as `PictureFormat` asks, and their size.
#[derive(Debug, Clone, PartialEq)]
pub struct Thumbnail {
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// How a thumbnail is encoded, for the terminal's graphics protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PictureFormat {
    /// PNG of RGBA pixels (kitty, iTerm2).
    Png,
    /// Sixel text without its introducer and terminator: printable ASCII only.
    Sixel,
}

/// The session host: starts sessions and answers what the UI cannot know by itself.
pub trait Host: Send + Sync {
    /// Whether `/resume`, `/fork` and a reload may start another session (the demo cannot).
    fn switches(&self) -> bool;
    /// Starts an agent on the session logged at `path`, from the configuration as it is now.
    fn resume(&self, path: &Path) -> Result<(Connection, Session), String>;
    /// Copies the session logged at `path` to a new one; returns the copy's log.
    fn fork(&self, path: &Path) -> Result<PathBuf, String>;
    /// The workspace's sessions, newest first.
    fn sessions(&self) -> Vec<SessionSummary>;
    /// The turns and last prompt of the session logged at `path` (none when it cannot be read). Reads the whole log:
    /// call it off the UI thread.
    fn session_details(&self, path: &Path) -> SessionDetails;
    /// A subagent's transcript from its log.
    fn transcript(&self, path: &Path) -> Result<Transcript, String>;
    /// Trusts the project of `offer` (the user said so): written where trust is read from.
    fn trust(&self, offer: &TrustOffer) -> Result<(), String>;
    /// What trusting the project would enable, as the start-up prompt shows it, read now (`/trust` after "not now");
    /// `None` when there is nothing to trust or nowhere to write it.
    fn trust_offer(&self) -> Option<TrustOffer>;
    /// The file `path` (as typed, relative to the workspace) resolved for attaching to a message, when the agent's
    /// read policy lets the session read it and it is inside the workspace; why not otherwise.
    fn attachable(&self, path: &str) -> Result<PathBuf, String>;
    /// Writes the session logged at `log` out as Markdown or JSON (`/export`), to `typed` (a file or a directory, as
    /// the user typed it; empty: the workspace) and never over an existing file; returns where it went.
    fn export(&self, log: &Path, typed: &str) -> Result<PathBuf, String>;
    /// The clipboard's image (Ctrl+V), kept in a private file outside the workspace whose path the message mentions
    /// (`@/…/pasted/clip-….png`); why there is none otherwise (no clipboard program, no image).
    fn paste_image(&self) -> Result<PathBuf, String> {
        Err("pasting an image is not available here".into())
    }
    /// A thumbnail, within `max` (width, height) pixels and encoded as `format`, of the image `path` names in a
    /// message (as typed), when the session could attach it (`attachable`, or an image pasted from the clipboard); why
    /// not otherwise. Reads and decodes the file: call it off the UI thread.
    fn thumbnail(&self, path: &str, max: (u32, u32), format: PictureFormat) -> Result<Thumbnail, String> {
        let _ = (path, max, format);
        Err("thumbnails are not available here".into())
    }
}
