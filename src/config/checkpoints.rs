//! The `[checkpoints]` settings: how long and how much of the work-tree snapshots tern keeps (see
//! `agent::checkpoint::retention`). They govern tern's own data for every workspace, so an untrusted project cannot
//! set them (`ConfigFile::without_loosening`).

use std::time::Duration;

use serde::Deserialize;

use crate::agent::checkpoint::Retention;

/// `[checkpoints]` as written in a config file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsFile {
    /// Days a session's snapshots are kept, and a workspace's snapshot data after its last use (default 14).
    pub keep_days: Option<u64>,
    /// Megabytes of snapshot data per workspace before older sessions' snapshots go (default 2048).
    pub max_size_mb: Option<u64>,
}

impl CheckpointsFile {
    /// Layers `other` over `self`: what it sets wins.
    pub(super) fn merge(&mut self, other: CheckpointsFile) {
        if other.keep_days.is_some() {
            self.keep_days = other.keep_days;
        }
        if other.max_size_mb.is_some() {
            self.max_size_mb = other.max_size_mb;
        }
    }

    pub(super) fn is_set(&self) -> bool {
        self.keep_days.is_some() || self.max_size_mb.is_some()
    }

    /// The resolved policy: at least a day, and at least 64 MB.
    pub(super) fn retention(&self) -> Retention {
        Retention {
            keep: Duration::from_secs(self.keep_days.unwrap_or(14).max(1) * 24 * 3600),
            max_bytes: self.max_size_mb.unwrap_or(2048).max(64) * 1024 * 1024,
        }
    }
}
