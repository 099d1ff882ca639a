//! Turns one `FileDiff` into styled, wrapped lines: a file header, hunk headers, rows with old/new line-number
//! gutters and a +/- marker, word emphasis inside replaced lines, and a fold line past `max_lines`. Pure: no I/O and
//! no caching (callers cache per width); the line diff and word diffs are time-bounded so a frame never stalls.

use std::collections::HashMap;
use std::ops::Range;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::model::{self, Body, Headings, Hunk, Kind, Model, Row};
use super::words::{self, WordMarks};
use crate::theme::Theme;
use crate::wrap;
use tern_protocol::FileDiff;

/// Tab stops every this many cells.
const TAB_WIDTH: usize = 4;
/// Longer lines are cut (a minified file would otherwise fill screens with one row).
const MAX_LINE_BYTES: usize = 2000;
/// Below this many cells for the text, line numbers are dropped and only the marker stays.
const MIN_TEXT_WIDTH: usize = 12;

#[derive(Debug, Clone)]
pub(crate) struct DiffOptions {
    /// Unchanged lines shown around each change.
    pub(crate) context: usize,
    /// Fold beyond this many output lines (the header and the fold line included): the rest becomes one dim
    /// "… N more lines" line. At least two lines are always shown (the header and the fold line).
    pub(crate) max_lines: Option<usize>,
    /// How to expand a folded diff, appended to the fold line in parentheses, e.g. "press e to expand".
    pub(crate) fold_hint: Option<String>,
}

impl Default for DiffOptions {
    fn default() -> Self {
        Self {
            context: 3,
            max_lines: None,
            fold_hint: None,
        }
    }
}

/// A file header (path, +added -removed, "new file"/"deleted"), then hunks: `@@ -a,b +c,d @@` headers with the
/// enclosing function or heading, rows with old and new line numbers, a +/- marker and the theme's diff colours, and
/// word emphasis inside replaced lines. Long lines wrap with a blank gutter on continuation rows. Binary or very large
/// inputs (over 1 MB or 20,000 lines) show a one-line summary instead.
pub(crate) fn render_diff(diff: &FileDiff, width: u16, theme: &Theme, opts: &DiffOptions) -> Vec<Line<'static>> {
    render_marked(diff, width, theme, opts).lines
}

/// Rendered lines plus the index of each hunk's first line (for next/previous-hunk navigation), and for each line
/// the changed line it draws, if it draws one (the approval prompt marks the part of a hunk under review).
pub(super) struct Rendered {
    pub(crate) lines: Vec<Line<'static>>,
    pub(crate) hunks: Vec<usize>,
    pub(crate) changed: Vec<Option<Changed>>,
}

/// A changed line a rendered line draws: line `n` (0-based) of the old side, removed, or of the new side, added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    Removed(usize),
    Added(usize),
}

fn changed_line(row: Row) -> Option<Changed> {
    match row {
        Row::Removed { old, .. } => Some(Changed::Removed(old)),
        Row::Added { new, .. } => Some(Changed::Added(new)),
        Row::Context { .. } | Row::NoNewline => None,
    }
}

pub(super) fn render_marked(diff: &FileDiff, width: u16, theme: &Theme, opts: &DiffOptions) -> Rendered {
    let kind = Kind::of(diff);
    let mut out = Output::new(opts.max_lines);
    out.lines
        .extend(wrap::wrap_line(file_header(diff, kind, theme), width, "  "));
    let body = model::build(diff, opts.context);
    match &body {
        Body::Summary(text) => {
            out.total = 1;
            out.push(vec![note(text, theme)]);
        }
        Body::Lines(model) => render_model(diff, model, kind, width, theme, &mut out),
    }
    out.finish(theme, opts.fold_hint.as_deref())
}

fn file_header(diff: &FileDiff, kind: Kind, theme: &Theme) -> Line<'static> {
    let path = if diff.path.is_empty() {
        "(unnamed)".to_string()
    } else {
        sanitize(&diff.path)
    };
    let mut spans = vec![
        Span::styled(path, theme.text.add_modifier(Modifier::BOLD)),
        Span::raw("  "),
    ];
    spans.extend(counts(diff, kind, theme));
    Line::from(spans)
}

