//! Writing a review's reverts all or nothing: every new content is computed and every file checked before the first
//! write; each write goes through a temp file and a rename; when one fails, the files already written get back the
//! content the review saw. The writer is a parameter so a test can make a write fail.

use std::path::{Path, PathBuf};

/// One file a review changes.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub path: PathBuf,
    /// A path from a snapshot must stay inside the work tree (see `checkpoint::revert`).
    pub confine: Option<PathBuf>,
    pub display: String,
    /// What the review saw (`None`: no file).
    pub seen: Option<Vec<u8>>,
    /// What it becomes (`None`: removed).
    pub new: Option<Vec<u8>>,
}

/// Puts `content` at `path` (through a temp file and a rename), or removes the file for `None`.
pub(crate) type Writer<'a> = &'a dyn Fn(&Path, Option<&[u8]>) -> std::io::Result<()>;

/// The writer for the real work tree.
pub(crate) fn write_file(path: &Path, content: Option<&[u8]>) -> std::io::Result<()> {
    match content {
        Some(bytes) => tern_fs::atomic_write(path, bytes, None),
        None => match tern_fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

/// Files whose content on disk is no longer what the review saw, with what they hold now.
pub(crate) fn changed_since(files: &[Planned]) -> Vec<(usize, Option<Vec<u8>>)> {
    files
        .iter()
        .enumerate()
        .filter_map(|(k, file)| {
            let now = tern_fs::read(&file.path).ok();
            (now != file.seen).then_some((k, now))
        })
        .collect()
}

/// Writes every file or none. On failure, says which file failed and why (and which could not be put back).
pub(crate) fn write_all(files: &[Planned], write: Writer<'_>) -> Result<(), String> {
    for file in files {
        if let Some(root) = &file.confine
            && !crate::checkpoint::stays_inside(&file.path, root)
        {
            return Err(format!(
                "{}: a directory on its path now leads out of the workspace",
                file.display
            ));
        }
    }
    for (k, file) in files.iter().enumerate() {
        if let Err(e) = write(&file.path, file.new.as_deref()) {
            let stuck: Vec<String> = files[..k]
                .iter()
                .rev()
                .filter(|done| write(&done.path, done.seen.as_deref()).is_err())
                .map(|done| done.display.clone())
                .collect();
            let mut message = format!("{}: {e}", file.display);
            if !stuck.is_empty() {
                message.push_str(&format!("; could not put back (now reverted): {}", stuck.join(", ")));
            }
            return Err(message);
        }
    }
    Ok(())
}
