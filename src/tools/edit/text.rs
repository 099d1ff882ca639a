//! Text plumbing for the edit engine: line-ending normalisation with a map back to the original bytes, quote and dash
//! normalisation with its own offset map, and indentation shifting. Everything here is pure and byte-exact: text
//! outside an edited range is never rewritten.

use std::borrow::Cow;

const BOM: char = '\u{feff}';

/// A file's text with a leading BOM removed and every `\r\n` turned into `\n`, remembering where each came from so
/// that ranges found in the normalised text map back to the original bytes. Lone `\r` are ordinary characters.
#[derive(Debug)]
pub(crate) struct Normalized {
    pub text: String,
    bom: bool,
    /// Offsets in `text` of the `\n` that were `\r\n` in the original, ascending.
    crlf: Vec<usize>,
}

impl Normalized {
    pub(crate) fn new(original: &str) -> Self {
        let (bom, mut rest) = match original.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, original),
        };
        let mut text = String::with_capacity(rest.len());
        let mut crlf = Vec::new();
        while let Some(pos) = rest.find("\r\n") {
            text.push_str(&rest[..pos]);
            crlf.push(text.len());
            text.push('\n');
            rest = &rest[pos + 2..];
        }
        text.push_str(rest);
        Self { text, bom, crlf }
    }

    /// The original byte offset of normalised offset `offset`. An offset at a `\n` that was `\r\n` maps to the `\r`,
    /// so a range never splits a line terminator.
    pub(crate) fn to_original(&self, offset: usize) -> usize {
        let bom = if self.bom { BOM.len_utf8() } else { 0 };
        bom + offset + self.crlf.partition_point(|&i| i < offset)
    }

    /// The BOM to put back in front when the whole text is rewritten.
    pub(crate) fn bom(&self) -> &'static str {
        if self.bom { "\u{feff}" } else { "" }
    }

    /// The line ending text inserted at `start..end` should use: the majority ending of the newlines inside the
    /// range, else the ending of the line the range ends on, else of the line before it. `None`: the file has no
    /// line break at all.
    pub(crate) fn ending_for(&self, start: usize, end: usize) -> Option<&'static str> {
        let crlf_in = self.crlf_between(start, end);
        let lf_in = self.text[start..end].matches('\n').count() - crlf_in;
        if crlf_in + lf_in > 0 {
            return Some(if crlf_in >= lf_in { "\r\n" } else { "\n" });
        }
        if let Some(next) = self.text[end..].find('\n') {
            return Some(self.ending_at(end + next));
        }
        self.text[..start].rfind('\n').map(|prev| self.ending_at(prev))
    }

    fn crlf_between(&self, start: usize, end: usize) -> usize {
        self.crlf.partition_point(|&i| i < end) - self.crlf.partition_point(|&i| i < start)
    }

    fn ending_at(&self, newline: usize) -> &'static str {
        if self.crlf.binary_search(&newline).is_ok() {
            "\r\n"
        } else {
            "\n"
        }
    }
}

/// `\r\n` -> `\n` in text from the model.
pub(crate) fn lf(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Converts `\n` to `ending`.
pub(crate) fn with_ending<'a>(text: &'a str, ending: &str) -> Cow<'a, str> {
    if ending == "\n" || !text.contains('\n') {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.replace('\n', ending))
    }
}

/// The plain ASCII character a typographic quote, dash or space stands for. One char maps to one char, so the
/// normalised text has the same number of chars as the original.
pub(crate) fn plain_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{2035}' => '\'',
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{2036}' => '"',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => '-',
        '\u{00a0}' | '\u{2007}' | '\u{202f}' => ' ',
        other => other,
    }
}

pub(crate) fn has_typographic(text: &str) -> bool {
    text.chars().any(|c| plain_char(c) != c)
}

