//! A small lexer for the languages a coding assistant shows most (Rust, Python, JavaScript and TypeScript, Go, the C
//! family, shell, JSON, YAML), used instead of syntect's grammars for them. It knows the tokens that carry colour in
//! a theme: comments, strings, numbers, keywords, types, function names, macros, attributes, variables and keys. It
//! reads each byte once, about a microsecond a line, where syntect's regex grammars take 30 to 70 microseconds, so a
//! streamed answer's code and a file pane are coloured at once, on the render path, and never wait for the background
//! worker. Its tokens take their colours from the same syntect theme (`Palette`), by the scopes those grammars give
//! them. What it does not know (the rest of each grammar's detail) stays in the text colour.

use super::syn;

/// What a run of text is, as far as colour goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Plain,
    Comment,
    Str,
    Number,
    Constant,
    Keyword,
    Storage,
    Type,
    /// A name being defined (after `fn`, `def`, `func`, `function`).
    Function,
    /// A name being called (followed by `(`).
    Call,
    Macro,
    Attribute,
    Variable,
    Key,
}

/// The scopes grammars give each kind, most fitting first: a kind takes the colour of the first one the theme
/// styles apart from plain text (themes style different ones: base16 colours classes but not `support.type`).
pub(super) const SCOPES: [(Kind, &[&str]); 13] = [
    (Kind::Comment, &["comment.line", "comment"]),
    (Kind::Str, &["string.quoted", "string"]),
    (Kind::Number, &["constant.numeric"]),
    (Kind::Constant, &["constant.language", "constant"]),
    (Kind::Keyword, &["keyword.control", "keyword"]),
    (Kind::Storage, &["storage.type", "storage", "keyword"]),
    (
        Kind::Type,
        &[
            "entity.name.type",
            "entity.name.class",
            "support.class",
            "support.type",
            "storage.type",
        ],
    ),
    (Kind::Function, &["entity.name.function"]),
    (
        Kind::Call,
        &["variable.function", "support.function", "entity.name.function"],
    ),
    (
        Kind::Macro,
        &[
            "support.macro",
            "entity.name.function.macro",
            "support.function",
            "entity.name.function",
        ],
    ),
    (
        Kind::Attribute,
        &["entity.other.attribute-name", "meta.annotation", "storage.modifier"],
    ),
    (Kind::Variable, &["variable.other", "variable"]),
    (Kind::Key, &["entity.name.tag", "support.type.property-name", "keyword"]),
];

/// The syntect theme's style for each kind.
pub(super) struct Styles(Vec<(Kind, syn::Style)>);

impl Styles {
    pub(super) fn new(theme: &syn::Theme) -> Self {
        let highlighter = syn::Highlighter::new(theme);
        let plain = highlighter.get_default();
        let styles = SCOPES
            .iter()
            .filter_map(|(kind, scopes)| {
                let mut styles = scopes
                    .iter()
                    .filter_map(|scope| syntect::parsing::Scope::new(scope).ok())
                    .map(|scope| highlighter.style_for_stack(&[scope]));
                let first = styles.clone().next()?;
                let apart = styles.find(|s| s.foreground != plain.foreground || s.font_style != plain.font_style);
                Some((*kind, apart.unwrap_or(first)))
            })
            .collect();
        Self(styles)
    }

    /// The style of `kind`: `plain` (the grammar's default) for plain text.
    pub(super) fn get(&self, kind: Kind, plain: syn::Style) -> syn::Style {
        self.0.iter().find(|(k, _)| *k == kind).map_or(plain, |(_, s)| *s)
    }
}

/// How keys are written in a data language.
#[derive(Clone, Copy, PartialEq)]
enum Keys {
    None,
    /// A string followed by `:`.
    Json,
    /// A plain word at the start of a line (after indentation and `- `) followed by `:`.
    Yaml,
}

/// A string's delimiters.
struct Quote {
    open: &'static str,
    close: &'static str,
    escapes: bool,
    /// It may go on over several lines.
    multiline: bool,
}

const fn q(open: &'static str, close: &'static str, escapes: bool, multiline: bool) -> Quote {
    Quote {
        open,
        close,
        escapes,
        multiline,
    }
}

