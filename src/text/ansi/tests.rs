use super::*;

#[test]
fn colours_moves_titles_and_links_go_and_the_text_stays() {
    let cases = [
        ("plain text\n", "plain text\n"),
        ("\u{1b}[1;31merror\u{1b}[0m: failed", "error: failed"),
        ("\u{1b}[2K\u{1b}[1A✓ done", "✓ done"),
        ("\u{1b}]0;title\u{7}after", "after"),
        ("\u{1b}]8;;https://x.example\u{1b}\\link\u{1b}]8;;\u{1b}\\", "link"),
        ("\u{1b}(Bok\u{1b}7", "ok"),
        ("\u{9b}31mred\u{9b}0m", "red"),
        ("\u{1b}P$q m\u{1b}\\rest", "rest"),
        ("cut \u{1b}[3", "cut "),
        ("progress 10%\r\u{1b}[Kprogress 20%", "progress 10%\rprogress 20%"),
    ];
    for (given, left) in cases {
        assert_eq!(strip(given), left, "{given:?}");
    }
    assert!(matches!(strip("nothing to do"), Cow::Borrowed(_)));
}

/// A broken CSI ends at the first character a CSI cannot hold, so the text after it is not swallowed.
#[test]
fn a_broken_sequence_keeps_the_text_after_it() {
    assert_eq!(strip("\u{1b}[12\nnext line"), "\nnext line");
    assert_eq!(strip("a\u{1b}[é b"), "aé b");
}

fn runs(text: &str) -> Vec<(Style, String)> {
    let mut style = Style::default();
    styled(text, &mut style)
        .into_iter()
        .map(|r| (r.style, r.text))
        .collect()
}

fn fg(c: Colour) -> Style {
    Style {
        fg: Some(c),
        ..Style::default()
    }
}

#[test]
fn sgr_colours_become_styles_and_the_text_is_the_stripped_text() {
    let text = "\u{1b}[1;31merror\u{1b}[0m: \u{1b}[38;5;208mamber\u{1b}[m \u{1b}[38;2;1;2;3mrgb\u{1b}[39m end";
    let bold_red = Style {
        bold: true,
        ..fg(Colour::Indexed(1))
    };
    assert_eq!(
        runs(text),
        vec![
            (bold_red, "error".to_string()),
            (Style::default(), ": ".to_string()),
            (fg(Colour::Indexed(208)), "amber".to_string()),
            (Style::default(), " ".to_string()),
            (fg(Colour::Rgb(1, 2, 3)), "rgb".to_string()),
            (Style::default(), " end".to_string()),
        ]
    );
    let joined: String = runs(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(joined, strip(text));
}

#[test]
fn every_attribute_sets_and_resets() {
    let mut s = Style::default();
    s.apply("1;2;3;4;7;92;104");
    assert_eq!(
        s,
        Style {
            fg: Some(Colour::Indexed(10)),
            bg: Some(Colour::Indexed(12)),
            bold: true,
            dim: true,
            italic: true,
            underline: true,
            reverse: true,
        }
    );
    s.apply("22;23;24;27;39;49");
    assert_eq!(s, Style::default());
    s.apply("38:2::10:20:30;48:5:17");
    assert_eq!((s.fg, s.bg), (Some(Colour::Rgb(10, 20, 30)), Some(Colour::Indexed(17))));
    s.apply("");
    assert_eq!(s, Style::default());
}

/// Hostile or broken parameters change nothing they should not, and never panic or pass an escape on.
#[test]
fn hostile_sequences_are_dropped_or_ignored() {
    let mut s = Style::default();
    s.apply("38;5;999;38;2;300;1;1;99999999999999999999;48;5");
    assert_eq!(s, Style::default());
    s.apply("38;2;1;2");
    assert_eq!(s, Style::default());
    let long = format!("\u{1b}[{}mx", "1;".repeat(500));
    assert_eq!(runs(&long), vec![(Style::default(), "x".to_string())]);
    let cases = [
        "\u{1b}]0;evil title\u{7}ok",
        "\u{1b}]52;c;ZXZpbA==\u{7}ok",
        "\u{1b}[2J\u{1b}[Hok",
        "\u{1b}[?1049hok",
        "\u{1b}P+q\u{1b}\\ok",
        "\u{9b}6nok",
        "\u{1b}[31;\u{1b}]0;x\u{7}ok",
    ];
    for case in cases {
        let text: String = runs(case).into_iter().map(|(_, t)| t).collect();
        assert_eq!(text, "ok", "{case:?}");
        assert!(!only_sgr(case).contains(['\u{9b}', '\u{7}', ']']), "{case:?}");
    }
    // A private-mode `m` (`ESC [ > 4 ; 2 m`, a keyboard setting) is not a colour.
    assert_eq!(only_sgr("\u{1b}[>4;2mok"), "ok");
    assert_eq!(
        only_sgr("\u{1b}[1;31mred\u{1b}[0m\u{1b}[Kx"),
        "\u{1b}[1;31mred\u{1b}[0mx"
    );
}

#[test]
fn a_sequence_cut_at_the_end_of_a_chunk_is_found() {
    assert_eq!(incomplete_tail("red \u{1b}[3"), Some(4));
    assert_eq!(incomplete_tail("red \u{1b}"), Some(4));
    assert_eq!(incomplete_tail("x\u{1b}]0;title"), Some(1));
    assert_eq!(incomplete_tail("x\u{1b}]0;title\u{1b}"), Some(10));
    assert_eq!(incomplete_tail("red \u{1b}[31m"), None);
    assert_eq!(incomplete_tail("\u{1b}[31mred"), None);
    assert_eq!(incomplete_tail("plain"), None);
}

/// A key split by a colour code is whole in the stripped text, which is what masking looks at.
#[test]
fn a_key_split_by_a_colour_code_is_whole_once_stripped() {
    let text = "key=sk-abc\u{1b}[31mdef123\u{1b}[0m";
    assert_eq!(strip(text), "key=sk-abcdef123");
    let joined: String = runs(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(joined, "key=sk-abcdef123");
}
