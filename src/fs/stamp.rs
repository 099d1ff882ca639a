//! What the entries on the way to a path are at one moment, for a reader tern cannot stop from following a symlink:
//! an editor asked for a file's text (`tern acp`) opens the path itself, at its own time. A command left running can
//! swap a symlink to a credential store in on the path while the editor reads, and swap the file back before tern
//! looks again. Two stamps taken around the read differ when any entry on the way was replaced, renamed or linked over
//! meanwhile: a file or directory swapped in has another inode, and one moved away and back a new change time, as
//! does the directory it was moved in.
//!
//! Must not: follow a symlink (the stamp of a path holding one is an error); be trusted past the file system clock's
//! grain, which a swap and its undoing inside one tick can slip under.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One entry's identity and times: device, inode, modified and changed (seconds and nanoseconds).
type Entry = (u64, u64, i64, i64, i64, i64);

/// The stamp of the directories from a base down to a path's parent (those that exist: the first missing one ends
/// the list), and of the file (`None`: there is none).
#[derive(Debug, PartialEq, Eq)]
pub struct PathStamp {
    dirs: Vec<Entry>,
    file: Option<Entry>,
}

/// `path`'s stamp, from `base` (a directory above it, or `/`) down; an error when an entry on the way is a symlink,
/// or the path is there but is not a regular file.
pub fn path_stamp(base: &Path, path: &Path) -> io::Result<PathStamp> {
    let mut dirs = Vec::new();
    let mut above: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(base))
        .collect();
    above.reverse();
    for dir in above {
        match crate::metadata(dir) {
            Ok(meta) => dirs.push(entry(&meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(PathStamp { dirs, file: None }),
            Err(e) => return Err(e),
        }
    }
    let file = match crate::metadata(path) {
        Ok(meta) if meta.is_file() => Some(entry(&meta)),
        Ok(_) => return Err(io::Error::other(format!("{} is not a file", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    Ok(PathStamp { dirs, file })
}

fn entry(meta: &std::fs::Metadata) -> Entry {
    (
        meta.dev(),
        meta.ino(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    )
}

#[cfg(test)]
mod tests;
