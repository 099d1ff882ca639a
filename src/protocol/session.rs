//! What a frontend shows of sessions besides their events: the list to resume from, and what their usage costs.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::Usage;

/// One session in the list of a workspace's sessions (`tern resume`, `/resume`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    pub id: String,
    pub path: PathBuf,
    /// The first line of the first prompt (empty when the session has none yet).
    pub title: String,
    /// When the log was last written.
    pub modified: SystemTime,
    /// The log's size on disk in bytes.
    pub size: u64,
}

/// What the resume picker shows of a session once its whole log was read (in the background: a day's log is long).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionDetails {
    /// Its turns as a resume shows them: the turns started, less those rewound or cleared.
    pub turns: usize,
    /// The first line of the last turn's prompt.
    pub last_prompt: Option<String>,
}

/// What a model's tokens cost (the provider's model catalog knows; a frontend shows it).
pub trait Prices: Send + Sync + std::fmt::Debug {
    /// The cost in US dollars of `usage` on `model`, or `None` when the model's prices are unknown.
    fn cost(&self, model: &str, usage: &Usage) -> Option<f64>;
}
