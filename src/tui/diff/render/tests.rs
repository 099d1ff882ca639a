use std::time::Instant;

use super::*;

fn theme() -> Theme {
    Theme::default()
}

fn text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(text).collect()
}

fn render(diff: &FileDiff, width: u16) -> Vec<Line<'static>> {
    render_diff(diff, width, &theme(), &DiffOptions::default())
}

fn modified(old: &str, new: &str) -> FileDiff {
    FileDiff::new("src/lib.rs", Some(old.to_string()), Some(new.to_string()))
}

#[test]
fn changed_words_get_the_word_styles() {
    let t = theme();
    let diff = modified(
        "fn f() {\n    let x = compute(alpha, 3);\n}\n",
        "fn f() {\n    let x = compute(beta, 3);\n}\n",
    );
    let lines = render(&diff, 80);
    let removed = lines.iter().find(|l| text(l).contains("alpha")).unwrap();
    let added = lines.iter().find(|l| text(l).contains("beta")).unwrap();
    let span = |l: &Line<'static>, s: &str| l.spans.iter().find(|sp| sp.content == s).unwrap().style;
    assert_eq!(span(removed, "alpha"), t.diff_removed_word);
    assert_eq!(span(added, "beta"), t.diff_added_word);
    // The rest of the changed line keeps the plain line colour, and the marker is coloured too.
    assert_eq!(span(added, ", 3);"), t.diff_added);
    assert_eq!(span(added, "+ "), t.diff_added);
    assert_eq!(span(removed, "- "), t.diff_removed);
    assert!(added.spans.iter().all(|s| s.style != t.diff_removed_word));
}

#[test]
fn layout_header_hunk_and_gutters() {
    let old: String = (1..=12).map(|i| format!("    v{i}();\n")).collect();
    let old = format!("impl Thing {{\n    fn run(&self) {{\n{old}    }}\n}}\n");
    let new = old.replace("v7()", "v7(true)");
    let lines = render(&modified(&old, &new), 80);
    let t = texts(&lines);
    assert_eq!(t[0], "src/lib.rs  +1 -1");
    assert_eq!(t[1], "@@ -6,7 +6,7 @@ fn run(&self) {");
    assert_eq!(t[2], " 6  6       v4();");
    assert_eq!(t[5], " 9    -     v7();");
    assert_eq!(t[6], "    9 +     v7(true);");
    assert_eq!(t.len(), 2 + 8);
    assert_eq!(lines[1].spans[0].style, theme().diff_hunk);
    assert_eq!(lines[2].spans[0].style, theme().diff_gutter);
}

#[test]
fn separate_hunks_and_git_ranges() {
    let old: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    let new = old.replace("l2\n", "").replace("l25\n", "l25\nextra\n");
    let t = texts(&render(&modified(&old, &new), 60));
    let headers: Vec<_> = t.iter().filter(|l| l.starts_with("@@")).collect();
    // Lines starting with a letter count as headings, as in git's default rule.
    assert_eq!(headers, ["@@ -1,5 +1,4 @@", "@@ -23,6 +22,7 @@ l22"]);
}

#[test]
fn created_file_is_all_additions_without_hunk_header() {
    let diff = FileDiff::new("new.txt", None, Some("one\ntwo\n".into()));
    let t = texts(&render(&diff, 40));
    assert_eq!(t, ["new.txt  +2  new file", "1 + one", "2 + two"]);
    let empty = FileDiff::new("empty.txt", None, Some(String::new()));
    assert_eq!(texts(&render(&empty, 40)), ["empty.txt  +0  new file", "empty file"]);
}

#[test]
fn deleted_file_is_all_removals() {
    let diff = FileDiff::new("old.txt", Some("a\nb\n".into()), None);
    let lines = render(&diff, 40);
    assert_eq!(texts(&lines), ["old.txt  -2  deleted", "1 - a", "2 - b"]);
    assert_eq!(lines[1].spans[1].style, theme().diff_removed);
}

#[test]
fn no_changes() {
    let diff = modified("same\n", "same\n");
    assert_eq!(texts(&render(&diff, 40)), ["src/lib.rs  +0 -0", "no changes"]);
}

#[test]
fn crlf_is_never_shown_and_ending_changes_are_noted() {
    let diff = modified("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n");
    let t = texts(&render(&diff, 40));
    assert!(t.iter().all(|l| !l.contains('\r') && !l.contains('\u{240d}')), "{t:?}");
    assert_eq!(t[2..], ["1 1   a", "2   - b", "  2 + B", "3 3   c"]);

    let converted = modified("a\r\nb\r\n", "a\nb\n");
    let t = texts(&render(&converted, 40));
    assert_eq!(t[1..], ["line endings: CRLF → LF", "only line endings changed"]);
}

#[test]
fn missing_final_newline_is_noted() {
    let diff = modified("a\nb", "a\nc");
    let t = texts(&render(&diff, 40));
    assert_eq!(
        t[2..],
        [
            "1 1   a",
            "2   - b",
            "      \\ No newline at end of file",
            "  2 + c",
            "      \\ No newline at end of file"
        ]
    );
    // Adding the newline is a change of its own.
    let t = texts(&render(&modified("a\nb", "a\nb\n"), 40));
    assert_eq!(
        t[2..],
        ["1 1   a", "2   - b", "      \\ No newline at end of file", "  2 + b"]
    );
    let note = render(&modified("x", "y"), 40);
    assert_eq!(note[3].spans[1].style, theme().dim);
}

