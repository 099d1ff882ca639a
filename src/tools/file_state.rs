//! What the session has read: lets read_file answer a repeat read of an unchanged file with a short stub, and lets
//! edit tools notice that a file changed since the model last saw it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Identity of a file's content at one moment: cheap to take (one `stat`), and a content hash to rule out a same-size
/// rewrite within the mtime granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    pub modified: Option<SystemTime>,
    pub len: u64,
    pub hash: u64,
}

/// One read: the stamp of the file and the line range shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadRecord {
    pub stamp: FileStamp,
    pub offset: u64,
    pub limit: u64,
}

#[derive(Debug, Default)]
pub struct FileTracker {
    reads: Mutex<HashMap<PathBuf, ReadRecord>>,
}

impl FileTracker {
    pub(crate) fn record_read(&self, path: &Path, record: ReadRecord) {
        if let Ok(mut reads) = self.reads.lock() {
            reads.insert(path.to_path_buf(), record);
        }
    }

    pub(crate) fn last_read(&self, path: &Path) -> Option<ReadRecord> {
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

/// A fast, stable-within-a-process content hash.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}
