//! The compaction settings: at which share of the context window the conversation is compacted, and which share of
//! it the most recent messages keep verbatim (see `agent::compact`).

pub use crate::agent::compact::Compaction;

use super::{ConfigError, ConfigFile};

/// The shares a configuration sets, checked: each is a share of the window, and what is kept must be less than the
/// threshold or compaction would never make room.
pub(super) fn resolve(file: &ConfigFile) -> Result<Compaction, ConfigError> {
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
