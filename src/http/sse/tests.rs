//! The decoder on fixed samples, and fuzzed: any split of any input, any line-end style.

use super::*;

fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(decoder.feed(chunk).unwrap());
    }
    events.extend(decoder.finish());
    events
}

fn ev(event: &str, data: &str) -> SseEvent {
    SseEvent {
        event: event.into(),
        data: data.into(),
    }
}

const SAMPLE: &str = ": keep-alive comment\r\n\
    event: message_start\r\n\
    data: {\"type\":\"message_start\"}\r\n\
    \r\n\
    data: {\"text\":\"h\u{e9}llo \u{1F600} w\u{f6}rld\"}\n\
    \n\
    data: line one\r\
    data: line two\r\
    \r\
    event: ping\n\
    data:\n\
    \n\
    data:no-space\n\
    id: 7\n\
    retry: 1000\n\
    garbage line without colon\n\
    \n\
    data: [DONE]\n\n";

fn sample_events() -> Vec<SseEvent> {
    vec![
        ev("message_start", "{\"type\":\"message_start\"}"),
        ev("", "{\"text\":\"h\u{e9}llo \u{1F600} w\u{f6}rld\"}"),
        ev("", "line one\nline two"),
        ev("ping", ""),
        ev("", "no-space"),
        ev("", "[DONE]"),
    ]
}

#[test]
fn decodes_a_whole_stream() {
    assert_eq!(decode_all(&[SAMPLE.as_bytes()]), sample_events());
}

#[test]
fn any_split_point_gives_the_same_events() {
    let bytes = SAMPLE.as_bytes();
    for i in 0..=bytes.len() {
        let (a, b) = bytes.split_at(i);
        assert_eq!(decode_all(&[a, b]), sample_events(), "split at byte {i}");
    }
}

#[test]
fn byte_by_byte_and_three_way_splits() {
    let bytes = SAMPLE.as_bytes();
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode_all(&singles), sample_events());
    for i in (0..bytes.len()).step_by(7) {
        for j in (i..bytes.len()).step_by(5) {
            let parts = [&bytes[..i], &bytes[i..j], &bytes[j..]];
            assert_eq!(decode_all(&parts), sample_events(), "split at {i} and {j}");
        }
    }
}

#[test]
fn a_split_crlf_does_not_make_an_extra_blank_line() {
    // With "data: a\r" then "\ndata: b\r\n\r\n", the LF must not count as a second (dispatching) line end.
    let events = decode_all(&[b"data: a\r", b"\ndata: b\r\n\r\n"]);
    assert_eq!(events, vec![ev("", "a\nb")]);
}

#[test]
fn comments_and_blank_runs_dispatch_nothing() {
    assert!(decode_all(&[b":one\n\n:two\r\n\r\n\n\n\r\r"]).is_empty());
}

#[test]
fn event_name_without_data_is_not_dispatched_and_does_not_leak() {
    let events = decode_all(&[b"event: lonely\n\ndata: x\n\n"]);
    assert_eq!(events, vec![ev("", "x")]);
}

#[test]
fn unterminated_last_event_is_flushed_at_the_end() {
    assert_eq!(decode_all(&[b"data: [DONE]"]), vec![ev("", "[DONE]")]);
    assert_eq!(decode_all(&[b"data: a\n"]), vec![ev("", "a")]);
}

#[test]
fn a_leading_byte_order_mark_is_skipped() {
    assert_eq!(decode_all(&[b"\xEF\xBB\xBFdata: a\n\n"]), vec![ev("", "a")]);
}

#[test]
fn invalid_utf8_survives_lossily() {
    assert_eq!(decode_all(&[b"data: a\xFFb\n\n"]), vec![ev("", "a\u{FFFD}b")]);
}

#[test]
fn done_marker() {
    assert!(ev("", "[DONE]").is_done());
    assert!(!ev("", "{}").is_done());
}

#[test]
fn an_endless_line_is_refused() {
    let mut decoder = SseDecoder::new();
    let big = vec![b'x'; 1024 * 1024];
    let mut failed = false;
    for _ in 0..20 {
        if decoder.feed(&big).is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed);
}

#[test]
fn a_split_byte_order_mark_is_skipped_too() {
    let expected = vec![ev("", "a")];
    assert_eq!(decode_all(&[b"\xEF", b"\xBB\xBFdata: a\n\n"]), expected);
    assert_eq!(decode_all(&[b"\xEF\xBB", b"\xBF", b"data: a\n\n"]), expected);
    assert_eq!(
        decode_all(&[b"", b"\xEF", b"", b"\xBB", b"\xBF", b"data: a\n\n"]),
        expected
    );
    // Not a mark after all: the bytes held back are data.
    assert_eq!(decode_all(&[b"\xEF", b"data: a\n\n"]), vec![]);
    assert_eq!(decode_all(&[b"\xEF\xBB"]), vec![]);
    assert_eq!(decode_all(&[b"da", b"ta: a\n\n"]), expected);
    assert_eq!(decode_all(&[b"d"]), vec![]);
}

/// Fuzz-like runs over generated inputs. The case count comes from `PROPTEST_CASES` (256 by default); each property
/// prints how many inputs it tried, so a long run can be reported.
mod fuzz {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    use super::*;

