use super::*;
use tern_text::ansi::Colour;

fn red() -> Style {
    Style {
        fg: Some(Colour::Indexed(1)),
        ..Style::default()
    }
}

#[test]
fn a_line_keeps_its_text_and_where_each_colour_starts() {
    let mut style = Style::default();
    let line = StyledLine::parse("ok \u{1b}[31mred\u{1b}[0m plain \u{1b}[31mstill", &mut style);
    assert_eq!(line.text, "ok red plain still");
    let runs: Vec<(&str, Style)> = line.runs().collect();
    assert_eq!(
        runs,
        [
            ("ok ", Style::default()),
            ("red", red()),
            (" plain ", Style::default()),
            ("still", red())
        ]
    );
    // The colour goes on into the next line, as in a terminal.
    assert_eq!(style, red());
    let next = StyledLine::parse("more\u{1b}[0m", &mut style);
    assert_eq!(next.runs().collect::<Vec<_>>(), [("more", red())]);
    assert!(!StyledLine::unstyled("plain").coloured());
    assert!(StyledLine::unstyled("plain").styles.is_empty());
}

#[test]
fn carriage_returns_leave_the_last_state_of_the_line() {
    let mut style = Style::default();
    let line = StyledLine::parse("\u{1b}[31m 10%\r 50%\r\u{1b}[0mdone \u{1b}[31m100%\r", &mut style);
    assert_eq!(line.text, "done 100%");
    assert_eq!(
        line.runs().collect::<Vec<_>>(),
        [("done ", Style::default()), ("100%", red())]
    );
    let line = StyledLine::parse("\u{1b}[31mred 1\rred 2", &mut Style::default());
    assert_eq!(line.runs().collect::<Vec<_>>(), [("red 2", red())]);
}

#[test]
fn a_result_line_takes_the_colours_of_the_live_line_with_its_text() {
    let coloured = vec![StyledLine::parse(
        "\u{1b}[31mFAIL\u{1b}[0m: test_a",
        &mut Style::default(),
    )];
    let shown = StyledLine::of_result("FAIL: test_a", &coloured);
    assert_eq!(
        shown.runs().collect::<Vec<_>>(),
        [("FAIL", red()), (": test_a", Style::default())]
    );
    let other = StyledLine::of_result("50%\rFAIL: test_b\r", &coloured);
    assert_eq!(other.runs().collect::<Vec<_>>(), [("FAIL: test_b", Style::default())]);
}
