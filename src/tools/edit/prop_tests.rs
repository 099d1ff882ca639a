//! Property tests of the edit engine: an edit followed by its inverse restores the file byte for byte (LF and CRLF),
//! a whitespace-tolerant edit keeps every other line and each line's indentation, and no input makes it panic. The
//! last block is the fuzz target for edit matching: files and edits of mixed line endings, tabs, unicode and
//! typographic quotes; an edit that applies puts new_text in the file and leaves the lines around its match alone.

use proptest::prelude::*;
use proptest::sample::Index;

use super::text::{lf, plain};
use super::{EditRequest, Strategy as Matched, apply_edit};
use tern_testkit::fuzz_config as config;

fn content(sep: &'static str) -> impl proptest::strategy::Strategy<Value = String> {
    (prop::collection::vec("[ a-d'\"(){};=\t]{0,10}", 1..12), any::<bool>()).prop_map(move |(lines, trailing)| {
        let mut s = lines.join(sep);
        if trailing {
            s.push_str(sep);
        }
        s
    })
}

fn occurrences(haystack: &str, needle: &str) -> usize {
    (0..haystack.len())
        .filter(|&i| haystack[i..].starts_with(needle))
        .count()
}

fn splits_crlf(s: &str, at: usize) -> bool {
    at > 0 && s.as_bytes().get(at - 1) == Some(&b'\r') && s.as_bytes().get(at) == Some(&b'\n')
}

/// Replaces a random unique substring by `new`, then `new` by the substring, and expects the original bytes back.
fn check_inverse(content: &str, a: Index, b: Index, new: &str) -> Result<(), TestCaseError> {
    let (mut i, mut j) = (a.index(content.len() + 1), b.index(content.len() + 1));
    if i > j {
        std::mem::swap(&mut i, &mut j);
    }
    prop_assume!(i < j && !splits_crlf(content, i) && !splits_crlf(content, j));
    let old = &content[i..j];
    let (norm, old_lf) = (content.replace("\r\n", "\n"), old.replace("\r\n", "\n"));
    prop_assume!(occurrences(&norm, &old_lf) == 1 && old_lf != new);
    let first = apply_edit(content, &EditRequest::new(old, new));
    prop_assert!(first.is_ok(), "edit failed: {:?}", first);
    let edited = first.map(|o| o.content).unwrap_or_default();
    prop_assume!(occurrences(&edited.replace("\r\n", "\n"), new) == 1);
    let back = apply_edit(&edited, &EditRequest::new(new, old));
    prop_assert!(back.is_ok(), "inverse failed: {:?}", back);
    prop_assert_eq!(back.map(|o| o.content).unwrap_or_default(), content);
    Ok(())
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn inverse_edit_restores_lf_files(
        content in content("\n"), a in any::<Index>(), b in any::<Index>(), new in "[ a-e\n'\"]{1,15}",
    ) {
        check_inverse(&content, a, b, &new)?;
    }

    #[test]
    fn inverse_edit_restores_crlf_files(
        content in content("\r\n"), a in any::<Index>(), b in any::<Index>(), new in "[ a-e\n'\"]{1,15}",
    ) {
        check_inverse(&content, a, b, &new)?;
    }

    /// old_text given without indentation still edits exactly the intended lines, each keeping its indentation.
    #[test]
    fn whitespace_tolerant_edit_keeps_indentation_and_other_lines(
        lines in prop::collection::vec(("[ \t]{0,6}", "[a-f(){};=]{1,8}"), 2..14),
        a in any::<Index>(), b in any::<Index>(),
    ) {
        let file_lines: Vec<String> = lines.iter().map(|(indent, body)| format!("{indent}{body}")).collect();
        let content = file_lines.join("\n") + "\n";
        let (mut i, mut j) = (a.index(file_lines.len()), b.index(file_lines.len()));
        if i > j {
            std::mem::swap(&mut i, &mut j);
        }
        let old: Vec<&str> = lines[i..=j].iter().map(|(_, body)| body.as_str()).collect();
        let new: Vec<String> = old.iter().map(|body| format!("{body}X")).collect();
        let out = apply_edit(&content, &EditRequest::new(old.join("\n"), new.join("\n")));
        // Another place may match too, or match exactly and win (the ambiguity error is tested elsewhere).
        prop_assume!(matches!(&out, Ok(o) if o.lines == vec![i + 1]));
        let mut expected = file_lines.clone();
        for line in &mut expected[i..=j] {
            line.push('X');
        }
        prop_assert_eq!(out.map(|o| o.content).unwrap_or_default(), expected.join("\n") + "\n");
    }

    /// Whatever the text and the request, the engine answers instead of panicking (byte offsets, CR, BOM, quotes).
    #[test]
    fn never_panics(
        content in "[ab \t\r\n'\"‘’“”—\u{feff}é]{0,40}",
        old in "[ab \t\r\n'\"‘’“”—é]{0,8}",
        new in "[ab \t\r\n'\"é]{0,8}",
        replace_all in any::<bool>(),
        occurrence in prop::option::of(0usize..4),
        line_hint in prop::option::of(0usize..6),
        expected in prop::option::of(0usize..4),
    ) {
        let req = EditRequest {
            replace_all,
            occurrence,
            line_hint,
            expected_replacements: expected,
            ..EditRequest::new(old, new)
        };
        let _ = apply_edit(&content, &req);
    }
}

