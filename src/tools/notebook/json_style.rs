//! Writing a notebook back the way it was written: the same indentation (Jupyter uses one space), the same choice
//! between raw UTF-8 and `\uXXXX` escapes, the same trailing newline. Untouched cells then come out byte for byte as
//! they were, so the diff shows only the edit.

use std::io::Write;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct JsonStyle {
    /// The indentation of one level, `None` for JSON on one line.
    pub indent: Option<Vec<u8>>,
    /// Non-ASCII characters are written as `\uXXXX` (Python's `ensure_ascii=True`).
    pub ascii: bool,
    pub trailing_newline: bool,
}

impl JsonStyle {
    pub(crate) fn detect(text: &str) -> JsonStyle {
        let body = text.trim_end_matches(['\n', '\r']);
        // The first line break is right after the opening brace; the next line's leading whitespace is one level.
        let indent = body.find('\n').map(|at| {
            let next = body.get(at + 1..).unwrap_or("");
            next.bytes()
                .take_while(|b| *b == b' ' || *b == b'\t')
                .collect::<Vec<u8>>()
        });
        JsonStyle {
            indent: indent.filter(|i| !i.is_empty()),
            ascii: text.is_ascii() && has_non_ascii_escape(text),
            trailing_newline: text.ends_with('\n'),
        }
    }

    pub(crate) fn render(&self, value: &impl Serialize) -> serde_json::Result<String> {
        let mut out = Vec::new();
        match &self.indent {
            Some(indent) => {
                let pretty = PrettyFormatter::with_indent(indent);
                write_with(
                    &mut out,
                    value,
                    Escaping {
                        inner: pretty,
                        ascii: self.ascii,
                    },
                )?;
            }
            None => write_with(
                &mut out,
                value,
                Escaping {
                    inner: CompactFormatter,
                    ascii: self.ascii,
                },
            )?,
        }
        if self.trailing_newline {
            out.push(b'\n');
        }
        // serde_json only ever writes UTF-8.
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

fn write_with<F: Formatter>(out: &mut Vec<u8>, value: &impl Serialize, formatter: F) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, formatter);
    value.serialize(&mut ser)
}

/// A `\u` escape of a character beyond ASCII somewhere in the text.
fn has_non_ascii_escape(text: &str) -> bool {
    text.match_indices("\\u").any(|(at, _)| {
        text.get(at + 2..at + 6)
            .and_then(|hex| u16::from_str_radix(hex, 16).ok())
            .is_some_and(|unit| unit >= 0x80)
    })
}

/// A formatter that lays out like `inner` and, when `ascii` is set, escapes every non-ASCII character.
struct Escaping<F> {
    inner: F,
    ascii: bool,
}

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> std::io::Result<()> {
        if !self.ascii || fragment.is_ascii() {
            return writer.write_all(fragment.as_bytes());
        }
        let mut units = [0u16; 2];
        for c in fragment.chars() {
            if c.is_ascii() {
                writer.write_all(&[c as u8])?;
            } else {
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_array(w)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.inner.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_array_value(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_object(w)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object(w)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.inner.begin_object_key(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object_key(w)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.inner.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn roundtrip(text: &str) -> String {
        let value: Value = serde_json::from_str(text).unwrap();
        JsonStyle::detect(text).render(&value).unwrap()
    }

    #[test]
    fn jupyter_layout_survives_a_roundtrip() {
        let text = "{\n \"cells\": [\n  {\n   \"a\": [],\n   \"b\": {},\n   \"z\": \"é\\n\"\n  }\n ],\n \"n\": 4\n}\n";
        assert_eq!(roundtrip(text), text);
        let style = JsonStyle::detect(text);
        assert_eq!(
            (style.indent.as_deref(), style.ascii, style.trailing_newline),
            (Some(&b" "[..]), false, true)
        );
    }

    #[test]
    fn other_indents_compact_and_no_trailing_newline() {
        let two = "{\n  \"k\": [\n    1,\n    2\n  ]\n}";
        assert_eq!(roundtrip(two), two);
        let tab = "{\n\t\"k\": true\n}\n";
        assert_eq!(roundtrip(tab), tab);
        let compact = "{\"k\":[1,{\"x\":null}]}";
        assert_eq!(roundtrip(compact), compact);
    }

    #[test]
    fn ascii_escapes_are_kept_when_the_file_uses_them() {
        let text = "{\n \"s\": \"caf\\u00e9 \\ud83d\\ude00\",\n \"t\": \"\\u001b\"\n}\n";
        assert_eq!(roundtrip(text), text);
        let style = JsonStyle::detect(text);
        assert!(style.ascii);
        let rendered = style.render(&serde_json::json!({"s": "naïve 😀"})).unwrap();
        assert_eq!(rendered, "{\n \"s\": \"na\\u00efve \\ud83d\\ude00\"\n}\n");
        // Only escapes of non-ASCII characters decide; a control-character escape does not.
        assert!(!JsonStyle::detect("{\"t\": \"\\u001b\"}").ascii);
    }
}
