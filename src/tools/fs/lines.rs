//! Reading a file line by line without ever holding more than one buffer and the kept part of one line: a line of a
//! gigabyte costs as much memory as a line of a kilobyte. Newlines are found with std's memchr-backed `skip_until`, and
//! the cancellation token is checked once per buffer, so even one enormous line can be interrupted.

use std::hash::Hasher;
use std::io::{BufRead, Read};

use tokio_util::sync::CancellationToken;

/// Why reading stopped early.
#[derive(Debug)]
pub(super) enum LineError {
    Io(std::io::Error),
    Cancelled,
}

impl From<std::io::Error> for LineError {
    fn from(e: std::io::Error) -> Self {
        LineError::Io(e)
    }
}

/// What one line held. `chars` counts the characters of the text without its line ending (invalid UTF-8 bytes count
/// as one each, roughly what lossy decoding shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LineInfo {
    pub chars: u64,
    /// The kept bytes are the whole text of the line.
    pub complete: bool,
}

pub(super) struct LineReader<R> {
    inner: R,
    cancel: CancellationToken,
    consumed: u64,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(inner: R, cancel: CancellationToken) -> Self {
        Self {
            inner,
            cancel,
            consumed: 0,
        }
    }

    /// Bytes consumed so far (after any transcoding).
    #[cfg(test)]
    pub(crate) fn consumed(&self) -> u64 {
        self.consumed
    }

    /// True when nothing follows what was consumed.
    pub(crate) fn at_eof(&mut self) -> Result<bool, LineError> {
        Ok(self.inner.fill_buf()?.is_empty())
    }

    /// Skips one line. `false` at end of file.
    pub(crate) fn skip_line(&mut self) -> Result<bool, LineError> {
        let mut any = false;
        loop {
            let chunk = self.fill()?;
            if chunk.is_empty() {
                return Ok(any);
            }
            any = true;
            let (len, ended) = match find_newline(chunk) {
                Some(pos) => (pos + 1, true),
                None => (chunk.len(), false),
            };
            self.advance(len);
            if ended {
                return Ok(true);
            }
        }
    }

    /// Counts the lines that follow, reading at most about `budget` bytes. `None` when the budget ran out first.
    pub(crate) fn count_rest(&mut self, budget: u64) -> Result<Option<u64>, LineError> {
        let stop = self.consumed.saturating_add(budget);
        let mut lines = 0;
        while self.consumed < stop {
            if !self.skip_line()? {
                return Ok(Some(lines));
            }
            lines += 1;
        }
        Ok(self.at_eof()?.then_some(lines))
    }

    /// Reads one line: keeps at most `max_keep` bytes of its text (line ending excluded) in `keep`, and feeds every
    /// byte of it, ending included, to `hasher`. `None` at end of file.
    pub(crate) fn read_line(
        &mut self,
        keep: &mut Vec<u8>,
        max_keep: usize,
        hasher: &mut impl Hasher,
    ) -> Result<Option<LineInfo>, LineError> {
        keep.clear();
        let mut any = false;
        let mut chars = 0u64;
        let mut text_bytes = 0u64;
        let mut last_text_byte = None;
        loop {
            let chunk = self.fill()?;
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (text, len, ended) = match find_newline(chunk) {
                Some(pos) => (chunk.get(..pos).unwrap_or_default(), pos + 1, true),
                None => (chunk, chunk.len(), false),
            };
            hasher.write(chunk.get(..len).unwrap_or_default());
            chars += count_chars(text);
            text_bytes += text.len() as u64;
            if let Some(&b) = text.last() {
                last_text_byte = Some(b);
            }
            let room = max_keep.saturating_sub(keep.len());
            keep.extend_from_slice(text.get(..room.min(text.len())).unwrap_or_default());
            self.advance(len);
            if ended {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        let mut complete = keep.len() as u64 == text_bytes;
        // A CRLF line shows without its CR.
        if last_text_byte == Some(b'\r') {
            chars = chars.saturating_sub(1);
            if complete {
                keep.pop();
            } else if keep.len() as u64 + 1 == text_bytes {
                complete = true;
            }
        }
        Ok(Some(LineInfo { chars, complete }))
    }

    fn fill(&mut self) -> Result<&[u8], LineError> {
        if self.cancel.is_cancelled() {
            return Err(LineError::Cancelled);
        }
        loop {
            match self.inner.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(LineError::Io(e)),
            }
        }
        Ok(self.inner.fill_buf()?)
    }

    fn advance(&mut self, n: usize) {
        self.inner.consume(n);
        self.consumed += n as u64;
    }
}

/// Position of the first `\n`, found with std's optimised memchr (`skip_until` on a slice).
fn find_newline(chunk: &[u8]) -> Option<usize> {
    let mut rest = chunk;
    let n = rest.skip_until(b'\n').unwrap_or(0);
    (n > 0 && chunk.get(n - 1) == Some(&b'\n')).then(|| n - 1)
}

/// Characters in UTF-8 text: every byte that does not continue a sequence starts one.
fn count_chars(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u64
}

/// Which UTF-16 byte order a file uses, from its byte-order mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Utf16 {
    Le,
    Be,
}

