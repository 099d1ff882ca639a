//! The per-turn checkpoint records as the session log keeps them, so `/undo` and `/rewind` reach the turns of earlier
//! runs of a resumed session. A record is small: the turn, the user's message, where the turn began in the
//! conversation and transcript, the shadow snapshots' commit ids, and for each file a tool wrote the path of its saved
//! copy and a hash (never file contents). The latest line of a turn wins on load.
//!
//! Where a turn begins in the conversation moves with the log's own `replace`, `rewind` and `reset` lines: `load`
//! applies them to the records read so far with the same rules the runner applies in memory (`after_replace`,
//! `after_rewind`), so the records are right at every point a crash may cut the log.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One turn's checkpoints and where it began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnCheckpoint {
    pub turn: u64,
    /// The user's message as typed (shown by `/rewind`, put back in the composer).
    pub text: String,
    /// How many messages the conversation had before the turn's message; `None` once it is out of the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<usize>,
    /// How many transcript events the log held before the turn.
    pub events: usize,
    /// The shadow snapshots before and after the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SavedFile>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ran_commands: bool,
    /// The turn's changes are still in the work tree (not undone).
    pub code: bool,
}

/// A file a turn wrote, as it was before the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedFile {
    pub path: RecordPath,
    pub display: String,
    /// Where its content before the turn was saved; `None`: it did not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<RecordPath>,
    /// What it was at the end of the turn; `None` while the turn ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<FileAfter>,
}

/// A file at the end of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileAfter {
    Absent,
    Hash(u64),
}

/// A path, written as text when it is UTF-8 and as its bytes otherwise: a record that failed to serialize would cost
/// the session its log.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordPath(pub PathBuf);

impl Serialize for RecordPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use std::os::unix::ffi::OsStrExt;
        match self.0.to_str() {
            Some(text) => s.serialize_str(text),
            None => s.collect_seq(self.0.as_os_str().as_bytes()),
        }
    }
}

impl<'de> Deserialize<'de> for RecordPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use std::os::unix::ffi::OsStringExt;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Text(String),
            Bytes(Vec<u8>),
        }
        Ok(Self(match Repr::deserialize(d)? {
            Repr::Text(text) => PathBuf::from(text),
            Repr::Bytes(bytes) => PathBuf::from(std::ffi::OsString::from_vec(bytes)),
        }))
    }
}

/// Where a turn that began at `messages` begins once the conversation's messages `from..to` were replaced by `with`
/// messages: later turns move, turns inside the replaced range are gone.
pub fn after_replace(messages: Option<usize>, from: usize, to: usize, with: usize) -> Option<usize> {
    match messages {
        Some(m) if m >= to => Some(m - (to - from) + with),
        Some(m) if m >= from => None,
        other => other,
    }
}

/// Where a turn that began at `messages` begins once the conversation kept only its first `keep` messages.
pub fn after_rewind(messages: Option<usize>, keep: usize) -> Option<usize> {
    messages.filter(|&m| m < keep)
}

#[cfg(test)]
mod tests;