pub(super) struct Lang {
    /// The syntect syntax it stands in for.
    syntax: &'static [&'static str],
    line_comment: &'static [&'static str],
    /// `#` starts a comment only at the start of a word (shell, YAML).
    hash_at_word: bool,
    block_comment: Option<(&'static str, &'static str)>,
    /// Longest opener first.
    quotes: &'static [Quote],
    /// Letters that may come right before a quote and belong to the string (`r"`, `f"`, `b'`).
    string_prefixes: &'static str,
    keywords: &'static [&'static str],
    storage: &'static [&'static str],
    constants: &'static [&'static str],
    types: &'static [&'static str],
    /// Words after which the next name is a function being defined, and those after which it is a type.
    defines_function: &'static [&'static str],
    defines_type: &'static [&'static str],
    capitalized_types: bool,
    /// `name!` is a macro and `'a` a lifetime (Rust).
    rust: bool,
    /// `#[...]` (Rust) or `@name` (the others) is an attribute.
    attributes: bool,
    /// `$name` and `${...}` are variables (shell).
    dollar_variables: bool,
    /// A `#` directive at the start of a line (C preprocessor).
    directives: bool,
    keys: Keys,
}

const NONE: &[&str] = &[];

const BASE: Lang = Lang {
    syntax: NONE,
    line_comment: NONE,
    hash_at_word: false,
    block_comment: None,
    quotes: &[],
    string_prefixes: "",
    keywords: NONE,
    storage: NONE,
    constants: NONE,
    types: NONE,
    defines_function: NONE,
    defines_type: NONE,
    capitalized_types: false,
    rust: false,
    attributes: false,
    dollar_variables: false,
    directives: false,
    keys: Keys::None,
};

