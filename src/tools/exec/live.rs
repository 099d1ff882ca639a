//! Live output for the person watching: stdout and stderr interleaved in the order they arrive (as a terminal shows
//! them; the result for the model keeps them apart), line-buffered, and throttled so a command printing a gigabyte
//! cannot flood the frontend.
//!
//! Complete lines are queued and sent at most every 50 ms, or at once when 8 KiB are waiting. An unfinished line (a
//! prompt, a progress bar) is sent after it has waited 100 ms. The rate is bounded by a token bucket (256 KiB/s with
//! a 64 KiB burst); the queue holds at most 16 KiB, and when older lines must make room they are counted and replaced
//! by one `… N bytes skipped …` line. Time is passed in, so the throttle is tested without a clock.

use tokio::time::{Duration, Instant};

use super::capture::complete_prefix_len;
use crate::OutputSink;

const FLUSH_INTERVAL: Duration = Duration::from_millis(50);
const FLUSH_BYTES: usize = 8 * 1024;
const PARTIAL_DELAY: Duration = Duration::from_millis(100);
const QUEUE_CAP: usize = 16 * 1024;
const RATE: f64 = 256.0 * 1024.0;
const BURST: f64 = 64.0 * 1024.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Out = 0,
    Err = 1,
}

pub(crate) struct LiveOutput {
    sink: OutputSink,
    /// Whole lines (and unfinished ones that waited too long), in arrival order, ready to send.
    queue: Vec<u8>,
    /// Bytes that had to leave the queue unsent since the last send.
    skipped: u64,
    /// Each stream's unfinished last line and when it started waiting.
    partial: [Vec<u8>; 2],
    partial_since: [Option<Instant>; 2],
    last_send: Instant,
    tokens: f64,
    refilled: Instant,
}

impl LiveOutput {
    pub(crate) fn new(sink: OutputSink, now: Instant) -> Self {
        Self {
            sink,
            queue: Vec::new(),
            skipped: 0,
            partial: [Vec::new(), Vec::new()],
            partial_since: [None, None],
            // The first lines go out at once.
            last_send: now.checked_sub(FLUSH_INTERVAL).unwrap_or(now),
            tokens: BURST,
            refilled: now,
        }
    }

