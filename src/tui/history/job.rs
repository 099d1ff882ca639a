//! Building one call's detail document, on the UI thread when it is small and on a short-lived background thread when
//! it reads the stored result or is large. The layer polls the job; dropping it asks the thread to stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use super::catalog::Sig;
use super::doc::{self, Built, Doc, Kind, Source};
use crate::state::calls::ToolCallState;

/// A built document with an id that changes whenever the shown document does (the view caches wrapped lines by it).
#[derive(Clone)]
pub(crate) struct Shown {
    pub(crate) generation: u64,
    pub(crate) built: Arc<Built>,
}

impl Shown {
    fn new(built: Built) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self {
            generation: NEXT.fetch_add(1, Ordering::Relaxed),
            built: Arc::new(built),
        }
    }
}

enum State {
    Pending {
        rx: Receiver<Built>,
        cancel: Arc<AtomicBool>,
        /// The previous document of the same call, shown until the new one is ready.
        stale: Option<Shown>,
    },
    Ready(Shown),
}

pub(crate) struct DetailJob {
    pub(crate) call_id: String,
    sig: Sig,
    state: State,
}

impl DetailJob {
    pub(crate) fn start(call: &ToolCallState, stale: Option<Shown>) -> Self {
        let source = Source::of(call);
        let state = if source.needs_background() {
            spawn(source, stale)
        } else {
            State::Ready(Shown::new(doc::build(source, &AtomicBool::new(false))))
        };
        Self {
            call_id: call.call_id.clone(),
            sig: Sig::of(call),
            state,
        }
    }

    /// True when this job was built from `call` as it is now.
    pub(crate) fn is_current(&self, call: &ToolCallState) -> bool {
        self.call_id == call.call_id && self.sig == Sig::of(call)
    }

    /// Takes the result if the thread has finished.
    pub(crate) fn poll(&mut self) {
        if let State::Pending { rx, .. } = &self.state {
            let built = match rx.try_recv() {
                Ok(built) => built,
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => Built {
                    doc: Doc::message(Kind::Error, "Building this view failed (the worker thread stopped)."),
                    full_text: String::new(),
                    copy_note: None,
                },
            };
            self.state = State::Ready(Shown::new(built));
        }
    }

    pub(crate) fn is_pending(&self) -> bool {
        matches!(self.state, State::Pending { .. })
    }

    /// The finished document, if any.
    pub(crate) fn ready(&self) -> Option<&Shown> {
        match &self.state {
            State::Ready(shown) => Some(shown),
            State::Pending { .. } => None,
        }
    }

    /// What to show now: the finished document, or the previous one of this call while rebuilding.
    pub(crate) fn shown(&self) -> Option<&Shown> {
        match &self.state {
            State::Ready(shown) => Some(shown),
            State::Pending { stale, .. } => stale.as_ref(),
        }
    }
}

impl Drop for DetailJob {
    fn drop(&mut self) {
        if let State::Pending { cancel, .. } = &self.state {
            cancel.store(true, Ordering::Relaxed);
        }
    }
}

fn spawn(source: Source, stale: Option<Shown>) -> State {
    let (tx, rx) = channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let spawned = std::thread::Builder::new()
        .name("tern-history-load".into())
        .spawn(move || {
            let built = doc::build(source, &flag);
            let _ = tx.send(built);
        });
    match spawned {
        Ok(_) => State::Pending { rx, cancel, stale },
        Err(e) => State::Ready(Shown::new(Built {
            doc: Doc::message(
                Kind::Error,
                &format!("Could not start a thread to load this result: {e}"),
            ),
            full_text: String::new(),
            copy_note: None,
        })),
    }
}
