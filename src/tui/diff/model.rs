//! The data behind a rendered diff: both sides split into lines, hunks of rows from `similar`'s grouped ops, or a
//! one-line summary when the inputs are binary or too large to diff on the render path. No styling here.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp};

use tern_protocol::FileDiff;

/// Inputs larger than this are summarised, not diffed (the render path must stay fast).
pub(super) const MAX_BYTES: usize = 1 << 20;
/// Inputs with more lines than this are summarised, not diffed.
pub(super) const MAX_LINES: usize = 20_000;
/// How far a NUL byte is looked for, like git's binary check.
const BINARY_PROBE: usize = 8000;
/// The line diff gives up refining after this and reports a coarser (still correct) diff.
const LINE_DIFF_BUDGET: Duration = Duration::from_millis(100);
/// How far above a hunk the enclosing function or heading is looked for.
const HEADING_SCAN: usize = 2000;

/// One line of a file without its terminator. `eol` is false only for a last line lacking a newline, so that such a
/// line differs from the same text with a newline (as in git).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct SourceLine<'a> {
    pub(crate) text: &'a str,
    pub(crate) eol: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endings {
    /// No terminated lines at all.
    None,
    Lf,
    Crlf,
    Mixed,
}

impl Endings {
    fn label(self) -> &'static str {
        match self {
            Endings::None => "none",
            Endings::Lf => "LF",
            Endings::Crlf => "CRLF",
            Endings::Mixed => "mixed",
        }
    }
}

pub(super) struct Side<'a> {
    pub(crate) lines: Vec<SourceLine<'a>>,
    pub(crate) endings: Endings,
}

impl<'a> Side<'a> {
    /// Splits `text` into lines, dropping `\n` and a `\r` before it (a CRLF file shows no `\r`). None when there are
    /// more than `max_lines` lines.
    pub(crate) fn split(text: &'a str, max_lines: usize) -> Option<Side<'a>> {
        let mut lines = Vec::new();
        let (mut lf, mut crlf) = (0usize, 0usize);
        let mut rest = text;
        while !rest.is_empty() {
            if lines.len() >= max_lines {
                return None;
            }
            match rest.find('\n') {
                Some(i) => {
                    let raw = &rest[..i];
                    let text = match raw.strip_suffix('\r') {
                        Some(t) => {
                            crlf += 1;
                            t
                        }
                        None => {
                            lf += 1;
                            raw
                        }
                    };
                    lines.push(SourceLine { text, eol: true });
                    rest = &rest[i + 1..];
                }
                None => {
                    lines.push(SourceLine { text: rest, eol: false });
                    rest = "";
                }
            }
        }
        let endings = match (lf, crlf) {
            (0, 0) => Endings::None,
            (_, 0) => Endings::Lf,
            (0, _) => Endings::Crlf,
            _ => Endings::Mixed,
        };
        Some(Side { lines, endings })
    }

    /// True when the last line has no newline.
    pub(crate) fn missing_newline(&self) -> bool {
        self.lines.last().is_some_and(|l| !l.eol)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Created,
    Deleted,
    Modified,
}

impl Kind {
    pub(crate) fn of(diff: &FileDiff) -> Kind {
        match (&diff.old, &diff.new) {
            (None, Some(_)) => Kind::Created,
            (Some(_), None) => Kind::Deleted,
            _ => Kind::Modified,
        }
    }
}

/// One displayed row of a hunk. Indices are 0-based into the old / new lines. `pair` links a removed line to the
/// inserted line it was replaced by (and back), for word-level highlights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Row {
    Context {
        old: usize,
        new: usize,
    },
    Removed {
        old: usize,
        pair: Option<usize>,
    },
    Added {
        new: usize,
        pair: Option<usize>,
    },
    /// `\ No newline at end of file` after the row above.
    NoNewline,
}

#[derive(Debug)]
pub(super) struct Hunk {
    pub(crate) old_start: usize,
    pub(crate) old_len: usize,
    pub(crate) new_start: usize,
    pub(crate) new_len: usize,
    pub(crate) rows: Vec<Row>,
}

impl Hunk {
    /// `@@ -a,b +c,d @@` in git's form: 1-based starts, `,1` left out, an empty side starting at the line before.
    pub(crate) fn range_header(&self) -> String {
        fn range(start: usize, len: usize) -> String {
            match len {
                0 => format!("{start},0"),
                1 => format!("{}", start + 1),
                _ => format!("{},{len}", start + 1),
            }
        }
        format!(
            "@@ -{} +{} @@",
            range(self.old_start, self.old_len),
            range(self.new_start, self.new_len)
        )
    }
}

pub(super) struct Model<'a> {
    pub(crate) old: Side<'a>,
    pub(crate) new: Side<'a>,
    pub(crate) hunks: Vec<Hunk>,
}

