//! Giving freed heap back to the system. glibc's allocator keeps what a large answer or a long turn freed inside its
//! arenas (one per thread that allocated), so a session's resident memory would stay at its high-water mark; after a
//! turn it is handed back (`malloc_trim`) on a short-lived thread, a moment later, so the frame that shows the end of
//! the turn and the frees it causes are not held up. Elsewhere (not glibc) this does nothing.
//!
//! It must not run on the render path, nor while a turn streams (trimming takes each arena's lock in turn).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long after a turn ends the heap is trimmed: the UI has drawn the turn's end and dropped what it no longer
/// needs by then.
const SETTLE: Duration = Duration::from_millis(200);

/// A trim is waiting to run: turns ending meanwhile share it.
static PENDING: AtomicBool = AtomicBool::new(false);

/// Hands the freed heap back to the system shortly, off the calling thread.
pub(crate) fn give_back_soon() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) || PENDING.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new().name("tern-trim".into()).spawn(|| {
        std::thread::sleep(SETTLE);
        PENDING.store(false, Ordering::Release);
        give_back_now();
    });
    if spawned.is_err() {
        PENDING.store(false, Ordering::Release);
    }
}

/// Hands the freed heap back to the system now.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn give_back_now() {
    // SAFETY: malloc_trim only walks the allocator's own free lists under its locks; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Hands the freed heap back to the system now (nothing to do but with glibc).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn give_back_now() {}
