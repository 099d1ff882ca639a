//! Highlighting too large for a frame, done off the render path. A code block with more uncached lines than
//! `SYNC_LINES` is drawn plain (its cached part coloured) and handed to one worker thread, which highlights it into
//! the cache (`cache`), moves the `epoch` and wakes the UI; the next frame re-lays out the cells drawn provisionally
//! and finds the block in the cache. The worker sleeps on a condition variable when there is nothing to do (no
//! wake-ups while idle) and takes the newest block first: the one just scrolled onto. Views learn which layouts were
//! provisional with `track`.

use std::cell::Cell;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, LazyLock, Mutex, MutexGuard};

use syntect::highlighting as syn;
use syntect::parsing::SyntaxReference;

use crate::theme::Theme;

/// More uncached lines than this are highlighted by the worker. syntect takes tens of microseconds a line (30 to 100
/// with the pure-Rust regex engine, less with Oniguruma), and a first visit lays out one or two cells of up to two blocks each: this many keep a
/// frame inside its 2 ms, and a block still streaming (a line or two new a frame) stays on the render path.
pub(crate) const SYNC_LINES: usize = 10;

/// Moves whenever code drawn plain may now be coloured: warm-up ended, or the worker finished a block.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// The UI's wake-up channel, once `warm_up_and_notify` gave it.
static NOTIFY: Mutex<Option<tokio::sync::mpsc::UnboundedSender<()>>> = Mutex::new(None);

thread_local! {
    /// Set when code was drawn plain for now during a `track`ed layout on this thread.
    static PROVISIONAL: Cell<bool> = const { Cell::new(false) };
    /// Set while this thread draws a frame (`frame`).
    static IN_FRAME: Cell<bool> = const { Cell::new(false) };
}

/// Draws one frame: while the worker is busy, the frame hands it even small blocks (`defer_small`).
pub(crate) fn frame<R>(f: impl FnOnce() -> R) -> R {
    let outer = IN_FRAME.replace(true);
    let out = f();
    IN_FRAME.set(outer);
    out
}

/// Whether a block small enough for a frame still goes to the worker: in a frame, while the worker runs. Both threads
/// in syntect's shared regexes contend for their scratch pools and the allocator, and the frame would wait on the
/// worker (a first-visit frame's p99 went from 2.9 ms to 1.2 ms with this; `cargo bench --bench tui`, row 1b).
pub(super) fn defer_small() -> bool {
    IN_FRAME.get() && !idle()
}

/// One block for the worker.
pub(super) struct Job {
    pub(crate) code: String,
    pub(crate) syntax: &'static SyntaxReference,
    pub(crate) syn_theme: &'static syn::Theme,
    pub(crate) theme: Theme,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// Blocks queued or being highlighted, so a block on screen for several frames is queued once.
    pending: HashSet<u64>,
    started: bool,
}

static QUEUE: LazyLock<(Mutex<Queue>, Condvar)> = LazyLock::new(Default::default);

fn queue() -> MutexGuard<'static, Queue> {
    // Every update is a single push, pop or insert: a poisoned lock still holds consistent data.
    QUEUE.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The current epoch: a layout made provisionally at another epoch is stale.
pub(crate) fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// Runs `f` (a layout) and says whether it drew any code plain for now (before warm-up, or while the worker
/// highlights it). Such a layout should be made again once `epoch` moves past the one read before it was made.
pub(crate) fn track<R>(f: impl FnOnce() -> R) -> (R, bool) {
    let outer = PROVISIONAL.replace(false);
    let out = f();
    let provisional = PROVISIONAL.replace(outer || PROVISIONAL.get());
    (out, provisional)
}

/// Notes that the layout being made shows code plain for now (also for a view reusing lines that did).
pub(crate) fn mark_provisional() {
    PROVISIONAL.set(true);
}

/// Code drawn plain may now be coloured: move the epoch and wake the UI.
pub(super) fn advance() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
    let notify = NOTIFY.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(tx) = notify.as_ref() {
        let _ = tx.send(());
    }
}

/// Where the worker wakes the UI when a block is done.
pub(super) fn set_notify(tx: &tokio::sync::mpsc::UnboundedSender<()>) {
    *NOTIFY.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx.clone());
}

/// Hands `job` to the worker (started on first use). False when no worker could be started: highlight it here.
pub(super) fn submit(job: Job) -> bool {
    let id = job_id(&job);
    let mut queue = queue();
    if !queue.started {
        let spawned = std::thread::Builder::new().name("tern-highlight".into()).spawn(work);
        if spawned.is_err() {
            return false;
        }
        queue.started = true;
    }
    if queue.pending.insert(id) {
        queue.jobs.push(job);
        QUEUE.1.notify_one();
    }
    true
}

fn job_id(job: &Job) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    job.code.hash(&mut hasher);
    job.syntax.name.hash(&mut hasher);
    job.theme.syntax_theme.hash(&mut hasher);
    format!("{:?}", job.theme.text).hash(&mut hasher);
    hasher.finish()
}

/// The worker: newest block first, into the cache, then a word to the UI.
fn work() {
    loop {
        let job = {
            let mut queue = queue();
            loop {
                if let Some(job) = queue.jobs.pop() {
                    break job;
                }
                queue = QUEUE.1.wait(queue).unwrap_or_else(|p| p.into_inner());
            }
        };
        let id = job_id(&job);
        super::highlight_cached(&job.code, job.syntax, job.syn_theme, &job.theme);
        // The epoch moves with the block leaving the queue, under its lock: whoever sees the block done (`idle`)
        // sees the epoch moved too.
        let mut queue = queue();
        queue.pending.remove(&id);
        advance();
        drop(queue);
    }
}

/// Whether no block is queued or being highlighted (tests wait for this).
pub(crate) fn idle() -> bool {
    queue().pending.is_empty()
}
