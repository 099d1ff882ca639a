//! What a finished tool call comes down to, in words: the one-line summary the panes, group rows and the history
//! browser show, the tail a folded pane shows of a long output, and the label (the files of a patch) a call's row
//! carries. One place, so the pane and the history browser never disagree. Text only: no styling here.

use crate::state::calls::ToolCallState;
use tern_protocol::{ToolDetails, ToolKind, ToolOutput};

/// Output lines a folded pane shows of a long command output (its last ones).
pub(crate) const TAIL_LINES: usize = 4;

/// Lines exec puts after a command's output: its status and notes, not output.
const EXEC_TRAILERS: &[&str] = &[
    "Exit code: ",
    "Killed by signal ",
    "(ran ",
    "If it needs longer, pass a larger",
    "Note: processes it left running",
    "[The output is ",
];

/// Words that mark the line of a failure worth showing (compilers, shells, test runners).
const ERROR_WORDS: &[&str] = &[
    "error",
    "fatal",
    "panicked",
    "failed",
    "failure",
    "not found",
    "no such file",
    "denied",
    "cannot",
    "can't",
    "unable",
    "invalid",
    "exception",
    "traceback",
];

/// A command's output taken apart: what it printed on stdout and on stderr, without exec's labels and status lines.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ExecText<'a> {
    /// The error exec reported itself (timed out, interrupted, lost), without its "Error: " label.
    pub(crate) error: Option<&'a str>,
    pub(crate) stdout: Vec<&'a str>,
    pub(crate) stderr: Vec<&'a str>,
}

impl<'a> ExecText<'a> {
    pub(crate) fn parse(text: &'a str) -> Self {
        let mut out = ExecText::default();
        let mut in_stderr = false;
        for (i, line) in text.lines().enumerate() {
            if i == 0
                && let Some(error) = line.strip_prefix("Error: ")
            {
                out.error = Some(error.split(" Output so far:").next().unwrap_or(error).trim());
                continue;
            }
            if line == "STDERR:" {
                in_stderr = true;
                continue;
            }
            if (i == 0 || (out.error.is_some() && i == 1)) && line == "(no output)" {
                continue;
            }
            if EXEC_TRAILERS.iter().any(|t| line.starts_with(t)) {
                // Everything from the status line on is exec's own words.
                break;
            }
            if in_stderr {
                out.stderr.push(line);
            } else {
                out.stdout.push(line);
            }
        }
        for lines in [&mut out.stdout, &mut out.stderr] {
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
        }
        out
    }

    /// All output lines, stdout then stderr.
    pub(crate) fn lines(&self) -> impl DoubleEndedIterator<Item = &'a str> + '_ {
        self.stdout.iter().chain(self.stderr.iter()).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.stdout.len() + self.stderr.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The line that says why the command failed: exec's own error, else the first stderr line that reads like an
    /// error, else the first meaningful stderr line, else the last stdout line.
    pub(crate) fn error_line(&self) -> Option<&'a str> {
        if let Some(error) = self.error {
            return Some(error);
        }
        let errorish = |l: &str| {
            let lower = l.to_lowercase();
            ERROR_WORDS.iter().any(|w| lower.contains(w))
        };
        let stderr = self.stderr.iter().copied().filter(|l| is_meaningful(l));
        let stdout = self.stdout.iter().copied().filter(|l| is_meaningful(l));
        stderr
            .clone()
            .find(|l| errorish(l))
            .or_else(|| stderr.clone().next())
            .or_else(|| stdout.clone().find(|l| errorish(l)))
            .or_else(|| stdout.clone().next_back())
            .map(|l| l.trim())
    }
}

/// A line with something to read in it (not blank, not only punctuation or box drawing).
fn is_meaningful(line: &str) -> bool {
    line.chars().any(char::is_alphanumeric)
}

/// The one-line summary of a finished call.
///
/// Characters a person cannot see are shown (`terminal_text::reveal`), as in the call's label: a file name with a
/// zero-width space must not pass for another.
pub(crate) fn summary(output: &ToolOutput) -> String {
    let text = summary_text(output);
    match tern_text::reveal(&text).0 {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(shown) => shown,
    }
}