#[test]
fn binary_and_huge_inputs_are_summarised() {
    let bin = modified("PNG\0\x01\x02", "PNG\0\x01\x03\x04");
    assert_eq!(texts(&render(&bin, 60))[1], "binary content changed: 6 B → 7 B");

    let big_old = "x\n".repeat(30_000);
    let big_new = "y\n".repeat(30_000);
    let diff = FileDiff {
        path: "big.txt".into(),
        old: Some(big_old),
        new: Some(big_new),
        added: 30_000,
        removed: 30_000,
        diagnostics: None,
    };
    let start = Instant::now();
    let t = texts(&render(&diff, 80));
    assert!(start.elapsed().as_millis() < 50, "summary took {:?}", start.elapsed());
    assert_eq!(t[1], "large change: +30000 -30000 lines");

    let wide = FileDiff {
        path: "wide.txt".into(),
        old: Some("a".repeat(2 << 20)),
        new: Some("b".into()),
        added: 1,
        removed: 1,
        diagnostics: None,
    };
    assert_eq!(texts(&render(&wide, 80))[1], "large change: +1 -1 lines");
}

#[test]
fn tabs_expand_and_controls_show_as_symbols() {
    let diff = FileDiff::new("t.go", None, Some("\tx\na\tb\nesc\x1b[2J\n".into()));
    let t = texts(&render(&diff, 40));
    assert_eq!(t[1..], ["1 +     x", "2 + a   b", "3 + esc\u{241b}[2J"]);
}

#[test]
fn long_and_wide_lines_wrap_with_a_blank_gutter() {
    let line = "日本語のテキスト🦀 ".repeat(6);
    let diff = modified("short\n", &format!("{line}\n"));
    let width = 30;
    let lines = render(&diff, width);
    for l in &lines {
        assert!(l.width() <= usize::from(width), "{:?} is {} wide", text(l), l.width());
    }
    let added: Vec<_> = lines.iter().skip_while(|l| !text(l).starts_with("  1 + ")).collect();
    assert!(added.len() > 2, "{:?}", texts(&lines));
    for cont in &added[1..] {
        assert!(text(cont).starts_with("      "), "{:?}", text(cont));
        assert_eq!(cont.spans[0].style, Style::default());
    }
}

#[test]
fn very_long_lines_are_cut() {
    let diff = FileDiff::new("min.js", None, Some(format!("{}\n", "x".repeat(MAX_LINE_BYTES + 500))));
    let t = texts(&render_diff(&diff, 80, &theme(), &DiffOptions::default()));
    assert!(t.last().unwrap().ends_with("… 500 more characters"), "{:?}", t.last());
}

#[test]
fn narrow_width_drops_line_numbers() {
    let t = texts(&render(&modified("alpha\n", "beta\n"), 17));
    assert_eq!(t[2..], ["- alpha", "+ beta"]);
}

#[test]
fn folds_past_max_lines_with_the_callers_hint() {
    let new: String = (1..=100).map(|i| format!("row {i}\n")).collect();
    let diff = FileDiff::new("rows.txt", None, Some(new));
    let opts = DiffOptions {
        max_lines: Some(10),
        fold_hint: Some("press e to expand".into()),
        ..DiffOptions::default()
    };
    let lines = render_diff(&diff, 60, &theme(), &opts);
    assert_eq!(lines.len(), 10);
    // The header, 8 rows, and the fold line for the other 92.
    assert_eq!(text(&lines[8]), "  8 + row 8");
    assert_eq!(text(&lines[9]), "… 92 more lines (press e to expand)");
    assert_eq!(lines[9].spans[0].style, theme().dim);

    // A diff that fits exactly is not folded.
    let small = FileDiff::new("rows.txt", None, Some("a\nb\n".into()));
    let exact = DiffOptions {
        max_lines: Some(3),
        ..DiffOptions::default()
    };
    assert_eq!(
        texts(&render_diff(&small, 60, &theme(), &exact)),
        ["rows.txt  +2  new file", "1 + a", "2 + b"]
    );
    let tight = DiffOptions {
        max_lines: Some(2),
        ..DiffOptions::default()
    };
    assert_eq!(texts(&render_diff(&small, 60, &theme(), &tight))[1], "… 2 more lines");
}

#[test]
fn hunk_marks_point_at_hunk_headers() {
    let old: String = (1..=40).map(|i| format!("l{i}\n")).collect();
    let new = old.replace("l5\n", "L5\n").replace("l30\n", "L30\n");
    let r = render_marked(&modified(&old, &new), 60, &theme(), &DiffOptions::default());
    assert_eq!(r.hunks.len(), 2);
    for h in r.hunks {
        assert!(text(&r.lines[h]).starts_with("@@ "));
    }
}

#[test]
// How fast is for the TUI benchmark (`cargo bench --bench tui`) to say: a timed test flakes on a busy machine.
fn two_thousand_line_diffs_render_whole() {
    let old: String = (0..2000)
        .map(|i| format!("    let value_{i} = compute(input_{i}, {i});\n"))
        .collect();
    let new: String = (0..2000)
        .map(|i| {
            if i % 7 == 0 {
                format!("    let value_{i} = compute(other_{i}, {});\n", i + 1)
            } else {
                format!("    let value_{i} = compute(input_{i}, {i});\n")
            }
        })
        .collect();
    let diff = modified(&old, &new);
    let created = FileDiff::new("new.rs", None, Some(new.clone()));
    let t = theme();
    let opts = DiffOptions::default();
    let lines = render_diff(&diff, 100, &t, &opts);
    let created_lines = render_diff(&created, 100, &t, &opts);
    // Every line of the created file, and every line of the edited one's hunks (286 changed lines, with context).
    assert!(created_lines.len() > 2000, "{}", created_lines.len());
    assert!(lines.len() > 2 * 286, "{}", lines.len());
}
