//! Tests of the pure edit engine: strategies, re-indentation, line endings, selection, deletion and diagnostics.

use super::text::{Shift, keep_file_style, reindent};
use super::*;

fn edit(content: &str, old: &str, new: &str) -> Result<EditOutcome, EditError> {
    apply_edit(content, &EditRequest::new(old, new))
}

fn ok(content: &str, old: &str, new: &str) -> String {
    edit(content, old, new).unwrap().content
}

fn not_found(content: &str, old: &str, new: &str) -> String {
    match edit(content, old, new) {
        Err(EditError::NotFound(msg)) => msg,
        other => panic!("expected NotFound, got {other:?}"),
    }
}

// ---- strategies ----

#[test]
fn exact_substring_wins() {
    let out = edit("fn a() {\n    return 1;\n}\n", "return 1", "return 2").unwrap();
    assert_eq!(out.content, "fn a() {\n    return 2;\n}\n");
    assert_eq!(out.strategy, Strategy::Exact);
    assert_eq!(out.lines, vec![2]);
}

#[test]
fn trimmed_lines_reindent_deeper() {
    let file = "class A:\n    def f(self):\n        return 1\n";
    let out = edit(
        file,
        "def f(self):\n    return 1",
        "def f(self):\n    x = 2\n    return x",
    )
    .unwrap();
    assert_eq!(out.strategy, Strategy::TrimmedLines);
    assert_eq!(
        out.content,
        "class A:\n    def f(self):\n        x = 2\n        return x\n"
    );
    assert_eq!(out.lines, vec![2]);
}

#[test]
fn trimmed_lines_reindent_shallower_and_trailing_whitespace() {
    let file = "x = 1   \ny = 2\n";
    let out = edit(file, "    x = 1\n    y = 2", "    x = 10\n    y = 20").unwrap();
    assert_eq!(out.strategy, Strategy::TrimmedLines);
    assert_eq!(out.content, "x = 10\ny = 20\n");
}

#[test]
fn trimmed_lines_spaces_to_tabs() {
    let file = "\tif x {\n\t\tfoo();\n\t}\n";
    let out = edit(
        file,
        "    if x {\n        foo();\n    }",
        "    if x {\n        bar();\n          baz();\n    }",
    );
    assert_eq!(out.unwrap().content, "\tif x {\n\t\tbar();\n\t\t  baz();\n\t}\n");
}

#[test]
fn trimmed_lines_blank_lines_get_no_indent() {
    let file = "fn f() {\n    a();\n    b();\n}\n";
    let out = ok(file, "a();\nb();", "a();\n\nb();");
    assert_eq!(out, "fn f() {\n    a();\n\n    b();\n}\n");
}

#[test]
fn inconsistent_indent_pairs_line_by_line() {
    // gemini-cli #22111: the model lost the relative indentation; every line keeps its own and nothing is joined.
    let out = ok("  hello\n    world\n  end\n", "hello\nworld", "goodbye\nmoon");
    assert_eq!(out, "  goodbye\n    moon\n  end\n");
    // Different line counts: the first line takes the first pair's shift, the rest the second's.
    let out = ok("  hello\n    world\n  end\n", "hello\nworld", "goodbye\nmoon\nsun");
    assert_eq!(out, "  goodbye\n    moon\n    sun\n  end\n");
}

#[test]
fn all_blank_old_text_never_matches_loosely() {
    assert!(matches!(edit("a\n  \nb\n", "   \n", "x"), Err(EditError::NotFound(_))));
}

#[test]
fn plain_lines_keep_file_quotes() {
    let file = "  print(“hello”)\n  x = 1\n";
    let out = edit(file, "print(\"hello\")\nx = 1", "print(\"hello world\")\nx = 2").unwrap();
    assert_eq!(out.strategy, Strategy::PlainLines);
    assert_eq!(out.content, "  print(“hello world”)\n  x = 2\n");
    let dash = edit("a – b\n", "a - b", "a - c").unwrap();
    assert_eq!(
        (dash.strategy, dash.content.as_str()),
        (Strategy::PlainLines, "a – c\n")
    );
}

