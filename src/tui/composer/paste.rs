//! Large pastes. A paste over [`MAX_INLINE_CHARS`] chars or [`MAX_INLINE_LINES`] lines is shown in the box as one
//! placeholder, `[pasted 2,345 chars, 40 lines]`, and its text is kept here; on submit (and in `Composer::text`) each
//! placeholder still present is replaced by exactly what was pasted. A placeholder the user has broken by editing
//! inside it is no longer one, and goes out as the literal text it has become. Backspace/Delete next to a placeholder
//! remove it whole.

/// A paste longer than this many chars is collapsed.
pub(crate) const MAX_INLINE_CHARS: usize = 1_000;
/// A paste with more lines than this is collapsed.
pub(crate) const MAX_INLINE_LINES: usize = 10;

use tern_text::units::thousands;

const LABEL_START: &str = "[pasted ";

/// Normalises terminal line endings: `\r\n` and a lone `\r` (what some terminals send for Enter inside a paste) both
/// become `\n`.
pub(crate) fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Whether a (normalised) paste is large enough to be collapsed into a placeholder.
pub(crate) fn is_large(text: &str) -> bool {
    text.chars().count() > MAX_INLINE_CHARS || line_count(text) > MAX_INLINE_LINES
}

fn line_count(text: &str) -> usize {
    text.lines().count().max(1)
}

/// The collapsed pastes of the current input, by placeholder label.
#[derive(Debug, Default, Clone)]
pub(crate) struct PasteStore {
    entries: Vec<(String, String)>,
}

impl PasteStore {
    /// Keeps `text` and returns the placeholder to show for it (unique within this input: a second paste of the same
    /// size gets ` #2`).
    pub(crate) fn add(&mut self, text: String) -> String {
        let chars = text.chars().count();
        let lines = line_count(&text);
        let base = format!(
            "{LABEL_START}{} chars, {} line{}",
            thousands(chars as u64),
            thousands(lines as u64),
            if lines == 1 { "" } else { "s" }
        );
        let mut label = format!("{base}]");
        let mut n = 1;
        while self.entries.iter().any(|(l, _)| *l == label) {
            n += 1;
            label = format!("{base} #{n}]");
        }
        self.entries.push((label.clone(), text));
        label
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// `raw` with every placeholder replaced by its paste, in one left-to-right pass (so a paste that itself contains
    /// placeholder-like text is never expanded again).
    pub(crate) fn expand(&self, raw: &str) -> String {
        if self.entries.is_empty() {
            return raw.to_string();
        }
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(at) = rest.find(LABEL_START) {
            out.push_str(&rest[..at]);
            rest = &rest[at..];
            match self.entries.iter().find(|(label, _)| rest.starts_with(label.as_str())) {
                Some((label, text)) => {
                    out.push_str(text);
                    rest = &rest[label.len()..];
                }
                None => {
                    out.push('[');
                    rest = &rest[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// The length in chars of a placeholder that `before` (the text left of the cursor) ends with.
    pub(crate) fn label_ending(&self, before: &str) -> Option<usize> {
        self.entries
            .iter()
            .find(|(label, _)| before.ends_with(label.as_str()))
            .map(|(label, _)| label.chars().count())
    }

    /// The length in chars of a placeholder that `after` (the text right of the cursor) starts with.
    pub(crate) fn label_starting(&self, after: &str) -> Option<usize> {
        self.entries
            .iter()
            .find(|(label, _)| after.starts_with(label.as_str()))
            .map(|(label, _)| label.chars().count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_round_trip() {
        let mut store = PasteStore::default();
        let big = "x".repeat(2_345);
        let label = store.add(big.clone());
        assert_eq!(label, "[pasted 2,345 chars, 1 line]");
        let second = store.add("y".repeat(2_345));
        assert_eq!(second, "[pasted 2,345 chars, 1 line #2]");
        let raw = format!("see {label} and {second}!");
        assert_eq!(store.expand(&raw), format!("see {big} and {}!", "y".repeat(2_345)));
    }

    #[test]
    fn expansion_is_single_pass_and_broken_labels_stay_literal() {
        let mut store = PasteStore::default();
        let tricky = "[pasted 5 chars, 1 line] inside\n".repeat(20);
        let label = store.add(tricky.clone());
        assert_eq!(store.expand(&label), tricky);
        assert_eq!(store.expand("[pasted 1,0"), "[pasted 1,0");
        assert_eq!(store.expand("[[x"), "[[x");
    }

    #[test]
    fn thresholds_and_newlines() {
        assert!(!is_large(&"a".repeat(1_000)));
        assert!(is_large(&"a".repeat(1_001)));
        assert!(!is_large(&"l\n".repeat(10)));
        assert!(is_large(&"l\n".repeat(11)));
        assert_eq!(normalize_newlines("a\r\nb\rc\n"), "a\nb\nc\n");
    }

    #[test]
    fn finds_labels_next_to_the_cursor() {
        let mut store = PasteStore::default();
        let label = store.add("z\n".repeat(40));
        assert_eq!(label, "[pasted 80 chars, 40 lines]");
        let n = label.chars().count();
        assert_eq!(store.label_ending(&format!("abc {label}")), Some(n));
        assert_eq!(store.label_starting(&format!("{label} tail")), Some(n));
        assert_eq!(store.label_ending("abc"), None);
    }
}