const LANGS: &[Lang] = &[
    Lang {
        syntax: &["Rust"],
        line_comment: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: &[q("\"", "\"", true, true)],
        string_prefixes: "bc",
        keywords: &[
            "as", "async", "await", "break", "continue", "else", "for", "if", "in", "loop", "match", "return", "while",
            "yield", "use", "mod", "crate", "super", "self", "where", "move", "unsafe", "extern",
        ],
        storage: &[
            "fn", "let", "mut", "const", "static", "struct", "enum", "trait", "impl", "type", "pub", "dyn", "ref",
            "union",
        ],
        constants: &["true", "false"],
        types: &[
            "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64",
            "bool", "char", "str",
        ],
        defines_function: &["fn"],
        defines_type: &["struct", "enum", "trait", "type", "union"],
        capitalized_types: true,
        rust: true,
        attributes: true,
        ..BASE
    },
    Lang {
        syntax: &["Python"],
        line_comment: &["#"],
        quotes: &[
            q("\"\"\"", "\"\"\"", true, true),
            q("'''", "'''", true, true),
            q("\"", "\"", true, false),
            q("'", "'", true, false),
        ],
        string_prefixes: "rbfuRBFU",
        keywords: &[
            "and", "as", "assert", "async", "await", "break", "continue", "del", "elif", "else", "except", "finally",
            "for", "from", "global", "if", "import", "in", "is", "nonlocal", "not", "or", "pass", "raise", "return",
            "try", "while", "with", "yield", "match", "case",
        ],
        storage: &["def", "class", "lambda"],
        constants: &["True", "False", "None", "self", "cls"],
        types: &[
            "int", "float", "str", "bytes", "bool", "list", "dict", "set", "tuple", "object", "type",
        ],
        defines_function: &["def"],
        defines_type: &["class"],
        capitalized_types: true,
        attributes: true,
        ..BASE
    },
    Lang {
        syntax: &["JavaScript"],
        line_comment: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: &[
            q("\"", "\"", true, false),
            q("'", "'", true, false),
            q("`", "`", true, true),
        ],
        keywords: &[
            "break",
            "case",
            "catch",
            "continue",
            "debugger",
            "default",
            "do",
            "else",
            "finally",
            "for",
            "if",
            "return",
            "switch",
            "throw",
            "try",
            "while",
            "with",
            "yield",
            "await",
            "of",
            "in",
            "instanceof",
            "typeof",
            "new",
            "delete",
            "void",
            "as",
            "from",
            "import",
            "export",
            "satisfies",
            "keyof",
        ],
        storage: &[
            "var",
            "let",
            "const",
            "function",
            "class",
            "extends",
            "implements",
            "interface",
            "type",
            "enum",
            "async",
            "static",
            "public",
            "private",
            "protected",
            "readonly",
            "declare",
            "abstract",
            "namespace",
            "module",
            "get",
            "set",
        ],
        constants: &["true", "false", "null", "undefined", "NaN", "Infinity", "this", "super"],
        types: &[
            "string", "number", "boolean", "any", "unknown", "never", "object", "symbol", "bigint",
        ],
        defines_function: &["function"],
        defines_type: &["class", "interface", "type", "enum"],
        capitalized_types: true,
        attributes: true,
        ..BASE
    },
    Lang {
        syntax: &["Go"],
        line_comment: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: &[
            q("\"", "\"", true, false),
            q("`", "`", false, true),
            q("'", "'", true, false),
        ],
        keywords: &[
            "break",
            "case",
            "continue",
            "default",
            "defer",
            "else",
            "fallthrough",
            "for",
            "go",
            "goto",
            "if",
            "range",
            "return",
            "select",
            "switch",
            "import",
            "package",
        ],
        storage: &["chan", "const", "func", "interface", "map", "struct", "type", "var"],
        constants: &["true", "false", "nil", "iota"],
        types: &[
            "bool",
            "byte",
            "complex64",
            "complex128",
            "error",
            "float32",
            "float64",
            "int",
            "int8",
            "int16",
            "int32",
            "int64",
            "rune",
            "string",
            "uint",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "uintptr",
            "any",
        ],
        defines_function: &["func"],
        defines_type: &["type"],
        ..BASE
    },
    Lang {
        syntax: &["C", "C++", "Java", "C#", "Objective-C", "Objective-C++"],
        line_comment: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: &[
            q("\"\"\"", "\"\"\"", true, true),
            q("\"", "\"", true, false),
            q("'", "'", true, false),
        ],
        string_prefixes: "LuU8@$",
        keywords: &[
            "if",
            "else",
            "for",
            "while",
            "do",
            "switch",
            "case",
            "default",
            "break",
            "continue",
            "return",
            "goto",
            "try",
            "catch",
            "throw",
            "throws",
            "finally",
            "new",
            "delete",
            "sizeof",
            "typeof",
            "using",
            "namespace",
            "template",
            "typename",
            "operator",
            "import",
            "package",
            "instanceof",
            "assert",
            "await",
            "yield",
            "foreach",
            "in",
            "is",
            "as",
            "lock",
            "co_await",
            "co_return",
            "co_yield",
        ],
        storage: &[
            "public",
            "private",
            "protected",
            "static",
            "const",
            "constexpr",
            "volatile",
            "extern",
            "inline",
            "auto",
            "struct",
            "class",
            "enum",
            "union",
            "typedef",
            "virtual",
            "override",
            "final",
            "friend",
            "extends",
            "implements",
            "interface",
            "abstract",
            "synchronized",
            "native",
            "transient",
            "var",
            "async",
            "sealed",
            "readonly",
            "record",
            "mutable",
            "explicit",
            "noexcept",
            "default",
        ],
        constants: &["true", "false", "null", "nullptr", "NULL", "this", "base", "super"],
        types: &[
            "void", "int", "long", "short", "char", "float", "double", "bool", "boolean", "byte", "signed", "unsigned",
            "size_t", "string", "object", "decimal", "uint", "ulong", "ushort", "sbyte", "int8_t", "int16_t",
            "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
        ],
        defines_type: &["struct", "class", "enum", "union", "interface", "record"],
        capitalized_types: true,
        attributes: true,
        directives: true,
        ..BASE
    },
    Lang {
        syntax: &["Bourne Again Shell (bash)", "Shell-Unix-Generic"],
        line_comment: &["#"],
        hash_at_word: true,
        quotes: &[q("\"", "\"", true, true), q("'", "'", false, true)],
        string_prefixes: "$",
        keywords: &[
            "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
            "function", "return", "break", "continue", "exit", "select", "time",
        ],
        storage: &["local", "export", "readonly", "declare", "typeset", "unset", "alias"],
        types: &[
            "echo", "cd", "printf", "read", "test", "exec", "eval", "trap", "shift", "source", "set", "pwd", "wait",
            "kill", "command", "builtin", "true", "false",
        ],
        defines_function: &["function"],
        dollar_variables: true,
        ..BASE
    },
    Lang {
        syntax: &["JSON"],
        line_comment: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: &[q("\"", "\"", true, false)],
        constants: &["true", "false", "null"],
        keys: Keys::Json,
        ..BASE
    },
    Lang {
        syntax: &["YAML"],
        line_comment: &["#"],
        hash_at_word: true,
        quotes: &[q("\"", "\"", true, false), q("'", "'", false, false)],
        constants: &[
            "true", "false", "null", "yes", "no", "on", "off", "True", "False", "Null", "~",
        ],
        keys: Keys::Yaml,
        ..BASE
    },
];

