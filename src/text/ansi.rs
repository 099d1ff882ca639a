//! Terminal escape sequences in a program's output: colours, cursor moves, titles, hyperlinks. One scanner splits the
//! output into text and sequences. The model gets the text alone (`strip`): escapes are noise that costs tokens. A
//! command pane gets the text with its colours (`styled`): the SGR sequences (`ESC [ … m`) become a `Style` per run of
//! text, and every other sequence is dropped. No escape byte is ever passed on: the text between sequences is what
//! goes to the terminal, through `clean`, which still shows carriage returns and other control characters.
//!
//! This module must not know about ratatui: a frontend maps `Style` to its own.

use std::borrow::Cow;
use std::iter::Peekable;
use std::str::CharIndices;

const ESC: char = '\u{1b}';
/// The 8-bit CSI, which a terminal reads as `ESC [`.
const C1_CSI: char = '\u{9b}';
/// The 8-bit OSC and string introducers (DCS, SOS, PM, APC).
const C1_STRINGS: [char; 5] = ['\u{9d}', '\u{90}', '\u{98}', '\u{9e}', '\u{9f}'];
const BEL: char = '\u{7}';
/// The 8-bit string terminator.
const C1_ST: char = '\u{9c}';
/// An SGR with more parameters than this is not a colour a program meant: it is dropped whole.
const MAX_SGR_LEN: usize = 128;

/// What the scanner found next.
#[derive(Debug, PartialEq)]
enum Token<'a> {
    Text(&'a str),
    /// A complete SGR sequence's parameters (`1;31` of `ESC [ 1 ; 31 m`).
    Sgr(&'a str),
    /// Any other sequence, or a broken one: dropped.
    Other,
}

/// Splits text into runs of text and escape sequences: CSI (`ESC [ … final`), OSC and the other strings (`ESC ] … BEL`
/// or `ESC \`, DCS, SOS, PM, APC), their 8-bit forms, and two-character escapes (`ESC 7`, `ESC ( B`). A sequence cut
/// off by the end of the text is dropped.
struct Scanner<'a> {
    text: &'a str,
    chars: Peekable<CharIndices<'a>>,
    /// The text ended inside a sequence.
    cut: bool,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            chars: text.char_indices().peekable(),
            cut: false,
        }
    }

    fn at(&mut self) -> usize {
        self.chars.peek().map_or(self.text.len(), |&(i, _)| i)
    }

    fn escape(&mut self, first: char) -> Token<'a> {
        match first {
            ESC => match self.chars.next().map(|(_, c)| c) {
                Some('[') => self.csi(),
                Some(']' | 'P' | 'X' | '^' | '_') => self.skip_string(),
                // `ESC ( B` and its kin take one more character.
                Some('(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%' | ' ') => {
                    self.cut = self.chars.next().is_none();
                    Token::Other
                }
                Some(_) => Token::Other,
                None => {
                    self.cut = true;
                    Token::Other
                }
            },
            C1_CSI => self.csi(),
            _ => self.skip_string(),
        }
    }

    /// A CSI's parameters and intermediates up to its final character (`@` to `~`).
    fn csi(&mut self) -> Token<'a> {
        let start = self.at();
        while let Some(&(i, c)) = self.chars.peek() {
            // A character that cannot be part of a CSI ends it and stays (a broken sequence must not swallow the
            // text after it).
            if !('\u{20}'..='\u{7e}').contains(&c) {
                return Token::Other;
            }
            self.chars.next();
            if ('\u{40}'..='\u{7e}').contains(&c) {
                let params = &self.text[start..i];
                let plain =
                    params.len() <= MAX_SGR_LEN && params.bytes().all(|b| b.is_ascii_digit() || b == b';' || b == b':');
                return if c == 'm' && plain {
                    Token::Sgr(params)
                } else {
                    Token::Other
                };
            }
        }
        self.cut = true;
        Token::Other
    }

    /// Skips a string up to its terminator: BEL, `ESC \` or the 8-bit ST.
    fn skip_string(&mut self) -> Token<'a> {
        while let Some((_, c)) = self.chars.next() {
            match c {
                BEL | C1_ST => return Token::Other,
                ESC => {
                    match self.chars.peek().map(|&(_, c)| c) {
                        Some('\\') => {
                            self.chars.next();
                        }
                        Some(_) => {}
                        None => self.cut = true,
                    }
                    return Token::Other;
                }
                _ => {}
            }
        }
        self.cut = true;
        Token::Other
    }
}

fn starts_escape(c: char) -> bool {
    c == ESC || c == C1_CSI || C1_STRINGS.contains(&c)
}

impl<'a> Iterator for Scanner<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let &(start, first) = self.chars.peek()?;
        if starts_escape(first) {
            self.chars.next();
            return Some(self.escape(first));
        }
        while let Some(&(_, c)) = self.chars.peek() {
            if starts_escape(c) {
                break;
            }
            self.chars.next();
        }
        let end = self.at();
        Some(Token::Text(&self.text[start..end]))
    }
}

fn has_escape(text: &str) -> bool {
    text.contains([ESC, C1_CSI]) || text.contains(C1_STRINGS)
}

/// `text` without its escape sequences (see `Scanner`); every character between them stays. Borrowed when there is
/// none.
pub fn strip(text: &str) -> Cow<'_, str> {
    if !has_escape(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for token in Scanner::new(text) {
        if let Token::Text(t) = token {
            out.push_str(t);
        }
    }
    Cow::Owned(out)
}

