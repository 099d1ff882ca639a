//! Text from a fetched body, in the encoding the page declares (its content type's `charset`, else a `<meta>` near the
//! top), as the WHATWG encoding standard reads labels (`encoding_rs`, which ripgrep's searcher already uses): all the
//! Latin-1 labels are windows-1252, a byte order mark wins over a label, and a page that declares nothing or an
//! unknown label is read as UTF-8 with replacement characters rather than guessed at.

use encoding_rs::{Encoding, UTF_8};

/// The body as text, by the charset of the content type, else of a `<meta>` near the top of the page.
pub(crate) fn decode(body: &[u8], content_type: &str) -> String {
    let label = charset_param(content_type).or_else(|| meta_charset(body));
    let encoding = label
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .unwrap_or(UTF_8);
    encoding.decode(body).0.into_owned()
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
        assert_eq!(
            decode(b"caf\xe9", "text/plain; charset=x-no-such-charset"),
            "caf\u{fffd}"
        );
    }

    #[test]
    fn other_declared_charsets_are_decoded_and_a_byte_order_mark_wins() {
        assert_eq!(decode(b"\x93\xfa\x96\x7b", "text/plain; charset=Shift_JIS"), "日本");
        assert_eq!(
            decode(b"<meta charset=koi8-r>\xf0\xd2\xc9", ""),
            "<meta charset=koi8-r>При"
        );
        assert_eq!(decode(b"\xef\xbb\xbfcaf\xc3\xa9", "text/html; charset=latin1"), "café");
    }
}
