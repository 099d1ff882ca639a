//! Input history with shell-like recall: Up leaves the draft for the newest entry, then older ones; Down walks back
//! and finally returns the draft exactly as it was. Edits made to a recalled entry are kept while browsing (as
//! readline does) and dropped once something is submitted. Entries are what was submitted, oldest first.

use std::collections::HashMap;

/// Only the newest this many entries are kept.
pub(crate) const MAX_ENTRIES: usize = 1_000;

#[derive(Debug, Default)]
pub(crate) struct InputHistory {
    entries: Vec<String>,
    browse: Option<Browse>,
}

#[derive(Debug)]
struct Browse {
    index: usize,
    /// The input as it was before the first Up.
    draft: String,
    /// Recalled entries the user changed, by index.
    edits: HashMap<usize, String>,
}

impl InputHistory {
    #[cfg(test)]
    pub(crate) fn entries(&self) -> &[String] {
        &self.entries
    }

    #[cfg(test)]
    pub(crate) fn set_entries(&mut self, mut entries: Vec<String>) {
        if entries.len() > MAX_ENTRIES {
            entries.drain(..entries.len() - MAX_ENTRIES);
        }
        self.entries = entries;
        self.browse = None;
    }

    /// Records a submitted input (not a repeat of the newest entry) and ends browsing.
    pub(crate) fn push(&mut self, text: String) {
        self.browse = None;
        if text.trim().is_empty() || self.entries.last() == Some(&text) {
            return;
        }
        self.entries.push(text);
        if self.entries.len() > MAX_ENTRIES {
            self.entries.remove(0);
        }
    }

    /// Stops browsing without restoring anything (the input was replaced from outside).
    pub(crate) fn reset(&mut self) {
        self.browse = None;
    }

    /// `(position from 1, count)` while browsing, for a "history 3/12" hint.
    pub(crate) fn position(&self) -> Option<(usize, usize)> {
        self.browse.as_ref().map(|b| (b.index + 1, self.entries.len()))
    }

    /// The text to show after Up, given what is in the box now; `None` when there is nothing older.
    pub(crate) fn older(&mut self, current: &str) -> Option<String> {
        match &mut self.browse {
            None => {
                let index = self.entries.len().checked_sub(1)?;
                self.browse = Some(Browse {
                    index,
                    draft: current.to_string(),
                    edits: HashMap::new(),
                });
                Some(self.entries[index].clone())
            }
            Some(browse) => {
                let index = browse.index.checked_sub(1)?;
                remember(browse, &self.entries, current);
                browse.index = index;
                Some(browse.edits.get(&index).unwrap_or(&self.entries[index]).clone())
            }
        }
    }

    /// The text to show after Down: the next newer entry, or the draft after the newest; `None` when not browsing.
    pub(crate) fn newer(&mut self, current: &str) -> Option<String> {
        let browse = self.browse.as_mut()?;
        remember(browse, &self.entries, current);
        if browse.index + 1 < self.entries.len() {
            browse.index += 1;
            Some(
                browse
                    .edits
                    .get(&browse.index)
                    .unwrap_or(&self.entries[browse.index])
                    .clone(),
            )
        } else {
            self.browse.take().map(|b| b.draft)
        }
    }
}

fn remember(browse: &mut Browse, entries: &[String], current: &str) {
    if entries.get(browse.index).is_some_and(|e| e != current) {
        browse.edits.insert(browse.index, current.to_string());
    } else {
        browse.edits.remove(&browse.index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_keeps_the_draft_and_edits() {
        let mut h = InputHistory::default();
        h.set_entries(vec!["one".into(), "two".into()]);
        assert_eq!(h.newer("draft"), None);
        assert_eq!(h.older("draft").as_deref(), Some("two"));
        assert_eq!(h.position(), Some((2, 2)));
        assert_eq!(h.older("two!").as_deref(), Some("one"));
        assert_eq!(h.older("one"), None);
        assert_eq!(h.newer("one").as_deref(), Some("two!"));
        assert_eq!(h.newer("two!").as_deref(), Some("draft"));
        assert_eq!(h.position(), None);
        // Submitting drops the edits: the entry reads as it was.
        h.push("three".into());
        assert_eq!(h.older("").as_deref(), Some("three"));
        assert_eq!(h.older("three").as_deref(), Some("two"));
    }

    #[test]
    fn push_skips_blank_and_repeats_and_caps() {
        let mut h = InputHistory::default();
        h.push("a".into());
        h.push("a".into());
        h.push("  ".into());
        assert_eq!(h.entries(), ["a"]);
        h.set_entries((0..MAX_ENTRIES + 5).map(|i| i.to_string()).collect());
        assert_eq!(h.entries().len(), MAX_ENTRIES);
        assert_eq!(h.entries()[0], "5");
        h.push("new".into());
        assert_eq!(h.entries().len(), MAX_ENTRIES);
        assert_eq!(h.entries()[0], "6");
    }
}