/// `text` with typographic quotes, dashes and spaces replaced by their ASCII forms.
pub(crate) fn plain(text: &str) -> Cow<'_, str> {
    if has_typographic(text) {
        Cow::Owned(text.chars().map(plain_char).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` made plain, with a sparse map from offsets in the plain text back to offsets in `text`.
pub(crate) struct PlainMap {
    pub text: String,
    /// (offset in the plain text of a replaced char, bytes it lost), ascending.
    shrunk: Vec<(usize, usize)>,
}

impl PlainMap {
    pub(crate) fn new(original: &str) -> Self {
        let mut text = String::with_capacity(original.len());
        let mut shrunk = Vec::new();
        for c in original.chars() {
            let p = plain_char(c);
            if p != c {
                shrunk.push((text.len(), c.len_utf8() - p.len_utf8()));
            }
            text.push(p);
        }
        Self { text, shrunk }
    }

    /// Replaced chars are one byte in the plain text, so an offset is always before or after one, never inside.
    pub(crate) fn to_original(&self, offset: usize) -> usize {
        let before = self.shrunk.partition_point(|&(i, _)| i < offset);
        offset + self.shrunk[..before].iter().map(|&(_, lost)| lost).sum::<usize>()
    }
}

/// The leading spaces and tabs of a line.
pub(crate) fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// How to move a line's indentation from the model's idea of it to the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shift {
    None,
    /// Prepend this.
    Add(String),
    /// Remove this much leading whitespace (as far as the line has it).
    Remove(String),
    /// Leading runs of `width` spaces become tabs (the model used spaces, the file tabs).
    ToTabs(usize),
    /// Leading tabs become `width` spaces.
    ToSpaces(usize),
    /// A leading `from` becomes `to`.
    Replace {
        from: String,
        to: String,
    },
}

impl Shift {
    /// The shift that turns indentation `model` into `file`.
    pub(crate) fn between(model: &str, file: &str) -> Shift {
        let all = |s: &str, c: char| !s.is_empty() && s.chars().all(|x| x == c);
        if model == file {
            Shift::None
        } else if let Some(extra) = file.strip_prefix(model).or_else(|| file.strip_suffix(model)) {
            Shift::Add(extra.to_string())
        } else if let Some(extra) = model.strip_prefix(file).or_else(|| model.strip_suffix(file)) {
            Shift::Remove(extra.to_string())
        } else if all(model, ' ') && all(file, '\t') && model.len().is_multiple_of(file.len()) {
            Shift::ToTabs(model.len() / file.len())
        } else if all(model, '\t') && all(file, ' ') && file.len().is_multiple_of(model.len()) {
            Shift::ToSpaces(file.len() / model.len())
        } else {
            Shift::Replace {
                from: model.to_string(),
                to: file.to_string(),
            }
        }
    }

    /// Applies the shift to one line. Blank lines are left alone so no trailing whitespace is invented.
    pub(crate) fn apply(&self, line: &str) -> String {
        if is_blank(line) {
            return line.to_string();
        }
        let indent = indent_of(line);
        let body = &line[indent.len()..];
        match self {
            Shift::None => line.to_string(),
            Shift::Add(extra) => format!("{extra}{line}"),
            Shift::Remove(extra) => {
                let common = indent.bytes().zip(extra.bytes()).take_while(|(a, b)| a == b).count();
                line[common..].to_string()
            }
            Shift::ToTabs(width) if indent.bytes().all(|b| b == b' ') => {
                format!(
                    "{}{}{body}",
                    "\t".repeat(indent.len() / width),
                    " ".repeat(indent.len() % width)
                )
            }
            Shift::ToSpaces(width) => {
                let tabs = indent.bytes().take_while(|&b| b == b'\t').count();
                format!("{}{}", " ".repeat(tabs * width), &line[tabs..])
            }
            Shift::Replace { from, to } => match line.strip_prefix(from.as_str()) {
                Some(rest) => format!("{to}{rest}"),
                None => line.to_string(),
            },
            Shift::ToTabs(_) => line.to_string(),
        }
    }
}

/// Re-indents `new_text` for a match found ignoring indentation. `model_lines` are old_text's lines and `file_lines`
/// the lines they matched, pair by pair. When every pair differs by the same shift, that shift applies to all of
/// new_text. Otherwise the model got some lines' relative indentation wrong too: with as many new lines as old ones
/// each line takes its pair's shift; else the first line takes the first pair's and the rest the second pair's.
pub(crate) fn reindent(new_text: &str, model_lines: &[&str], file_lines: &[&str]) -> String {
    let shifts: Vec<Option<Shift>> = model_lines
        .iter()
        .zip(file_lines)
        .map(|(m, f)| (!is_blank(m)).then(|| Shift::between(indent_of(m), indent_of(f))))
        .collect();
    let mut known = shifts.iter().flatten();
    let Some(first) = known.next() else {
        return new_text.to_string();
    };
    let rest = known.next().unwrap_or(first);
    let consistent = shifts.iter().flatten().all(|s| s == first);
    if consistent && *first == Shift::None {
        return new_text.to_string();
    }
    let lines: Vec<&str> = new_text.split('\n').collect();
    let counted = if new_text.ends_with('\n') {
        lines.len() - 1
    } else {
        lines.len()
    };
    let mut seen_first = false;
    let out: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let shift = if consistent {
                first
            } else if counted == model_lines.len() {
                shifts.get(i).and_then(Option::as_ref).unwrap_or(rest)
            } else if !seen_first && !is_blank(line) {
                seen_first = true;
                first
            } else {
                rest
            };
            shift.apply(line)
        })
        .collect();
    out.join("\n")
}

/// Carries the file's characters over into new_text where new_text keeps old_text's text. `file_view` is old_text as
/// it appears in the file: the same number of chars as `old`, differing only in typographic quotes, dashes and
/// spaces. Text the model newly wrote is left exactly as written.
pub(crate) fn keep_file_style(old: &str, new: &str, file_view: &str) -> String {
    let file_chars: Vec<char> = file_view.chars().collect();
    // Chars are carried over by position: a view of another length would put the wrong ones into new_text.
    if old == file_view || file_chars.len() != old.chars().count() {
        return new.to_string();
    }
    let new_chars: Vec<char> = new.chars().collect();
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_chars(old, new);
    let mut out = String::with_capacity(new.len());
    for op in diff.ops() {
        match *op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                // Equal means old and new agree here; the file's char is the same text in the file's style.
                for k in 0..len {
                    out.extend(file_chars.get(old_index + k).or(new_chars.get(new_index + k)));
                }
            }
            similar::DiffOp::Insert { new_index, new_len, .. }
            | similar::DiffOp::Replace { new_index, new_len, .. } => {
                out.extend(new_chars.iter().skip(new_index).take(new_len));
            }
            similar::DiffOp::Delete { .. } => {}
        }
    }
    out
}
