//! Text from a fetched body: UTF-8, or windows-1252 when the page says it is Latin-1 or windows-1252 (the WHATWG
//! encoding standard reads all the Latin-1 labels as windows-1252). Those two cover nearly every page; anything else
//! is read as UTF-8 with replacement characters rather than guessed at.

/// Where windows-1252 differs from Latin-1: 0x80..=0x9F. Unassigned bytes keep their C1 code point, as WHATWG says.
const CP1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž', '\u{8f}', '\u{90}', '‘', '’',
    '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}', 'ž', 'Ÿ',
];

/// Labels of windows-1252 in the encoding standard.
const CP1252_LABELS: &[&str] = &[
    "windows-1252",
    "cp1252",
    "x-cp1252",
    "iso-8859-1",
    "iso8859-1",
    "iso_8859-1",
    "latin1",
    "l1",
    "us-ascii",
    "ascii",
    "cp819",
    "ibm819",
];

/// The body as text, by the charset of the content type, else of a `<meta>` near the top of the page.
pub fn decode(body: &[u8], content_type: &str) -> String {
    let label = charset_param(content_type).or_else(|| meta_charset(body));
    match label {
        Some(label) if CP1252_LABELS.contains(&label.as_str()) => body.iter().map(|&b| cp1252(b)).collect(),
        _ => String::from_utf8_lossy(body).into_owned(),
    }
}

fn cp1252(byte: u8) -> char {
    match byte {
        0x80..=0x9f => CP1252_HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

/// `charset=...` in a content type, lower case, without quotes.
fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        (name.trim().eq_ignore_ascii_case("charset"))
            .then(|| value.trim().trim_matches('"').trim_matches('\'').to_ascii_lowercase())
    })
}

/// The charset a page declares in its first 1024 bytes (`<meta charset="...">` or the `http-equiv` form).
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_pages_are_read_as_windows_1252() {
        assert_eq!(
            decode(b"caf\xe9 \x80 \x93x\x94", "text/html; charset=ISO-8859-1"),
            "café € “x”"
        );
        assert_eq!(
            decode(b"<meta charset=\"windows-1252\"><p>na\xefve", "text/html"),
            "<meta charset=\"windows-1252\"><p>naïve"
        );
        assert_eq!(
            decode(
                b"<meta http-equiv=content-type content='text/html; charset=latin1'>\xe0",
                ""
            ),
            "<meta http-equiv=content-type content='text/html; charset=latin1'>à"
        );
    }

    #[test]
    fn utf8_and_unknown_charsets_are_read_as_utf8() {
        assert_eq!(decode("café".as_bytes(), "text/html; charset=utf-8"), "café");
        assert_eq!(decode("café".as_bytes(), "text/plain"), "café");
        assert_eq!(decode(b"caf\xe9", "text/plain; charset=shift_jis"), "caf\u{fffd}");
    }
}
