//! The search tools: `grep` searches file contents with ripgrep's own engine (grep-regex + grep-searcher) and
//! `find_files` finds paths by glob or text. Both walk the tree with ignore's parallel walker (so .gitignore is
//! respected and .git is skipped), run on the blocking pool, stop promptly when the call is cancelled, and page their
//! results so a huge tree never floods the model. They never write anything.

mod engine;
mod find;
mod grep;
mod walk;

#[cfg(test)]
mod find_tests;
#[cfg(test)]
mod grep_tests;

use std::sync::Arc;

use serde_json::Value;

use super::{Tool, ToolError};

pub(crate) use find::FindFilesTool;
pub(crate) use grep::GrepTool;

/// Total characters a search result may hand the model; longer output is cut on a whole line with a note.
pub(crate) const OUTPUT_CAP: usize = 128_000;

pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(GrepTool), Arc::new(FindFilesTool)]
}

use super::run_blocking;
use tern_text::units::thousands;

fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn bool_arg(args: &Value, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn uint_arg(args: &Value, key: &str) -> Option<u64> {
    args.get(key).and_then(Value::as_u64)
}

/// The `path` argument, defaulting to the workspace root when absent or blank.
fn path_arg(args: &Value) -> String {
    match str_arg(args, "path") {
        Some(p) if !p.trim().is_empty() => p.to_string(),
        _ => ".".to_string(),
    }
}

/// `head_limit` clamped to 1..=max, `default` when absent.
fn limit_arg(args: &Value, default: usize, max: usize) -> usize {
    uint_arg(args, "head_limit").map_or(default, |n| usize::try_from(n).unwrap_or(max).clamp(1, max))
}

/// "1 file", "3 files".
fn count_of(n: u64, singular: &str, plural: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { singular } else { plural })
}

/// The window of results one call shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Page {
    start: usize,
    end: usize,
    total: usize,
}

impl Page {
    /// The page `offset..offset+limit` of `total` entries. An offset past the end is the model's mistake: say so.
    fn new(total: usize, offset: usize, limit: usize, unit: &str) -> Result<Self, ToolError> {
        if offset > 0 && offset >= total {
            return Err(ToolError::Invalid(format!(
                "offset {offset} is past the end: there are only {} {unit}",
                thousands(total as u64)
            )));
        }
        Ok(Self {
            start: offset,
            end: offset.saturating_add(limit).min(total),
            total,
        })
    }

    /// Footer wording for `shown` entries of this page: `None` when everything fits on one page and all was shown.
    fn summary(&self, shown: usize, unit: &str) -> Option<String> {
        let shown_end = self.start + shown;
        if self.start == 0 && shown_end >= self.total {
            return None;
        }
        let mut text = format!(
            "Showing {}-{} of {} {unit}.",
            thousands(self.start as u64 + 1),
            thousands(shown_end as u64),
            thousands(self.total as u64)
        );
        if shown_end < self.total {
            text.push_str(&format!(" Use offset={shown_end} to see more."));
        }
        Some(text)
    }
}

/// Output text under construction, cut on a whole line at `OUTPUT_CAP` (less room for the footer).
struct CappedText {
    text: String,
    cut: bool,
}

impl CappedText {
    const FOOTER_ROOM: usize = 600;

    fn new() -> Self {
        Self {
            text: String::new(),
            cut: false,
        }
    }

    /// Appends a line; false (and nothing appended) once the cap would be passed.
    fn push_line(&mut self, line: &str) -> bool {
        if self.cut || self.text.len() + line.len() + 1 > OUTPUT_CAP - Self::FOOTER_ROOM {
            self.cut = true;
            return false;
        }
        self.text.push_str(line);
        self.text.push('\n');
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_bounds_and_summary() {
        let p = Page::new(1234, 250, 250, "files").unwrap();
        assert_eq!((p.start, p.end), (250, 500));
        assert_eq!(
            p.summary(250, "files").unwrap(),
            "Showing 251-500 of 1,234 files. Use offset=500 to see more."
        );
        let all = Page::new(3, 0, 250, "files").unwrap();
        assert_eq!(all.summary(3, "files"), None);
        let last = Page::new(300, 250, 250, "files").unwrap();
        assert_eq!(last.summary(50, "files").unwrap(), "Showing 251-300 of 300 files.");
        let err = Page::new(10, 10, 5, "files").unwrap_err().to_string();
        assert!(
            err.contains("offset 10 is past the end") && err.contains("only 10 files"),
            "{err}"
        );
        assert!(Page::new(0, 0, 5, "files").is_ok());
    }

    #[test]
    fn capped_text_stops_on_a_whole_line() {
        let mut out = CappedText::new();
        let line = "x".repeat(1000);
        let mut pushed = 0;
        while out.push_line(&line) {
            pushed += 1;
        }
        assert!(out.cut);
        assert!(out.text.len() <= OUTPUT_CAP);
        assert_eq!(out.text.len(), pushed * 1001);
    }
}
