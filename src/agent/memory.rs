//! Memory and the context the model sees: `/remember` appends a fact to the project's or the user's AGENTS.md and
//! rebuilds the system prompt; the prompt is also rebuilt before each turn, so edits to context files and skills reach
//! the next request; `/context` reports what the model receives, part by part. These are the user's own actions, so
//! they do not go through the approval gate; a model can only change the same files through its tools, which do.

use std::path::{Path, PathBuf};

use super::prompt::files::{self, repository_root};
use super::prompt::{ContextSources, SystemPrompt};
use tern_fs as strict_fs;
use tern_protocol::{ContextReport, ContextShare, FileDiff, MemoryScope, Message};
use tern_tools::path_policy::{PathError, PathPolicy};

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("nothing to remember")]
    Empty,
    #[error("the user's config directory is unknown (no HOME)")]
    NoUserDir,
    #[error("{0} is a link that leads out of the project; not written")]
    LinkOut(String),
    #[error("cannot write {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

/// Where a fact for `scope` goes: the instruction file in effect in the repository root (AGENTS.md, else CLAUDE.md,
/// else a new AGENTS.md), or the user's AGENTS.md in tern's config directory.
pub(crate) fn memory_file(sources: &ContextSources, scope: MemoryScope) -> Result<PathBuf, MemoryError> {
    let dir = match scope {
        MemoryScope::Project => repository_root(&sources.workspace),
        MemoryScope::User => sources.user_dir.clone().ok_or(MemoryError::NoUserDir)?,
    };
    Ok(files::file_in(&dir).unwrap_or_else(|| dir.join(files::NAMES[0])))
}

/// Appends `fact` as a bullet to the memory file of `scope`, creating it (and the user's config directory) when
/// missing, and returns the change.
pub fn remember(sources: &ContextSources, scope: MemoryScope, fact: &str) -> Result<FileDiff, MemoryError> {
    // One fact is one bullet: line breaks inside it would start markdown of their own.
    let fact = fact.split_whitespace().collect::<Vec<_>>().join(" ");
    if fact.is_empty() {
        return Err(MemoryError::Empty);
    }
    let path = memory_file(sources, scope)?;
    let shown = path.display().to_string();
    let io = |source| MemoryError::Io {
        path: shown.clone(),
        source,
    };
    // The project's file is resolved like a path the model gave (a link, even a dangling one, must stay inside the
    // project) and then read and written without following a link swapped in meanwhile; the user's own file is
    // tern's own, wherever the user's links lead it.
    let real = match scope {
        MemoryScope::Project => {
            let root = path.parent().unwrap_or(&path);
            let policy = PathPolicy::new(root).map_err(|e| io(std::io::Error::other(e.to_string())))?;
            match policy.resolve_write(&path.to_string_lossy()) {
                Ok(real) => Some(real),
                Err(PathError::OutsideWorkspace { .. }) => return Err(MemoryError::LinkOut(shown)),
                Err(e) => return Err(io(std::io::Error::other(e.to_string()))),
            }
        }
        MemoryScope::User => None,
    };
    let read = match &real {
        Some(real) => strict_fs::read(real),
        None => std::fs::read(&path),
    };
    let old = match read {
        Ok(bytes) => {
            Some(String::from_utf8(bytes).map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };
    let mut new = old.clone().unwrap_or_default();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str(&format!("- {fact}\n"));
    match &real {
        Some(real) => strict_fs::atomic_write(real, new.as_bytes(), None),
        None => strict_fs::atomic_write_own(&path, new.as_bytes()),
    }
    .map_err(io)?;
    Ok(FileDiff::new(shown_path(sources, &path), old, Some(new)))
}

/// A path as the user reads it: relative to the workspace when inside it.
fn shown_path(sources: &ContextSources, path: &Path) -> String {
    path.strip_prefix(&sources.workspace)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The estimate `/context` uses: ~4 characters a token, as `context::estimate_tokens`.
fn tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

fn share(group: &str, label: impl Into<String>, chars: usize) -> ContextShare {
    ContextShare {
        group: group.into(),
        label: label.into(),
        chars,
        tokens: tokens(chars),
    }
}

/// What the model receives with this system prompt, these tools and this conversation.
pub(crate) fn context_report(
    prompt: &SystemPrompt,
    prompt_text: &str,
    tools: &[tern_protocol::ToolDefinition],
    messages: &[Message],
    window: u64,
) -> ContextReport {
    let mut parts: Vec<ContextShare> = if prompt.text == prompt_text {
        prompt
            .parts
            .iter()
            .map(|p| share("system", &p.label, p.chars))
            .collect()
    } else {
        vec![share("system", "system prompt", prompt_text.len())]
    };
    let tools_chars = serde_json::to_string(tools).map(|s| s.len()).unwrap_or(0);
    parts.push(share(
        "tools",
        format!("tool definitions ({})", tools.len()),
        tools_chars,
    ));
    let (mut said, mut said_n, mut results, mut results_n) = (0, 0, 0, 0);
    for message in messages {
        match message {
            Message::Tool { content, images, .. } => {
                results += content.len() + images.len() * 4_000 + 16;
                results_n += 1;
            }
            Message::User { content, images } => {
                said += content.len() + images.len() * 4_000;
                said_n += 1;
            }
            Message::Assistant {
                content,
                reasoning,
                tool_calls,
            } => {
                said += content.len()
                    + reasoning.as_ref().map_or(0, |r| r.text.len())
                    + tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.to_string().len() + 16)
                        .sum::<usize>();
                said_n += 1;
            }
        }
    }
    parts.push(share("conversation", format!("messages ({said_n})"), said));
    parts.push(share("conversation", format!("tool results ({results_n})"), results));
    ContextReport { window, parts }
}
