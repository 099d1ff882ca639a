use std::borrow::Cow;
use std::io::Write;

use super::{CleanWriter, Stream, clean, reveal};

/// Whether `s` holds anything a terminal would act on rather than print.
fn acts(s: &str) -> bool {
    s.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || super::is_bidi_control(c))
}

#[test]
fn every_c0_del_and_c1_is_shown_not_passed() {
    for code in (0u32..0x20).chain([0x7f]).chain(0x80..0xa0) {
        let c = char::from_u32(code).unwrap();
        let text = format!("a{c}b");
        let cleaned = clean(&text);
        if c == '\n' || c == '\t' {
            assert_eq!(cleaned, text, "{code:#x} stays");
            continue;
        }
        assert!(!acts(&cleaned), "{code:#x} passed: {cleaned:?}");
        assert!(cleaned.starts_with('a') && cleaned.ends_with('b'), "{cleaned:?}");
        assert!(
            cleaned.chars().count() > 2,
            "{code:#x} dropped instead of shown: {cleaned:?}"
        );
    }
    assert_eq!(clean("\x1b"), "␛");
    assert_eq!(clean("\x7f"), "␡");
    assert_eq!(clean("\0\x07\r"), "␀␇␍");
    assert_eq!(clean("\u{9b}31m"), "\\u{9b}31m");
}

#[test]
fn escape_sequences_are_shown_whole() {
    // OSC 52 (clipboard), OSC 0 (title), CSI (cursor up, erase line), DCS and an 8-bit CSI.
    let osc52 = "\x1b]52;c;cm0gLXJmIH4=\x07";
    assert_eq!(clean(osc52), "␛]52;c;cm0gLXJmIH4=␇");
    assert_eq!(clean("\x1b]0;pwned\x1b\\"), "␛]0;pwned␛\\");
    assert_eq!(clean("ok\x1b[1A\x1b[2Kfake"), "ok␛[1A␛[2Kfake");
    assert_eq!(clean("\x1bP+q\x1b\\"), "␛P+q␛\\");
    assert_eq!(clean("\u{9d}0;t\u{9c}"), "\\u{9d}0;t\\u{9c}");
}

#[test]
fn bidi_controls_are_shown_by_both() {
    for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
        let text = format!("x{c}y");
        let want = format!("x\\u{{{:x}}}y", c as u32);
        assert_eq!(clean(&text), want);
        assert_eq!(reveal(&text), (Cow::Owned(want), 1));
    }
}

#[test]
fn valid_text_is_borrowed_unchanged() {
    for text in [
        "",
        "plain ascii, with punctuation ~!@#$%^&*()",
        "two\nlines\tand a tab",
        "héllo wörld — “quotes” … 日本語 한국어 العربية",
        "emoji with joiners: 👩‍👩‍👧 🐻‍❄️ 👍🏽",
    ] {
        assert!(matches!(clean(text), Cow::Borrowed(t) if t == text), "{text:?}");
    }
    let text = "ls -la src/ && cargo test\n";
    assert!(matches!(reveal(text), (Cow::Borrowed(t), 0) if t == text));
}

#[test]
fn reveal_shows_what_bash_reads_but_eyes_miss() {
    // A zero-width space, a tab, a no-break space, a right-to-left override, a BOM and a tag character.
    let (shown, n) = reveal("rm\u{200b} -rf\t/\u{a0}x\u{202e}y\u{feff}\u{e0041}");
    assert_eq!(shown, "rm\\u{200b} -rf␉/\\u{a0}x\\u{202e}y\\u{feff}\\u{e0041}");
    assert_eq!(n, 6);
    // Only the tab and invisible characters differ from `clean`; control characters are counted too.
    assert_eq!(reveal("a\x1b[2Jb"), (Cow::Owned("a␛[2Jb".to_string()), 1));
    assert_eq!(reveal("line one\nline two"), (Cow::Borrowed("line one\nline two"), 0));
    // Accents, scripts and visible punctuation are left alone.
    assert_eq!(reveal("echo café 日本"), (Cow::Borrowed("echo café 日本"), 0));
    // ZWJ is shown in the prompt, while `clean` keeps it (emoji need it).
    assert_eq!(reveal("a\u{200d}b").1, 1);
    assert_eq!(clean("a\u{200d}b"), "a\u{200d}b");
}

#[test]
fn the_writer_cleans_text_across_split_writes() {
    let mut out = Vec::new();
    let text = "é\x1b]52;c;aGk=\x07ü\u{9b}2J".as_bytes();
    {
        let mut w = CleanWriter::new(&mut out, Stream::Text);
        // One byte a write: every multi-byte character arrives in pieces.
        for b in text {
            w.write_all(&[*b]).unwrap();
        }
        w.flush().unwrap();
    }
    assert_eq!(String::from_utf8(out).unwrap(), "é␛]52;c;aGk=␇ü\\u{9b}2J");
}

#[test]
fn the_writer_shows_bytes_that_are_not_utf8() {
    let mut out = Vec::new();
    CleanWriter::new(&mut out, Stream::Text)
        .write_all(b"a\x9b31mb\xffc")
        .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "a\\x9b31mb\\xffc");
}

#[test]
fn json_stays_json_and_holds_no_raw_control() {
    let value = serde_json::json!({"text": "a\x1b]0;t\x07b\x7f\u{9b}c\u{202e}d", "n": 1});
    let line = serde_json::to_string(&value).unwrap();
    let mut out = Vec::new();
    CleanWriter::new(&mut out, Stream::Json)
        .write_all(line.as_bytes())
        .unwrap();
    let written = String::from_utf8(out).unwrap();
    assert!(!acts(&written), "{written:?}");
    let back: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(back, value, "the same value reads back");
}

#[test]
fn one_cell_keeps_each_character_to_one_cell() {
    assert_eq!(super::one_cell("x"), "x");
    assert!(matches!(super::one_cell("👍🏽"), Cow::Borrowed(_)));
    assert_eq!(super::one_cell("\x1b"), "␛");
    assert_eq!(super::one_cell("\u{9b}"), "\u{fffd}");
    assert_eq!(super::one_cell("a\u{202e}"), "a\u{fffd}");
}
