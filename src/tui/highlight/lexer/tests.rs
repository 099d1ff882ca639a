use super::{Kind, Lang, Open, for_syntax, line};

fn lang(name: &str) -> &'static Lang {
    for_syntax(name).unwrap_or_else(|| panic!("no lexer for {name}"))
}

/// The non-plain tokens of `text` as (kind, text), what stays open after it.
fn tokens_after(lang: &Lang, open: &mut Open, text: &str) -> Vec<(Kind, String)> {
    let runs = line(lang, open, text);
    // The runs cover the line, in order, without gaps.
    let mut at = 0;
    for (_, from, to) in &runs {
        assert_eq!(*from, at, "gap or overlap in {runs:?} of {text:?}");
        assert!(to > from);
        at = *to;
    }
    assert_eq!(at, text.len());
    runs.into_iter()
        .filter(|(kind, _, _)| *kind != Kind::Plain)
        .map(|(kind, from, to)| (kind, text[from..to].to_string()))
        .collect()
}

fn tokens(name: &str, text: &str) -> Vec<(Kind, String)> {
    tokens_after(lang(name), &mut Open::default(), text)
}

fn t(kind: Kind, text: &str) -> (Kind, String) {
    (kind, text.to_string())
}

#[test]
fn rust_tokens() {
    use Kind::*;
    assert_eq!(
        tokens(
            "Rust",
            r#"pub fn parse<'a>(s: &'a str) -> Result<u32, Error> { println!("{s:?} \" x"); 'c' }"#
        ),
        [
            t(Storage, "pub"),
            t(Storage, "fn"),
            t(Function, "parse"),
            t(Storage, "'a"),
            t(Storage, "'a"),
            t(Type, "str"),
            t(Type, "Result"),
            t(Type, "u32"),
            t(Type, "Error"),
            t(Macro, "println!"),
            t(Str, r#""{s:?} \" x""#),
            t(Str, "'c'"),
        ]
    );
    assert_eq!(
        tokens("Rust", "#[derive(Debug)] let x = 0x1F_u8 + 1.5e-3; // done"),
        [
            t(Attribute, "#[derive(Debug)]"),
            t(Storage, "let"),
            t(Number, "0x1F_u8"),
            t(Number, "1.5e-3"),
            t(Comment, "// done"),
        ]
    );
    assert_eq!(
        tokens("Rust", "for i in 0..10 { MAX_LEN; '\\n'; b\"raw\"; x != y }"),
        [
            t(Keyword, "for"),
            t(Keyword, "in"),
            t(Number, "0"),
            t(Number, "10"),
            t(Constant, "MAX_LEN"),
            t(Str, "'\\n'"),
            t(Str, "b\"raw\""),
        ]
    );
}

#[test]
fn rust_raw_strings_and_block_comments_go_on_over_lines() {
    let rust = lang("Rust");
    let mut open = Open::default();
    assert_eq!(
        tokens_after(rust, &mut open, r##"let s = r#"a "quoted""##)[1],
        t(Kind::Str, r##"r#"a "quoted""##)
    );
    assert_eq!(
        tokens_after(rust, &mut open, r##"still" here"# ; fn"##)[0],
        t(Kind::Str, r##"still" here"#"##)
    );
    assert_eq!(open, Open::Nothing);
    assert_eq!(tokens_after(rust, &mut open, "x /* a"), [t(Kind::Comment, "/* a")]);
    assert_eq!(
        tokens_after(rust, &mut open, "b */ true"),
        [t(Kind::Comment, "b */"), t(Kind::Constant, "true")]
    );
    // A string left open at a line's end goes on (Rust strings may hold newlines).
    assert_eq!(
        tokens_after(rust, &mut open, "let s = \"one"),
        [t(Kind::Storage, "let"), t(Kind::Str, "\"one")]
    );
    assert_eq!(tokens_after(rust, &mut open, "two\";"), [t(Kind::Str, "two\"")]);
}

#[test]
fn python_tokens_and_triple_quotes() {
    use Kind::*;
    assert_eq!(
        tokens(
            "Python",
            "@cache\ndef f(self, n=3): return f\"{n}\" if n else None  # why"
        ),
        [
            t(Attribute, "@cache"),
            t(Storage, "def"),
            t(Function, "f"),
            t(Constant, "self"),
            t(Number, "3"),
            t(Keyword, "return"),
            t(Str, "f\"{n}\""),
            t(Keyword, "if"),
            t(Keyword, "else"),
            t(Constant, "None"),
            t(Comment, "# why"),
        ]
    );
    let python = lang("Python");
    let mut open = Open::default();
    assert_eq!(tokens_after(python, &mut open, "x = '''doc"), [t(Str, "'''doc")]);
    assert_eq!(
        tokens_after(python, &mut open, "still ' doc''' + from"),
        [t(Str, "still ' doc'''"), t(Keyword, "from")]
    );
    // A plain quote does not go on past its line.
    assert_eq!(tokens_after(python, &mut open, "s = 'open"), [t(Str, "'open")]);
    assert_eq!(open, Open::Nothing);
}

#[test]
fn javascript_and_typescript_tokens() {
    use Kind::*;
    assert_eq!(
        tokens(
            "JavaScript",
            "export async function load(url: string): Promise<Data> { return `${url}/x`; }"
        ),
        [
            t(Keyword, "export"),
            t(Storage, "async"),
            t(Storage, "function"),
            t(Function, "load"),
            t(Type, "string"),
            t(Type, "Promise"),
            t(Type, "Data"),
            t(Keyword, "return"),
            t(Str, "`${url}/x`"),
        ]
    );
    // After punctuation a name is not the one being defined.
    assert_eq!(
        tokens("JavaScript", "const f = function (a) { fetch(a) }")[2..],
        [t(Call, "fetch")]
    );
}

#[test]
fn go_c_family_and_shell_tokens() {
    use Kind::*;
    assert_eq!(
        tokens("Go", "func main() { s := `raw`; var n int = nil }"),
        [
            t(Storage, "func"),
            t(Function, "main"),
            t(Str, "`raw`"),
            t(Storage, "var"),
            t(Type, "int"),
            t(Constant, "nil"),
        ]
    );
    assert_eq!(tokens("C++", "#include <stdio.h>"), [t(Keyword, "#include")]);
    assert_eq!(
        tokens(
            "Java",
            "@Override public static void main(String[] args) { return null; }"
        ),
        [
            t(Attribute, "@Override"),
            t(Storage, "public"),
            t(Storage, "static"),
            t(Type, "void"),
            t(Call, "main"),
            t(Type, "String"),
            t(Keyword, "return"),
            t(Constant, "null"),
        ]
    );
    assert_eq!(
        tokens(
            "Bourne Again Shell (bash)",
            "if [ -n \"$HOME\" ]; then echo ${PATH} a#b $1; fi # note"
        ),
        [
            t(Keyword, "if"),
            t(Str, "\"$HOME\""),
            t(Keyword, "then"),
            t(Type, "echo"),
            t(Variable, "${PATH}"),
            t(Variable, "$1"),
            t(Keyword, "fi"),
            t(Comment, "# note"),
        ]
    );
}

#[test]
fn json_and_yaml_keys() {
    use Kind::*;
    assert_eq!(
        tokens("JSON", r#"{"name": "tern", "n": 2, "ok": true, "list": [null]}"#),
        [
            t(Key, r#""name""#),
            t(Str, r#""tern""#),
            t(Key, r#""n""#),
            t(Number, "2"),
            t(Key, r#""ok""#),
            t(Constant, "true"),
            t(Key, r#""list""#),
            t(Constant, "null"),
        ]
    );
    assert_eq!(
        tokens("YAML", "  - run: cargo test # fast"),
        [t(Key, "run"), t(Comment, "# fast")]
    );
    assert_eq!(tokens("YAML", "on: [push]"), [t(Key, "on")]);
    assert_eq!(tokens("YAML", "debug: true"), [t(Key, "debug"), t(Constant, "true")]);
    assert_eq!(tokens("YAML", "url: http://x # c"), [t(Key, "url"), t(Comment, "# c")]);
}

#[test]
fn odd_input_never_breaks_the_runs() {
    // Unclosed things, lone quotes and backslashes, non-ASCII text and control characters: every line is covered
    // by its runs, in order (checked in `tokens_after`), whatever the language.
    let odd = [
        "",
        "'",
        "\"",
        "\\",
        "r#\"",
        "#[",
        "#![derive(",
        "$",
        "${",
        "@",
        "0x",
        "1e",
        "1.",
        "'\\",
        "b'",
        "ünïcödé = \"ß\" // ✓",
        "\u{1b}[31m red",
        "x = '''",
        "/*",
        "*/",
        "`",
        "-: a",
        "key:",
        "é'a",
        "'é'",
    ];
    for name in [
        "Rust",
        "Python",
        "JavaScript",
        "Go",
        "C",
        "Bourne Again Shell (bash)",
        "JSON",
        "YAML",
    ] {
        let lang = lang(name);
        let mut open = Open::default();
        for text in odd {
            tokens_after(lang, &mut open, text);
        }
    }
}

#[test]
fn string_prefixes_only_before_a_quote_and_not_inside_a_word() {
    use Kind::*;
    assert_eq!(
        tokens("Rust", r#"use crate::x; br"raw\" br"#),
        [t(Keyword, "use"), t(Keyword, "crate"), t(Str, r#"br"raw\""#)]
    );
    assert_eq!(tokens("Python", "rb'\\x00' + bar'"), [t(Str, "rb'\\x00'"), t(Str, "'")]);
    assert_eq!(
        tokens("Python", "from f import fr"),
        [t(Keyword, "from"), t(Keyword, "import")]
    );
    assert_eq!(
        tokens("Bourne Again Shell (bash)", "printf $'a\\tb' $x"),
        [t(Type, "printf"), t(Str, "$'a\\tb'"), t(Variable, "$x")]
    );
}
#[test]
fn every_syntax_a_lexer_stands_in_for_is_one_syntect_has() {
    // A name syntect does not have would never pick its lexer.
    let set = syntect::parsing::SyntaxSet::load_defaults_newlines();
    for lang in super::LANGS {
        for name in lang.syntax {
            assert!(set.find_syntax_by_name(name).is_some(), "no syntax {name:?}");
        }
    }
}

#[test]
fn an_escape_before_a_wide_character_inside_a_string() {
    // The escaped character is skipped whole, however many bytes it takes.
    assert_eq!(tokens("Rust", "\"a\\é\" x"), [t(Kind::Str, "\"a\\é\"")]);
    assert_eq!(tokens("Python", "'\\✓'"), [t(Kind::Str, "'\\✓'")]);
    assert_eq!(tokens("JSON", "\"\\"), [t(Kind::Str, "\"\\")]);
}