#[test]
fn plain_substring_keeps_file_quotes_and_new_text_as_written() {
    let out = edit(
        "He said “stop” and left.\n",
        "said \"stop\" and",
        "said \"go\" and 'ran'",
    )
    .unwrap();
    assert_eq!(out.strategy, Strategy::PlainSubstring);
    assert_eq!(out.content, "He said “go” and 'ran' left.\n");
    // The model used curly quotes, the file straight ones.
    let out = edit("It's done.\n", "It’s", "It’s not").unwrap();
    assert_eq!(out.content, "It's not done.\n");
}

#[test]
fn strategy_order_prefers_exact_over_fallbacks() {
    // Exact finds the inline occurrence; the trimmed-line match on line 2 is never considered.
    let out = edit("a foo b\n  foo\n", "foo", "bar");
    assert!(matches!(out, Err(EditError::Ambiguous(_))));
    let out = edit("x foo\n  foo  \n", " foo  ", "bar").unwrap();
    assert_eq!((out.strategy, out.content.as_str()), (Strategy::Exact, "x foo\n bar\n"));
}

// ---- nanobot regressions ----

#[test]
fn nanobot_5795_newline_terminated_fallback_keeps_indentation() {
    let old = "name = nanobot\nversion = 0.3.0\n";
    let new = "name = nanonewbot\nversion = 0.3.5\n";
    let file = "if ready:\n   name = nanobot\n   version = 0.3.0\nnext_step()\n";
    assert_eq!(
        ok(file, old, new),
        "if ready:\n   name = nanonewbot\n   version = 0.3.5\nnext_step()\n"
    );
    // At the end of the file, with and without a final newline: no line added, none lost.
    let file = "if ready:\n   name = nanobot\n   version = 0.3.0\n";
    assert_eq!(
        ok(file, old, new),
        "if ready:\n   name = nanonewbot\n   version = 0.3.5\n"
    );
    let file = "if ready:\n   name = nanobot\n   version = 0.3.0";
    assert_eq!(
        ok(file, old, new),
        "if ready:\n   name = nanonewbot\n   version = 0.3.5"
    );
    let file = "if ready:\r\n   name = nanobot\r\n   version = 0.3.0\r\nnext_step()\r\n";
    assert_eq!(
        ok(file, old, new),
        "if ready:\r\n   name = nanonewbot\r\n   version = 0.3.5\r\nnext_step()\r\n"
    );
}

#[test]
fn nanobot_5796_trailing_whitespace_of_new_text_is_kept() {
    assert_eq!(
        ok("def f():\n    return value\n", "return ", "yield "),
        "def f():\n    yield value\n"
    );
    assert_eq!(ok("a\tb\n", "a\t", "c\t"), "c\tb\n");
    assert_eq!(ok("a\n", "a", "b  "), "b  \n");
    // Also on a fallback match: the trimmed strategy never trims new_text.
    assert_eq!(ok("  x = 1\n", "x = 1 ", "x = [ \n  2 ]"), "  x = [ \n    2 ]\n");
}

// ---- line endings ----

#[test]
fn crlf_file_stays_crlf() {
    assert_eq!(ok("a\r\nb\r\nc\r\n", "b", "x\ny"), "a\r\nx\r\ny\r\nc\r\n");
    assert_eq!(ok("a\r\nb\r\nc\r\n", "a\r\nb", "z"), "z\r\nc\r\n");
    assert_eq!(ok("a\r\nb\r\nc", "c", "c\nd"), "a\r\nb\r\nc\r\nd");
}

#[test]
fn file_without_line_breaks_follows_new_text() {
    assert_eq!(ok("abc", "b", "x\r\ny"), "ax\r\nyc");
    assert_eq!(ok("abc", "b", "x\ny"), "ax\nyc");
}