/// The lexer for a syntect syntax, when there is one.
pub(super) fn for_syntax(name: &str) -> Option<&'static Lang> {
    LANGS.iter().find(|lang| lang.syntax.contains(&name))
}

/// What is still open at the end of a line: a block comment or a string.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) enum Open {
    #[default]
    Nothing,
    Comment(&'static str),
    Str {
        close: String,
        escapes: bool,
    },
}

/// A line's tokens as (kind, byte range) runs covering the whole line, in order. `open` carries what the line before
/// left open and takes what this one leaves open.
pub(super) fn line(lang: &Lang, open: &mut Open, text: &str) -> Vec<(Kind, usize, usize)> {
    let mut lexer = Lexer {
        lang,
        text,
        bytes: text.as_bytes(),
        at: 0,
        out: Vec::new(),
        last_word: None,
        key_at: text.len() - text.trim_start_matches([' ', '\t', '-']).len(),
    };
    lexer.run(open);
    lexer.out
}

struct Lexer<'a> {
    lang: &'a Lang,
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    out: Vec<(Kind, usize, usize)>,
    /// The last word seen on the line: the name after `fn`, `def` or `class` is the one being defined.
    last_word: Option<&'a str>,
    /// Where a YAML key may start: after the line's indentation and list dashes.
    key_at: usize,
}

