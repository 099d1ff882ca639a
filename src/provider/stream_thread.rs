//! Model requests run on a thread of their own, which sleeps between the batches of a fast stream.
//!
//! A model streams an event per token, each its own network packet. On the shared runtime every packet wakes a
//! worker out of `epoll_wait`, whether or not anyone reads the socket yet: at 2,000 tokens a second that was about
//! half of what a streamed answer cost. Here the request and its connection live on a current-thread runtime whose
//! thread, between batches, sleeps outside it: packets wait in the socket and wake nothing. After an answer has
//! streamed for `PACE_AFTER`, its chunks are passed on in batches at most `PACE` apart (no screen shows them sooner
//! than its next frame anyway); before that, and for a slow stream, each chunk goes on as it comes.
//!
//! While the thread sleeps for one stream, other requests on it wait too, at most `PACE`.

use std::sync::Mutex;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, Response, StatusCode};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Text that has streamed this long is passed on in batches: a short answer is never held back.
const PACE_AFTER: Duration = Duration::from_millis(250);
/// A batch starts at most this often.
const PACE: Duration = tern_protocol::STREAM_FRAME;

/// The room a batch starts with: a frame of a fast stream fits without growing it (2,000 events a second of about
/// 150 bytes each are about 10 KB a frame).
const BATCH_CAPACITY: usize = 16 * 1024;

/// The status and headers of a response.
pub(crate) struct Head {
    pub status: StatusCode,
    pub headers: HeaderMap,
}

/// A response's body as the stream thread passes it on. Dropping it stops the request (and closes its connection).
pub(crate) struct Body {
    chunks: mpsc::UnboundedReceiver<reqwest::Result<Bytes>>,
    _task: AbortOnDrop,
}

impl Body {
    /// The next chunk (a batch of them, on a fast stream); `None` at the end of the body.
    pub(crate) async fn chunk(&mut self) -> reqwest::Result<Option<Bytes>> {
        self.chunks.recv().await.transpose()
    }
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why a request sent on the stream thread has no response.
pub(crate) enum SendError {
    Http(reqwest::Error),
    /// Its task ended without a word (it panicked, or the runtime is gone).
    Lost,
    /// The stream thread could not be started: why.
    NoThread(String),
}

/// Sends `request` on the stream thread; its head comes back, then its body through `Body`.
pub(crate) async fn send(request: RequestBuilder) -> Result<(Head, Body), SendError> {
    let (head_tx, head_rx) = oneshot::channel();
    let (chunks_tx, chunks) = mpsc::unbounded_channel();
    let thread = thread().map_err(SendError::NoThread)?;
    let task = AbortOnDrop(thread.handle.spawn(async move {
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                let _ = head_tx.send(Err(e));
                return;
            }
        };
        let head = Head {
            status: response.status(),
            headers: response.headers().clone(),
        };
        if head_tx.send(Ok(head)).is_ok() {
            pump(response, chunks_tx).await;
        }
    }));
    match head_rx.await {
        Ok(Ok(head)) => Ok((head, Body { chunks, _task: task })),
        Ok(Err(e)) => Err(SendError::Http(e)),
        Err(_) => Err(SendError::Lost),
    }
}

/// Passes the body on: chunk by chunk at first, then in batches at most `PACE` apart.
async fn pump(mut response: Response, out: mpsc::UnboundedSender<reqwest::Result<Bytes>>) {
    let mut streaming_since = None;
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return,
            Err(e) => {
                let _ = out.send(Err(e));
                return;
            }
        };
        let started = Instant::now();
        let since = *streaming_since.get_or_insert(started);
        if started < since + PACE_AFTER {
            if out.send(Ok(chunk)).is_err() {
                return;
            }
            continue;
        }
        // A batch: this chunk and every one the connection already holds. The connection's task hands the body
        // over a chunk at a time, so it gets one turn of the scheduler to hand over the next before the batch ends.
        let mut batch = BytesMut::with_capacity(chunk.len().max(BATCH_CAPACITY));
        batch.extend_from_slice(&chunk);
        let mut end = None;
        loop {
            tokio::select! {
                biased;
                next = response.chunk() => match next {
                    Ok(Some(chunk)) => batch.extend_from_slice(&chunk),
                    other => {
                        end = Some(other);
                        break;
                    }
                },
                () = tokio::task::yield_now() => break,
            }
        }
        if out.send(Ok(batch.freeze())).is_err() {
            return;
        }
        match end {
            None => pause_until(started + PACE).await,
            Some(Err(e)) => {
                let _ = out.send(Err(e));
                return;
            }
            Some(_) => return,
        }
    }
}

/// The stream thread: its runtime's handle, and what its streams ask of it.
struct StreamThread {
    handle: tokio::runtime::Handle,
    /// The earliest time a paused stream wants to go on; the thread sleeps until then.
    until: Mutex<Option<Instant>>,
    /// A stream asked to pause.
    asked: Notify,
    /// The thread woke from its sleep.
    woken: Notify,
}

/// The stream thread, started by the first request. When the system refuses a thread or a runtime, the request
/// fails with the reason and the next one tries again.
fn thread() -> Result<&'static StreamThread, String> {
    static THREAD: Mutex<Option<&'static StreamThread>> = Mutex::new(None);
    let mut slot = THREAD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(thread) = *slot {
        return Ok(thread);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime for model requests: {e}"))?;
    let handle = runtime.handle().clone();
    let (started_tx, started_rx) = std::sync::mpsc::channel::<&'static StreamThread>();
    std::thread::Builder::new()
        .name("tern-stream".into())
        .spawn(move || {
            if let Ok(shared) = started_rx.recv() {
                run(runtime, shared);
            }
        })
        .map_err(|e| format!("cannot start the thread for model requests: {e}"))?;
    let shared: &'static StreamThread = Box::leak(Box::new(StreamThread {
        handle,
        until: Mutex::new(None),
        asked: Notify::new(),
        woken: Notify::new(),
    }));
    // The thread waits for this before it runs anything; it cannot have gone.
    let _ = started_tx.send(shared);
    *slot = Some(shared);
    Ok(shared)
}

/// Runs the requests until a stream asks to pause, sleeps (outside the runtime, so no packet wakes the thread) until
/// the earliest time asked for, wakes the paused streams, and again.
fn run(runtime: tokio::runtime::Runtime, shared: &'static StreamThread) {
    loop {
        let until = runtime.block_on(async {
            // The streams that paused before the sleep go on. Woken here, on the runtime's thread, they are queued
            // as its own tasks: from outside it, their wake-up would first wake the runtime through its event fd.
            // (The first time round, nothing waits.)
            shared.woken.notify_waiters();
            loop {
                let asked = shared.asked.notified();
                if let Some(until) = shared.until.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    return until;
                }
                asked.await;
            }
        });
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    }
}

/// Waits until `until` with the whole thread asleep. Only for tasks on the stream thread.
async fn pause_until(until: Instant) {
    let Ok(shared) = thread() else {
        // Not on the stream thread after all (it always exists there): a plain timer.
        return tokio::time::sleep_until(until).await;
    };
    let woken = shared.woken.notified();
    {
        let mut slot = shared.until.lock().unwrap_or_else(|e| e.into_inner());
        *slot = Some(slot.map_or(until, |earlier| earlier.min(until)));
    }
    shared.asked.notify_one();
    woken.await;
}

#[cfg(test)]
mod tests;
