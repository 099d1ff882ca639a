//! Lexing one word: quote removal (`'...'`, `"..."`, `\`, `$'...'`, `$"..."`), and the expansions that make a word
//! known only at run time. `$(...)` and backticks inside a word are parsed as nested command lists.

use super::{Parser, Word, is_meta, is_name};
use crate::agent::approval::hazard::Hazard;

impl Parser {
    /// One word, with quotes removed and expansions noted.
    pub(super) fn word(&mut self) -> Word {
        let mut w = Word::default();
        // No quote or expansion yet: an `=` now makes an assignment.
        let mut plain = true;
        let mut open_bracket = false;
        let mut open_brace = false;
        while let Some(c) = self.peek() {
            if is_meta(c) {
                break;
            }
            match c {
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(escaped) => {
                            w.text.push(escaped);
                            self.pos += 1;
                            w.quoted = true;
                            plain = false;
                        }
                        None => w.text.push('\\'),
                    }
                }
                '\'' => {
                    self.pos += 1;
                    w.quoted = true;
                    plain = false;
                    self.single_quoted(&mut w);
                }
                '"' => {
                    self.pos += 1;
                    w.quoted = true;
                    plain = false;
                    self.double_quoted(&mut w);
                }
                '$' => {
                    plain = false;
                    self.dollar(&mut w, false);
                }
                '`' => {
                    plain = false;
                    self.backticks(&mut w);
                }
                _ => {
                    self.pos += 1;
                    match c {
                        '*' | '?' => w.dynamic = true,
                        '[' => open_bracket = true,
                        ']' if open_bracket => w.dynamic = true,
                        '{' => open_brace = true,
                        '}' if open_brace => w.dynamic = true,
                        '~' if w.text.is_empty() && !w.quoted => w.dynamic = true,
                        '=' if plain && w.assign.is_none() => {
                            let name = w.text.strip_suffix('+').unwrap_or(&w.text);
                            if is_name(name) {
                                w.assign = Some(w.text.len());
                            }
                        }
                        _ => {}
                    }
                    w.text.push(c);
                }
            }
        }
        w
    }

    fn single_quoted(&mut self, w: &mut Word) {
        loop {
            match self.peek() {
                None => {
                    self.hazard(Hazard::Syntax("an unterminated ' quote"));
                    return;
                }
                Some('\'') => {
                    self.pos += 1;
                    return;
                }
                Some(c) => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self, w: &mut Word) {
        loop {
            match self.peek() {
                None => {
                    self.hazard(Hazard::Syntax("an unterminated \" quote"));
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => match self.peek_at(1) {
                    Some(c @ ('$' | '`' | '"' | '\\')) => {
                        w.text.push(c);
                        self.pos += 2;
                    }
                    Some('\n') => self.pos += 2,
                    _ => {
                        w.text.push('\\');
                        self.pos += 1;
                    }
                },
                Some('$') => self.dollar(w, true),
                Some('`') => self.backticks(w),
                Some(c) => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// At a `$`: an expansion, ANSI-C or locale quoting, or a literal dollar sign.
    fn dollar(&mut self, w: &mut Word, in_double_quotes: bool) {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                self.hazard(Hazard::Arithmetic);
                self.pos += 3;
                self.skip_balanced('(', ')', 2);
                w.text.push_str("$((...))");
                w.dynamic = true;
            }
            Some('(') => {
                self.hazard(Hazard::CommandSubstitution);
                self.pos += 2;
                self.nested_list();
                w.text.push_str("$(...)");
                w.dynamic = true;
            }
            Some('{') => {
                let start = self.pos;
                self.pos += 2;
                self.skip_balanced('{', '}', 1);
                let expansion: String = self.chars[start..self.pos].iter().collect();
                // `${NAME=value}` and `${NAME:=value}` assign as they expand.
                let body = &expansion[2..];
                let name_len = body
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(body.len());
                let rest = &body[name_len..];
                if name_len > 0 && (rest.starts_with('=') || rest.starts_with(":=")) {
                    self.hazard(Hazard::Assignment(body[..name_len].to_string()));
                }
                w.text.push_str(&expansion);
                w.dynamic = true;
            }
            Some('\'') if !in_double_quotes => {
                self.pos += 2;
                w.quoted = true;
                self.ansi_c(w);
            }
            Some('"') if !in_double_quotes => self.pos += 1,
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let start = self.pos;
                self.pos += 1;
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                w.text.extend(&self.chars[start..self.pos]);
                w.dynamic = true;
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                w.text.push('$');
                w.text.push(c);
                self.pos += 2;
                w.dynamic = true;
            }
            _ => {
                w.text.push('$');
                self.pos += 1;
            }
        }
    }

    /// Skips to the `close` that balances `depth` already-open `open`s, noting substitutions inside (their commands are
    /// not parsed: `${...}` and `$((...))` bodies are not command lists).
    fn skip_balanced(&mut self, open: char, close: char, mut depth: usize) {
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                // Quotes change where `${...}` ends in ways this scan does not follow; a `;` it misplaced could hide a
                // command, so such an expansion is never vetted.
                '\\' | '\'' | '"' if open == '{' => {
                    self.hazard(Hazard::Syntax("quotes or escapes inside ${...}"));
                    self.pos += usize::from(c == '\\');
                }
                '\\' => self.pos += 1,
                '$' if self.peek() == Some('(') => self.hazard(Hazard::CommandSubstitution),
                '`' => self.hazard(Hazard::Backticks),
                c if c == open => depth += 1,
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
        self.pos = self.pos.min(self.chars.len());
        self.hazard(Hazard::Syntax("an unclosed expansion"));
    }

    /// `` `...` ``: the body, with its own backslash rules, is parsed as a script.
    fn backticks(&mut self, w: &mut Word) {
        self.hazard(Hazard::Backticks);
        self.pos += 1;
        let mut body = String::new();
        loop {
            match self.peek() {
                None => {
                    self.hazard(Hazard::Syntax("an unterminated ` quote"));
                    break;
                }
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    body.extend(self.peek_at(1));
                    self.pos += 2;
                }
                Some(c) => {
                    body.push(c);
                    self.pos += 1;
                }
            }
        }
        self.nested_script(&body);
        w.text.push_str("`...`");
        w.dynamic = true;
    }

    /// The body of `$'...'` (the opening quote consumed), with bash's escapes decoded.
    fn ansi_c(&mut self, w: &mut Word) {
        loop {
            let Some(c) = self.peek() else {
                self.hazard(Hazard::Syntax("an unterminated $' quote"));
                return;
            };
            self.pos += 1;
            match c {
                '\'' => return,
                '\\' => {
                    let Some(e) = self.peek() else { continue };
                    self.pos += 1;
                    let decoded = match e {
                        'a' => Some('\x07'),
                        'b' => Some('\x08'),
                        'e' | 'E' => Some('\x1b'),
                        'f' => Some('\x0c'),
                        'n' => Some('\n'),
                        'r' => Some('\r'),
                        't' => Some('\t'),
                        'v' => Some('\x0b'),
                        '0'..='7' => {
                            self.pos -= 1;
                            self.code_point(8, 3)
                        }
                        'x' => self.code_point(16, 2),
                        'u' => self.code_point(16, 4),
                        'U' => self.code_point(16, 8),
                        'c' => {
                            let ctrl = self.peek().map(|c| char::from((c as u32 & 0x1f) as u8));
                            self.pos = (self.pos + 1).min(self.chars.len());
                            ctrl
                        }
                        other => {
                            if !matches!(other, '\\' | '\'' | '"' | '?') {
                                w.text.push('\\');
                            }
                            Some(other)
                        }
                    };
                    // A NUL ends the string in bash; anything undecodable makes the word unknowable.
                    match decoded {
                        Some('\0') => {}
                        Some(ch) => w.text.push(ch),
                        None => w.dynamic = true,
                    }
                }
                other => w.text.push(other),
            }
        }
    }

    fn code_point(&mut self, radix: u32, max_digits: usize) -> Option<char> {
        let mut value: u32 = 0;
        let mut digits = 0;
        while digits < max_digits
            && let Some(d) = self.peek().and_then(|c| c.to_digit(radix))
        {
            value = value.saturating_mul(radix).saturating_add(d);
            digits += 1;
            self.pos += 1;
        }
        if digits == 0 {
            return None;
        }
        if radix == 8 {
            value &= 0xff;
        }
        char::from_u32(value)
    }
}