pub(super) enum Body<'a> {
    /// Binary or too large: one line instead of a diff.
    Summary(String),
    Lines(Model<'a>),
}

/// Splits and diffs both sides, or says why it won't.
pub(super) fn build(diff: &FileDiff, context: usize) -> Body<'_> {
    let old = diff.old.as_deref().unwrap_or("");
    let new = diff.new.as_deref().unwrap_or("");
    if looks_binary(old) || looks_binary(new) {
        return Body::Summary(binary_summary(diff));
    }
    let large = || Body::Summary(format!("large change: +{} -{} lines", diff.added, diff.removed));
    if old.len() > MAX_BYTES || new.len() > MAX_BYTES {
        return large();
    }
    let (Some(old), Some(new)) = (Side::split(old, MAX_LINES), Side::split(new, MAX_LINES)) else {
        return large();
    };
    let deadline = Instant::now() + LINE_DIFF_BUDGET;
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, &old.lines, &new.lines, Some(deadline));
    let hunks = similar::group_diff_ops(ops, context)
        .iter()
        .map(|group| hunk(group, &old, &new))
        .collect();
    Body::Lines(Model { old, new, hunks })
}

fn hunk(group: &[DiffOp], old: &Side<'_>, new: &Side<'_>) -> Hunk {
    let (first_old, first_new) = group
        .first()
        .map_or((0, 0), |op| (op.old_range().start, op.new_range().start));
    let (end_old, end_new) = group
        .last()
        .map_or((0, 0), |op| (op.old_range().end, op.new_range().end));
    let old_last = old.lines.len().checked_sub(1).filter(|_| old.missing_newline());
    let new_last = new.lines.len().checked_sub(1).filter(|_| new.missing_newline());
    let mut rows = Vec::with_capacity(end_old - first_old + end_new - first_new);
    for op in group {
        let (olds, news) = (op.old_range(), op.new_range());
        match op {
            DiffOp::Equal { .. } => {
                for (o, n) in olds.zip(news) {
                    rows.push(Row::Context { old: o, new: n });
                    if Some(o) == old_last {
                        rows.push(Row::NoNewline);
                    }
                }
            }
            DiffOp::Delete { .. } | DiffOp::Insert { .. } | DiffOp::Replace { .. } => {
                // Deleted lines pair with inserted lines in order; the leftovers of the longer side stand alone.
                let (o0, n0) = (olds.start, news.start);
                for o in olds.clone() {
                    let pair = Some(n0 + (o - o0)).filter(|n| news.contains(n));
                    rows.push(Row::Removed { old: o, pair });
                    if Some(o) == old_last {
                        rows.push(Row::NoNewline);
                    }
                }
                for n in news.clone() {
                    let pair = Some(o0 + (n - n0)).filter(|o| olds.contains(o));
                    rows.push(Row::Added { new: n, pair });
                    if Some(n) == new_last {
                        rows.push(Row::NoNewline);
                    }
                }
            }
        }
    }
    Hunk {
        old_start: first_old,
        old_len: end_old - first_old,
        new_start: first_new,
        new_len: end_new - first_new,
        rows,
    }
}

/// A note when the line-ending style changed (the rows compare lines without `\r`, so such a change is otherwise
/// invisible).
pub(super) fn endings_note(model: &Model<'_>) -> Option<String> {
    let (a, b) = (model.old.endings, model.new.endings);
    (a != b && a != Endings::None && b != Endings::None).then(|| format!("line endings: {} → {}", a.label(), b.label()))
}

/// What kind of line marks a section in a file, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Headings {
    /// Source code: git's default rule (a line starting with a letter, `_` or `$`) plus indented definitions
    /// (methods inside an impl or class).
    Code,
    /// Markdown and friends: `#` headings.
    Markdown,
    /// TOML and INI: `[section]` lines.
    Sections,
    /// Plain text and unknown formats: a line starting with a letter is just text, so no heading.
    None,
}

