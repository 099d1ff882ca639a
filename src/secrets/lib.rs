//! Secrets that stay secret: tern's API keys, and every other variable whose name looks secret (the rule in
//! `is_secret_name`), are taken out of the process environment at start-up, kept in a store only tern reads, and
//! masked wherever text leaves tern (log file, session logs, headless output, provider error bodies).
//!
//! Why it is done this way:
//! - Children inherit the environment, so the variables are removed from it: no command and no MCP server gets a key
//!   unless the user allowed that variable by name (`env_allow`), and then it is re-added from this store.
//! - Linux answers `/proc/<pid>/environ` from the environment block exec left on the process's stack (between
//!   `env_start` and `env_end` in `/proc/<pid>/stat`), not from `environ`: `unsetenv` alone leaves every key
//!   readable there. So the secret entries are overwritten with NUL bytes in that block. This is done in place, costs
//!   nothing, and holds against every reader, root included. The other ways were weighed: re-executing tern with a
//!   clean environment makes the keys travel through a pipe or file and doubles start-up; a PID namespace hides tern
//!   only from sandboxed commands, not from commands the user let run outside the sandbox, nor from MCP servers.
//! - `PR_SET_DUMPABLE` 0 makes `/proc/<pid>/environ`, `mem` and ptrace unavailable to other processes of the same
//!   non-root user, so the keys still in tern's heap cannot be read through `mem` or a debugger. Children are not
//!   affected: exec makes a process dumpable again.
//! - Masking is the last line: an echo (a server repeating the key in a 401 body) shows `[redacted]`.
//!
//! This module must never print, log or return a secret value except through [`var`] to the code that needs the key.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::sync::{RwLock, RwLockReadGuard};

/// Substrings of variable names that mark them as secret (compared upper-cased).
const SECRET_MARKERS: [&str; 6] = ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// True when a variable with this name is secret: taken out of tern's environment at start-up and withheld from
/// every child unless the user allowed it by name.
pub fn is_secret_name(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|marker| upper.contains(marker))
}

pub mod credentials;
pub mod files;

/// What a masked value is replaced with.
pub const REDACTED: &str = "[redacted]";
/// Shorter values are not masked: they would blank out ordinary words and numbers everywhere.
pub(crate) const MIN_MASKED_CHARS: usize = 8;

struct Store {
    /// The captured variables, by name.
    vars: Vec<(OsString, OsString)>,
    /// Every value to mask (and its JSON-escaped form), longest first so a value containing another is masked whole.
    masked: Vec<String>,
}

static STORE: RwLock<Store> = RwLock::new(Store {
    vars: Vec::new(),
    masked: Vec::new(),
});

fn read_store() -> RwLockReadGuard<'static, Store> {
    // A panic while registering cannot leave the lists half-written in a way that matters: keep masking.
    STORE.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What [`capture`] did, for a diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Captured {
    /// How many variables were taken out of the environment.
    pub variables: usize,
    /// How many entries were overwritten in the environment block the kernel reports.
    pub block_entries: usize,
    /// Whether other processes are kept from reading tern's memory (`PR_SET_DUMPABLE` 0).
    pub not_dumpable: bool,
}

/// Takes every secret-looking variable out of the environment into the store, overwrites it in the block
/// `/proc/self/environ` reports, and makes the process non-dumpable.
///
/// # Safety
/// Must be called while the process has a single thread (first thing in `main`): it changes the environment, and
/// overwrites the original environment block, which nothing else may be reading.
pub unsafe fn capture() -> Captured {
    let found: Vec<(OsString, OsString)> = std::env::vars_os().filter(|(name, _)| is_secret_name(name)).collect();
    for (name, _) in &found {
        // SAFETY: single-threaded, per this function's contract.
        unsafe { std::env::remove_var(name) };
    }
    // SAFETY: single-threaded; `unsetenv` above dropped every pointer into the entries that are overwritten, and the
    // range is the process's own environment block as the kernel records it.
    let block_entries = unsafe { scrub_own_block() };
    let not_dumpable = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable).is_ok();
    let variables = found.len();
    for (_, value) in &found {
        if let Some(value) = value.to_str() {
            register(value);
        }
    }
    let mut store = STORE.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    store.vars.extend(found);
    Captured {
        variables,
        block_entries,
        not_dumpable,
    }
}

/// A variable's value: from the store of captured secrets first, then from the environment.
pub fn var(name: &str) -> Option<String> {
    var_os(OsStr::new(name)).and_then(|v| v.into_string().ok())
}

/// Like [`var`], for names and values that need not be UTF-8.
pub fn var_os(name: &OsStr) -> Option<OsString> {
    let captured = read_store()
        .vars
        .iter()
        .find(|(n, _)| n.as_os_str() == name)
        .map(|(_, v)| v.clone());
    captured.or_else(|| std::env::var_os(name))
}

/// Adds a value to mask (a key from a config file). Values shorter than [`MIN_MASKED_CHARS`] are ignored.
pub fn register(value: &str) {
    let mut forms = Vec::new();
    for form in [value, value.trim()] {
        if form.chars().count() < MIN_MASKED_CHARS {
            continue;
        }
        forms.push(form.to_string());
        // Session lines and stream-json are JSON: a value with quotes or backslashes appears escaped there.
        if let Ok(quoted) = serde_json::to_string(form)
            && let Some(inner) = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"'))
        {
            forms.push(inner.to_string());
        }
    }
    if forms.is_empty() {
        return;
    }
    let mut store = STORE.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    for form in forms {
        if !store.masked.contains(&form) {
            store.masked.push(form);
        }
    }
    store.masked.sort_by_key(|v| std::cmp::Reverse(v.len()));
}

