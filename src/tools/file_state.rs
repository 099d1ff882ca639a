//! What the session has read: lets read_file answer a repeat read of an unchanged file with a short stub, and lets
//! edit tools notice that a file changed since the model last saw it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Identity of a file's content at one moment: cheap to take (one `stat`), and a content hash to rule out a same-size
/// rewrite within the mtime granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub modified: Option<SystemTime>,
    pub len: u64,
    pub hash: u64,
}

/// One read: the stamp of the file and the line range shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    pub stamp: FileStamp,
    pub offset: u64,
    pub limit: u64,
}

#[derive(Debug, Default)]
pub struct FileTracker {
    reads: Mutex<HashMap<PathBuf, ReadRecord>>,
}

impl FileTracker {
    pub fn record_read(&self, path: &Path, record: ReadRecord) {
        if let Ok(mut reads) = self.reads.lock() {
            reads.insert(path.to_path_buf(), record);
        }
    }

    pub fn last_read(&self, path: &Path) -> Option<ReadRecord> {
        self.reads.lock().ok()?.get(path).cloned()
    }

    /// Forgets every read: after old results were compacted out of the model's context, a stub pointing at them
    /// would point at nothing.
    pub fn forget_all(&self) {
        if let Ok(mut reads) = self.reads.lock() {
            reads.clear();
        }
    }

    /// Forgets a file (after the session itself wrote it, so the next read shows the new content in full).
    pub fn forget(&self, path: &Path) {
        if let Ok(mut reads) = self.reads.lock() {
            reads.remove(path);
        }
    }
}

/// Takes the stamp of a file from its metadata and the bytes read (callers hash what they read anyway).
pub fn stamp(meta: &std::fs::Metadata, content: &[u8]) -> FileStamp {
    FileStamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        hash: hash_bytes(content),
    }
}

/// A fast, stable-within-a-process content hash.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, then rename over the target, so a
/// crash leaves either the old or the new content, never half of it. Parent directories are created; an existing
/// file keeps its permissions. When `expected` is given, the write is refused if the file's current content no longer
/// matches it (someone changed the file after we read it), instead of silently losing their change.
pub fn atomic_write(path: &Path, bytes: &[u8], expected: Option<&[u8]>) -> std::io::Result<()> {
    use std::io::Write;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent)?;
    let existing = std::fs::metadata(path).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"));
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".tern-")
        .suffix(".tmp")
        .tempfile_in(parent)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Some(meta) = &existing {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    if let Some(expected) = expected {
        let current = std::fs::read(path).unwrap_or_default();
        if current != expected {
            return Err(std::io::Error::other(
                "the file changed on disk while it was being edited; read it again and redo the edit",
            ));
        }
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn atomic_write_creates_parents_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.txt");
        atomic_write(&p, b"one", None).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
        atomic_write(&p, b"two", Some(b"one")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o751);
        // no temp files left behind
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn atomic_write_refuses_when_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "theirs").unwrap();
        let err = atomic_write(&p, b"ours", Some(b"original")).unwrap_err();
        assert!(err.to_string().contains("changed on disk"));
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(atomic_write(dir.path(), b"x", None).is_err());
    }
}
