//! An editor's buffers as the tools' `Buffers`: a read asks the frontend (`Event::ReadBuffer`) and waits for its
//! `Op::BufferText`, at most `WAIT`; an interrupt answers every waiting read with nothing (the file is read from
//! disk). The questions map holds the waiters, so a subagent's reads are answered like the main agent's.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use tern_protocol::Event;
use tokio::sync::{mpsc, oneshot};

use super::{Questions, Shared};

/// How long a read waits for the editor before it reads the file from disk.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

pub(super) struct EditorBuffers {
    pub(super) questions: Arc<Mutex<Questions>>,
    /// The asking agent's own events (a subagent's are tagged with it on the way out).
    pub(super) events: mpsc::UnboundedSender<Event>,
}

#[async_trait::async_trait]
impl tern_tools::Buffers for EditorBuffers {
    async fn text(&self, path: &Path) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut questions = self.questions.lock().unwrap_or_else(PoisonError::into_inner);
            let id = questions.next_id();
            questions.buffers.insert(id, tx);
            id
        };
        let asked = Event::ReadBuffer {
            id,
            path: path.display().to_string(),
        };
        if self.events.send(asked).is_err() {
            return None;
        }
        let text = tokio::time::timeout(WAIT, rx).await.ok().and_then(Result::ok).flatten();
        self.questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .buffers
            .remove(&id);
        text
    }
}

impl Shared {
    /// From now on reads ask the frontend for the editor's text (`tern acp` with an editor that offers it).
    pub(crate) fn offer_buffers(&self) {
        self.questions.lock().unwrap_or_else(PoisonError::into_inner).editor = true;
    }

    /// What a call's tools read through: the editor, when one offered its buffers.
    pub(crate) fn buffers(&self) -> Option<Arc<dyn tern_tools::Buffers>> {
        let offered = self.questions.lock().unwrap_or_else(PoisonError::into_inner).editor;
        offered.then(|| {
            Arc::new(EditorBuffers {
                questions: Arc::clone(&self.questions),
                events: self.events.clone(),
            }) as Arc<dyn tern_tools::Buffers>
        })
    }

    /// The editor's answer to read `id`.
    pub(crate) fn answer_buffer(&self, id: u64, text: Option<String>) {
        let waiter = self.questions.lock().ok().and_then(|mut q| q.buffers.remove(&id));
        if let Some(tx) = waiter {
            let _ = tx.send(text);
        }
    }

    /// An interrupt: every read waiting for the editor goes to disk instead.
    pub(crate) fn cancel_buffer_reads(&self) {
        if let Ok(mut questions) = self.questions.lock() {
            for (_, tx) in questions.buffers.drain() {
                let _ = tx.send(None);
            }
        }
    }
}

#[cfg(test)]
mod tests;
