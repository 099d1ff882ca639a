//! An incremental decoder for Server-Sent Events (the WHATWG `text/event-stream` format) as both providers stream
//! them. It is fed whatever byte chunks the network delivers, split anywhere (inside a UTF-8 character, between the
//! CR and LF of a line end), and yields complete events. It knows nothing about either provider's payloads.

/// One dispatched event: its `event:` name (empty when none was given) and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

impl SseEvent {
    /// The OpenAI-style end-of-stream marker.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// The largest event (or single line) kept in memory. A server that never ends a line must not exhaust memory.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event in the stream exceeds {} MiB", MAX_EVENT_BYTES / (1024 * 1024))]
pub struct EventTooLarge;

#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The previous chunk ended with CR: a LF at the start of the next one belongs to that line end.
    after_cr: bool,
    /// Whether the stream start (where a byte order mark may sit) has been passed.
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk of the body and returns the events it completed, in order.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut out = Vec::new();
        if !self.started && !chunk.is_empty() {
            // A BOM may itself arrive split; only strip it when it is whole in the first chunk, which is what servers
            // that send one do.
            self.started = true;
            if let Some(rest) = chunk.strip_prefix(b"\xEF\xBB\xBF") {
                chunk = rest;
            }
        }
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, rest) = chunk.split_at(pos);
            self.line.extend_from_slice(head);
            let is_cr = rest.first() == Some(&b'\r');
            chunk = rest.get(1..).unwrap_or_default();
            if is_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = chunk.get(1..).unwrap_or_default(),
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out)?;
        }
        if self.line.len() + chunk.len() > MAX_EVENT_BYTES {
            return Err(EventTooLarge);
        }
        self.line.extend_from_slice(chunk);
        Ok(out)
    }

    /// The body ended: processes an unterminated last line and dispatches a pending event, so a server that omits
    /// the final blank line still delivers its last event. Whether the stream was complete is for the caller to say.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            // Cannot exceed the limit: `line` was already bounded by `feed`.
            let _ = self.process_line(&line, &mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), EventTooLarge> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.first() == Some(&b':') {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = line.get(i + 1..).unwrap_or_default();
                (
                    line.get(..i).unwrap_or_default(),
                    value.strip_prefix(b" ").unwrap_or(value),
                )
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() > MAX_EVENT_BYTES {
                    return Err(EventTooLarge);
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            // `id` and `retry` steer browser reconnection, which does not apply to a POST; other fields are ignored
            // as the format requires.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
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
}
