//! Bounded capture of one output stream for the model.
//!
//! The first `cap` bytes and the last `cap` bytes are kept; everything in between is counted and dropped, so a command
//! printing gigabytes costs a fixed amount of memory. Rendering decodes the bytes lossily (output that is not UTF-8
//! survives with replacement characters) and cuts the text to a character budget, keeping the head and the tail
//! around a `... (N chars truncated) ...` marker, on line boundaries when one is near.

use std::collections::VecDeque;

/// One stream's output: a head buffer, a ring buffer for the tail, and counts of what fell in between.
pub(super) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    cap: usize,
    dropped_bytes: u64,
    dropped_chars: u64,
}

impl Capture {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            cap,
            dropped_bytes: 0,
            dropped_chars: 0,
        }
    }

    pub(super) fn push(&mut self, mut data: &[u8]) {
        if self.head.len() < self.cap {
            let take = (self.cap - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        if data.is_empty() {
            return;
        }
        if data.len() >= self.cap {
            // The whole ring is replaced by the end of this chunk.
            let (a, b) = self.tail.as_slices();
            let chars = count_chars(a) + count_chars(b);
            self.dropped_chars += chars;
            self.dropped_bytes += self.tail.len() as u64;
            self.tail.clear();
            let split = data.len() - self.cap;
            self.drop_bytes(&data[..split]);
            self.tail.extend(&data[split..]);
            return;
        }
        let overflow = (self.tail.len() + data.len()).saturating_sub(self.cap);
        if overflow > 0 {
            let (a, b) = self.tail.as_slices();
            let from_a = overflow.min(a.len());
            let chars = count_chars(&a[..from_a]) + count_chars(&b[..overflow - from_a]);
            self.dropped_chars += chars;
            self.dropped_bytes += overflow as u64;
            self.tail.drain(..overflow);
        }
        self.tail.extend(data);
    }

    fn drop_bytes(&mut self, bytes: &[u8]) {
        self.dropped_bytes += bytes.len() as u64;
        self.dropped_chars += count_chars(bytes);
    }

    /// Bytes held in memory (never more than twice the cap).
    #[cfg(test)]
    pub(super) fn retained(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Decodes what was kept. The head and tail are cut on character boundaries so the gap does not turn a split
    /// character into replacement characters.
    pub(super) fn into_text(self) -> StreamText {
        if self.dropped_bytes == 0 {
            let mut bytes = self.head;
            bytes.extend(self.tail);
            return StreamText::new(String::from_utf8_lossy(&bytes).into_owned(), 0, String::new());
        }
        let head_end = complete_prefix_len(&self.head);
        let tail: Vec<u8> = self.tail.into();
        let tail_start = tail.iter().take(3).take_while(|&&b| is_continuation(b)).count();
        let gap = self.dropped_chars + count_chars(&self.head[head_end..]) + count_chars(&tail[..tail_start]);
        StreamText::new(
            String::from_utf8_lossy(&self.head[..head_end]).into_owned(),
            gap,
            String::from_utf8_lossy(&tail[tail_start..]).into_owned(),
        )
    }
}

/// A stream's text as kept: `head`, then `gap` characters that were dropped, then `tail`.
pub(super) struct StreamText {
    head: String,
    gap: u64,
    tail: String,
    head_chars: usize,
    tail_chars: usize,
}

impl StreamText {
    fn new(head: String, gap: u64, tail: String) -> Self {
        let head_chars = head.chars().count();
        let tail_chars = tail.chars().count();
        Self {
            head,
            gap,
            tail,
            head_chars,
            tail_chars,
        }
    }

    /// Characters in the whole stream, dropped ones included.
    pub(super) fn char_len(&self) -> u64 {
        self.head_chars as u64 + self.gap + self.tail_chars as u64
    }

    pub(super) fn is_empty(&self) -> bool {
        self.char_len() == 0
    }

    /// The text cut to at most `budget` characters (plus the marker), and how many characters were left out.
    pub(super) fn render(&self, budget: usize) -> (String, u64) {
        if self.gap == 0 && self.char_len() <= budget as u64 {
            return (format!("{}{}", self.head, self.tail), 0);
        }
        let want_head = budget / 2;
        let want_tail = budget - want_head;
        let head_end = byte_index_of_char(&self.head, want_head.min(self.head_chars));
        let mut prefix = &self.head[..head_end];
        // The suffix comes from the tail; when nothing was dropped the whole text is in `head` and so is the suffix.
        let mut suffix = if self.gap == 0 {
            let rest = &self.head[head_end..];
            let rest_chars = self.head_chars - want_head.min(self.head_chars);
            let skip = rest_chars.saturating_sub(want_tail);
            &rest[byte_index_of_char(rest, skip)..]
        } else {
            let skip = self.tail_chars.saturating_sub(want_tail);
            &self.tail[byte_index_of_char(&self.tail, skip)..]
        };
        prefix = align_prefix(prefix);
        suffix = align_suffix(suffix);
        let kept = (prefix.chars().count() + suffix.chars().count()) as u64;
        let truncated = self.char_len().saturating_sub(kept);
        let mut out = String::with_capacity(prefix.len() + suffix.len() + 48);
        out.push_str(prefix);
        if !prefix.is_empty() && !prefix.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("... ({truncated} chars truncated) ...\n"));
        out.push_str(suffix);
        (out, truncated)
    }
}

/// Ends the head on a whole line when a line break lies in its last quarter.
fn align_prefix(prefix: &str) -> &str {
    let floor = prefix.len() - prefix.len() / 4;
    match prefix.rfind('\n') {
        Some(i) if i + 1 >= floor => &prefix[..=i],
        _ => prefix,
    }
}

/// Starts the tail on a whole line when a line break lies in its first quarter.
fn align_suffix(suffix: &str) -> &str {
    let limit = suffix.len() / 4;
    match suffix.find('\n') {
        Some(i) if i < limit => &suffix[i + 1..],
        _ => suffix,
    }
}

fn byte_index_of_char(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// How many bytes of `bytes` end on a character boundary: an incomplete multi-byte sequence at the end is left out.
pub(super) fn complete_prefix_len(bytes: &[u8]) -> usize {
    let start = bytes.len().saturating_sub(4);
    for i in (start..bytes.len()).rev() {
        let b = bytes[i];
        if is_continuation(b) {
            continue;
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if i + need > bytes.len() { i } else { bytes.len() };
    }
    bytes.len()
}

/// Characters in UTF-8 bytes: every byte that is not a continuation byte starts one. Eight bytes at a time, because
/// this runs over every dropped byte of a command that prints gigabytes.
pub(super) fn count_chars(bytes: &[u8]) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut continuation = 0u64;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // Bit 7 set and bit 6 clear: `w << 1` moves each byte's bit 6 to its bit 7.
        continuation += u64::from((w & !(w << 1) & HIGH).count_ones());
    }
    let rest = chunks.remainder();
    continuation += rest.iter().filter(|&&b| is_continuation(b)).count() as u64;
    bytes.len() as u64 - continuation
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(cap: usize, chunks: &[&[u8]]) -> StreamText {
        let mut c = Capture::new(cap);
        for chunk in chunks {
            c.push(chunk);
        }
        c.into_text()
    }

    #[test]
    fn counts_chars_like_std() {
        let samples = ["", "abc", "héllo wörld, ünïcödé ✓✓✓ 🦀🦀 and some more ascii text", "é"];
        for s in samples {
            assert_eq!(count_chars(s.as_bytes()), s.chars().count() as u64, "{s}");
        }
    }

    #[test]
    fn small_output_is_kept_whole() {
        let t = capture(100, &[b"hello ", b"world\n"]);
        assert_eq!(t.render(1000), ("hello world\n".to_string(), 0));
        assert!(!t.is_empty());
        assert!(capture(100, &[]).is_empty());
    }

    #[test]
    fn head_and_tail_survive_with_exact_count() {
        let data: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        for chunk_size in [1, 7, 100, 4096, data.len()] {
            let mut c = Capture::new(1000);
            for chunk in data.as_bytes().chunks(chunk_size) {
                c.push(chunk);
                assert!(c.retained() <= 2000);
            }
            let t = c.into_text();
            assert_eq!(t.char_len(), data.len() as u64);
            let (text, truncated) = t.render(800);
            assert!(text.starts_with("line 0\nline 1\n"), "{chunk_size}");
            assert!(text.ends_with("line 9999\n"), "{chunk_size}");
            assert!(text.contains(&format!("... ({truncated} chars truncated) ...\n")));
            let kept = text.len() - format!("... ({truncated} chars truncated) ...\n").len();
            assert_eq!(kept as u64 + truncated, data.len() as u64);
            assert!(kept <= 800);
        }
    }

    #[test]
    fn text_within_cap_but_over_budget_is_cut_in_the_middle() {
        let data = "a".repeat(500) + &"b".repeat(500);
        let (text, truncated) = capture(2000, &[data.as_bytes()]).render(100);
        assert_eq!(truncated, 900);
        assert_eq!(
            text,
            format!("{}\n... (900 chars truncated) ...\n{}", "a".repeat(50), "b".repeat(50))
        );
    }

    #[test]
    fn split_characters_do_not_become_garbage() {
        let data = "é".repeat(5000);
        let mut c = Capture::new(101);
        for chunk in data.as_bytes().chunks(333) {
            c.push(chunk);
        }
        let t = c.into_text();
        assert_eq!(t.char_len(), 5000);
        let (text, truncated) = t.render(10_000);
        assert!(!text.contains('\u{FFFD}'), "{text}");
        let kept = text.chars().filter(|&c| c == 'é').count() as u64;
        assert_eq!(kept + truncated, 5000);
    }

    #[test]
    fn invalid_utf8_is_lossy_not_lost() {
        let (text, _) = capture(100, &[b"a\xffb\xfe\n"]).render(100);
        assert_eq!(text, "a\u{FFFD}b\u{FFFD}\n");
    }

    #[test]
    fn incomplete_sequences_are_detected() {
        assert_eq!(complete_prefix_len("aé".as_bytes()), 3);
        assert_eq!(complete_prefix_len(&"aé".as_bytes()[..2]), 1);
        assert_eq!(complete_prefix_len(&"a🦀".as_bytes()[..4]), 1);
        assert_eq!(complete_prefix_len(b"abc"), 3);
        assert_eq!(complete_prefix_len(b""), 0);
    }

    #[test]
    fn memory_stays_bounded_for_huge_streams() {
        let mut c = Capture::new(4096);
        let chunk = vec![b'x'; 65536];
        for _ in 0..1000 {
            c.push(&chunk);
        }
        assert_eq!(c.retained(), 8192);
        let t = c.into_text();
        assert_eq!(t.char_len(), 65_536_000);
        let (text, truncated) = t.render(1000);
        assert_eq!(truncated, 65_535_000);
        assert!(text.len() < 1100);
    }
}