/// A line of characters that trip matching up: indentation, quotes straight and curly, dashes, non-breaking space,
/// multi-byte.
fn line() -> impl proptest::strategy::Strategy<Value = String> {
    "[ab \t'\"‘’“”—\\-\u{a0}é中😀]{0,10}"
}

/// A file: lines joined by LF, CRLF, or a mix; maybe a final line ending; maybe a BOM.
fn file() -> impl proptest::strategy::Strategy<Value = String> {
    let ending = prop_oneof![Just("\n"), Just("\r\n")];
    (prop::collection::vec((line(), ending), 1..10), 0..3u8, any::<bool>()).prop_map(|(lines, style, bom)| {
        let mut text = String::from(if bom { "\u{feff}" } else { "" });
        let count = lines.len();
        for (i, (line, mixed)) in lines.into_iter().enumerate() {
            text.push_str(&line);
            if i + 1 < count || style > 0 {
                text.push_str(match style {
                    1 => "\r\n",
                    _ if i % 2 == 0 => mixed,
                    _ => "\n",
                });
            }
        }
        text
    })
}

/// old_text: a piece of the file (whole lines or a substring), as the model might send it back (indentation
/// dropped, quotes made plain, CRLF made LF), or unrelated text.
fn old_text(content: &str, a: Index, b: Index, how: u8) -> String {
    let chars: Vec<char> = content.trim_start_matches('\u{feff}').chars().collect();
    let (mut i, mut j) = (a.index(chars.len() + 1), b.index(chars.len() + 1));
    if i > j {
        std::mem::swap(&mut i, &mut j);
    }
    let piece: String = chars[i..j].iter().collect();
    match how {
        0 => piece,
        1 => piece.lines().map(str::trim_start).collect::<Vec<_>>().join("\n"),
        2 => plain(&piece).into_owned(),
        3 => piece.replace("\r\n", "\n"),
        _ => piece.replace('\'', "’"),
    }
}

/// The file's lines, each with its own ending.
fn file_lines(content: &str) -> Vec<&str> {
    content.split_inclusive('\n').collect()
}

fn without_ending(text: &str) -> &str {
    text.strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(text)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn fuzz_never_panics(
        content in file(),
        old in line(),
        new in "[ab \t\r\n'’“—é😀]{0,12}",
        replace_all in any::<bool>(),
        occurrence in prop::option::of(0usize..4),
        line_hint in prop::option::of(0usize..12),
        expected in prop::option::of(0usize..4),
    ) {
        let req = EditRequest { replace_all, occurrence, line_hint, expected_replacements: expected, ..EditRequest::new(old, new) };
        let _ = apply_edit(&content, &req);
    }

    /// An edit that applies leaves every line before its match and every line after the lines old_text spans
    /// byte for byte (a deletion may take the line break before it), and new_text is in the result: exactly,
    /// or line by line up to indentation and quote style for the tolerant strategies.
    #[test]
    fn applied_edit_has_new_text_and_keeps_the_rest(
        content in file(),
        a in any::<Index>(),
        b in any::<Index>(),
        how in 0u8..6,
        new in "[ab \t\n'\"’“—é中]{0,16}",
    ) {
        let old = if how == 5 { "a’b".to_string() } else { old_text(&content, a, b, how) };
        let Ok(out) = apply_edit(&content, &EditRequest::new(old.clone(), new.clone())) else {
            return Ok(());
        };
        prop_assert_eq!(out.lines.len(), 1);
        if out.strategy == Matched::Fill {
            prop_assert!(out.content.ends_with(&new));
            return Ok(());
        }
        let first = out.lines[0] - 1;
        let lines = file_lines(&content);
        let before: String = lines[..first].concat();
        let span = lf(&old).matches('\n').count() + 1;
        let after: String = lines[(first + span).min(lines.len())..].concat();
        let kept_before = if new.is_empty() { without_ending(&before) } else { before.as_str() };
        prop_assert!(out.content.starts_with(kept_before), "before the match changed: {:?}", out.content);
        prop_assert!(out.content.ends_with(&after), "after the match changed: {:?}", out.content);
        let result = lf(&out.content);
        if out.strategy == Matched::Exact {
            prop_assert!(result.contains(lf(&new).as_ref()), "{:?} not in {:?}", new, out.content);
        } else {
            let result = plain(&result);
            for piece in new.lines().map(|l| plain(l.trim()).into_owned()).filter(|l| !l.is_empty()) {
                prop_assert!(result.contains(&piece), "{:?} not in {:?} ({:?})", piece, out.content, out.strategy);
            }
        }
    }
}
/// Found by `applied_edit_has_new_text_and_keeps_the_rest`: a blank old_text line in a plain-lines match made the
/// file's view of old_text one char longer, so new_text took a char from the wrong place ("'" became "中").
#[test]
fn blank_line_in_a_plain_lines_match_keeps_new_text() {
    let content = "中\r\n\u{a0}\r\n“中\"\t中' 中\r\n";
    let out = apply_edit(content, &EditRequest::new(" \n\"中\"\t中' 中", "'"));
    let out = out.map(|o| (o.content, o.strategy));
    assert_eq!(out, Ok(("中\r\n'\r\n".to_string(), Matched::PlainLines)));
}
