//! The whole output of a command, on disk. Output past the inline limit is written, as it arrives (stdout and stderr
//! interleaved the way a terminal shows them), to the file the runner named for this call in the session's
//! tool-result store, so the model can page it with `read_file` and the history browser can show it all. Memory stays
//! bounded: at most `FLUSH_BYTES` plus `HOLD_BYTES` wait in memory, and the file stops growing at `MAX_STORED_BYTES`.
//!
//! Known secrets are masked before anything reaches the disk. A secret may arrive split across reads, so the last
//! `HOLD_BYTES` of what came are held back until more follows (no secret value is that long), and a secret found in
//! what is held is masked whole before the cut.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most of one command's output kept on disk.
pub(crate) const MAX_STORED_BYTES: u64 = 64 * 1024 * 1024;
/// Output waiting in memory is written once it reaches this.
const FLUSH_BYTES: usize = 256 * 1024;
/// Held back from each write: longer than any secret value, so one split across reads is masked whole.
const HOLD_BYTES: usize = 16 * 1024;

/// What was kept of a command's output.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Stored {
    pub path: PathBuf,
    /// Bytes the command wrote in all.
    pub total: u64,
    /// Whether the file holds only the first `MAX_STORED_BYTES` of them.
    pub cut: bool,
}

pub(super) struct Spill {
    path: Option<PathBuf>,
    /// Output starts going to the file once there is more than this.
    threshold: usize,
    limit: u64,
    file: Option<File>,
    pending: Vec<u8>,
    total: u64,
    /// Bytes taken for the file (written or pending); at most `limit`.
    taken: u64,
    failed: bool,
}

impl Spill {
    /// Keeps output past `threshold` bytes at `path`; `None` keeps nothing.
    pub(super) fn new(path: Option<&Path>, threshold: usize) -> Self {
        Self::with_limit(path, threshold, MAX_STORED_BYTES)
    }

    pub(super) fn with_limit(path: Option<&Path>, threshold: usize, limit: u64) -> Self {
        Self {
            path: path.map(Path::to_path_buf),
            threshold,
            limit,
            file: None,
            pending: Vec::new(),
            total: 0,
            taken: 0,
            failed: false,
        }
    }

    pub(super) fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        if self.path.is_none() || self.failed {
            return;
        }
        let room = usize::try_from(self.limit - self.taken).unwrap_or(usize::MAX);
        let data = &data[..data.len().min(room)];
        self.taken += data.len() as u64;
        self.pending.extend_from_slice(data);
        if self.file.is_none() && self.pending.len() > self.threshold {
            self.open();
        }
        if self.file.is_some() && self.pending.len() >= FLUSH_BYTES + HOLD_BYTES {
            self.write_settled();
        }
    }

    fn open(&mut self) {
        let Some(path) = &self.path else {
            return;
        };
        let opened = path.parent().map_or(Ok(()), tern_fs::private_dir).and_then(|()| {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(path)
        });
        match opened {
            Ok(file) => self.file = Some(file),
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "cannot keep the whole command output");
                self.fail();
            }
        }
    }

    fn fail(&mut self) {
        self.failed = true;
        self.file = None;
        self.pending = Vec::new();
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Writes what cannot be part of a secret still arriving: all but the last `HOLD_BYTES`, or, when a secret was
    /// masked near the end, all up to the end of that secret.
    fn write_settled(&mut self) {
        let masked = tern_secrets::mask_bytes(&self.pending);
        let (out, keep) = match &masked {
            std::borrow::Cow::Borrowed(_) => {
                let cut = self.pending.len().saturating_sub(HOLD_BYTES);
                (&self.pending[..cut], self.pending.len() - cut)
            }
            std::borrow::Cow::Owned(masked) => {
                // After the last mask the text is as it came; keep (at most) its last HOLD_BYTES.
                let marker = tern_secrets::REDACTED.as_bytes();
                let after = masked
                    .windows(marker.len())
                    .rposition(|w| w == marker)
                    .map_or(masked.len(), |at| masked.len() - at - marker.len());
                let keep = after.min(HOLD_BYTES);
                (&masked[..masked.len() - keep], keep)
            }
        };
        let written = self.file.as_mut().map(|f| f.write_all(out));
        drop(masked);
        if let Some(Err(e)) = written {
            tracing::warn!(error = %e, "cannot keep the whole command output");
            self.fail();
            return;
        }
        let from = self.pending.len() - keep;
        self.pending.drain(..from);
    }

    /// Writes the rest; returns where the output is when it went to the file.
    pub(super) fn finish(mut self) -> Option<Stored> {
        let mut file = self.file.take()?;
        let rest = tern_secrets::mask_bytes(&self.pending);
        if let Err(e) = file.write_all(&rest).and_then(|()| file.flush()) {
            tracing::warn!(error = %e, "cannot keep the whole command output");
            drop(rest);
            self.fail();
            return None;
        }
        Some(Stored {
            path: self.path.take()?,
            total: self.total,
            cut: self.total > self.taken,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r/exec-1.txt");
        let mut spill = Spill::new(Some(&path), 100);
        spill.push(b"hello\n");
        assert_eq!(spill.finish(), None);
        assert!(!path.exists());
    }

    #[test]
    fn long_output_is_kept_whole_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r/exec-1.txt");
        let mut spill = Spill::new(Some(&path), 100);
        let mut expected = Vec::new();
        for i in 0..200_000 {
            let line = format!("{i}\n");
            expected.extend_from_slice(line.as_bytes());
            spill.push(line.as_bytes());
        }
        let stored = spill.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        assert_eq!((stored.total, stored.cut), (expected.len() as u64, false));
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&path), mode(path.parent().unwrap())), (0o600, 0o700));
    }

    #[test]
    fn the_file_stops_at_the_limit_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exec-1.txt");
        let mut spill = Spill::with_limit(Some(&path), 10, 1_000_000);
        for _ in 0..3_000 {
            spill.push(&[b'x'; 1_000]);
        }
        let stored = spill.finish().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1_000_000);
        assert_eq!((stored.total, stored.cut), (3_000_000, true));
    }

    #[test]
    fn a_secret_split_across_reads_is_masked() {
        let secret = "spill-test-secret-value-93c1f0";
        tern_secrets::register(secret);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exec-1.txt");
        let mut spill = Spill::new(Some(&path), 10);
        let mut text = Vec::new();
        // Secrets land on both sides of every flush point, split in two reads.
        for i in 0..40_000 {
            text.extend_from_slice(format!("line {i} ").as_bytes());
            if i % 997 == 0 {
                text.extend_from_slice(secret.as_bytes());
            }
        }
        for chunk in text.chunks(4_093) {
            spill.push(chunk);
        }
        spill.finish().unwrap();
        let kept = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        assert!(!kept.contains(secret) && kept.contains(tern_secrets::REDACTED));
        assert_eq!(kept.matches(tern_secrets::REDACTED).count(), 41);
        assert!(kept.ends_with("line 39999 "));
    }
}