/// `+added -removed` and "new file" / "deleted", as in the file header (the full-screen title reuses it).
pub(super) fn counts(diff: &FileDiff, kind: Kind, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::with_capacity(4);
    if kind != Kind::Deleted {
        spans.push(Span::styled(format!("+{}", diff.added), theme.diff_added));
    }
    if kind == Kind::Modified {
        spans.push(Span::raw(" "));
    }
    if kind != Kind::Created {
        spans.push(Span::styled(format!("-{}", diff.removed), theme.diff_removed));
    }
    match kind {
        Kind::Created => spans.push(Span::styled("  new file", theme.dim)),
        Kind::Deleted => spans.push(Span::styled("  deleted", theme.dim)),
        Kind::Modified => {}
    }
    spans
}

fn render_model(diff: &FileDiff, model: &Model<'_>, kind: Kind, width: u16, theme: &Theme, out: &mut Output) {
    let endings = model::endings_note(model);
    // A created or deleted file is one hunk whose header only repeats what the file header says.
    let hunk_headers = kind == Kind::Modified;
    let empty_note = if !model.hunks.is_empty() {
        None
    } else if endings.is_some() {
        Some("only line endings changed")
    } else if kind == Kind::Modified {
        Some("no changes")
    } else {
        Some("empty file")
    };
    out.total = usize::from(endings.is_some())
        + usize::from(empty_note.is_some())
        + model
            .hunks
            .iter()
            .map(|h| h.rows.len() + usize::from(hunk_headers))
            .sum::<usize>();
    for text in endings.iter().map(String::as_str).chain(empty_note) {
        out.push(vec![note(text, theme)]);
    }

    let gutter = Gutter::new(model, kind, width);
    let headings = Headings::for_path(&diff.path);
    let mut painter = Painter {
        theme,
        width,
        gutter,
        pending_new: HashMap::new(),
    };
    for hunk in &model.hunks {
        out.hunks.push(out.lines.len());
        if hunk_headers {
            let heading = model::enclosing_heading(&model.old, hunk.old_start, headings);
            if !out.push(hunk_header(hunk, heading, width, theme)) {
                out.hunks.pop();
                return;
            }
        }
        for row in &hunk.rows {
            let before = out.lines.len();
            if !out.push(painter.row(*row, model)) {
                if !hunk_headers && out.hunks.last() == Some(&out.lines.len()) {
                    out.hunks.pop();
                }
                return;
            }
            out.changed.resize(before, None);
            out.changed.resize(out.lines.len(), changed_line(*row));
        }
    }
}

fn hunk_header(hunk: &Hunk, heading: Option<&str>, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let range = hunk.range_header();
    let mut spans = vec![Span::styled(range.clone(), theme.diff_hunk)];
    if let Some(heading) = heading {
        let room = usize::from(width).saturating_sub(wrap::width(&range) + 1);
        if room > 3 {
            let text = expand(heading);
            spans.push(Span::raw(" "));
            spans.push(Span::styled(wrap::truncate(&text, room), theme.dim));
        }
    }
    wrap::wrap_line(Line::from(spans), width, "")
}

/// Line-number columns: both for a modification, one for a created or deleted file, none when too narrow.
#[derive(Clone, Copy)]
enum Gutter {
    Both { old: usize, new: usize },
    Old(usize),
    New(usize),
    Bare,
}

impl Gutter {
    fn new(model: &Model<'_>, kind: Kind, width: u16) -> Gutter {
        let digits = |n: usize| n.max(1).to_string().len();
        let gutter = match kind {
            Kind::Created => Gutter::New(digits(model.new.lines.len())),
            Kind::Deleted => Gutter::Old(digits(model.old.lines.len())),
            Kind::Modified => Gutter::Both {
                old: digits(model.old.lines.len()),
                new: digits(model.new.lines.len()),
            },
        };
        if usize::from(width) < gutter.width() + MIN_TEXT_WIDTH {
            Gutter::Bare
        } else {
            gutter
        }
    }

