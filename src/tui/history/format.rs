//! Short text forms shared by the history list and the detail view: the clock time of a call, its duration, a size
//! and the status mark.

use std::time::{SystemTime, UNIX_EPOCH};

use ratatui::style::Style;

use crate::state::calls::CallStatus;
use crate::theme::Theme;

/// `HH:MM:SS` in UTC. We have no time-zone database, so the column is labelled UTC rather than guessing local time.
pub(crate) fn utc_clock(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let day = secs % 86_400;
    format!("{:02}:{:02}:{:02}", day / 3_600, day % 3_600 / 60, day % 60)
}

pub(crate) use tern_text::units::{duration, elapsed, human_size as size};

/// `1 file`, `3 files`; `more` adds a `+` to say the count was cut short.
pub(crate) fn count(n: u64, one: &str, many: &str, more: bool) -> String {
    let plus = if more { "+" } else { "" };
    format!("{n}{plus} {}", if n == 1 { one } else { many })
}

/// The one-cell status mark and its style.
pub(crate) fn status_mark(status: &CallStatus, theme: &Theme) -> (&'static str, Style) {
    match status {
        CallStatus::Running => ("…", theme.warning),
        CallStatus::Done => ("✓", theme.success),
        CallStatus::Failed => ("✗", theme.error),
    }
}

/// The status as a word, for the detail header.
pub(crate) fn status_word(status: &CallStatus) -> &'static str {
    match status {
        CallStatus::Running => "running",
        CallStatus::Done => "done",
        CallStatus::Failed => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats() {
        assert_eq!(
            utc_clock(UNIX_EPOCH + Duration::from_secs(86_400 * 3 + 3_723)),
            "01:02:03"
        );
        assert_eq!(duration(Duration::from_millis(340)), "340ms");
        assert_eq!(duration(Duration::from_millis(2_460)), "2.5s");
        assert_eq!(duration(Duration::from_millis(59_990)), "1m00s");
        assert_eq!(duration(Duration::from_secs(187)), "3m07s");
        assert_eq!(duration(Duration::from_secs(3_720)), "1h02m");
        assert_eq!(elapsed(Duration::from_millis(3_900)), "3s");
        assert_eq!(count(1, "file", "files", false), "1 file");
        assert_eq!(count(200, "match", "matches", true), "200+ matches");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1_229), "1.2 KB");
        assert_eq!(size(3 * 1024 * 1024 + 400 * 1024), "3.4 MB");
    }
}
