//! Where old_text occurs in a file. Four strategies are tried in order and the first that finds anything wins:
//! the exact substring; a window of whole lines equal after trimming each line; the same with typographic quotes,
//! dashes and spaces made plain; a substring equal after making them plain. All offsets are into the LF-normalised
//! text.

use std::borrow::Cow;

use super::text::{PlainMap, has_typographic, is_blank, plain};

/// Which strategy found the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    Exact,
    /// Whole lines equal after trimming each line; new_text was re-indented.
    TrimmedLines,
    /// As `TrimmedLines`, also ignoring typographic quotes and dashes.
    PlainLines,
    /// A substring equal once typographic quotes and dashes are made plain.
    PlainSubstring,
    /// old_text was empty: the file was created or an empty file filled.
    Fill,
}

impl Strategy {
    /// What the model should know about a fallback match, appended to the result.
    pub(crate) fn note(self) -> Option<&'static str> {
        match self {
            Strategy::Exact | Strategy::Fill => None,
            Strategy::TrimmedLines => {
                Some("matched ignoring leading/trailing whitespace; new_text was re-indented to the file's indentation")
            }
            Strategy::PlainLines => Some(
                "matched ignoring whitespace and typographic quotes/dashes; new_text was re-indented and keeps the \
                 file's quote style where it repeats old_text",
            ),
            Strategy::PlainSubstring => Some(
                "matched ignoring typographic quotes/dashes; new_text keeps the file's quote style where it repeats \
                 old_text",
            ),
        }
    }
}

/// One place old_text matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub start: usize,
    pub end: usize,
    /// 0-based line of `start`.
    pub line: usize,
    pub kind: FoundKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FoundKind {
    /// `plain`: found only after making quotes plain.
    Substring { plain: bool },
    /// Lines `first..first + count` matched old_text's lines. `eof_short`: old_text ends with a newline but the match
    /// is the file's last line, which has none.
    Lines {
        first: usize,
        count: usize,
        eof_short: bool,
        plain: bool,
    },
}

/// Line starts of a text. A text ending in `\n` has no empty line after it.
pub(crate) struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = Vec::new();
        if !text.is_empty() {
            starts.push(0);
            starts.extend(text.match_indices('\n').map(|(i, _)| i + 1).filter(|&i| i < text.len()));
        }
        Self { text, starts }
    }

    pub(crate) fn count(&self) -> usize {
        self.starts.len()
    }

    pub(crate) fn start(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.text.len())
    }

    /// Offset of line `i`'s `\n`, or the end of the text.
    pub(crate) fn end(&self, i: usize) -> usize {
        match self.starts.get(i + 1) {
            Some(&next) => next - 1,
            None if self.text.ends_with('\n') => self.text.len() - 1,
            None => self.text.len(),
        }
    }

    pub(crate) fn get(&self, i: usize) -> &'a str {
        &self.text[self.start(i).min(self.text.len())..self.end(i)]
    }

    /// 0-based line holding `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }
}

/// old_text split for line matching: its lines without the final newline, and whether it had one.
pub(crate) struct ModelLines<'a> {
    pub lines: Vec<&'a str>,
    pub ends_with_newline: bool,
}

impl<'a> ModelLines<'a> {
    pub(crate) fn new(old: &'a str) -> Self {
        let (body, ends_with_newline) = match old.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (old, false),
        };
        Self {
            lines: body.split('\n').collect(),
            ends_with_newline,
        }
    }
}

/// Runs the strategies in order and returns the first that found anything (`Exact` with nothing when none did).
pub(crate) fn find(text: &str, lines: &Lines, old: &str) -> (Strategy, Vec<Found>) {
    let exact: Vec<Found> = text
        .match_indices(old)
        .map(|(start, m)| Found {
            start,
            end: start + m.len(),
            line: lines.line_of(start),
            kind: FoundKind::Substring { plain: false },
        })
        .collect();
    if !exact.is_empty() {
        return (Strategy::Exact, exact);
    }
    let model = ModelLines::new(old);
    let typographic = has_typographic(text) || has_typographic(old);
    // A window of blank lines would match any blank lines: too loose to act on.
    if model.lines.iter().any(|l| !is_blank(l)) {
        let trimmed = line_windows(text, lines, &model, |s| Cow::Borrowed(s.trim()), false);
        if !trimmed.is_empty() {
            return (Strategy::TrimmedLines, trimmed);
        }
        if typographic {
            let plained = line_windows(text, lines, &model, |s| plain(s.trim()), true);
            if !plained.is_empty() {
                return (Strategy::PlainLines, plained);
            }
        }
    }
    if typographic {
        let map = PlainMap::new(text);
        let needle = plain(old);
        let found: Vec<Found> = map
            .text
            .match_indices(needle.as_ref())
            .map(|(start, m)| {
                let start_orig = map.to_original(start);
                Found {
                    start: start_orig,
                    end: map.to_original(start + m.len()),
                    line: lines.line_of(start_orig),
                    kind: FoundKind::Substring { plain: true },
                }
            })
            .collect();
        if !found.is_empty() {
            return (Strategy::PlainSubstring, found);
        }
    }
    (Strategy::Exact, Vec::new())
}

/// Non-overlapping windows of whole lines whose keys equal old_text's lines' keys.
fn line_windows<'t>(
    text: &'t str,
    lines: &Lines<'t>,
    model: &ModelLines,
    key: impl for<'s> Fn(&'s str) -> Cow<'s, str>,
    plain: bool,
) -> Vec<Found> {
    let n = model.lines.len();
    let total = lines.count();
    if n == 0 || n > total {
        return Vec::new();
    }
    let wanted: Vec<Cow<str>> = model.lines.iter().map(|l| key(l)).collect();
    let keys: Vec<Cow<str>> = (0..total).map(|i| key(lines.get(i))).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i + n <= total {
        if keys[i..i + n].iter().zip(&wanted).all(|(a, b)| a == b) {
            let mut end = lines.end(i + n - 1);
            let mut eof_short = false;
            if model.ends_with_newline {
                if end < text.len() {
                    end += 1;
                } else {
                    eof_short = true;
                }
            }
            found.push(Found {
                start: lines.start(i),
                end,
                line: i,
                kind: FoundKind::Lines {
                    first: i,
                    count: n,
                    eof_short,
                    plain,
                },
            });
            i += n;
        } else {
            i += 1;
        }
    }
    found
}

/// Where `needle` occurs exactly or as a trimmed line window: its 1-based line, for hints.
pub(crate) fn find_loose(text: &str, lines: &Lines, needle: &str) -> Option<usize> {
    if needle.trim().is_empty() {
        return None;
    }
    if let Some(pos) = text.find(needle) {
        return Some(lines.line_of(pos) + 1);
    }
    let model = ModelLines::new(needle);
    line_windows(text, lines, &model, |s| Cow::Borrowed(s.trim()), false)
        .first()
        .map(|f| f.line + 1)
}