    /// Cells taken by the numbers, the marker and the spaces after each.
    fn width(self) -> usize {
        2 + match self {
            Gutter::Both { old, new } => old + new + 2,
            Gutter::Old(w) | Gutter::New(w) => w + 1,
            Gutter::Bare => 0,
        }
    }

    /// The numbers part (without the marker), 1-based.
    fn numbers(self, old: Option<usize>, new: Option<usize>) -> String {
        let num = |n: Option<usize>, w: usize| match n {
            Some(n) => format!("{:>w$} ", n + 1),
            None => " ".repeat(w + 1),
        };
        match self {
            Gutter::Both { old: ow, new: nw } => num(old, ow) + &num(new, nw),
            Gutter::Old(w) => num(old, w),
            Gutter::New(w) => num(new, w),
            Gutter::Bare => String::new(),
        }
    }
}

struct Painter<'t> {
    theme: &'t Theme,
    width: u16,
    gutter: Gutter,
    /// Word marks for inserted lines, computed with their removed partner (which is always drawn first).
    pending_new: HashMap<usize, Vec<Range<usize>>>,
}

/// How a row's text looks: its marker, the line colour, and the colour of changed words.
#[derive(Clone, Copy)]
struct Look {
    marker: char,
    line: Style,
    word: Style,
}

impl Painter<'_> {
    fn row(&mut self, row: Row, model: &Model<'_>) -> Vec<Line<'static>> {
        let t = self.theme;
        match row {
            Row::Context { old, new } => {
                let text = model.old.lines.get(old).map_or("", |l| l.text);
                let look = Look {
                    marker: ' ',
                    line: t.text,
                    word: t.text,
                };
                self.content(Some(old), Some(new), text, &[], look)
            }
            Row::Removed { old, pair } => {
                let text = model.old.lines.get(old).map_or("", |l| l.text);
                let partner = pair.and_then(|n| model.new.lines.get(n)).map(|l| l.text);
                let marks = match (pair, partner.and_then(|p| words::word_marks(text, p))) {
                    (Some(n), Some(WordMarks { old, new })) => {
                        self.pending_new.insert(n, new);
                        old
                    }
                    _ => Vec::new(),
                };
                let look = Look {
                    marker: '-',
                    line: t.diff_removed,
                    word: t.diff_removed_word,
                };
                self.content(Some(old), None, text, &marks, look)
            }
            Row::Added { new, .. } => {
                let text = model.new.lines.get(new).map_or("", |l| l.text);
                let marks = self.pending_new.remove(&new).unwrap_or_default();
                let look = Look {
                    marker: '+',
                    line: t.diff_added,
                    word: t.diff_added_word,
                };
                self.content(None, Some(new), text, &marks, look)
            }
            Row::NoNewline => {
                let blank = " ".repeat(self.gutter.width());
                vec![Line::from(vec![
                    Span::raw(blank),
                    Span::styled("\\ No newline at end of file", t.dim),
                ])]
            }
        }
    }

    /// One row: the gutter, then the text wrapped to the rest of the width, continuation rows under a blank gutter.
    fn content(
        &self,
        old: Option<usize>,
        new: Option<usize>,
        text: &str,
        marks: &[Range<usize>],
        look: Look,
    ) -> Vec<Line<'static>> {
        let gutter_w = self.gutter.width();
        let text_w = u16::try_from(usize::from(self.width).saturating_sub(gutter_w).max(1)).unwrap_or(u16::MAX);
        let spans = styled_text(text, marks, look, self.theme.dim);
        let pieces = wrap::wrap_line(Line::from(spans), text_w, "");
        let mut lines = Vec::with_capacity(pieces.len());
        for (i, piece) in pieces.into_iter().enumerate() {
            let mut spans = Vec::with_capacity(piece.spans.len() + 2);
            if i == 0 {
                spans.push(Span::styled(self.gutter.numbers(old, new), self.theme.diff_gutter));
                spans.push(Span::styled(format!("{} ", look.marker), look.line));
            } else {
                spans.push(Span::raw(" ".repeat(gutter_w)));
            }
            spans.extend(piece.spans);
            lines.push(Line::from(spans));
        }
        lines
    }
}

