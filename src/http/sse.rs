//! An incremental decoder for Server-Sent Events (the WHATWG `text/event-stream` format), shared by the model
//! providers and the MCP SSE transport. It is fed whatever byte chunks the network delivers, split anywhere (inside a
//! UTF-8 character or a byte order mark, between the CR and LF of a line end), and yields complete events: the same
//! events whatever the split. It knows nothing about any payload and does no I/O.

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

/// The most room kept for the next line that arrives split across chunks.
const KEPT_LINE_CAPACITY: usize = 64 * 1024;

/// The UTF-8 byte order mark, which the format allows (and ignores) at the very start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

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
    /// The first bytes of the stream while they may still be the start of a byte order mark.
    head: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk of the body and returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut out = Vec::new();
        self.feed_into(chunk, &mut out)?;
        Ok(out)
    }

    /// `feed`, with the events added to `out` (a caller reading many chunks keeps one list for all of them). On an
    /// error, `out` may hold events that came before it in the chunk.
    pub fn feed_into(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), EventTooLarge> {
        if self.started {
            return self.feed_lines(chunk, out);
        }
        // A byte order mark may arrive split across chunks: hold the first bytes until they are known to be one or not.
        let mut head = std::mem::take(&mut self.head);
        head.extend_from_slice(chunk);
        if head.len() < BOM.len() && BOM.starts_with(&head) {
            self.head = head;
            return Ok(());
        }
        self.started = true;
        self.feed_lines(head.strip_prefix(BOM).unwrap_or(&head), out)
    }

    fn feed_lines(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), EventTooLarge> {
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', chunk) {
            let (head, rest) = chunk.split_at(pos);
            // Checked on whole lines as well as on the unfinished rest, so the limit does not depend on the split.
            if self.line.len() + head.len() > MAX_EVENT_BYTES {
                return Err(EventTooLarge);
            }
            let is_cr = rest.first() == Some(&b'\r');
            chunk = rest.get(1..).unwrap_or_default();
            if is_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = chunk.get(1..).unwrap_or_default(),
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            if self.line.is_empty() {
                // The whole line is in this chunk (the usual case): read in place.
                self.process_line(head, out)?;
            } else {
                // The line began in an earlier chunk; its buffer is kept (emptied) for the next such line, unless
                // a long line made it large.
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                let processed = self.process_line(&line, out);
                if line.capacity() <= KEPT_LINE_CAPACITY {
                    line.clear();
                    self.line = line;
                }
                processed?;
            }
        }
        if self.line.len() + chunk.len() > MAX_EVENT_BYTES {
            return Err(EventTooLarge);
        }
        self.line.extend_from_slice(chunk);
        Ok(())
    }

    /// The body ended: processes an unterminated last line and dispatches a pending event, so a server that omits
    /// the final blank line still delivers its last event. Whether the stream was complete is for the caller to say.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.started {
            // The body was shorter than a byte order mark: what arrived is an ordinary (unterminated) line.
            self.started = true;
            self.line = std::mem::take(&mut self.head);
        }
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
mod tests;
