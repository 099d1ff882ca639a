//! Remembers highlighted code so the same block is never parsed twice, and so a block that grows line by line while
//! an answer streams is highlighted incrementally: each entry keeps syntect's state after its last complete line, and
//! a longer text that starts with an entry's text resumes from there. Without this every streamed token would
//! re-highlight the whole block (syntect costs tens of microseconds a line).

use std::sync::{LazyLock, Mutex, MutexGuard};

use ratatui::style::Style;
use ratatui::text::Line;
use syntect::highlighting::HighlightState;
use syntect::parsing::ParseState;

/// At most this many highlighted texts are kept… (Tests share this process-wide cache while they run in parallel:
/// with 64 entries one test's block could be evicted by others between the worker colouring it and the test's next
/// frame, so they get room for all.)
const MAX_ENTRIES: usize = if cfg!(test) { 1 << 16 } else { 64 };
/// …holding at most this much source text in all.
const MAX_BYTES: usize = 4 * 1024 * 1024;

/// What a highlighted text depends on besides the text itself.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Key {
    pub(crate) syntax: &'static str,
    pub(crate) syntax_theme: &'static str,
    /// The style plain tokens take (the theme's text style).
    pub(crate) text_style: Style,
}

/// syntect's state after `text` (whole lines, each ending in '\n'), and the lines it produced.
#[derive(Clone)]
pub(super) struct Checkpoint {
    pub(crate) text: String,
    pub(crate) lines: Vec<Line<'static>>,
    pub(crate) parse: ParseState,
    pub(crate) highlight: HighlightState,
}

// SAFETY: syntect's `ParseState` holds Oniguruma match regions (`onig::Region`): each owns its malloc'd arrays
// outright, shares nothing and uses no thread-local state, so a checkpoint may move to another thread (the cache is
// behind a mutex, and the background worker highlights on its own thread). The onig crate only leaves `Send` off
// because the region is a raw C struct.
unsafe impl Send for Checkpoint {}

struct Entry {
    key: Key,
    checkpoint: Checkpoint,
    last_used: u64,
}

#[derive(Default)]
struct Cache {
    entries: Vec<Entry>,
    bytes: usize,
    clock: u64,
}

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| Mutex::new(Cache::default()));

fn cache() -> MutexGuard<'static, Cache> {
    // A panic elsewhere while holding the lock leaves the data consistent (every update is a single push or
    // remove), so a poisoned lock is still usable.
    CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The checkpoint with the longest text that `code` starts with, cloned so highlighting runs without the lock.
pub(super) fn resume(key: &Key, code: &str) -> Option<Checkpoint> {
    let mut cache = cache();
    cache.clock += 1;
    let now = cache.clock;
    let entry = cache
        .entries
        .iter_mut()
        .filter(|e| e.key == *key && code.starts_with(e.checkpoint.text.as_str()))
        .max_by_key(|e| e.checkpoint.text.len())?;
    entry.last_used = now;
    Some(entry.checkpoint.clone())
}

/// Stores a checkpoint. `superseded` is the text of the checkpoint it grew from: a streamed block only ever grows,
/// so the shorter entry would never be asked for again.
pub(super) fn store(key: Key, checkpoint: Checkpoint, superseded: Option<&str>) {
    if checkpoint.text.is_empty() || checkpoint.text.len() > MAX_BYTES / 4 {
        return;
    }
    let mut cache = cache();
    if let Some(old) = superseded {
        cache.remove_where(|e| e.key == key && e.checkpoint.text == old);
    }
    cache.remove_where(|e| e.key == key && e.checkpoint.text == checkpoint.text);
    while cache.entries.len() >= MAX_ENTRIES || cache.bytes + checkpoint.text.len() > MAX_BYTES {
        let Some(oldest) = cache
            .entries
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.last_used)
            .map(|(i, _)| i)
        else {
            break;
        };
        let removed = cache.entries.swap_remove(oldest);
        cache.bytes -= removed.checkpoint.text.len();
    }
    cache.clock += 1;
    let last_used = cache.clock;
    cache.bytes += checkpoint.text.len();
    cache.entries.push(Entry {
        key,
        checkpoint,
        last_used,
    });
}

impl Cache {
    fn remove_where(&mut self, matches: impl Fn(&Entry) -> bool) {
        let mut freed = 0;
        self.entries.retain(|e| {
            let keep = !matches(e);
            if !keep {
                freed += e.checkpoint.text.len();
            }
            keep
        });
        self.bytes -= freed;
    }
}

#[cfg(test)]
pub(super) fn len_for(key: &Key) -> usize {
    cache().entries.iter().filter(|e| e.key == *key).count()
}