    pub(crate) fn push(&mut self, stream: Stream, mut data: &[u8], now: Instant) {
        let i = stream as usize;
        if data.len() > QUEUE_CAP {
            // Only the last QUEUE_CAP bytes could stay in the queue: skip the rest without looking at it (a flood
            // arrives in 64 KiB reads), and start at the next line.
            let cut = data.len() - QUEUE_CAP;
            let start = line_start_after(data, cut);
            self.skipped += (self.queue.len() + self.partial[i].len() + start) as u64;
            self.queue.clear();
            self.partial[i].clear();
            self.partial_since[i] = None;
            data = &data[start..];
        }
        match data.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                let partial = std::mem::take(&mut self.partial[i]);
                self.enqueue(&partial);
                self.enqueue(&data[..=last]);
                let rest = &data[last + 1..];
                self.partial[i] = partial;
                self.partial[i].clear();
                self.partial[i].extend_from_slice(rest);
                self.partial_since[i] = (!rest.is_empty()).then_some(now);
            }
            None if self.partial[i].len() + data.len() >= FLUSH_BYTES => {
                // An endless line: send it as it comes, keeping only a split character back.
                let partial = std::mem::take(&mut self.partial[i]);
                self.enqueue(&partial);
                let cut = complete_prefix_len(data);
                self.enqueue(&data[..cut]);
                self.partial[i] = partial;
                self.partial[i].clear();
                self.partial[i].extend_from_slice(&data[cut..]);
                self.partial_since[i] = (cut < data.len()).then_some(now);
            }
            None => {
                if self.partial[i].is_empty() && !data.is_empty() {
                    self.partial_since[i] = Some(now);
                }
                self.partial[i].extend_from_slice(data);
            }
        }
        self.flush(now);
    }

    /// Sends what is due at `now`. Called after every push and when `deadline` passes.
    pub(crate) fn flush(&mut self, now: Instant) {
        for i in 0..2 {
            if self.partial_since[i].is_some_and(|since| now >= since + PARTIAL_DELAY) {
                let cut = complete_prefix_len(&self.partial[i]);
                let partial = std::mem::take(&mut self.partial[i]);
                self.enqueue(&partial[..cut]);
                self.partial[i] = partial[cut..].to_vec();
                self.partial_since[i] = (!self.partial[i].is_empty()).then_some(now);
            }
        }
        self.refill(now);
        if self.queue.is_empty() && self.skipped == 0 {
            return;
        }
        let due = self.queue.len() >= FLUSH_BYTES || now >= self.last_send + FLUSH_INTERVAL;
        if due && self.tokens >= self.cost() {
            self.tokens -= self.cost();
            self.last_send = now;
            self.send();
        }
    }

    /// When `flush` next has something to do, if anything is waiting.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        if !self.queue.is_empty() || self.skipped > 0 {
            let interval = if self.queue.len() >= FLUSH_BYTES {
                self.refilled
            } else {
                self.last_send + FLUSH_INTERVAL
            };
            let missing = (self.cost() - self.tokens).max(0.0);
            // A millisecond of slack so the bucket is surely full enough when the timer fires.
            let refill = self.refilled + Duration::from_secs_f64(missing / RATE) + Duration::from_millis(1);
            consider(interval.max(refill));
        }
        for since in self.partial_since.iter().flatten() {
            consider(*since + PARTIAL_DELAY);
        }
        next
    }

    /// Sends everything left, unthrottled (at most the queue cap plus two unfinished lines).
    pub(crate) fn finish(&mut self) {
        for i in 0..2 {
            let partial = std::mem::take(&mut self.partial[i]);
            self.enqueue(&partial);
            self.partial_since[i] = None;
        }
        if !self.queue.is_empty() || self.skipped > 0 {
            self.send();
        }
    }

    fn cost(&self) -> f64 {
        (self.queue.len() as f64).min(BURST)
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * RATE).min(BURST);
        self.refilled = now;
    }

    /// Appends to the queue, dropping the oldest bytes (up to a line start when there is one) past the cap.
    fn enqueue(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if bytes.len() >= QUEUE_CAP {
            self.skipped += self.queue.len() as u64;
            self.queue.clear();
            let start = line_start_after(bytes, bytes.len() - QUEUE_CAP);
            self.skipped += start as u64;
            self.queue.extend_from_slice(&bytes[start..]);
            return;
        }
        self.queue.extend_from_slice(bytes);
        if self.queue.len() > QUEUE_CAP {
            let start = line_start_after(&self.queue, self.queue.len() - QUEUE_CAP);
            self.skipped += start as u64;
            self.queue.drain(..start);
        }
    }

    fn send(&mut self) {
        let mut text = String::new();
        if self.skipped > 0 {
            text.push_str(&format!("… {} bytes skipped …\n", self.skipped));
        }
        text.push_str(&String::from_utf8_lossy(&self.queue));
        self.sink.send(text);
        self.queue.clear();
        self.skipped = 0;
    }
}