#[test]
fn mixed_endings_are_not_corrupted() {
    let file = "one\r\ntwo\nthree\r\nfour\n";
    assert_eq!(ok(file, "three", "3"), "one\r\ntwo\n3\r\nfour\n");
    assert_eq!(ok(file, "two\nthree", "2\n3"), "one\r\n2\n3\r\nfour\n");
    assert_eq!(ok(file, "one\ntwo", "1\n2"), "1\r\n2\nthree\r\nfour\n");
    // Bare CR is an ordinary character.
    assert_eq!(ok("a\rb\nc", "c", "d"), "a\rb\nd");
}

#[test]
fn bom_is_kept_and_ignored_for_matching() {
    assert_eq!(
        ok("\u{feff}  alpha\n  beta\n", "alpha\nbeta", "A\nB"),
        "\u{feff}  A\n  B\n"
    );
    assert_eq!(ok("\u{feff}x\r\ny\r\n", "x\ny", "z"), "\u{feff}z\r\n");
}

// ---- selection ----

#[test]
fn occurrence_picks_one() {
    let req = EditRequest {
        occurrence: Some(2),
        ..EditRequest::new("x", "y")
    };
    assert_eq!(apply_edit("x\nx\nx\n", &req).unwrap().content, "x\ny\nx\n");
    let req = EditRequest {
        occurrence: Some(4),
        ..EditRequest::new("x", "y")
    };
    let err = apply_edit("x\nx\nx\n", &req).unwrap_err();
    assert!(matches!(err, EditError::Count(_)));
    assert!(err.to_string().contains("occurrence 4 is out of range"), "{err}");
    assert!(err.to_string().contains("lines 1, 2, 3"), "{err}");
}

#[test]
fn line_hint_picks_nearest() {
    let file = "a\nfoo\nb\nc\nd\ne\nf\ng\nh\nfoo\n";
    let req = EditRequest {
        line_hint: Some(8),
        ..EditRequest::new("foo", "bar")
    };
    let out = apply_edit(file, &req).unwrap();
    assert_eq!(out.lines, vec![10]);
    assert!(out.content.ends_with("h\nbar\n"));
    let tie = EditRequest {
        line_hint: Some(6),
        ..EditRequest::new("foo", "bar")
    };
    let err = apply_edit(file, &tie).unwrap_err();
    assert!(matches!(err, EditError::Ambiguous(_)));
    assert!(err.to_string().contains("line_hint 6 is equally close"), "{err}");
    // With a single match the hint is only a hint.
    let one = EditRequest {
        line_hint: Some(100),
        ..EditRequest::new("a\n", "A\n")
    };
    assert!(apply_edit(file, &one).unwrap().content.starts_with("A\nfoo"));
}

#[test]
fn replace_all_and_expected_replacements() {
    let all = EditRequest {
        replace_all: true,
        ..EditRequest::new("x", "y")
    };
    let out = apply_edit("x\na x\nx\n", &all).unwrap();
    assert_eq!(
        (out.content.as_str(), out.lines.clone()),
        ("y\na y\ny\n", vec![1, 2, 3])
    );

    let expect = |n, occurrence| EditRequest {
        expected_replacements: Some(n),
        occurrence,
        ..EditRequest::new("x", "y")
    };
    assert_eq!(apply_edit("x x x", &expect(3, None)).unwrap().content, "y y y");
    let err = apply_edit("x x x", &expect(2, None)).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected_replacements is 2, but old_text matches 3 times"),
        "{err}"
    );
    let err = apply_edit("x x x", &expect(2, Some(1))).unwrap_err();
    assert!(err.to_string().contains("occurrence selects 1 match"), "{err}");
    assert_eq!(apply_edit("x", &expect(1, None)).unwrap().content, "y");
    let err = apply_edit("x", &expect(2, None)).unwrap_err();
    assert!(err.to_string().contains("matches once at line 1"), "{err}");
}