fn summary_text(output: &ToolOutput) -> String {
    if let ToolDetails::Exec { exit_code, .. } = &output.details {
        return exec_summary(&output.text, output.is_error, *exit_code);
    }
    if output.is_error {
        return error_line(&output.text).to_string();
    }
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match &output.details {
        ToolDetails::Read {
            first_line,
            last_line,
            total_lines,
            ..
        } => {
            let n = last_line.saturating_sub(*first_line) + 1;
            match total_lines {
                Some(t) if *t == n => format!("read {}", plural(n, "line", "lines")),
                Some(t) => format!("read lines {first_line}–{last_line} of {t}"),
                None => format!("read lines {first_line}–{last_line}"),
            }
        }
        ToolDetails::Search {
            matches,
            files,
            truncated,
            ..
        } => {
            let more = if *truncated { "+" } else { "" };
            // A search for files finds as many as it names (find_files); a search in them, matches in files.
            if matches == files {
                format!("{}{more}", plural(*files, "file", "files"))
            } else {
                format!(
                    "{}{more} in {}",
                    plural(*matches, "match", "matches"),
                    plural(*files, "file", "files")
                )
            }
        }
        ToolDetails::List { entries, truncated } => {
            format!(
                "{}{}",
                plural(*entries, "entry", "entries"),
                if *truncated { "+" } else { "" }
            )
        }
        ToolDetails::Diffs { diffs } => {
            let (a, r) = diffs.iter().fold((0, 0), |(a, r), d| (a + d.added, r + d.removed));
            format!("{} +{a} -{r}", plural(diffs.len() as u64, "file", "files"))
        }
        ToolDetails::Exec { .. } | ToolDetails::None | ToolDetails::Plan { .. } => {
            let mut lines = output.text.lines().filter(|l| !l.trim().is_empty());
            let first = lines.next().unwrap_or("done").trim();
            match lines.count() {
                0 => first.to_string(),
                more => format!("{first} {}", more_lines(more)),
            }
        }
    }
}

/// `… +N lines`: what a fold leaves out.
pub(crate) fn more_lines(n: usize) -> String {
    format!("… +{n} {}", if n == 1 { "line" } else { "lines" })
}

fn exec_summary(text: &str, is_error: bool, exit_code: Option<i32>) -> String {
    let parsed = ExecText::parse(text);
    if is_error {
        return match parsed.error_line() {
            Some(line) => line.to_string(),
            None => match exit_code {
                Some(code) => format!("exit {code}, no output"),
                None => "killed, no output".to_string(),
            },
        };
    }
    let last = parsed.lines().rev().find(|l| is_meaningful(l)).map(str::trim);
    match (parsed.len(), last) {
        (0, _) | (_, None) => "no output".to_string(),
        (1, Some(line)) => line.to_string(),
        (n, Some(line)) => format!("{n} lines · {line}"),
    }
}

/// The first line of a failure that says something, without an "Error:" label.
fn error_line(text: &str) -> &str {
    text.lines()
        .map(|l| l.trim().trim_start_matches("Error:").trim())
        .find(|l| is_meaningful(l))
        .unwrap_or("failed")
}

/// What a folded pane shows of a long command output: how many lines are left out above, and the last lines.
/// `None` when the summary line says it all (no output, or a single line).
pub(crate) fn exec_tail(output: &ToolOutput) -> Option<(usize, Vec<String>)> {
    if !matches!(output.details, ToolDetails::Exec { .. }) {
        return None;
    }
    let parsed = ExecText::parse(&output.text);
    let lines: Vec<&str> = parsed.lines().collect();
    if lines.len() <= 1 {
        return None;
    }
    let start = lines.len().saturating_sub(TAIL_LINES);
    Some((start, lines[start..].iter().map(|l| l.to_string()).collect()))
}

/// The files an `apply_patch` call touched: from its diffs once it ran, else from its arguments. Each once, in order.
pub(crate) fn patch_files(call: &ToolCallState) -> Vec<String> {
    if let Some(ToolOutput {
        details: ToolDetails::Diffs { diffs },
        ..
    }) = &call.output
        && !diffs.is_empty()
    {
        return tern_text::calls::unique_paths(diffs.iter().map(|d| d.path.as_str()));
    }
    tern_text::calls::edit_paths(&tern_text::calls::call_arguments(&call.args))
}

/// The argument a call's row shows: its key argument, or for an edit of several files (a patch) the files it
/// touched.
pub(crate) fn call_label(call: &ToolCallState) -> String {
    if call.kind == ToolKind::Edit {
        let files = patch_files(call);
        if !files.is_empty() {
            return tern_text::calls::files_label(&files);
        }
    }
    call.key_arg.clone()
}

#[cfg(test)]
mod tests;
