//! The compaction settings: at which share of the context window the conversation is compacted, and which share of
//! it the most recent messages keep verbatim (see `agent::compact`).

use super::{ConfigError, ConfigFile};

/// When and how far the conversation is compacted (see `agent::compact`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compaction {
    /// Compact when the prompt reaches this share of the context window.
    pub compact_at: f64,
    /// The most recent messages filling up to this share of the window stay verbatim.
    pub keep_recent: f64,
}

impl Default for Compaction {
    fn default() -> Self {
        Self {
            compact_at: 0.8,
            keep_recent: 0.3,
        }
    }
}

impl Compaction {
    /// The shares a configuration sets, checked: each is a share of the window, and what is kept must be less than
    /// the threshold or compaction would never make room.
    pub(super) fn from_file(file: &ConfigFile) -> Result<Self, ConfigError> {
        let defaults = Compaction::default();
        let compact_at = file.compact_at.unwrap_or(defaults.compact_at);
        let keep_recent = file.keep_recent.unwrap_or(defaults.keep_recent);
        if !(0.1..=1.0).contains(&compact_at) {
            return Err(ConfigError::Invalid(format!(
                "compact_at = {compact_at}: expected a share of the context window between 0.1 and 1.0"
            )));
        }
        if !(0.0..compact_at).contains(&keep_recent) {
            return Err(ConfigError::Invalid(format!(
                "keep_recent = {keep_recent}: expected a share of the context window from 0 to below compact_at \
                 ({compact_at})"
            )));
        }
        Ok(Compaction {
            compact_at,
            keep_recent,
        })
    }
}