/// `text` with its SGR sequences (colours and attributes) and no other escape sequence: what may travel to a frontend
/// that parses colours with `styled`. Borrowed when there is no escape at all.
pub fn only_sgr(text: &str) -> Cow<'_, str> {
    if !has_escape(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for token in Scanner::new(text) {
        match token {
            Token::Text(t) => out.push_str(t),
            Token::Sgr(params) => {
                out.push_str("\u{1b}[");
                out.push_str(params);
                out.push('m');
            }
            Token::Other => {}
        }
    }
    Cow::Owned(out)
}

/// A colour as SGR names it: one of the 256 indexed colours (0-15 are the terminal's own 16), or 24-bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// What SGR sets: colours and attributes. `Style::default()` is the terminal's plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub fg: Option<Colour>,
    pub bg: Option<Colour>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub reverse: bool,
}

impl Style {
    /// The style after the SGR parameters `params` (`1;31`, `38;5;208`, `38:2::10:20:30`). Unknown or out-of-range
    /// parameters change nothing.
    pub fn apply(&mut self, params: &str) {
        if params.is_empty() {
            *self = Style::default();
            return;
        }
        let mut parts = params.split(';');
        while let Some(part) = parts.next() {
            if part.contains(':') {
                self.apply_colon(part);
                continue;
            }
            let Ok(n) = part.parse::<u16>() else {
                // Empty means 0 (reset); anything else unreadable is skipped.
                if part.is_empty() {
                    *self = Style::default();
                }
                continue;
            };
            match n {
                38 | 48 => {
                    let colour = extended(&mut parts);
                    self.set(n == 38, colour);
                }
                _ => self.apply_one(n),
            }
        }
    }

    fn set(&mut self, fg: bool, colour: Option<Colour>) {
        if let Some(c) = colour {
            if fg {
                self.fg = Some(c);
            } else {
                self.bg = Some(c);
            }
        }
    }

    /// `38:5:n`, `38:2:r:g:b` or `38:2::r:g:b` (the colour-space id left empty).
    fn apply_colon(&mut self, part: &str) {
        let mut fields = part.split(':');
        let which = fields.next().and_then(|f| f.parse::<u16>().ok());
        let fields: Vec<&str> = fields.collect();
        let colour = match fields.as_slice() {
            ["5", n] => n.parse().ok().map(Colour::Indexed),
            ["2", r, g, b] | ["2", _, r, g, b] => rgb(r, g, b),
            _ => None,
        };
        match which {
            Some(38) => self.set(true, colour),
            Some(48) => self.set(false, colour),
            _ => {}
        }
    }

    fn apply_one(&mut self, n: u16) {
        match n {
            0 => *self = Style::default(),
            1 => self.bold = true,
            2 => self.dim = true,
            3 => self.italic = true,
            4 => self.underline = true,
            7 => self.reverse = true,
            22 => (self.bold, self.dim) = (false, false),
            23 => self.italic = false,
            24 => self.underline = false,
            27 => self.reverse = false,
            30..=37 => self.fg = Some(Colour::Indexed((n - 30) as u8)),
            39 => self.fg = None,
            40..=47 => self.bg = Some(Colour::Indexed((n - 40) as u8)),
            49 => self.bg = None,
            90..=97 => self.fg = Some(Colour::Indexed((n - 90 + 8) as u8)),
            100..=107 => self.bg = Some(Colour::Indexed((n - 100 + 8) as u8)),
            _ => {}
        }
    }
}

/// The colour after `38;` or `48;`: `5;n` or `2;r;g;b`.
fn extended<'a>(parts: &mut impl Iterator<Item = &'a str>) -> Option<Colour> {
    match parts.next()? {
        "5" => parts.next()?.parse().ok().map(Colour::Indexed),
        "2" => {
            let (r, g, b) = (parts.next()?, parts.next()?, parts.next()?);
            rgb(r, g, b)
        }
        _ => None,
    }
}

fn rgb(r: &str, g: &str, b: &str) -> Option<Colour> {
    Some(Colour::Rgb(r.parse().ok()?, g.parse().ok()?, b.parse().ok()?))
}

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub style: Style,
    pub text: String,
}

/// `text` as runs of styled text: SGR sequences change the style (starting from `style`, which is left as the text
/// ends, for the next piece of the same output), every other sequence is dropped. The runs' text is `strip(text)`.
pub fn styled(text: &str, style: &mut Style) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for token in Scanner::new(text) {
        match token {
            Token::Text(t) => match runs.last_mut() {
                Some(last) if last.style == *style => last.text.push_str(t),
                _ => runs.push(Run {
                    style: *style,
                    text: t.to_string(),
                }),
            },
            Token::Sgr(params) => style.apply(params),
            Token::Other => {}
        }
    }
    runs
}

/// Where an escape sequence that `text` ends with begins, when it is cut off (the rest may come with the next chunk
/// of output); `None` when the text ends outside one.
pub fn incomplete_tail(text: &str) -> Option<usize> {
    let start = text.rfind(starts_escape)?;
    let mut scanner = Scanner::new(&text[start..]);
    scanner.next();
    (scanner.cut && scanner.chars.peek().is_none()).then_some(start)
}

#[cfg(test)]
mod tests;