/// The first index at or after `at` that starts a line, or failing that a character.
fn line_start_after(bytes: &[u8], at: usize) -> usize {
    if at == 0 || bytes[at - 1] == b'\n' {
        return at;
    }
    if let Some(nl) = bytes[at..].iter().position(|&b| b == b'\n')
        && at + nl + 1 < bytes.len()
    {
        return at + nl + 1;
    }
    at + bytes[at..].iter().take(3).take_while(|&&b| b & 0xC0 == 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

    fn live() -> (LiveOutput, UnboundedReceiver<String>, Instant) {
        let (tx, rx) = unbounded_channel();
        let now = Instant::now();
        (LiveOutput::new(OutputSink::new(tx), now), rx, now)
    }

    fn drain(rx: &mut UnboundedReceiver<String>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(s) = rx.try_recv() {
            out.push(s);
        }
        out
    }

    #[test]
    fn whole_lines_go_out_and_partial_lines_wait() {
        let (mut live, mut rx, t0) = live();
        live.push(Stream::Out, b"one\ntw", t0);
        assert_eq!(drain(&mut rx), ["one\n"]);
        // Within the interval: queued, not sent.
        live.push(Stream::Out, b"o\nthree\n", t0 + Duration::from_millis(10));
        assert!(drain(&mut rx).is_empty());
        let at = live.deadline().unwrap();
        assert_eq!(at, t0 + FLUSH_INTERVAL);
        live.flush(at);
        assert_eq!(drain(&mut rx), ["two\nthree\n"]);
        assert_eq!(live.deadline(), None);
    }

    #[test]
    fn an_unfinished_line_is_shown_after_a_short_wait() {
        let (mut live, mut rx, t0) = live();
        live.push(Stream::Err, b"Password: ", t0);
        assert!(drain(&mut rx).is_empty());
        assert_eq!(live.deadline(), Some(t0 + PARTIAL_DELAY));
        live.flush(t0 + PARTIAL_DELAY);
        assert_eq!(drain(&mut rx), ["Password: "]);
    }

    #[test]
    fn streams_interleave_by_line_without_mixing_partials() {
        let (mut live, mut rx, t0) = live();
        live.push(Stream::Out, b"out-a", t0);
        live.push(Stream::Err, b"err line\n", t0);
        live.push(Stream::Out, b"out-b\n", t0 + FLUSH_INTERVAL);
        live.finish();
        assert_eq!(drain(&mut rx).concat(), "err line\nout-aout-b\n");
    }

    #[test]
    fn floods_are_bounded_and_marked() {
        let (mut live, mut rx, t0) = live();
        let chunk: Vec<u8> = b"yyyyyyy\n".repeat(8192);
        let total = 1000 * chunk.len();
        let mut now = t0;
        for _ in 0..1000 {
            now += Duration::from_millis(1);
            live.push(Stream::Out, &chunk, now);
            assert!(live.queue.len() <= QUEUE_CAP);
        }
        live.finish();
        let sent: Vec<String> = drain(&mut rx);
        let bytes: usize = sent.iter().map(String::len).sum();
        // One second of output at most (burst + rate) plus the final flush, instead of 64 MB.
        assert!(bytes < (BURST + RATE) as usize + QUEUE_CAP + 1024, "{bytes}");
        let skipped: u64 = sent
            .iter()
            .filter_map(|s| s.strip_prefix("… ")?.split(' ').next()?.parse::<u64>().ok())
            .sum();
        assert!(skipped > 0);
        let shown: usize = sent
            .iter()
            .map(|s| s.lines().filter(|l| *l == "yyyyyyy").count() * 8)
            .sum();
        assert_eq!(shown as u64 + skipped, total as u64);
    }

    #[test]
    fn endless_lines_do_not_grow_memory_or_split_characters() {
        let (mut live, mut rx, t0) = live();
        let chunk = "é".repeat(10_000);
        for k in 0..100 {
            // Pieces split inside a character.
            for piece in [&chunk.as_bytes()[..1001], &chunk.as_bytes()[1001..]] {
                live.push(Stream::Out, piece, t0 + Duration::from_millis(k * 60));
                assert!(live.partial[0].len() < FLUSH_BYTES);
                assert!(live.queue.len() <= QUEUE_CAP);
            }
        }
        live.finish();
        let text = drain(&mut rx).concat();
        assert!(!text.contains('\u{FFFD}'), "split character");
    }

    #[test]
    fn a_closed_sink_is_harmless() {
        let (mut live, rx, t0) = live();
        drop(rx);
        live.push(Stream::Out, b"x\n", t0);
        live.finish();
    }
}
