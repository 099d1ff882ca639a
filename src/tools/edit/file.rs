//! Reading files for editing and writing the results back, shared by edit_file and apply_patch. A file is only edited
//! when it is UTF-8 text (a lossy rewrite would silently corrupt it), every write goes through `atomic_write` with the
//! bytes that were read as the expected content, and every write can be undone (apply_patch's rollback). A file read
//! from an editor's buffer is checked against the buffer and written through the editor instead (`place.rs`).

use std::io;
use std::path::{Path, PathBuf};

use super::place::{self, Place};
use crate::ToolError;
use tern_fs::atomic_write;
use tern_protocol::FileDiff;

/// Larger files are refused: the engine holds a few copies in memory and the diff would be unreadable anyway.
pub(crate) const MAX_EDIT_BYTES: u64 = 32 * 1024 * 1024;

/// Reads a file for editing. `Ok(None)`: it does not exist. Directories, huge files, binary files and text that is
/// not UTF-8 are refused with a message that says why.
pub(crate) fn read_text(path: &Path, display: &str) -> Result<Option<String>, ToolError> {
    let meta = match tern_fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ToolError::io(display, e)),
    };
    if meta.is_dir() {
        return Err(ToolError::Invalid(format!("{display} is a directory, not a file")));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::Failed(format!(
            "{display} is too large to edit ({} bytes; the limit is {MAX_EDIT_BYTES} bytes)",
            meta.len()
        )));
    }
    let bytes = match tern_fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ToolError::io(display, e)),
    };
    decode(bytes, display).map(Some)
}