impl<'a> Lexer<'a> {
    fn push(&mut self, kind: Kind, from: usize, to: usize) {
        if from >= to {
            return;
        }
        match self.out.last_mut() {
            Some((k, _, end)) if *k == kind && *end == from => *end = to,
            _ => self.out.push((kind, from, to)),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn run(&mut self, open: &mut Open) {
        if !self.finish_open(open) {
            return;
        }
        let lang = self.lang;
        while self.at < self.bytes.len() {
            let start = self.at;
            let byte = self.bytes[start];
            let word_start = start == 0 || self.bytes[start - 1].is_ascii_whitespace();
            if !byte.is_ascii_whitespace() && !is_word_byte(byte) {
                // A name is defined right after its keyword, not after punctuation (`function (a)`).
                self.last_word = None;
            }
            if byte.is_ascii_whitespace() {
                while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_whitespace() {
                    self.at += 1;
                }
                self.push(Kind::Plain, start, self.at);
                continue;
            }
            if lang.line_comment.iter().any(|c| self.rest().starts_with(c))
                && (!lang.hash_at_word || byte != b'#' || word_start)
            {
                self.push(Kind::Comment, start, self.bytes.len());
                self.at = self.bytes.len();
                continue;
            }
            if let Some((begin, end)) = lang.block_comment
                && self.rest().starts_with(begin)
            {
                self.at += begin.len();
                match self.rest().find(end) {
                    Some(i) => self.at += i + end.len(),
                    None => {
                        self.at = self.bytes.len();
                        *open = Open::Comment(end);
                    }
                }
                self.push(Kind::Comment, start, self.at);
                continue;
            }
            if lang.directives && byte == b'#' && self.text[..start].trim().is_empty() {
                self.at += 1;
                self.skip_while(|b| b == b' ' || b == b'\t');
                self.skip_while(is_word_byte);
                self.push(Kind::Keyword, start, self.at);
                continue;
            }
            if self.string(open) {
                continue;
            }
            if lang.rust && byte == b'\'' && self.rust_quote() {
                continue;
            }
            if lang.attributes && self.attribute() {
                continue;
            }
            if lang.dollar_variables && byte == b'$' && self.variable() {
                continue;
            }
            if byte.is_ascii_digit() {
                self.number();
                continue;
            }
            if is_word_byte(byte) || (byte == b'~' && lang.keys == Keys::Yaml) {
                self.word();
                continue;
            }
            // Anything else: one character, plain.
            let len = self.rest().chars().next().map_or(1, char::len_utf8);
            self.at += len;
            self.push(Kind::Plain, start, self.at);
        }
    }

    /// Closes what the line before left open; false when it stays open to the end of this line.
    fn finish_open(&mut self, open: &mut Open) -> bool {
        match std::mem::take(open) {
            Open::Nothing => true,
            Open::Comment(end) => match self.text.find(end) {
                Some(i) => {
                    self.at = i + end.len();
                    self.push(Kind::Comment, 0, self.at);
                    true
                }
                None => {
                    self.push(Kind::Comment, 0, self.bytes.len());
                    *open = Open::Comment(end);
                    false
                }
            },
            Open::Str { close, escapes } => match find_close(self.text, 0, &close, escapes) {
                Some(end) => {
                    self.at = end;
                    self.push(Kind::Str, 0, end);
                    true
                }
                None => {
                    self.push(Kind::Str, 0, self.bytes.len());
                    *open = Open::Str { close, escapes };
                    false
                }
            },
        }
    }

    fn skip_while(&mut self, keep: impl Fn(u8) -> bool) {
        while self.at < self.bytes.len() && keep(self.bytes[self.at]) {
            self.at += 1;
        }
    }

    /// A string starting here (with its prefix letters, and Rust's raw strings), to its close or the line's end.
    fn string(&mut self, open: &mut Open) -> bool {
        let lang = self.lang;
        let start = self.at;
        let prefix = self.bytes[start..]
            .iter()
            .take_while(|b| lang.string_prefixes.as_bytes().contains(b))
            .count()
            .min(2);
        // Letters only count as a prefix right before a quote, and not at the end of a longer word.
        let after_word = start > 0 && is_word_byte(self.bytes[start - 1]);
        let at = if after_word { start } else { start + prefix };
        if lang.rust && self.rust_raw(start, at, open) {
            return true;
        }
        let Some(quote) = lang.quotes.iter().find(|quote| self.text[at..].starts_with(quote.open)) else {
            return false;
        };
        let from = at + quote.open.len();
        match find_close(self.text, from, quote.close, quote.escapes) {
            Some(end) => self.at = end,
            None => {
                self.at = self.bytes.len();
                if quote.multiline {
                    *open = Open::Str {
                        close: quote.close.to_string(),
                        escapes: quote.escapes,
                    };
                }
            }
        }
        let kind = if self.lang.keys == Keys::Json && self.rest().trim_start().starts_with(':') {
            Kind::Key
        } else {
            Kind::Str
        };
        self.push(kind, start, self.at);
        true
    }

    /// Rust's raw strings: `r"…"`, `r#"…"#` (and `br`, `cr`), which may go on over lines.
    fn rust_raw(&mut self, start: usize, at: usize, open: &mut Open) -> bool {
        let rest = &self.bytes[at..];
        let r = match rest.first() {
            Some(b'r') => 1,
            _ => return false,
        };
        if at > start + 1 || (at == start && start > 0 && is_word_byte(self.bytes[start - 1])) {
            return false;
        }
        let hashes = rest[r..].iter().take_while(|&&b| b == b'#').count();
        if rest.get(r + hashes) != Some(&b'"') {
            return false;
        }
        let close = format!("\"{}", "#".repeat(hashes));
        let from = at + r + hashes + 1;
        match self.text[from..].find(&close) {
            Some(i) => self.at = from + i + close.len(),
            None => {
                self.at = self.bytes.len();
                *open = Open::Str { close, escapes: false };
            }
        }
        self.push(Kind::Str, start, self.at);
        true
    }

    /// Rust's `'`: a character literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a lifetime or label (`'a`).
    fn rust_quote(&mut self) -> bool {
        let start = self.at;
        let rest = &self.text[start + 1..];
        let literal = match rest.chars().next() {
            Some('\\') => find_close(self.text, start + 1, "'", true),
            Some(c) if rest[c.len_utf8()..].starts_with('\'') => Some(start + 1 + c.len_utf8() + 1),
            _ => None,
        };
        if let Some(end) = literal {
            self.at = end;
            self.push(Kind::Str, start, end);
            return true;
        }
        let name = self.bytes[start + 1..].iter().take_while(|&&b| is_word_byte(b)).count();
        if name == 0 {
            return false;
        }
        self.at = start + 1 + name;
        self.push(Kind::Storage, start, self.at);
        true
    }

    /// `#[…]` / `#![…]` (Rust, to its matching bracket on the line) or `@name` (a decorator or annotation).
    fn attribute(&mut self) -> bool {
        let start = self.at;
        let rest = self.rest();
        if self.lang.rust {
            let open = if rest.starts_with("#[") {
                2
            } else if rest.starts_with("#![") {
                3
            } else {
                return false;
            };
            let mut depth = 0usize;
            let mut end = self.bytes.len();
            for (i, b) in rest.bytes().enumerate().skip(open - 1) {
                match b {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            end = start + i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            self.at = end;
            self.push(Kind::Attribute, start, end);
            return true;
        }
        if rest.starts_with('@') && rest[1..].bytes().next().is_some_and(is_word_byte) {
            self.at += 1;
            self.skip_while(|b| is_word_byte(b) || b == b'.');
            self.push(Kind::Attribute, start, self.at);
            return true;
        }
        false
    }

    /// `$name`, `${…}`, `$1`, `$@`: a shell variable.
    fn variable(&mut self) -> bool {
        let start = self.at;
        match self.bytes.get(start + 1) {
            Some(b'{') => {
                self.at = self.rest().find('}').map_or(self.bytes.len(), |i| start + i + 1);
            }
            Some(&b) if is_word_byte(b) => {
                self.at += 1;
                self.skip_while(is_word_byte);
            }
            Some(b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => self.at += 2,
            _ => return false,
        }
        self.push(Kind::Variable, start, self.at);
        true
    }

    /// A number: digits, letters (hex, exponents, suffixes), `_`, and a `.` followed by a digit.
    fn number(&mut self) {
        let start = self.at;
        while self.at < self.bytes.len() {
            let b = self.bytes[self.at];
            let decimal_point = b == b'.' && self.bytes.get(self.at + 1).is_some_and(u8::is_ascii_digit);
            let sign = (b == b'-' || b == b'+') && matches!(self.bytes[self.at - 1], b'e' | b'E');
            if !(b.is_ascii_alphanumeric() || b == b'_' || decimal_point || sign) {
                break;
            }
            self.at += 1;
        }
        self.push(Kind::Number, start, self.at);
    }

    fn word(&mut self) {
        let lang = self.lang;
        let start = self.at;
        self.at += 1;
        self.skip_while(is_word_byte);
        if lang.keys == Keys::Yaml {
            // A key: the first word (and what follows up to `: `) of a line, after indentation and list dashes.
            if start == self.key_at
                && let Some(colon) = key_end(&self.text[start..])
            {
                self.at = start + colon;
                self.push(Kind::Key, start, self.at);
                return;
            }
        }
        let word = &self.text[start..self.at];
        let next = self.bytes.get(self.at).copied();
        let previous = self.last_word.replace(word);
        let kind = if lang.rust && next == Some(b'!') && self.bytes.get(self.at + 1) != Some(&b'=') {
            self.at += 1;
            Kind::Macro
        } else if previous.is_some_and(|p| lang.defines_function.contains(&p)) && !is_keyword(lang, word) {
            Kind::Function
        } else if previous.is_some_and(|p| lang.defines_type.contains(&p)) && !is_keyword(lang, word) {
            Kind::Type
        } else if lang.keywords.contains(&word) {
            Kind::Keyword
        } else if lang.storage.contains(&word) {
            Kind::Storage
        } else if lang.constants.contains(&word) {
            Kind::Constant
        } else if lang.types.contains(&word) {
            Kind::Type
        } else if next == Some(b'(') {
            Kind::Call
        } else if lang.capitalized_types && is_capitalized(word) {
            if word.len() > 1
                && word
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            {
                Kind::Constant
            } else {
                Kind::Type
            }
        } else {
            Kind::Plain
        };
        self.push(kind, start, self.at);
    }
}

fn is_keyword(lang: &Lang, word: &str) -> bool {
    lang.keywords.contains(&word) || lang.storage.contains(&word)
}

/// Letters, digits, `_`, and any byte of a non-ASCII character (names in other scripts).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn is_capitalized(word: &str) -> bool {
    word.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
}

/// Where a YAML key that starts `text` ends: before a `:` followed by a space or the line's end, with no comment or
/// quote before it.
fn key_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'#' | b'"' | b'\'' | b'{' | b'[' => return None,
            b':' if bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) => return Some(i),
            _ => {}
        }
    }
    None
}

/// The end (after the closing delimiter) of a string whose text starts at `from`, or None when the line ends first.
/// With `escapes`, a backslash and the character after it (however many bytes) never close it.
fn find_close(text: &str, from: usize, close: &str, escapes: bool) -> Option<usize> {
    let mut chars = text[from..].char_indices();
    while let Some((i, c)) = chars.next() {
        if escapes && c == '\\' {
            chars.next();
        } else if text[from + i..].starts_with(close) {
            return Some(from + i + close.len());
        }
    }
    None
}

#[cfg(test)]
mod tests;
