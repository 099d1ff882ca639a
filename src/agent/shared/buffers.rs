//! An editor's buffers as the tools' `Buffers`: a read asks the frontend (`Event::ReadBuffer`) and waits for its
//! `Op::BufferText`, at most `WAIT`; an interrupt answers every waiting read with nothing (the file is read from
//! disk). When the editor takes writes, an edit's new text goes to it the same way (`Event::WriteBuffer`, answered by
//! `Op::BufferWritten`); a write that is refused, not answered in time or interrupted is an error, never a write to
//! disk. The questions map holds the waiters, so a subagent's reads and writes are answered like the main agent's.
//!
//! The editor opens the path itself and follows a symlink on it: a command left running could swap one to a
//! credential store in while the editor reads, and back. So a read's path is stamped (`tern_fs::path_stamp`, from the
//! workspace down) before the editor is asked and again when it answered; a text read while anything on the way
//! changed is dropped, and the file read from disk, where tern's own reads follow no symlink.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tern_protocol::Event;
use tokio::sync::{mpsc, oneshot};

use super::{Questions, Shared};

/// How long a read waits for the editor before it reads the file from disk, and a write before it fails.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

pub(super) struct EditorBuffers {
    pub(super) questions: Arc<Mutex<Questions>>,
    /// The asking agent's own events (a subagent's are tagged with it on the way out).
    pub(super) events: mpsc::UnboundedSender<Event>,
    /// The editor takes writes.
    pub(super) writes: bool,
    /// The workspace: a read's path is stamped from here down (from `/` when outside).
    pub(super) root: PathBuf,
}

#[async_trait::async_trait]
impl tern_tools::Buffers for EditorBuffers {
    async fn text(&self, path: &Path) -> Option<String> {
        let base = if path.starts_with(&self.root) {
            self.root.as_path()
        } else {
            Path::new("/")
        };
        let before = tern_fs::path_stamp(base, path).ok()?;
        let text = self.ask_text(path).await?;
        if tern_fs::path_stamp(base, path).ok()? != before {
            tracing::warn!(path = %path.display(), "the path changed while the editor read it; reading the disk");
            return None;
        }
        Some(text)
    }

    fn writes(&self) -> bool {
        self.writes
    }

    async fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        if !self.writes {
            return Err("the editor takes no writes".into());
        }
        // Every line to the editor is masked: a key would reach its file as the mask, so it is not sent at all.
        if tern_secrets::mask(text) != text {
            return Err("the new text holds a known key, which tern never sends to the editor".into());
        }
        let (tx, rx) = oneshot::channel();
        let id = self.waiting(|questions, id| questions.writes.insert(id, tx));
        let asked = Event::WriteBuffer {
            id,
            path: path.display().to_string(),
            text: text.to_string(),
        };
        if self.events.send(asked).is_err() {
            self.lock().writes.remove(&id);
            return Err("the editor is gone".into());
        }
        let answer = tokio::time::timeout(WAIT, rx).await;
        self.lock().writes.remove(&id);
        match answer {
            Ok(Ok(written)) => written,
            Ok(Err(_)) => Err("the session ended before the editor answered".into()),
            Err(_) => Err(format!("the editor did not answer in {} s", WAIT.as_secs())),
        }
    }
}

impl EditorBuffers {
    /// The editor's text of `path`, asked for and waited on.
    async fn ask_text(&self, path: &Path) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        let id = self.waiting(|questions, id| questions.buffers.insert(id, tx));
        let asked = Event::ReadBuffer {
            id,
            path: path.display().to_string(),
        };
        if self.events.send(asked).is_err() {
            return None;
        }
        let text = tokio::time::timeout(WAIT, rx).await.ok().and_then(Result::ok).flatten();
        self.lock().buffers.remove(&id);
        text
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Questions> {
        self.questions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new question's id, its waiter kept by `keep`.
    fn waiting<T>(&self, keep: impl FnOnce(&mut Questions, u64) -> T) -> u64 {
        let mut questions = self.lock();
        let id = questions.next_id();
        keep(&mut questions, id);
        id
    }
}

impl Shared {
    /// From now on reads ask the frontend for the editor's text (`tern acp` with an editor that offers it), and, when
    /// it takes `writes` too, edits are made to that text and written through it.
    pub(crate) fn offer_buffers(&self, writes: bool) {
        let mut questions = self.questions.lock().unwrap_or_else(PoisonError::into_inner);
        questions.editor = true;
        questions.editor_writes = writes;
    }

    /// What a call's tools read (and edit) through: the editor, when one offered its buffers; `root` is the workspace.
    pub(crate) fn buffers(&self, root: &Path) -> Option<Arc<dyn tern_tools::Buffers>> {
        let (offered, writes) = {
            let questions = self.questions.lock().unwrap_or_else(PoisonError::into_inner);
            (questions.editor, questions.editor_writes)
        };
        offered.then(|| {
            Arc::new(EditorBuffers {
                questions: Arc::clone(&self.questions),
                events: self.events.clone(),
                writes,
                root: root.to_path_buf(),
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

    /// The editor's answer to write `id`: `None` when it wrote the text, else why not.
    pub(crate) fn answer_write(&self, id: u64, error: Option<String>) {
        let waiter = self.questions.lock().ok().and_then(|mut q| q.writes.remove(&id));
        if let Some(tx) = waiter {
            let _ = tx.send(error.map_or(Ok(()), Err));
        }
    }

    /// An interrupt: every read waiting for the editor goes to disk instead, and every write waiting for it fails.
    pub(crate) fn cancel_editor_questions(&self) {
        if let Ok(mut questions) = self.questions.lock() {
            for (_, tx) in questions.buffers.drain() {
                let _ = tx.send(None);
            }
            for (_, tx) in questions.writes.drain() {
                let _ = tx.send(Err(
                    "interrupted before the editor answered (it may still write the text)".into(),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests;
