//! Where an edited file's text comes from and goes to: the disk (through `tern-fs`), or the editor's buffer when an
//! editor that takes writes drives the session (`tern acp`, `Buffers::writes`). Only the bytes' road changes: the
//! path policy resolved the path and the gate allowed the call before anything here runs. A failed editor write is an
//! error, never a write to disk instead, which could overwrite the buffer the user is editing.
//!
//! The edit tools plan and write on a blocking thread (`run_blocking`); the editor is asked from there, waiting on
//! the runtime's handle.

use std::io;
use std::path::Path;
use std::sync::Arc;

use crate::{Buffers, ToolContext, ToolError};

/// Where a planned file was read from, and so where it is written.
#[derive(Clone, Default)]
pub(crate) enum Place {
    #[default]
    Disk,
    /// The editor's buffer: its text was edited, and the new text goes back to it.
    Editor(Arc<dyn Buffers>),
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Place::Disk => "Disk",
            Place::Editor(_) => "Editor",
        })
    }
}

/// The editor a call's edits go through: the one driving the session, when it takes writes.
pub(crate) fn editor(ctx: &ToolContext) -> Option<Arc<dyn Buffers>> {
    ctx.buffers.clone().filter(|buffers| buffers.writes())
}

/// A file's text for editing and where it lives: the editor's text when it has one (its buffer, saved or not), and
/// the editor too for a file that does not exist yet (it creates it); otherwise the disk, read as before
/// (`file::read_text`). Call on a blocking thread.
pub(crate) fn read(
    editor: Option<&Arc<dyn Buffers>>,
    path: &Path,
    display: &str,
) -> Result<(Option<String>, Place), ToolError> {
    let Some(editor) = editor else {
        return Ok((super::file::read_text(path, display)?, Place::Disk));
    };
    if let Some(text) = editor_text(editor, path) {
        if text.len() as u64 > super::file::MAX_EDIT_BYTES {
            return Err(ToolError::Failed(format!(
                "{display} is too large to edit ({} bytes; the limit is {} bytes)",
                text.len(),
                super::file::MAX_EDIT_BYTES
            )));
        }
        return Ok((Some(text), Place::Editor(Arc::clone(editor))));
    }
    let original = super::file::read_text(path, display)?;
    let place = match original {
        None => Place::Editor(Arc::clone(editor)),
        Some(_) => Place::Disk,
    };
    Ok((original, place))
}

/// The editor's text of `path`; text with a NUL byte counts as none (read_file does the same).
pub(crate) fn editor_text(editor: &Arc<dyn Buffers>, path: &Path) -> Option<String> {
    wait(editor.text(path)).filter(|text| !text.contains('\0'))
}

/// Gives the editor `text` as `path`'s new content; its refusal as an error.
///
/// The editor writes the path itself and follows whatever it holds then, so the path is checked again just before:
/// a symlink swapped in on it since the path policy resolved it (by a command left running, while the user read the
/// approval prompt) is refused as tern's own writes refuse one. A swap after this check, during the editor's own
/// write, tern cannot see.
pub(crate) fn editor_write(editor: &Arc<dyn Buffers>, path: &Path, text: &str) -> io::Result<()> {
    unswapped(path)?;
    wait(editor.write(path, text)).map_err(|why| io::Error::other(format!("the editor did not write it: {why}")))
}

/// `path` (resolved, holding no symlink when it was resolved) still holds none: a file, or no file in a directory
/// reached without one.
fn unswapped(path: &Path) -> io::Result<()> {
    match tern_fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(io::Error::other(format!("{} is not a file", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => tern_fs::parent_dir(path, false).map(|_| ()),
        Err(e) => Err(e),
    }
}

/// Runs `work` to its end from a blocking thread.
fn wait<F: std::future::Future>(work: F) -> F::Output {
    tokio::runtime::Handle::current().block_on(work)
}
