//! What tern tells MCP servers about the client side of a session: the roots (the workspace, as `file://` URIs) and
//! whether someone can answer a server's request for input (elicitation), and the channel such requests travel on to
//! the agent, which shows them to the user as `Event::Elicitation` and routes the `Op::Elicit` answer back.
//!
//! Nothing here decides an answer: with no one to ask (no agent listening, `tern mcp list`), a request is declined
//! with a reason the model is told.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{self, AtomicUsize};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{Notify, mpsc, oneshot};

use tern_protocol::ElicitationAnswer;

/// A server's request for input, on its way to the agent.
#[derive(Debug)]
pub struct ElicitationRequest {
    pub server: String,
    pub message: String,
    /// The requested schema as the server sent it.
    pub schema: Value,
    pub reply: oneshot::Sender<ElicitationAnswer>,
}

/// Where a session's elicitation requests arrive; the agent's runner takes them.
pub type ElicitationInbox = mpsc::UnboundedReceiver<ElicitationRequest>;

/// The client side of every connection of a session.
#[derive(Debug, Clone, Default)]
pub struct ClientSetup {
    /// Declared as the `roots` capability and listed on `roots/list`; none: roots are not declared.
    pub roots: Vec<PathBuf>,
    /// Declared as the `elicitation` capability (form mode); `None`: not declared.
    pub elicitor: Option<Elicitor>,
}

impl ClientSetup {
    /// A session's setup: the workspace as the root, and elicitation requests sent to the returned inbox.
    pub fn session(workspace: &Path) -> (Self, ElicitationInbox) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self {
                roots: vec![workspace.to_path_buf()],
                elicitor: Some(Elicitor { tx: Some(tx) }),
            },
            rx,
        )
    }

    /// What `tern mcp list` declares: the same capabilities as a session (so servers list the same tools), with no
    /// one to answer.
    pub(crate) fn listing(workspace: &Path) -> Self {
        Self {
            roots: vec![workspace.to_path_buf()],
            elicitor: Some(Elicitor { tx: None }),
        }
    }
}

/// Sends elicitation requests to the agent.
#[derive(Debug, Clone)]
pub struct Elicitor {
    tx: Option<mpsc::UnboundedSender<ElicitationRequest>>,
}

/// Why a request was declined when no one could be asked.
pub(crate) const NO_ONE_TO_ASK: &str = "there is no one to ask in this session";

impl Elicitor {
    /// Asks the user through the agent and waits for the answer; declined when nobody listens.
    pub(crate) async fn ask(&self, server: &str, message: &str, schema: Value) -> ElicitationAnswer {
        let declined = || ElicitationAnswer::Decline {
            reason: Some(NO_ONE_TO_ASK.to_string()),
        };
        let Some(tx) = &self.tx else {
            return declined();
        };
        let (reply, answer) = oneshot::channel();
        let request = ElicitationRequest {
            server: server.to_string(),
            message: message.to_string(),
            schema,
            reply,
        };
        if tx.send(request).is_err() {
            return declined();
        }
        // A dropped reply (the agent stopped, the turn was interrupted) cancels what asked.
        answer.await.unwrap_or(ElicitationAnswer::Cancel)
    }
}