/// `text` with every registered secret replaced by `[redacted]`.
pub fn mask(text: &str) -> Cow<'_, str> {
    let store = read_store();
    let mut out = Cow::Borrowed(text);
    for value in &store.masked {
        if out.contains(value.as_str()) {
            out = Cow::Owned(out.replace(value.as_str(), REDACTED));
        }
    }
    out
}

/// Like [`mask`] for bytes that need not be UTF-8 (a writer may be handed half a character).
pub fn mask_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return match mask(text) {
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        };
    }
    let store = read_store();
    let mut out = Cow::Borrowed(bytes);
    for value in &store.masked {
        let needle = value.as_bytes();
        if find(&out, needle).is_none() {
            continue;
        }
        let mut replaced = Vec::with_capacity(out.len());
        let mut rest: &[u8] = &out;
        while let Some(at) = find(rest, needle) {
            replaced.extend_from_slice(&rest[..at]);
            replaced.extend_from_slice(REDACTED.as_bytes());
            rest = &rest[at + needle.len()..];
        }
        replaced.extend_from_slice(rest);
        out = Cow::Owned(replaced);
    }
    out
}

/// How much of a file [`holds_key`] looks at: a larger file is a log or a dump, and is checked in its first part only
/// (every read of it pays for the scan, so the bound keeps a window of a huge log cheap).
pub(crate) const MAX_SCANNED_BYTES: u64 = 16 * 1024 * 1024;

/// Whether the open `file` holds a registered secret anywhere (in its first [`MAX_SCANNED_BYTES`]). Reads with
/// `read_at`, so the caller's position in the file is left where it was and the check is on the very file the
/// caller reads, not on a path that might have been swapped.
pub fn holds_key(file: &std::fs::File) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let store = read_store();
    let Some(longest) = store.masked.first().map(String::len) else {
        return Ok(false);
    };
    const CHUNK: usize = 1024 * 1024;
    // Each read keeps the last `longest - 1` bytes of the one before, so a key across two reads is still seen.
    let mut buf = vec![0u8; CHUNK + longest];
    let mut kept = 0;
    let mut at: u64 = 0;
    while at < MAX_SCANNED_BYTES {
        let n = match file.read_at(&mut buf[kept..], at) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        at += n as u64;
        let filled = kept + n;
        if store
            .masked
            .iter()
            .any(|value| find(&buf[..filled], value.as_bytes()).is_some())
        {
            return Ok(true);
        }
        kept = filled.min(longest.saturating_sub(1));
        buf.copy_within(filled - kept..filled, 0);
    }
    Ok(false)
}

/// Whether any secret is registered (a file cannot hold a known key when none is known).
pub(crate) fn any_registered() -> bool {
    !read_store().masked.is_empty()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    memchr::memmem::find(haystack, needle)
}

/// A writer that masks every write before passing it on. A secret split across two writes is not seen; every user of
/// this writes whole lines or whole deltas, and a key never reaches the model's text in the first place.
pub struct MaskingWriter<W> {
    inner: W,
}

impl<W: Write> MaskingWriter<W> {
    pub fn new(inner: W) -> Self {
        Self { inner }
    }
}

impl<W: Write> Write for MaskingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write_all(&mask_bytes(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Overwrites the secret entries of this process's original environment block (what `/proc/self/environ` shows).
/// Returns how many entries were overwritten; 0 when `/proc` cannot say where the block is.
///
/// # Safety
/// Single-threaded, and nothing may still point into a secret entry (they were `unsetenv`ed).
unsafe fn scrub_own_block() -> usize {
    let Some((start, end)) = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| environment_block(&stat))
    else {
        return 0;
    };
    // SAFETY: [start, end) is the environment block the kernel set up at exec: mapped, writable (it is on the initial
    // stack), and owned by this process for its whole life. Only the bytes of secret entries are changed.
    let block = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    scrub_block(block, |name| is_secret_name(bytes_to_os(name)))
}

fn bytes_to_os(bytes: &[u8]) -> &OsStr {
    use std::os::unix::ffi::OsStrExt;
    OsStr::from_bytes(bytes)
}

/// `env_start` and `env_end` from the text of `/proc/<pid>/stat` (fields 50 and 51).
fn environment_block(stat: &str) -> Option<(usize, usize)> {
    // The command name (field 2) is in parentheses and may hold spaces or ')': count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 is the first after the name.
    let start: usize = fields.get(50 - 3)?.parse().ok()?;
    let end: usize = fields.get(51 - 3)?.parse().ok()?;
    (start != 0 && start < end).then_some((start, end))
}

/// Overwrites with NUL bytes every `NAME=value` entry of an environment block whose name `is_secret`. Returns how
/// many entries were overwritten.
fn scrub_block(block: &mut [u8], is_secret: impl Fn(&[u8]) -> bool) -> usize {
    let mut scrubbed = 0;
    let mut at = 0;
    while at < block.len() {
        let len = block[at..].iter().position(|&b| b == 0).unwrap_or(block.len() - at);
        let entry = &block[at..at + len];
        if let Some(eq) = entry.iter().position(|&b| b == b'=')
            && eq > 0
            && is_secret(&entry[..eq])
        {
            block[at..at + len].fill(0);
            scrubbed += 1;
        }
        at += len + 1;
    }
    scrubbed
}

#[cfg(test)]
mod tests;
