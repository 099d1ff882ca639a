//! The terminal's input, as a stream the UI loop polls on every wake-up.
//!
//! crossterm's `EventStream` answers each poll by asking its reader whether an event waits, and that reader is locked
//! by the helper thread blocked on the terminal: every poll spun on the lock (with `sched_yield`) for nothing, each
//! time the loop woke for a frame or an agent event. `Input` asks only when crossterm's helper has said that an
//! event came (or before it waits at all); in between, a poll just leaves the task's waker.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use crossterm::event::{Event, EventStream};
use futures_util::Stream;
use futures_util::task::AtomicWaker;

/// crossterm's `EventStream::new` waits for its reader, which the kitty keyboard query holds for up to two seconds on
/// a terminal that answers neither query: the stream is made on a blocking thread, so the first frame never waits
/// for it (keys typed meanwhile wait in the terminal, none is lost).
pub(super) enum Input {
    Starting(tokio::task::JoinHandle<EventStream>),
    Ready(Quiet),
}

impl Input {
    pub(super) fn start() -> Self {
        Input::Starting(tokio::task::spawn_blocking(EventStream::new))
    }

    /// Input read from `stream`, made on this thread (after the terminal was handed back).
    pub(super) fn ready(stream: EventStream) -> Self {
        Input::Ready(Quiet::new(stream))
    }

    /// The next terminal event; `None` when input ended. Cancel-safe, as `select!` needs.
    pub(super) async fn next(&mut self) -> Option<std::io::Result<Event>> {
        if let Input::Starting(handle) = self {
            match handle.await {
                Ok(stream) => *self = Input::ready(stream),
                Err(_) => return None,
            }
        }
        match self {
            Input::Ready(quiet) => quiet.next().await,
            Input::Starting(_) => None,
        }
    }
}

/// An `EventStream` polled only when its helper has woken it.
pub(super) struct Quiet {
    stream: EventStream,
    signal: Arc<Signal>,
    /// crossterm's helper holds our waker and waits on the terminal.
    waiting: bool,
}

/// The waker crossterm's helper holds: it marks that it fired and wakes whichever task polled last.
#[derive(Default)]
struct Signal {
    fired: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.fired.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl Quiet {
    fn new(stream: EventStream) -> Self {
        Self {
            stream,
            signal: Arc::new(Signal::default()),
            waiting: false,
        }
    }

    async fn next(&mut self) -> Option<std::io::Result<Event>> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<std::io::Result<Event>>> {
        self.signal.task.register(cx.waker());
        if self.waiting && !self.signal.fired.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        self.waiting = false;
        let waker = Waker::from(self.signal.clone());
        let polled = Pin::new(&mut self.stream).poll_next(&mut Context::from_waker(&waker));
        if polled.is_pending() {
            self.waiting = true;
        }
        polled
    }
}
