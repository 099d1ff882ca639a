//! The one gate for text that reaches a terminal. Text from a model, a file, a file name, an MCP server or a command
//! may carry escape sequences that set the clipboard (OSC 52), retitle the window, move the cursor and repaint lines,
//! or Unicode controls that reorder what is shown. `clean` makes such characters visible (ESC as `␛`, other C0 and DEL
//! as their control pictures, C1 and bidi controls as `\u{..}`), so nothing is ever interpreted and nothing is silently
//! lost; `reveal` goes further for the approval prompt and shows every character bash acts on but a person cannot see
//! (tabs, format and zero-width characters, non-ASCII spaces). `CleanWriter` applies `clean` to a byte stream (`tern
//! run`'s stdout and stderr); in JSON mode it only escapes, inside the JSON text, what serde_json leaves raw.
//!
//! This module decides how characters look; it must not drop, wrap or reorder text, and must not know about ratatui.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

pub mod ansi;
pub mod calls;
pub mod front_matter;
pub mod units;

/// How one character must be shown, when it cannot be shown as itself.
enum Shown {
    /// A one-cell symbol (a Unicode control picture).
    Picture(char),
    /// `\u{..}`: for characters without a picture.
    Code,
}

/// Bidi embeddings, overrides and isolates: they reorder the characters that follow them on screen.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What `clean` replaces: C0 controls other than newline and tab, DEL, C1 controls, and bidi controls.
fn unsafe_char(c: char) -> Option<Shown> {
    match c {
        '\n' | '\t' => None,
        '\0'..='\x1f' => Some(Shown::Picture(control_picture(c))),
        '\x7f' => Some(Shown::Picture('\u{2421}')),
        '\u{80}'..='\u{9f}' => Some(Shown::Code),
        c if is_bidi_control(c) => Some(Shown::Code),
        _ => None,
    }
}

/// U+2400..U+241F: the picture of a C0 control (`␛` for ESC).
fn control_picture(c: char) -> char {
    char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')
}

/// Characters a person cannot see (or cannot tell from a plain space) but bash reads as part of a word: format
/// characters (Cf: zero-width spaces and joiners, bidi marks, the BOM, tag characters), variation selectors, fillers
/// that render blank, and every space other than U+0020.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{a0}'
            | '\u{ad}'
            | '\u{34f}'
            | '\u{600}'..='\u{605}'
            | '\u{61c}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{115f}'..='\u{1160}'
            | '\u{1680}'
            | '\u{180b}'..='\u{180f}'
            | '\u{2000}'..='\u{200f}'
            | '\u{2028}'..='\u{202f}'
            | '\u{205f}'..='\u{206f}'
            | '\u{2800}'
            | '\u{3000}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// What `reveal` replaces: all `clean` does, plus tabs and invisible characters. Newlines stay (they show as a line
/// break, which is what bash makes of them too).
fn hidden_char(c: char) -> Option<Shown> {
    match c {
        '\t' => Some(Shown::Picture('\u{2409}')),
        c if invisible(c) => Some(Shown::Code),
        c => unsafe_char(c),
    }
}

fn push_shown(out: &mut String, c: char, shown: Shown) {
    match shown {
        Shown::Picture(p) => out.push(p),
        Shown::Code => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `text` with `rule`'s characters replaced; borrowed when there is none. Also returns how many were replaced.
fn replace(text: &str, rule: fn(char) -> Option<Shown>) -> (Cow<'_, str>, usize) {
    // Printable ASCII, the common case, is never replaced: a byte scan settles it.
    if text.bytes().all(|b| matches!(b, b' '..=b'~')) {
        return (Cow::Borrowed(text), 0);
    }
    let Some((start, _)) = text.char_indices().find(|&(_, c)| rule(c).is_some()) else {
        return (Cow::Borrowed(text), 0);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..start]);
    let mut count = 0;
    for c in text[start..].chars() {
        match rule(c) {
            Some(shown) => {
                count += 1;
                push_shown(&mut out, c, shown);
            }
            None => out.push(c),
        }
    }
    (Cow::Owned(out), count)
}

/// `text` as it may be written to a terminal: escape and control characters (but newline and tab) and bidi controls
/// shown visibly, everything else as it is. Borrowed when nothing needed showing.
pub fn clean(text: &str) -> Cow<'_, str> {
    replace(text, unsafe_char).0
}

