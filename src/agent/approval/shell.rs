//! A small bash parser for the approval gate: it splits a command line into the simple commands bash will run, with
//! their words after quote removal, and lists every construct it cannot vet (see `Hazard`).
//!
//! It is not a shell. It follows bash's quoting exactly (`'...'`, `"..."`, `\`, `$'...'`, `$"..."`), splits on the
//! operators outside quotes (`;`, `&&`, `||`, `|`, `|&`, `&`, newlines), skips the keywords of `if`/`while`/`until`/
//! `for` so the commands inside are vetted one by one, and parses the insides of `$(...)`, backticks, `<(...)` and
//! `( ... )` too, so a deny rule still sees a command hidden there. Anything it does not follow is reported as a hazard
//! rather than guessed at: the parser may be conservative, never permissive. It never panics and always terminates,
//! whatever the input (a property test checks this).

#[cfg(test)]
mod tests;
mod word;

use super::hazard::{self, Hazard};

/// How deep `$(...)`, `( ... )` and backticks may nest before the parser gives up (and reports `TooDeep`).
const MAX_DEPTH: usize = 16;

/// Output targets that write nowhere a rule would care about.
const HARMLESS_SINKS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Words bash reads as syntax in command position; the parser skips or flags them.
pub const RESERVED: &[&str] = &[
    "!", "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "{", "}", "esac", "for", "case", "select",
    "function", "coproc",
];

/// One word after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Contains an expansion (`$x`, `$(...)`, a glob, a brace list, `~`): what bash passes is only known at run time,
    /// so the word never equals a rule word.
    pub dynamic: bool,
    /// Some part of it was quoted or escaped: `"if"` is a program name, not a keyword.
    pub quoted: bool,
    /// Byte offset of the `=` when the word is an unquoted `NAME=value` assignment.
    assign: Option<usize>,
}

impl Word {
    /// The text when it is known before the command runs.
    pub fn fixed(&self) -> Option<&str> {
        (!self.dynamic).then_some(self.text.as_str())
    }

    /// `NAME` and the value of a `NAME=value` (or `NAME+=value`) word.
    pub fn assignment(&self) -> Option<(&str, &str)> {
        let eq = self.assign?;
        let name = self.text.get(..eq)?;
        Some((name.strip_suffix('+').unwrap_or(name), self.text.get(eq + 1..)?))
    }
}

/// One simple command: leading assignments, then the words (program first).
#[derive(Clone, Debug, Default)]
pub struct SimpleCommand {
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
}

/// Every simple command found, nested ones included, and what could not be vetted.
#[derive(Debug, Default)]
pub struct Script {
    pub commands: Vec<SimpleCommand>,
    pub hazards: Vec<Hazard>,
}

pub fn parse(src: &str) -> Script {
    parse_at(src, 0)
}

/// Parses a script found inside another one (`bash -c '...'`, backticks), `depth` levels down.
pub fn parse_at(src: &str, depth: usize) -> Script {
    let mut parser = Parser {
        chars: src.chars().collect(),
        pos: 0,
        depth,
        heredocs: Vec::new(),
        out: Script::default(),
    };
    if depth > MAX_DEPTH {
        parser.hazard(Hazard::TooDeep);
    } else {
        parser.list(false);
    }
    parser.out
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// Here-documents whose bodies start after the next newline: (delimiter, strip leading tabs).
    heredocs: Vec<(String, bool)>,
    out: Script,
}

