//! Finding sessions: the sessions of a workspace for the resume picker and `--continue`, one by id prefix for
//! `tern resume <id>`, and forks. Listing stays fast with hundreds of sessions: it reads each log only up to its first
//! user message and takes the size and time from the file's metadata; a session's turns and last prompt (`details`)
//! need the whole log read, which is left to whoever shows them.

mod details;

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::log::{Line, SessionLog, SessionMeta};
use tern_protocol::Message;

pub use details::details;
pub use tern_protocol::SessionSummary;

#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("no session matches `{0}`")]
    None(String),
    #[error("`{prefix}` matches {} sessions: {}; give more of the id", .ids.len(), .ids.join(", "))]
    Several { prefix: String, ids: Vec<String> },
    #[error("no session to continue in {0}")]
    NoneHere(String),
}

/// The sessions of `workspace` that hold a prompt, the most recently written first (one left without a prompt is
/// nothing to resume).
pub fn list(data_dir: &Path, workspace: &str) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(data_dir.join("sessions")) else {
        return Vec::new();
    };
    let mut sessions: Vec<SessionSummary> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|id| summary(&SessionLog::path_for(data_dir, &id), workspace))
        .collect();
    sessions.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| b.id.cmp(&a.id)));
    sessions
}

/// The session of `workspace` written last.
pub fn latest(data_dir: &Path, workspace: &str) -> Result<PathBuf, FindError> {
    list(data_dir, workspace)
        .into_iter()
        .next()
        .map(|s| s.path)
        .ok_or_else(|| FindError::NoneHere(workspace.to_string()))
}

/// The log of the session whose id is `prefix` or starts with it (in any workspace).
pub fn find(data_dir: &Path, prefix: &str) -> Result<PathBuf, FindError> {
    let exact = SessionLog::path_for(data_dir, prefix);
    if !prefix.is_empty() && !prefix.contains('/') && exact.is_file() {
        return Ok(exact);
    }
    let mut ids: Vec<String> = std::fs::read_dir(data_dir.join("sessions"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|id| !prefix.is_empty() && id.starts_with(prefix))
                .filter(|id| SessionLog::path_for(data_dir, id).is_file())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    match ids.len() {
        0 => Err(FindError::None(prefix.to_string())),
        1 => Ok(SessionLog::path_for(data_dir, &ids[0])),
        _ => Err(FindError::Several {
            prefix: prefix.to_string(),
            ids,
        }),
    }
}

/// Reads a log's meta line and its lines up to the first user message; `None` when it is not a log of `workspace`.
fn summary(path: &Path, workspace: &str) -> Option<SessionSummary> {
    let file = File::open(path).ok()?;
    let metadata = file.metadata().ok()?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).ok()?;
    let Ok(Line::Meta(meta)) = serde_json::from_slice::<Line>(&line) else {
        return None;
    };
    if meta.workspace != workspace {
        return None;
    }
    let mut title = None;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Ok(Line::Message {
            message: Message::User { content, .. },
            ..
        }) = serde_json::from_slice::<Line>(&line)
        {
            title = Some(details::first_line(&content));
            break;
        }
    }
    Some(SessionSummary {
        id: meta.id,
        path: path.to_path_buf(),
        title: title?,
        modified: metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        size: metadata.len(),
    })
}

/// Removes the session logged at `path` (its directory: the log and its stored results) when the log holds no user
/// message: a session left without a prompt is nothing to resume. Returns whether it was removed. For a frontend
/// whose session has ended (the agent no longer writes it).
pub fn discard_if_empty(path: &Path) -> bool {
    if !count_prompts(path).is_ok_and(|prompts| prompts == 0) {
        return false;
    }
    path.parent().is_some_and(|dir| std::fs::remove_dir_all(dir).is_ok())
}

/// How many turns a log holds, as a resume shows them (see `details`).
pub fn count_turns(path: &Path) -> std::io::Result<usize> {
    details(path).map(|d| d.turns)
}

/// How many user messages a log holds (the user's and the agent's own), found by their line's start without parsing
/// the rest.
fn count_prompts(path: &Path) -> std::io::Result<usize> {
    const USER: &[u8] = br#"{"type":"message","message":{"role":"user""#;
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut count = 0;
    let mut at_line_start = true;
    let mut head = Vec::with_capacity(USER.len());
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let len = buf.len();
        let mut i = 0;
        while i < len {
            if at_line_start {
                // Collect the first bytes of the line (they may straddle two reads).
                let want = USER.len() - head.len();
                let take = want.min(len - i);
                head.extend_from_slice(&buf[i..i + take]);
                if let Some(nl) = buf[i..i + take].iter().position(|&b| b == b'\n') {
                    i += nl + 1;
                    head.clear();
                    continue;
                }
                i += take;
                if head.len() == USER.len() {
                    count += usize::from(head == USER);
                    head.clear();
                    at_line_start = false;
                }
                continue;
            }
            match buf[i..].iter().position(|&b| b == b'\n') {
                Some(nl) => {
                    i += nl + 1;
                    at_line_start = true;
                }
                None => i = len,
            }
        }
        reader.consume(len);
    }
    Ok(count)
}

/// Copies the log at `from` to a new session (a fork: the original stays untouched) and returns the new log's path.
/// Its meta line says which session it came from and how many messages it had then.
pub fn fork(data_dir: &Path, from: &Path) -> std::io::Result<PathBuf> {
    let loaded = super::log::load(from)?;
    let id = super::new_session_id();
    let meta = SessionMeta {
        id: id.clone(),
        forked_from: Some(loaded.meta.id.clone()),
        forked_messages: Some(loaded.messages.len()),
        ..loaded.meta
    };
    let path = SessionLog::path_for(data_dir, &id);
    drop(SessionLog::create(&path, &meta)?);
    let mut source = BufReader::new(File::open(from)?);
    let mut first = Vec::new();
    source.read_until(b'\n', &mut first)?;
    let mut rest = Vec::new();
    source.read_to_end(&mut rest)?;
    // A torn last line stays behind: the copy ends with a complete one.
    let complete = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut out = std::fs::OpenOptions::new().append(true).open(&path)?;
    out.write_all(&rest[..complete])?;
    out.flush()?;
    Ok(path)
}

#[cfg(test)]
mod tests;