#[test]
fn ambiguous_match_lists_candidates_with_context() {
    let file = "fn alpha() {\n    run();\n}\nfn beta() {\n    run();\n}\n";
    let err = edit(file, "run();", "walk();").unwrap_err();
    let EditError::Ambiguous(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(msg.starts_with("old_text matches 2 times, at lines 2, 5."), "{msg}");
    assert!(msg.contains("line 2, after line 1: fn alpha() {"), "{msg}");
    assert!(msg.contains("line 5, after line 4: fn beta() {"), "{msg}");
    assert!(msg.contains("occurrence (1-2)") && msg.contains("line_hint") && msg.contains("replace_all=true"));
}

#[test]
fn contradictory_or_invalid_selectors() {
    let bad = |req: EditRequest| matches!(apply_edit("x x", &req), Err(EditError::Invalid(_)));
    let base = EditRequest::new("x", "y");
    assert!(bad(EditRequest {
        replace_all: true,
        occurrence: Some(1),
        ..base.clone()
    }));
    assert!(bad(EditRequest {
        replace_all: true,
        line_hint: Some(1),
        ..base.clone()
    }));
    assert!(bad(EditRequest {
        occurrence: Some(1),
        line_hint: Some(1),
        ..base.clone()
    }));
    assert!(bad(EditRequest {
        occurrence: Some(0),
        ..base.clone()
    }));
    assert!(bad(EditRequest {
        line_hint: Some(0),
        ..base.clone()
    }));
    assert!(bad(EditRequest {
        expected_replacements: Some(0),
        ..base
    }));
}

#[test]
fn identical_texts_are_refused() {
    assert_eq!(edit("a\n", "a", "a"), Err(EditError::Unchanged));
    assert_eq!(edit("a\r\nb\r\n", "a\r\nb", "a\nb"), Err(EditError::Unchanged));
}

#[test]
fn empty_old_text_fills_only_empty_files() {
    let out = edit("", "", "hello\n").unwrap();
    assert_eq!((out.content.as_str(), out.strategy), ("hello\n", Strategy::Fill));
    assert_eq!(edit("\u{feff}", "", "x").unwrap().content, "\u{feff}x");
    assert_eq!(edit("a\nb\n", "", "x"), Err(EditError::NotEmpty { lines: 2 }));
}

// ---- deletion ----

#[test]
fn deleting_whole_lines_takes_their_newline() {
    assert_eq!(ok("a\nb\nc\n", "b", ""), "a\nc\n");
    assert_eq!(ok("a\nb\nc\n", "b\n", ""), "a\nc\n");
    assert_eq!(ok("a\nb\nc\n", "a\nb", ""), "c\n");
    assert_eq!(ok("    x();\n    y();\n", "x();", ""), "    y();\n");
    assert_eq!(ok("a\r\nb\r\nc\r\n", "b", ""), "a\r\nc\r\n");
    // Last line without a final newline: the newline before it goes, so the file still ends without one.
    assert_eq!(ok("a\nb", "b", ""), "a");
    assert_eq!(ok("only", "only", ""), "");
    // A trimmed-line match is whole lines too.
    assert_eq!(ok("if x:\n    a = 1\n    b = 2\n", "a = 1", ""), "if x:\n    b = 2\n");
}

#[test]
fn deleting_inline_text_keeps_the_line_break() {
    // nanobot #5761: an inline suffix is not a whole line.
    assert_eq!(ok("let a = 1; // note\nnext\n", " // note", ""), "let a = 1;\nnext\n");
    assert_eq!(ok("foo bar\n", "foo ", ""), "bar\n");
}

#[test]
fn replace_all_deletions_do_not_overlap() {
    let all = |old: &str| EditRequest {
        replace_all: true,
        ..EditRequest::new(old, "")
    };
    assert_eq!(apply_edit("x\nx", &all("x")).unwrap().content, "");
    assert_eq!(apply_edit("x\ny\nx\n", &all("x")).unwrap().content, "y\n");
    assert_eq!(apply_edit("a x\nx\n", &all("x")).unwrap().content, "a \n");
    assert_eq!(apply_edit("  \n", &all(" ")).unwrap().content, "");
}

// ---- no match ----

#[test]
fn no_match_shows_closest_window_as_diff() {
    let file = "fn main() {\n    let total = compute(a, b);\n    println!(\"{}\", total);\n}\n";
    let msg = not_found(file, "let total = compute(a, c);\nprintln!(\"{}\", total);", "x");
    assert!(msg.contains("closest text is at lines 2-3"), "{msg}");
    assert!(msg.contains("- let total = compute(a, c);"), "{msg}");
    assert!(msg.contains("+     let total = compute(a, b);"), "{msg}");
    assert!(msg.contains("Read the file again"), "{msg}");
    let msg = not_found(file, "zzzz qqqq 98765 &&&& ~~~~", "x");
    assert!(msg.contains("Nothing in the file is similar enough"), "{msg}");
}

#[test]
fn no_match_closest_window_in_a_large_file() {
    // 60,000 lines x a 20-line old_text is past the full-scan budget: windows anchored on equal lines are scored.
    let block: Vec<String> = (0..20).map(|k| format!("fn special_{k}() {{ do_it({k}); }}")).collect();
    let mut file: String = (0..30_000).map(|i| format!("line number {i}\n")).collect();
    file.push_str(&(block.join("\n") + "\n"));
    file.extend((30_000..60_000).map(|i| format!("line number {i}\n")));
    let mut wanted = block.clone();
    wanted[5] = "fn special_5() { do_it(99); }".to_string();
    let msg = not_found(&file, &wanted.join("\n"), "x");
    assert!(msg.contains("closest text is at lines 30001-30020"), "{msg}");
    assert!(msg.contains("- fn special_5() { do_it(99); }"), "{msg}");
}

#[test]
fn no_match_hints() {
    let file = "fn main() {\n    let total = compute(a, b);\n}\n";
    let hint = |old: &str, new: &str, want: &str| {
        let msg = not_found(file, old, new);
        assert!(msg.contains(want), "hint {want:?} missing in:\n{msg}");
    };
    hint("LET TOTAL = COMPUTE(A, B);", "x", "letter case differs");
    hint("let total = compute(a,b);", "x", "whitespace or indentation differs");
    hint("let  total = compute(a, b);", "x", "whitespace or indentation differs");
    hint(
        "    let total = compute(a, b);\n\n\n",
        "x",
        "line breaks that are not in the file",
    );
    hint(
        "  2|     let total = compute(a, b);",
        "x",
        "line numbers copied from read_file",
    );
    hint(
        "let sum = compute(a, b);",
        "    let total = compute(a, b);",
        "new_text is already in the file at line 2",
    );
    let msg = not_found("x = 'a'\n", "x = \"a\"", "y");
    assert!(msg.contains("quote style differs"), "{msg}");
    let msg = not_found("a\rb\rc", "a\nb", "y");
    assert!(msg.contains("line endings differ"), "{msg}");
    assert!(!msg.contains("whitespace or indentation differs"), "{msg}");
}

// ---- pieces ----

#[test]
fn shifts() {
    assert_eq!(Shift::between("  ", "    "), Shift::Add("  ".into()));
    assert_eq!(Shift::between("    ", "  "), Shift::Remove("  ".into()));
    assert_eq!(Shift::between("        ", "\t\t"), Shift::ToTabs(4));
    assert_eq!(Shift::between("\t", "  "), Shift::ToSpaces(2));
    assert_eq!(Shift::Remove("    ".into()).apply("  x"), "x");
    assert_eq!(Shift::Remove("  ".into()).apply("\tx"), "\tx");
    assert_eq!(Shift::ToTabs(4).apply("      x"), "\t  x");
    assert_eq!(Shift::ToSpaces(4).apply("\t\tx"), "        x");
    assert_eq!(Shift::Add("  ".into()).apply("   "), "   ");
    assert_eq!(reindent("a\n  b\n", &["a", "  b"], &["\ta", "\t  b"]), "\ta\n\t  b\n");
}

#[test]
fn keep_file_style_only_touches_repeated_text() {
    assert_eq!(
        keep_file_style("say 'hi'", "say 'hi' and 'bye'", "say ‘hi’"),
        "say ‘hi’ and 'bye'"
    );
    assert_eq!(keep_file_style("a", "b", "a"), "b");
}