impl Utf16 {
    /// UTF-16 by its BOM; a UTF-32LE BOM (FF FE 00 00) is not taken for UTF-16.
    pub(crate) fn detect(head: &[u8]) -> Option<Utf16> {
        match head {
            [0xFF, 0xFE, 0, 0, ..] => None,
            [0xFF, 0xFE, ..] => Some(Utf16::Le),
            [0xFE, 0xFF, ..] => Some(Utf16::Be),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Utf16::Le => "UTF-16LE",
            Utf16::Be => "UTF-16BE",
        }
    }
}

/// Turns a UTF-16 stream (BOM included) into UTF-8 on the fly, so the line reader can page it like any text. Unpaired
/// surrogates become U+FFFD.
pub(super) struct Utf16Reader<R> {
    inner: R,
    order: Utf16,
    raw: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    bom_skipped: bool,
    eof: bool,
}

impl<R: Read> Utf16Reader<R> {
    pub(crate) fn new(inner: R, order: Utf16) -> Self {
        Self {
            inner,
            order,
            raw: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            bom_skipped: false,
            eof: false,
        }
    }

    /// Decodes the next block of input into `out`; leaves `out` empty only at end of input.
    fn refill(&mut self) -> std::io::Result<()> {
        self.out.clear();
        self.out_pos = 0;
        while self.out.is_empty() && !(self.eof && self.raw.is_empty()) {
            if !self.eof {
                let mut block = [0u8; 16 * 1024];
                let n = match self.inner.read(&mut block) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                self.eof = n == 0;
                self.raw.extend_from_slice(block.get(..n).unwrap_or_default());
            }
            let mut units: Vec<u16> = self
                .raw
                .chunks_exact(2)
                .map(|p| match (self.order, p) {
                    (Utf16::Le, [a, b]) => u16::from_le_bytes([*a, *b]),
                    (Utf16::Be, [a, b]) => u16::from_be_bytes([*a, *b]),
                    _ => 0xFFFD,
                })
                .collect();
            let mut used = units.len() * 2;
            // Keep a trailing high surrogate for the next block, where its pair may be.
            if !self.eof && units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) {
                units.pop();
                used -= 2;
            }
            if self.eof && self.raw.len() % 2 == 1 {
                units.push(0xFFFD);
                used += 1;
            }
            self.raw.drain(..used.min(self.raw.len()));
            let mut units = units.as_slice();
            if !self.bom_skipped && !units.is_empty() {
                self.bom_skipped = true;
                if units.first() == Some(&0xFEFF) {
                    units = units.get(1..).unwrap_or_default();
                }
            }
            let text: String = char::decode_utf16(units.iter().copied())
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect();
            self.out.extend_from_slice(text.as_bytes());
        }
        Ok(())
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.out_pos >= self.out.len() {
            self.refill()?;
        }
        let available = self.out.get(self.out_pos..).unwrap_or_default();
        let n = available.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), available.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.out_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;
    use std::io::BufReader;

    fn reader(bytes: &[u8], cap: usize) -> LineReader<BufReader<&[u8]>> {
        LineReader::new(BufReader::with_capacity(cap, bytes), CancellationToken::new())
    }

    fn lines(bytes: &[u8], max_keep: usize, cap: usize) -> Vec<(String, LineInfo)> {
        let mut r = reader(bytes, cap);
        let mut out = Vec::new();
        let mut keep = Vec::new();
        let mut h = DefaultHasher::new();
        while let Some(info) = r.read_line(&mut keep, max_keep, &mut h).unwrap() {
            out.push((String::from_utf8_lossy(&keep).into_owned(), info));
        }
        out
    }

    #[test]
    fn lines_split_across_small_buffers() {
        for cap in [1, 2, 3, 7, 64] {
            let got = lines("ab\r\ncdé\n\nlast".as_bytes(), 100, cap);
            let texts: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
            assert_eq!(texts, ["ab", "cdé", "", "last"], "cap {cap}");
            let chars: Vec<u64> = got.iter().map(|(_, i)| i.chars).collect();
            assert_eq!(chars, [2, 3, 0, 4]);
            assert!(got.iter().all(|(_, i)| i.complete));
        }
    }

    #[test]
    fn long_lines_keep_a_prefix_and_count_everything() {
        let got = lines(b"0123456789\nxy\r\n", 4, 3);
        assert_eq!(got[0].0, "0123");
        assert_eq!(
            got[0].1,
            LineInfo {
                chars: 10,
                complete: false
            }
        );
        assert_eq!(got[1].0, "xy");
        assert!(got[1].1.complete);
        // The CR right after the kept prefix is the line ending, not lost text.
        let got = lines(b"abcd\r\n", 4, 2);
        assert_eq!(got[0].0, "abcd");
        assert!(got[0].1.complete);
    }

    #[test]
    fn skip_and_count() {
        let mut r = reader(b"a\nb\nc\nd", 2);
        assert!(r.skip_line().unwrap());
        assert_eq!(r.count_rest(1000).unwrap(), Some(3));
        assert!(!r.skip_line().unwrap());
        let mut r = reader(b"a\nb\nc\nd\n", 2);
        assert_eq!(r.count_rest(3).unwrap(), None);
        assert_eq!(r.consumed(), 4);
        assert_eq!(r.count_rest(100).unwrap(), Some(2));
    }

    #[test]
    fn hash_covers_the_line_bytes() {
        let hash = |bytes: &[u8]| {
            let mut r = reader(bytes, 3);
            let mut h = DefaultHasher::new();
            let mut keep = Vec::new();
            while r.read_line(&mut keep, 2, &mut h).unwrap().is_some() {}
            h.finish()
        };
        assert_eq!(hash(b"hello\nworld\n"), hash(b"hello\nworld\n"));
        assert_ne!(hash(b"hello\nworld\n"), hash(b"hellO\nworld\n"));
        assert_ne!(hash(b"hello\nworld\n"), hash(b"hello\nworld"));
    }

    #[test]
    fn cancellation_stops_reading() {
        let token = CancellationToken::new();
        let mut r = LineReader::new(BufReader::new(&b"a\nb\n"[..]), token.clone());
        token.cancel();
        assert!(matches!(r.skip_line(), Err(LineError::Cancelled)));
    }

    #[test]
    fn utf16_is_transcoded() {
        for order in [Utf16::Le, Utf16::Be] {
            let text = "héllo\r\n𝄞 wörld\n";
            let mut bytes = Vec::new();
            for unit in std::iter::once(0xFEFF).chain(text.encode_utf16()) {
                bytes.extend(match order {
                    Utf16::Le => unit.to_le_bytes(),
                    Utf16::Be => unit.to_be_bytes(),
                });
            }
            assert_eq!(Utf16::detect(&bytes), Some(order));
            // A tiny inner buffer splits surrogate pairs across reads.
            let inner = BufReader::with_capacity(3, bytes.as_slice());
            let mut out = String::new();
            Utf16Reader::new(inner, order).read_to_string(&mut out).unwrap();
            assert_eq!(out, text);
        }
        assert_eq!(Utf16::detect(&[0xFF, 0xFE, 0, 0]), None);
        assert_eq!(Utf16::detect(b"plain"), None);
        let mut out = String::new();
        Utf16Reader::new(&[0xFF, 0xFE, b'a', 0, 0x00, 0xD8, b'b'][..], Utf16::Le)
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "a\u{FFFD}\u{FFFD}");
    }
}