    /// Pieces SSE streams are made of, so generated inputs hit fields, line ends, comments, the byte order mark,
    /// multi-byte characters and invalid UTF-8 far more often than uniform random bytes would.
    const PIECES: &[&[u8]] = &[
        b"data",
        b"data:",
        b"data: ",
        b"event",
        b"event: ",
        b"id: 1",
        b"retry: 5",
        b":",
        b": keep-alive",
        b" ",
        b"\n",
        b"\r",
        b"\r\n",
        b"\n\n",
        b"\r\n\r\n",
        b"\xEF\xBB\xBF",
        b"\xEF",
        b"\xBB\xBF",
        "é".as_bytes(),
        "🦀".as_bytes(),
        b"\xF0\x9F",
        b"\xFF",
        b"[DONE]",
        b"{\"type\":\"ping\"}",
        b"x",
    ];

    fn input() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            4 => proptest::sample::select(PIECES).prop_map(<[u8]>::to_vec),
            1 => any::<u8>().prop_map(|b| vec![b]),
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
    }

    /// Decodes `chunks` in order; the events, or the error of the first chunk refused.
    fn decode(chunks: &[&[u8]]) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(decoder.feed(chunk)?);
        }
        events.extend(decoder.finish());
        Ok(events)
    }

    /// Cuts `bytes` at the given positions (taken modulo its length, sorted, repeats giving empty chunks).
    fn split<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks = Vec::with_capacity(points.len() + 1);
        let mut start = 0;
        for point in points {
            chunks.push(&bytes[start..point]);
            start = point;
        }
        chunks.push(&bytes[start..]);
        chunks
    }

    fn run<S: Strategy>(name: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
        // Failing inputs are kept in `tests.regressions` beside this file and tried first on every later run; the
        // one there now is the split byte order mark the decoder once mishandled.
        let config = Config {
            source_file: Some(file!()),
            ..tern_testkit::fuzz_config(256)
        };
        let cases = config.cases;
        let mut runner = TestRunner::new(config);
        if let Err(e) = runner.run(&strategy, test) {
            panic!("{name}: {e}");
        }
        eprintln!("sse fuzz {name}: {cases} inputs, 0 failures");
    }

    #[test]
    fn any_split_decodes_like_the_whole_input() {
        let strategy = (input(), proptest::collection::vec(any::<usize>(), 0..12));
        run("split", strategy, |(bytes, cuts)| {
            let whole = decode(&[&bytes]);
            prop_assert_eq!(&decode(&split(&bytes, &cuts)), &whole);
            let singles: Vec<&[u8]> = bytes.chunks(1).collect();
            prop_assert_eq!(&decode(&singles), &whole);
            Ok(())
        });
    }

    #[derive(Debug, Clone, Copy)]
    enum Ending {
        Lf,
        Cr,
        CrLf,
    }

    impl Ending {
        fn bytes(self) -> &'static [u8] {
            match self {
                Ending::Lf => b"\n",
                Ending::Cr => b"\r",
                Ending::CrLf => b"\r\n",
            }
        }
    }

    /// One line of a stream, without its line end: any bytes but CR and LF, often a field.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        const PREFIXES: &[&[u8]] = &[b"", b"data: ", b"data:", b"event: ", b":", b"id: ", b"data"];
        let prefix = proptest::sample::select(PREFIXES);
        let body = proptest::collection::vec(
            prop_oneof![
                3 => proptest::sample::select(&b"ab :{}\"[]"[..]),
                // Mapped rather than filtered: a long run would exhaust proptest's budget of rejected values.
                1 => any::<u8>().prop_map(|b| if b == b'\n' || b == b'\r' { b'x' } else { b }),
            ],
            0..12,
        );
        (prefix, body).prop_map(|(prefix, body)| [prefix, &body[..]].concat())
    }

    /// Joins lines with one ending per line. An empty line after a CR cannot end in a lone LF: the two would read
    /// as a single CRLF line end, which is what the format says, so such a line gets a CRLF instead.
    fn join(lines: &[Vec<u8>], endings: &[Ending]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut previous = Ending::Lf;
        for (line, ending) in lines.iter().zip(endings.iter().cycle()) {
            let ending = match (previous, ending) {
                (Ending::Cr, Ending::Lf) if line.is_empty() => Ending::CrLf,
                (_, e) => *e,
            };
            out.extend_from_slice(line);
            out.extend_from_slice(ending.bytes());
            previous = ending;
        }
        out
    }

    #[test]
    fn line_end_styles_are_equivalent() {
        let ending = prop_oneof![Just(Ending::Lf), Just(Ending::Cr), Just(Ending::CrLf)];
        let strategy = (
            proptest::collection::vec(line(), 0..30),
            proptest::collection::vec(ending, 1..30),
            proptest::collection::vec(any::<usize>(), 0..8),
        );
        run("line-ends", strategy, |(lines, mixed, cuts)| {
            let lf = decode(&[&join(&lines, &[Ending::Lf])]);
            prop_assert_eq!(&decode(&[&join(&lines, &[Ending::Cr])]), &lf);
            prop_assert_eq!(&decode(&[&join(&lines, &[Ending::CrLf])]), &lf);
            let mixed = join(&lines, &mixed);
            prop_assert_eq!(&decode(&split(&mixed, &cuts)), &lf);
            Ok(())
        });
    }
}