fn is_meta(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn hazard(&mut self, hazard: Hazard) {
        hazard::push(&mut self.out.hazards, hazard);
    }

    /// Skips spaces, tabs and line continuations (never newlines: they separate commands).
    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                _ => return,
            }
        }
    }

    fn skip_comment(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.pos += 1;
        }
    }

    /// A list of commands up to the end of input, or up to the `)` that closes a nested list.
    fn list(&mut self, nested: bool) {
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                if nested {
                    self.hazard(Hazard::Syntax("an unclosed parenthesis"));
                }
                return;
            };
            match c {
                '#' => self.skip_comment(),
                '\n' => {
                    self.pos += 1;
                    self.heredoc_bodies();
                }
                ')' => {
                    self.pos += 1;
                    if nested {
                        return;
                    }
                    self.hazard(Hazard::Syntax("an unbalanced parenthesis"));
                }
                '&' if self.peek_at(1) == Some('>') => self.command(),
                ';' | '&' | '|' => self.pos += 1,
                _ => self.command(),
            }
        }
    }

    /// A nested list after an opening `(` was consumed.
    fn nested_list(&mut self) {
        if self.depth >= MAX_DEPTH {
            self.hazard(Hazard::TooDeep);
            self.pos = self.chars.len();
            return;
        }
        self.depth += 1;
        self.list(true);
        self.depth -= 1;
    }

    /// Parses text found inside this script (backticks) as a script of its own, one level down.
    fn nested_script(&mut self, src: &str) {
        let inner = parse_at(src, self.depth + 1);
        self.out.commands.extend(inner.commands);
        for h in inner.hazards {
            self.hazard(h);
        }
    }

    /// One simple command, stopping before the operator that ends it.
    fn command(&mut self) {
        let mut cmd = SimpleCommand::default();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            let start = self.pos;
            match c {
                '\n' | ';' | '|' | ')' | '#' => break,
                '&' if self.peek_at(1) != Some('>') => break,
                '(' => {
                    self.pos += 1;
                    if cmd.words.is_empty() && cmd.assignments.is_empty() {
                        self.hazard(Hazard::Subshell);
                    } else {
                        self.hazard(Hazard::FunctionDef);
                    }
                    self.nested_list();
                    continue;
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.hazard(Hazard::ProcessSubstitution);
                    self.pos += 2;
                    self.nested_list();
                    cmd.words.push(Word {
                        text: "<(...)".into(),
                        dynamic: true,
                        ..Word::default()
                    });
                    continue;
                }
                _ if self.at_redirect() => {
                    self.redirect();
                    continue;
                }
                _ => {}
            }
            let word = self.word();
            if self.pos == start {
                // Cannot happen (every non-operator char starts a word), but never loop forever.
                self.pos += 1;
                continue;
            }
            if cmd.words.is_empty() {
                if word.assign.is_some() {
                    cmd.assignments.push(word);
                    continue;
                }
                if !word.quoted && !word.dynamic && self.keyword(&word.text) {
                    continue;
                }
            }
            cmd.words.push(word);
        }
        if !cmd.words.is_empty() || !cmd.assignments.is_empty() {
            self.out.commands.push(cmd);
        }
    }

    /// Handles a reserved word in command position; returns whether `word` was one.
    fn keyword(&mut self, word: &str) -> bool {
        match word {
            // Control flow whose inner commands are simple commands like any other.
            "!" | "if" | "then" | "elif" | "else" | "fi" | "while" | "until" | "do" | "done" | "}" | "esac" => true,
            "{" => {
                self.hazard(Hazard::Group);
                true
            }
            "for" => {
                self.for_header();
                true
            }
            "case" | "select" | "function" | "coproc" => {
                self.hazard(Hazard::Keyword(word.to_string()));
                true
            }
            _ => false,
        }
    }

    /// `for NAME in WORDS`: the words are expanded, not run; `for ((...))` is arithmetic.
    fn for_header(&mut self) {
        loop {
            self.skip_blanks();
            match self.peek() {
                None | Some('\n' | ';' | '&' | '|' | ')' | '<' | '>') => return,
                Some('(') => {
                    self.hazard(Hazard::Arithmetic);
                    self.pos += 1;
                    self.nested_list();
                }
                Some(_) => {
                    let start = self.pos;
                    self.word();
                    if self.pos == start {
                        self.pos += 1;
                    }
                }
            }
        }
    }

    /// True at `<`, `>`, `&>`, or a file descriptor number right before one (`2>`).
    fn at_redirect(&self) -> bool {
        let mut i = self.pos;
        while self.chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        match self.chars.get(i) {
            Some('<' | '>') => true,
            Some('&') => i == self.pos && self.chars.get(i + 1) == Some(&'>'),
            _ => false,
        }
    }

    fn redirect(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let mut op = String::new();
        let candidates = ["&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">"];
        for candidate in candidates {
            let len = candidate.chars().count();
            if self
                .chars
                .get(self.pos..self.pos + len)
                .is_some_and(|s| s.iter().copied().eq(candidate.chars()))
            {
                op = candidate.to_string();
                self.pos += len;
                break;
            }
        }
        if op.is_empty() {
            // at_redirect said otherwise; step over the character so parsing goes on.
            self.pos += 1;
            return;
        }
        self.skip_blanks();
        if self.peek().is_none_or(is_meta) {
            self.hazard(Hazard::Syntax("a redirection without a target"));
            return;
        }
        let target = self.word();
        match op.as_str() {
            "<<" | "<<-" => {
                self.hazard(Hazard::HereDoc);
                self.heredocs.push((target.text, op == "<<-"));
            }
            "<" | "<<<" | "<&" => {}
            ">&" if target
                .fixed()
                .is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit())) => {}
            _ => {
                let harmless = target.fixed().is_some_and(|t| HARMLESS_SINKS.contains(&t));
                if !harmless {
                    self.hazard(Hazard::Redirect(target.text));
                }
            }
        }
    }

    /// Skips the bodies of pending here-documents (they start after the newline just consumed).
    fn heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            while self.pos < self.chars.len() {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                self.pos = (self.pos + 1).min(self.chars.len());
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == delimiter {
                    break;
                }
            }
        }
    }
}