/// The text of a file's bytes, refusing anything that is not UTF-8 text.
pub(crate) fn decode(bytes: Vec<u8>, display: &str) -> Result<String, ToolError> {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(ToolError::Failed(format!(
            "{display} is UTF-16 text; edits are only made to UTF-8 files, so it was left untouched"
        )));
    }
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(ToolError::Failed(format!(
            "{display} looks like a binary file (it contains NUL bytes); refusing to edit it as text"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        ToolError::Failed(format!(
            "{display} is not valid UTF-8 (first invalid byte at offset {}); refusing to edit it, because rewriting \
             it as UTF-8 would corrupt its other characters. Convert it first or edit it with a tool that knows its \
             encoding",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// "P does not exist", with a similarly named file in the same directory when there is one.
pub(crate) fn missing_file(path: &Path, display: &str) -> String {
    let mut msg = format!("{display} does not exist.");
    let Some(parent) = path.parent() else {
        return msg;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        let shown = Path::new(display)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if !shown.is_empty() {
            msg.push_str(&format!(" Its directory {shown} does not exist either."));
        }
        return msg;
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let names: Vec<String> = entries
        .take(5000)
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut guesses: Vec<&str> = refs.iter().copied().filter(|n| n.eq_ignore_ascii_case(&name)).collect();
    if guesses.is_empty() {
        guesses = similar::get_close_matches(name.as_str(), &refs, 3, 0.6);
    }
    let guesses: Vec<String> = guesses
        .iter()
        .map(|g| Path::new(display).with_file_name(g).display().to_string())
        .collect();
    if !guesses.is_empty() {
        msg.push_str(&format!(" Did you mean {}?", guesses.join(" or ")));
    }
    msg
}

/// One file's change, computed in memory: written with `write`, undone with `undo`.
#[derive(Debug)]
pub(crate) struct PlannedFile {
    pub path: PathBuf,
    pub display: String,
    /// The content as read; `None`: the file did not exist.
    pub original: Option<String>,
    /// The content to write; `None`: remove the file.
    pub new: Option<String>,
    /// Whether `original` and `new` are the whole texts, so the change can be reviewed hunk by hunk.
    pub reviewable: bool,
    /// What the file must still hold when it is written.
    pub guard: Guard,
    /// Where the text was read and goes: the disk, or the editor's buffer.
    pub place: Place,
    /// Set by `write`: directories it created (outermost first) and the permissions of a file it removed.
    created_dirs: Vec<PathBuf>,
    removed_mode: Option<std::fs::Permissions>,
}

impl PlannedFile {
    pub(crate) fn new(path: PathBuf, display: String, original: Option<String>) -> Self {
        Self {
            path,
            display,
            new: original.clone(),
            original,
            reviewable: true,
            guard: Guard::Original,
            place: Place::Disk,
            created_dirs: Vec::new(),
            removed_mode: None,
        }
    }

    pub(crate) fn changed(&self) -> bool {
        match self.guard {
            Guard::Original => self.original != self.new,
            // The original is only a stand-in (shown lossily, or a placeholder): the caller decided it changes.
            Guard::Bytes(_) | Guard::Unchecked => true,
        }
    }

    pub(crate) fn diff(&self) -> FileDiff {
        FileDiff::new(self.display.clone(), self.original.clone(), self.new.clone())
    }

    /// The bytes the file must hold for the write to go ahead; `None`: not checked (too large to hold).
    fn expected(&self) -> Option<&[u8]> {
        match &self.guard {
            Guard::Original => Some(self.original.as_deref().unwrap_or("").as_bytes()),
            Guard::Bytes(bytes) => Some(bytes),
            Guard::Unchecked => None,
        }
    }

    /// Whether the file still holds what was read (a missing file is still missing).
    pub(crate) fn still_as_read(&self) -> bool {
        if let Place::Editor(editor) = &self.place {
            return match (&self.guard, &self.original, place::editor_text(editor, &self.path)) {
                (Guard::Original, Some(original), Some(current)) => current == *original,
                (Guard::Original, None, None) => !self.path.exists(),
                // Too large to show: the guard holds the text that was read.
                (Guard::Bytes(bytes), _, Some(current)) => *bytes == current.as_bytes(),
                (Guard::Unchecked, _, current) => current.is_some(),
                _ => false,
            };
        }
        let current = match tern_fs::read(&self.path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(_) => return false,
        };
        match (&self.guard, &self.original, current) {
            (Guard::Unchecked, _, current) => current.is_some(),
            (Guard::Bytes(bytes), _, Some(current)) => *bytes == current,
            (Guard::Original, Some(original), Some(current)) => original.as_bytes() == current.as_slice(),
            (Guard::Original, None, None) => true,
            _ => false,
        }
    }

    /// Writes the change. Refused when the file no longer holds what was read (someone else changed it meanwhile).
    pub(crate) fn write(&mut self) -> io::Result<()> {
        // Owned, since creating directories below records them in `self`.
        let expected = self.expected().map(<[u8]>::to_vec);
        match (&self.new, &self.place) {
            (Some(new), Place::Editor(editor)) => {
                self.created_dirs = missing_dirs(&self.path);
                let written = match self.path.parent() {
                    Some(parent) if !self.created_dirs.is_empty() => tern_fs::create_dir_all(parent),
                    _ => Ok(()),
                }
                .and_then(|()| place::editor_write(editor, &self.path, new));
                if written.is_err() {
                    self.remove_created_dirs();
                }
                written
            }
            // The editor's buffer was checked just before (`still_as_read`); ACP has no delete, so the disk's file goes.
            (None, Place::Editor(_)) => {
                self.removed_mode = Some(tern_fs::metadata(&self.path)?.permissions());
                tern_fs::remove_file(&self.path)
            }
            (Some(new), Place::Disk) => {
                self.created_dirs = missing_dirs(&self.path);
                let written = atomic_write(&self.path, new.as_bytes(), expected.as_deref());
                if written.is_err() {
                    self.remove_created_dirs();
                }
                written
            }
            (None, Place::Disk) => {
                let current = tern_fs::read(&self.path)?;
                if expected.is_some_and(|e| current != e) {
                    return Err(io::Error::other(
                        "the file changed on disk while it was being edited; read it again and redo the edit",
                    ));
                }
                self.removed_mode = Some(tern_fs::metadata(&self.path)?.permissions());
                tern_fs::remove_file(&self.path)
            }
        }
    }

    /// Puts the file back as it was before `write`, unless someone changed it since.
    pub(crate) fn undo(&self) -> io::Result<()> {
        if let Place::Editor(editor) = &self.place {
            return self.undo_in(editor);
        }
        match (&self.original, &self.new) {
            (Some(original), Some(new)) => atomic_write(&self.path, original.as_bytes(), Some(new.as_bytes())),
            (None, Some(new)) => {
                if tern_fs::read(&self.path)? != new.as_bytes() {
                    return Err(io::Error::other("the file changed on disk after it was written"));
                }
                tern_fs::remove_file(&self.path)?;
                self.remove_created_dirs();
                Ok(())
            }
            (Some(original), None) => {
                atomic_write(&self.path, original.as_bytes(), Some(b""))?;
                match &self.removed_mode {
                    Some(mode) => tern_fs::set_permissions(&self.path, mode.clone()),
                    None => Ok(()),
                }
            }
            (None, None) => Ok(()),
        }
    }
}

/// What a planned file must still hold when it is written.
#[derive(Debug, Clone)]
pub(crate) enum Guard {
    /// The original text (or nothing, for a file that did not exist).
    Original,
    /// These bytes (the original was not text).
    Bytes(Vec<u8>),
    /// Not checked: the original was too large to hold.
    Unchecked,
}

impl PlannedFile {
    /// `undo` of a file written through the editor: its text goes back through it; a file it created is removed
    /// from disk (ACP has no delete).
    fn undo_in(&self, editor: &std::sync::Arc<dyn crate::Buffers>) -> io::Result<()> {
        if self.new.is_some() && place::editor_text(editor, &self.path) != self.new {
            return Err(io::Error::other("the editor's text changed after it was written"));
        }
        match (&self.original, &self.new) {
            (Some(original), _) => place::editor_write(editor, &self.path, original),
            (None, Some(_)) => {
                tern_fs::remove_file(&self.path)?;
                self.remove_created_dirs();
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }

    fn remove_created_dirs(&self) {
        for dir in self.created_dirs.iter().rev() {
            // Only empty directories go; one that gained other files stays.
            let _ = tern_fs::remove_dir(dir);
        }
    }
}

/// The ancestors of `path` that do not exist yet, outermost first.
fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}
