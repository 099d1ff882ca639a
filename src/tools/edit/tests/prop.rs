//! Property tests of the edit engine: an edit followed by its inverse restores the file byte for byte (LF and CRLF),
//! a whitespace-tolerant edit keeps every other line and each line's indentation, and no input makes it panic.

use proptest::prelude::*;
use proptest::sample::Index;

use super::{EditRequest, apply_edit};

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
    #![proptest_config(ProptestConfig::with_cases(400))]

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
