//! A process's output as the model reads it: the last `cap` bytes, and where the model's last read ended, so each
//! read returns what is new and says how much was dropped before it could be read.

use std::collections::VecDeque;

pub(crate) struct Ring {
    bytes: VecDeque<u8>,
    cap: usize,
    /// Bytes ever pushed: the offset just past the newest byte.
    total: u64,
    /// The offset the model has read up to.
    read_to: u64,
}

/// What a read returns: the new bytes, and how many new bytes were dropped (the ring was full) before them.
pub(crate) struct Unread {
    pub bytes: Vec<u8>,
    pub dropped: u64,
}

impl Ring {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            bytes: VecDeque::new(),
            cap: cap.max(1),
            total: 0,
            read_to: 0,
        }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        let data = &data[data.len().saturating_sub(self.cap)..];
        let over = (self.bytes.len() + data.len()).saturating_sub(self.cap);
        self.bytes.drain(..over);
        self.bytes.extend(data);
    }

    /// The offset of the oldest byte kept.
    fn start(&self) -> u64 {
        self.total - self.bytes.len() as u64
    }

    /// Whether bytes came since the last read.
    pub(crate) fn has_unread(&self) -> bool {
        self.total > self.read_to
    }

    /// Everything new since the last read; the next read starts after it.
    pub(crate) fn read_new(&mut self) -> Unread {
        let from = self.read_to.max(self.start());
        let dropped = from - self.read_to;
        let skip = usize::try_from(from - self.start()).unwrap_or(usize::MAX);
        let bytes = self.bytes.iter().skip(skip).copied().collect();
        self.read_to = self.total;
        Unread { bytes, dropped }
    }

    /// The last bytes kept, at most `n`, whether read or not (for the note on an exit).
    pub(crate) fn tail(&self, n: usize) -> Vec<u8> {
        let skip = self.bytes.len().saturating_sub(n);
        self.bytes.iter().skip(skip).copied().collect()
    }
}
