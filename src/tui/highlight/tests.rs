use std::cell::Cell;

use super::*;

thread_local! {
    /// Makes `is_ready` false on this thread, as before `warm_up` (which other tests in this process have run).
    pub(crate) static COLD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` as if the syntax definitions were not loaded yet.
pub(crate) fn cold<R>(f: impl FnOnce() -> R) -> R {
    COLD.set(true);
    let out = f();
    COLD.set(false);
    out
}

/// The highlighter as it is once warmed up, which the tests below are about.
fn highlight(code: &str, lang: Option<&str>, theme: &Theme) -> Vec<Line<'static>> {
    warm_up();
    super::highlight(code, lang, theme)
}

pub(super) fn text(lines: &[Line]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

pub(super) fn has_rgb(line: &Line) -> bool {
    line.spans.iter().any(|s| matches!(s.style.fg, Some(Color::Rgb(..))))
}

fn uncached(code: &str, lang: &str) -> Vec<Line<'static>> {
    let theme = Theme::default();
    let syntax = lang::find_syntax(&SYNTAXES, lang).unwrap();
    highlight_with(code, syntax, syntect_theme(&theme).unwrap(), &theme, false)
}

#[test]
fn highlights_rust_one_line_per_source_line() {
    let theme = Theme::default();
    let code = "fn main() {\n    let s = \"hi\"; // greet\n}\n";
    let lines = highlight(code, Some("rust"), &theme);
    assert_eq!(text(&lines), ["fn main() {", "    let s = \"hi\"; // greet", "}"]);
    assert!(has_rgb(&lines[0]), "the keyword `fn` is coloured: {:?}", lines[0]);
    let keyword = lines[0].spans.iter().find(|s| s.content.contains("fn")).unwrap();
    let name = lines[0].spans.iter().find(|s| s.content.contains("main")).unwrap();
    assert_ne!(keyword.style, name.style);
    // Comments in base16-ocean are a distinct colour.
    let comment = lines[1].spans.iter().find(|s| s.content.contains("greet")).unwrap();
    assert!(matches!(comment.style.fg, Some(Color::Rgb(..))));
}

#[test]
fn never_sets_a_background_and_plain_tokens_use_the_terminal_foreground() {
    let theme = Theme::default();
    let lines = highlight("x = 1\nprint(x)\n", Some("py"), &theme);
    for span in lines.iter().flat_map(|l| &l.spans) {
        assert_eq!(span.style.bg, None, "{span:?}");
    }
    // `x` is plain text in the syntect theme, so it carries no colour of its own.
    let x = lines[0]
        .spans
        .iter()
        .find(|s| s.content.trim() == "x" || s.content.starts_with('x'))
        .unwrap();
    assert_eq!(x.style.fg, theme.text.fg);
}

#[test]
fn unknown_or_missing_language_is_plain() {
    let theme = Theme::default();
    for lang in [None, Some("no-such-language"), Some("text"), Some("toml"), Some("")] {
        let lines = highlight("a = 1\n\tb\n", lang, &theme);
        assert_eq!(text(&lines), ["a = 1", "    b"], "{lang:?}");
        for line in &lines {
            assert_eq!(line.spans.len(), 1);
            assert_eq!(line.spans[0].style, theme.text);
        }
    }
}

#[test]
fn line_endings_and_empty_input() {
    let theme = Theme::default();
    assert!(highlight("", Some("rs"), &theme).is_empty());
    assert_eq!(text(&highlight("a\r\nb\r\n", Some("rs"), &theme)), ["a", "b"]);
    assert_eq!(text(&highlight("a\n\nb", Some("rs"), &theme)), ["a", "", "b"]);
    assert_eq!(text(&highlight("a\n\n", None, &theme)), ["a", ""]);
}

#[test]
fn tabs_expand_to_stops() {
    assert_eq!(expand_tabs("\tx", 0), "    x");
    assert_eq!(expand_tabs("ab\tc", 0), "ab  c");
    assert_eq!(expand_tabs("\t", 2), "  ");
    assert_eq!(expand_tabs("日\tx", 0), "日  x");
    let theme = Theme::default();
    let lines = highlight("fn f() {\n\tlet a\t= 1;\n}\n", Some("rs"), &theme);
    assert_eq!(text(&lines)[1], "    let a   = 1;");
}

#[test]
fn oversized_inputs_are_plain() {
    let theme = Theme::default();
    let many = "let x = 1;\n".repeat(MAX_HIGHLIGHT_LINES + 1);
    let lines = highlight(&many, Some("rs"), &theme);
    assert_eq!(lines.len(), MAX_HIGHLIGHT_LINES + 1);
    assert!(lines.iter().all(|l| !has_rgb(l)));
    let long = format!("let s = \"{}\";\n", "x".repeat(MAX_HIGHLIGHT_BYTES));
    assert!(!has_rgb(&highlight(&long, Some("rs"), &theme)[0]));
}

#[test]
fn a_very_long_line_ends_highlighting_there() {
    let theme = Theme::default();
    let code = format!(
        "fn a() {{}}\nlet s = \"{}\";\nfn b() {{}}\n",
        "y".repeat(MAX_LINE_BYTES)
    );
    let lines = highlight(&code, Some("rs"), &theme);
    assert_eq!(lines.len(), 3);
    assert!(has_rgb(&lines[0]));
    assert!(!has_rgb(&lines[1]) && !has_rgb(&lines[2]));
    assert_eq!(lines[1].spans[0].content.len(), MAX_LINE_BYTES + 11);
}

#[test]
fn streaming_prefixes_match_a_fresh_highlight() {
    let theme = Theme::default();
    // Lua: no other test uses it, so the cache entries counted below are this test's own.
    let code = "-- sum\nlocal function add(a, b)\n  return a + b -- \"x\"\nend\nprint(add(1, 2))\n";
    let mut boundaries: Vec<usize> = code.char_indices().map(|(i, _)| i).collect();
    boundaries.push(code.len());
    for end in boundaries {
        let prefix = &code[..end];
        assert_eq!(
            highlight(prefix, Some("lua"), &theme),
            uncached(prefix, "lua"),
            "prefix {prefix:?}"
        );
    }
    let key = cache::Key {
        syntax: "Lua",
        syntax_theme: theme.syntax_theme,
        text_style: theme.text,
    };
    assert_eq!(cache::len_for(&key), 1, "each longer prefix replaces the shorter one");
    // A block inside a longer one resumes from the cached state and still matches.
    let longer = format!("{code}local t = {{}}\n");
    assert_eq!(highlight(&longer, Some("lua"), &theme), uncached(&longer, "lua"));
}

#[test]
fn a_language_the_lexer_knows_is_coloured_at_once_however_large() {
    warm_up();
    let theme = Theme::default();
    let code: String = (0..background::SYNC_LINES * 20)
        .map(|i| format!("let lexed_{i} = \"s\"; // note\n"))
        .collect();
    let (lines, provisional) = super::background::frame(|| super::track(|| highlight(&code, Some("rust"), &theme)));
    assert!(!provisional, "never handed to the worker");
    assert_eq!(lines.len(), background::SYNC_LINES * 20);
    assert!(lines.iter().all(has_rgb));
    assert_eq!(text(&lines[..1]), ["let lexed_0 = \"s\"; // note"]);
}

#[test]
fn language_names_resolve() {
    let name = |lang: &str| lang::find_syntax(&SYNTAXES, lang).map(|s| s.name.as_str());
    assert_eq!(name("rust"), Some("Rust"));
    assert_eq!(name("Rust"), Some("Rust"));
    assert_eq!(name("rust,ignore"), Some("Rust"));
    assert_eq!(name("python {linenos=true}"), Some("Python"));
    assert_eq!(name("py"), Some("Python"));
    assert_eq!(name("ts"), Some("JavaScript"));
    assert_eq!(name("tsx"), Some("JavaScript"));
    assert_eq!(name("sh"), Some("Bourne Again Shell (bash)"));
    assert_eq!(name("console"), Some("Bourne Again Shell (bash)"));
    assert_eq!(name("c++"), Some("C++"));
    assert_eq!(name("json"), Some("JSON"));
    assert_eq!(name("diff"), Some("Diff"));
    assert_eq!(name("yml"), Some("YAML"));
    assert_eq!(name("src/tui/highlight.rs"), Some("Rust"));
    assert_eq!(name(".py"), Some("Python"));
    assert_eq!(name("txt"), None);
    assert_eq!(name("   "), None);
}

#[test]
fn languages_for_paths() {
    assert_eq!(language_for_path("src/main.rs"), Some("rs"));
    assert_eq!(language_for_path("/abs/Path/SCRIPT.PY"), Some("py"));
    assert_eq!(language_for_path("web/app.tsx"), Some("js"));
    assert_eq!(language_for_path("Makefile"), Some("make"));
    assert_eq!(language_for_path("home/.bashrc"), Some("sh"));
    assert_eq!(language_for_path("a\\b\\c.go"), Some("go"));
    assert_eq!(language_for_path("README"), None);
    assert_eq!(language_for_path("notes.txt"), None);
    assert_eq!(language_for_path("data.unknownext"), None);
    assert_eq!(language_for_path("."), None);
    // Whatever it returns, highlight accepts.
    for path in ["x.rs", "x.hpp", "x.rb", "x.yaml", "x.sql", "Gemfile"] {
        let lang = language_for_path(path).unwrap();
        assert!(lang::find_syntax(&SYNTAXES, lang).is_some(), "{path} -> {lang}");
    }
}

#[test]
fn warm_up_is_safe_to_call_repeatedly() {
    warm_up();
    warm_up();
    assert!(has_rgb(&highlight("let a = 1;", Some("rs"), &Theme::default())[0]));
}

#[test]
fn before_warm_up_code_is_plain_and_warm_up_wakes_the_ui() {
    let theme = Theme::default();
    let code = "fn main() {\n\tlet s = 1;\n}\n";
    let plain = cold(|| {
        assert!(!is_ready());
        super::highlight(code, Some("rust"), &theme)
    });
    assert_eq!(plain, plain_lines(code, &theme));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    warm_up_and_notify(&tx);
    assert_eq!(rx.try_recv(), Ok(()), "the UI is asked for a frame");
    assert!(is_ready());
    let lines = super::highlight(code, Some("rust"), &theme);
    assert_eq!(text(&lines), text(&plain));
    assert!(has_rgb(&lines[0]));
}