/// A directory as a `file://` URI: absolute, `/`-separated, with everything but unreserved characters and `/`
/// percent-encoded.
pub(crate) fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::from("file://");
    if !text.starts_with('/') {
        out.push('/');
    }
    for byte in text.bytes() {
        let c = byte as char;
        if c.is_ascii_alphanumeric() || "-._~/".contains(c) {
            out.push(c);
        } else if c == '\\' {
            out.push('/');
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The sentence the model reads in a call's result when a request for input was not answered with values.
pub(crate) fn note_for_model(server: &str, message: &str, answer: &ElicitationAnswer) -> Option<String> {
    let message: String = message.chars().take(200).collect();
    match answer {
        ElicitationAnswer::Accept { .. } => None,
        ElicitationAnswer::Decline { reason: Some(reason) } => Some(format!(
            "[tern: MCP server `{server}` asked the user for input ({message:?}); tern declined: {reason}]"
        )),
        ElicitationAnswer::Decline { reason: None } => Some(format!(
            "[tern: MCP server `{server}` asked the user for input ({message:?}); the user declined]"
        )),
        ElicitationAnswer::Cancel => Some(format!(
            "[tern: MCP server `{server}` asked the user for input ({message:?}); the request was cancelled]"
        )),
    }
}

/// How many requests for input of a server wait for the user; a call's timeout does not run out while one does.
#[derive(Clone, Default)]
pub(crate) struct Asking {
    count: Arc<AtomicUsize>,
    answered: Arc<Notify>,
}

/// Counts one request for input while it waits (also when the wait is dropped).
pub(crate) struct AskingGuard(Asking);

impl Asking {
    pub(crate) fn start(&self) -> AskingGuard {
        self.count.fetch_add(1, atomic::Ordering::SeqCst);
        AskingGuard(self.clone())
    }

    fn waiting(&self) -> bool {
        self.count.load(atomic::Ordering::SeqCst) > 0
    }

    /// Sleeps `timeout`, and then for as long as the user is being asked, then `timeout` again from their answer.
    pub(crate) async fn sleep(&self, timeout: Duration) {
        tokio::time::sleep(timeout).await;
        while self.waiting() {
            let answered = self.answered.notified();
            if !self.waiting() {
                break;
            }
            answered.await;
            if !self.waiting() {
                tokio::time::sleep(timeout).await;
            }
        }
    }
}

impl Drop for AskingGuard {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, atomic::Ordering::SeqCst);
        self.0.answered.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspaces_become_file_uris() {
        assert_eq!(
            file_uri(Path::new("/home/me/my project")),
            "file:///home/me/my%20project"
        );
        assert_eq!(file_uri(Path::new("/tmp/a#b/ü")), "file:///tmp/a%23b/%C3%BC");
    }

    #[tokio::test]
    async fn with_no_one_listening_requests_are_declined() {
        let listing = ClientSetup::listing(Path::new("/ws"));
        let answer = listing.elicitor.unwrap().ask("s", "name?", Value::Null).await;
        assert_eq!(
            answer,
            ElicitationAnswer::Decline {
                reason: Some(NO_ONE_TO_ASK.into())
            }
        );
        let (setup, inbox) = ClientSetup::session(Path::new("/ws"));
        drop(inbox);
        let answer = setup.elicitor.unwrap().ask("s", "name?", Value::Null).await;
        assert!(matches!(answer, ElicitationAnswer::Decline { .. }));
    }

    #[tokio::test]
    async fn answers_come_back_from_the_inbox() {
        let (setup, mut inbox) = ClientSetup::session(Path::new("/ws"));
        let asking = tokio::spawn(async move { setup.elicitor.unwrap().ask("s", "name?", Value::Null).await });
        let request = inbox.recv().await.unwrap();
        assert_eq!((request.server.as_str(), request.message.as_str()), ("s", "name?"));
        let mut content = serde_json::Map::new();
        content.insert("name".into(), "Ada".into());
        request
            .reply
            .send(ElicitationAnswer::Accept {
                content: content.clone(),
            })
            .unwrap();
        assert_eq!(asking.await.unwrap(), ElicitationAnswer::Accept { content });
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_timeout_waits_while_the_user_is_asked() {
        let asking = Asking::default();
        let start = tokio::time::Instant::now();
        let guard = asking.start();
        let sleeping = tokio::spawn({
            let asking = asking.clone();
            async move { asking.sleep(Duration::from_millis(50)).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!sleeping.is_finished(), "timed out while the user was asked");
        drop(guard);
        sleeping.await.unwrap();
        // The full timeout again from the answer: never less than the wait plus one timeout.
        assert!(start.elapsed() >= Duration::from_millis(350));
    }
}