impl Headings {
    pub(crate) fn for_path(path: &str) -> Headings {
        let ext = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "md" | "markdown" | "mdx" => Headings::Markdown,
            "toml" | "ini" | "cfg" | "conf" | "gitconfig" => Headings::Sections,
            "rs" | "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "go" | "py" | "pyi" | "js" | "mjs" | "cjs"
            | "jsx" | "ts" | "tsx" | "java" | "kt" | "kts" | "swift" | "rb" | "php" | "cs" | "scala" | "lua" | "sh"
            | "bash" | "zsh" | "fish" | "pl" | "pm" | "ex" | "exs" | "erl" | "hs" | "ml" | "mli" | "zig" | "dart"
            | "m" | "mm" | "r" | "jl" | "nim" | "v" | "vue" | "svelte" | "proto" | "gradle" | "groovy" | "clj"
            | "fs" | "elm" | "sql" => Headings::Code,
            _ => Headings::None,
        }
    }

    fn matches(self, line: &str) -> bool {
        match self {
            Headings::None => false,
            Headings::Markdown => line.starts_with('#'),
            Headings::Sections => line.starts_with('['),
            Headings::Code => is_code_heading(line),
        }
    }
}

/// The nearest line above old line `start` that marks the enclosing function, type or section.
pub(super) fn enclosing_heading<'a>(old: &Side<'a>, start: usize, kind: Headings) -> Option<&'a str> {
    if kind == Headings::None {
        return None;
    }
    let from = start.min(old.lines.len());
    old.lines[from.saturating_sub(HEADING_SCAN)..from]
        .iter()
        .rev()
        .map(|l| l.text)
        .find(|t| kind.matches(t))
        .map(str::trim)
}

fn is_code_heading(line: &str) -> bool {
    let Some(first) = line.chars().next() else {
        return false;
    };
    if first.is_alphabetic() || first == '_' || first == '$' {
        return true;
    }
    const DEFINITIONS: &[&str] = &[
        "fn ",
        "async fn ",
        "unsafe fn ",
        "const fn ",
        "impl ",
        "impl<",
        "trait ",
        "mod ",
        "struct ",
        "enum ",
        "def ",
        "async def ",
        "class ",
        "function ",
        "async function ",
        "func ",
        "interface ",
        "static ",
        "private ",
        "protected ",
        "public ",
        "export ",
    ];
    let mut t = line.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest;
            break;
        }
    }
    DEFINITIONS.iter().any(|d| t.starts_with(d))
}

fn looks_binary(text: &str) -> bool {
    text.as_bytes()[..text.len().min(BINARY_PROBE)].contains(&0)
}

fn binary_summary(diff: &FileDiff) -> String {
    let size = |s: &Option<String>| s.as_ref().map(|s| tern_text::units::human_size(s.len() as u64));
    match (size(&diff.old), size(&diff.new)) {
        (Some(a), Some(b)) => format!("binary content changed: {a} → {b}"),
        (None, Some(b)) => format!("binary content: {b}"),
        (Some(a), None) => format!("binary content: {a}"),
        (None, None) => "binary content".to_string(),
    }
}

/// The unified diff of `diffs` as text (for copying): git-style headers, `/dev/null` for created and deleted files,
/// 3 lines of context. Bounded in time like the rendered view, so a huge input cannot stall the UI.
pub(crate) fn unified_text(diffs: &[FileDiff]) -> String {
    let mut out = String::new();
    for diff in diffs {
        let old_name = diff
            .old
            .as_ref()
            .map_or("/dev/null".to_string(), |_| format!("a/{}", diff.path));
        let new_name = diff
            .new
            .as_ref()
            .map_or("/dev/null".to_string(), |_| format!("b/{}", diff.path));
        let old = diff.old.as_deref().unwrap_or("");
        let new = diff.new.as_deref().unwrap_or("");
        if looks_binary(old) || looks_binary(new) {
            out.push_str(&format!("Binary files {old_name} and {new_name} differ\n"));
            continue;
        }
        let text = similar::TextDiff::configure()
            .timeout(LINE_DIFF_BUDGET * 5)
            .diff_lines(old, new);
        out.push_str(
            &text
                .unified_diff()
                .context_radius(3)
                .header(&old_name, &new_name)
                .to_string(),
        );
    }
    out
}