/// `text` for a place that holds one line (a path in a title): `clean`, with newlines and tabs shown too.
pub fn one_line(text: &str) -> Cow<'_, str> {
    replace(text, |c| match c {
        '\n' => Some(Shown::Picture('\u{2424}')),
        '\t' => Some(Shown::Picture('\u{2409}')),
        c => unsafe_char(c),
    })
    .0
}

/// `text` for a person who must see every character bash would act on (the approval prompt): `clean`'s replacements
/// plus tabs as `␉` and invisible characters (zero-width, format, bidi marks, non-ASCII spaces) as `\u{..}`. Returns
/// the text and how many characters it shows this way.
pub fn reveal(text: &str) -> (Cow<'_, str>, usize) {
    replace(text, hidden_char)
}

/// `symbol` (one grid cell's text) with each character `clean` would replace shown in one cell instead: C0 and DEL
/// as their pictures, C1 and bidi controls as `�`. For a last check of a frame, where the layout is already fixed.
pub fn one_cell(symbol: &str) -> Cow<'_, str> {
    if !symbol.chars().any(|c| unsafe_char(c).is_some()) {
        return Cow::Borrowed(symbol);
    }
    let shown = symbol
        .chars()
        .map(|c| match unsafe_char(c) {
            Some(Shown::Picture(p)) => p,
            Some(Shown::Code) => '\u{fffd}',
            None => c,
        })
        .collect();
    Cow::Owned(shown)
}

/// How `CleanWriter` treats what passes through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Plain text: `clean`.
    Text,
    /// JSON text as serde_json writes it: DEL, C1 and bidi controls, which it leaves raw inside strings, become
    /// `\u00XX` escapes (the same value, read back).
    Json,
}

/// A writer that cleans everything passing through it (see `Stream`). Characters split across writes are put back
/// together first; bytes that are not UTF-8 are shown as `\x..`, since a lone 0x9B byte is a CSI to some terminals.
pub struct CleanWriter<W: Write> {
    inner: W,
    stream: Stream,
    /// The start of a character whose other bytes have not come yet.
    partial: Vec<u8>,
}

impl<W: Write> CleanWriter<W> {
    pub fn new(inner: W, stream: Stream) -> Self {
        Self {
            inner,
            stream,
            partial: Vec::new(),
        }
    }

    fn clean_str<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.stream {
            Stream::Text => clean(text),
            Stream::Json => json_escape(text),
        }
    }

    /// Writes `bytes` cleaned; keeps an incomplete character at the end for the next write.
    fn write_cleaned(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => return self.inner.write_all(self.clean_str(text).as_bytes()),
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    // `valid_up_to` ends valid UTF-8, so this never falls back.
                    let text = std::str::from_utf8(valid).unwrap_or_default();
                    self.inner.write_all(self.clean_str(text).as_bytes())?;
                    match e.error_len() {
                        None => {
                            self.partial = rest.to_vec();
                            return Ok(());
                        }
                        Some(n) => {
                            let mut shown = String::new();
                            for b in &rest[..n] {
                                let _ = write!(shown, "\\x{b:02x}");
                            }
                            self.inner.write_all(shown.as_bytes())?;
                            bytes = &rest[n..];
                        }
                    }
                }
            }
        }
    }
}

impl<W: Write> Write for CleanWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.partial.is_empty() {
            self.write_cleaned(buf)?;
        } else {
            let mut joined = std::mem::take(&mut self.partial);
            joined.extend_from_slice(buf);
            self.write_cleaned(&joined)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// JSON text with DEL, C1 and bidi controls written as `\u` escapes. Valid wherever they occur in serde_json's
/// output, which is only inside strings (it escapes C0 itself).
fn json_escape(text: &str) -> Cow<'_, str> {
    let needs = |c: char| matches!(c, '\x7f'..='\u{9f}') || is_bidi_control(c);
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