/// The text of a row as spans: tabs expanded, control characters made visible, `marks` in the word style, and a
/// dim note when the line was cut.
fn styled_text(text: &str, marks: &[Range<usize>], look: Look, dim: Style) -> Vec<Span<'static>> {
    let (style, word) = (look.line, look.word);
    let (shown, cut) = if text.len() > MAX_LINE_BYTES {
        let mut end = MAX_LINE_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (&text[..end], Some(text[end..].chars().count()))
    } else {
        (text, None)
    };
    let mut spans = Vec::with_capacity(marks.len() * 2 + 2);
    let mut col = 0;
    let mut pos = 0;
    for m in marks {
        let (start, end) = (m.start.min(shown.len()), m.end.min(shown.len()));
        if start > pos {
            push_text(&mut spans, &shown[pos..start], style, &mut col);
        }
        if end > start {
            push_text(&mut spans, &shown[start..end], word, &mut col);
        }
        pos = pos.max(end);
    }
    if pos < shown.len() {
        push_text(&mut spans, &shown[pos..], style, &mut col);
    }
    if let Some(more) = cut {
        spans.push(Span::styled(format!(" … {more} more characters"), dim));
    }
    spans
}

fn push_text(spans: &mut Vec<Span<'static>>, s: &str, style: Style, col: &mut usize) {
    let mut out = String::with_capacity(s.len());
    for c in tern_text::clean(s).chars() {
        match c {
            '\t' => {
                let n = TAB_WIDTH - *col % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', n));
                *col += n;
            }
            c => {
                out.push(c);
                *col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    spans.push(Span::styled(out, style));
}

/// `s` on one line with control characters made visible (for paths): the one gate, `terminal_text`.
pub(super) fn sanitize(s: &str) -> String {
    tern_text::one_line(s).into_owned()
}

/// `s` with tabs expanded and control characters made visible.
fn expand(s: &str) -> String {
    let mut spans = Vec::new();
    push_text(&mut spans, s, Style::default(), &mut 0);
    spans.pop().map(|s| s.content.into_owned()).unwrap_or_default()
}

fn note(text: &str, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(text.to_string(), theme.dim))
}

/// Collects lines and enforces `max_lines` at row boundaries; `total` is the number of rows the body will try to push,
/// so the fold line can say how many were left out.
struct Output {
    lines: Vec<Line<'static>>,
    hunks: Vec<usize>,
    changed: Vec<Option<Changed>>,
    limit: Option<usize>,
    total: usize,
    pushed: usize,
    folded: bool,
}

impl Output {
    fn new(limit: Option<usize>) -> Self {
        Self {
            lines: Vec::new(),
            hunks: Vec::new(),
            changed: Vec::new(),
            limit: limit.map(|l| l.max(2)),
            total: 0,
            pushed: 0,
            folded: false,
        }
    }

    /// Adds one row's lines, or refuses (and from then on folds) when they would not fit with the fold line.
    fn push(&mut self, row: Vec<Line<'static>>) -> bool {
        if self.folded {
            return false;
        }
        if let Some(limit) = self.limit {
            let last = self.pushed + 1 >= self.total;
            let room = if last { limit } else { limit - 1 };
            if self.lines.len() + row.len() > room {
                self.folded = true;
                return false;
            }
        }
        self.lines.extend(row);
        self.pushed += 1;
        true
    }

    fn finish(mut self, theme: &Theme, hint: Option<&str>) -> Rendered {
        if self.folded {
            let hidden = self.total.saturating_sub(self.pushed);
            let noun = if hidden == 1 { "line" } else { "lines" };
            let text = match hint {
                Some(hint) => format!("… {hidden} more {noun} ({hint})"),
                None => format!("… {hidden} more {noun}"),
            };
            self.lines.push(note(&text, theme));
        }
        self.changed.resize(self.lines.len(), None);
        Rendered {
            lines: self.lines,
            hunks: self.hunks,
            changed: self.changed,
        }
    }
}

#[cfg(test)]
mod tests;
