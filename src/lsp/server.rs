//! One running language server: its child (a `ServerChild`, launched through the OS sandbox), and the task that
//! speaks LSP with it. The task sends `initialize`, then `initialized`, then the documents the edits gave it
//! (`didOpen` the first time, `didChange` with the whole text after), answers the requests a server may make of its
//! client with empty answers, keeps the latest `publishDiagnostics` of each document, and at the end sends
//! `shutdown` and `exit`. Documents sent before the handshake finished wait for it, in order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};

use crate::framing::{Decoder, encode};
use crate::report::{Diagnostic, parse};
use tern_process::server::ServerChild;

/// How long a server has to answer `shutdown` before it is ended anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);
const INITIALIZE_ID: i64 = 1;
const SHUTDOWN_ID: i64 = 2;

/// A document's text for the server.
struct Document {
    uri: String,
    language_id: &'static str,
    version: i64,
    text: String,
}

/// The latest diagnostics of one document.
#[derive(Clone)]
struct Published {
    /// The value of the counter when they came.
    seq: u64,
    version: Option<i64>,
    diagnostics: Vec<Diagnostic>,
}

/// What the session and the server's task share.
#[derive(Default)]
struct State {
    published: Mutex<HashMap<PathBuf, Published>>,
    versions: Mutex<HashMap<String, i64>>,
    ready: std::sync::atomic::AtomicBool,
    failed: Mutex<Option<String>>,
}

/// What waiting for a document's diagnostics came to.
pub(crate) enum Waited {
    Diagnostics(Vec<Diagnostic>),
    /// The deadline passed while the server was still starting (initialising, indexing).
    Starting,
    /// The deadline passed with the server ready: it said nothing about this version in time.
    Late,
    Failed(String),
}

/// A sent document to wait on.
pub(crate) struct Pending {
    path: PathBuf,
    version: i64,
    seq: u64,
}

/// A running server, as the session holds it; dropping it shuts the server down.
pub(crate) struct Server {
    documents: mpsc::UnboundedSender<Document>,
    state: Arc<State>,
    /// Bumped on every publish and on a change of the server's state.
    changes: watch::Receiver<u64>,
}

impl Server {
    /// Starts the server `name` from `cmd` (already the sandbox launcher, its environment and directory set) for the
    /// workspace `root`.
    pub(crate) fn start(name: &str, cmd: tokio::process::Command, root: &Path) -> Result<Self, String> {
        let (child, stdout, stdin) = ServerChild::spawn("language server", name, cmd, name)?;
        let (documents, inbox) = mpsc::unbounded_channel();
        let (bump, changes) = watch::channel(0);
        let state = Arc::new(State::default());
        let task = Task {
            state: Arc::clone(&state),
            bump,
            out: writer(stdin),
            root: crate::uri::from_path(root),
        };
        tokio::spawn(task.run(child, stdout, inbox));
        Ok(Self {
            documents,
            state,
            changes,
        })
    }

    /// Sends `text` as the content of `path` now (the task sends it once the server is ready); what to wait on.
    pub(crate) fn sync(&self, path: &Path, language_id: &'static str, text: String) -> Pending {
        let uri = crate::uri::from_path(path);
        let version = {
            let mut versions = self.state.versions.lock().unwrap_or_else(|p| p.into_inner());
            let version = versions.entry(uri.clone()).or_insert(0);
            *version += 1;
            *version
        };
        let seq = *self.changes.borrow();
        let _ = self.documents.send(Document {
            uri,
            language_id,
            version,
            text,
        });
        Pending {
            path: path.to_path_buf(),
            version,
            seq,
        }
    }

    /// The diagnostics the server publishes for `pending`'s version, waiting for them until `deadline`.
    pub(crate) async fn wait(&self, pending: &Pending, deadline: tokio::time::Instant) -> Waited {
        let mut changes = self.changes.clone();
        loop {
            if let Some(reason) = self.failure() {
                return Waited::Failed(reason);
            }
            let published = self
                .state
                .published
                .lock()
                .ok()
                .and_then(|p| p.get(&pending.path).cloned());
            // Diagnostics of this version, or (from a server that does not say versions) any that came after it was
            // sent.
            if let Some(published) =
                published.filter(|p| p.seq > pending.seq && p.version.is_none_or(|v| v >= pending.version))
            {
                return Waited::Diagnostics(published.diagnostics);
            }
            if tokio::time::timeout_at(deadline, changes.changed()).await.is_err() {
                let ready = self.state.ready.load(std::sync::atomic::Ordering::Acquire);
                return if ready { Waited::Late } else { Waited::Starting };
            }
        }
    }

    /// Why the server is gone, once it is.
    pub(crate) fn failure(&self) -> Option<String> {
        self.state.failed.lock().ok().and_then(|f| f.clone())
    }
}

/// Frames go to the server's stdin from a task of their own, so a server that writes while tern writes a long document
/// cannot stall both.
fn writer(mut stdin: ChildStdin) -> mpsc::UnboundedSender<Vec<u8>> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            if stdin.write_all(&frame).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    });
    tx
}

/// The task that speaks with one server.
struct Task {
    state: Arc<State>,
    bump: watch::Sender<u64>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    root: String,
}

impl Task {
    async fn run(self, child: ServerChild, mut stdout: ChildStdout, mut inbox: mpsc::UnboundedReceiver<Document>) {
        self.send(&self.initialize());
        let mut decoder = Decoder::default();
        let mut buf = vec![0u8; 64 * 1024];
        let mut opened: std::collections::HashSet<String> = Default::default();
        let mut shutting_down: Option<tokio::time::Instant> = None;
        let reason = loop {
            let ready = self.state.ready.load(std::sync::atomic::Ordering::Acquire);
            let grace = async {
                match shutting_down {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                read = stdout.read(&mut buf) => {
                    let n = match read {
                        Ok(0) | Err(_) => break None,
                        Ok(n) => n,
                    };
                    decoder.push(&buf[..n]);
                    match self.take_messages(&mut decoder) {
                        Ok(true) => break Some(String::new()),
                        Ok(false) => {}
                        Err(e) => break Some(e),
                    }
                }
                document = inbox.recv(), if ready && shutting_down.is_none() => match document {
                    Some(document) => self.send_document(document, &mut opened),
                    None => {
                        self.send(&json!({"jsonrpc": "2.0", "id": SHUTDOWN_ID, "method": "shutdown"}));
                        shutting_down = Some(tokio::time::Instant::now() + SHUTDOWN_GRACE);
                    }
                },
                _ = grace => break Some(String::new()),
            }
        };
        if shutting_down.is_some() {
            self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
            child.terminate(SHUTDOWN_GRACE).await;
            return;
        }
        let why = match reason {
            Some(e) if !e.is_empty() => e,
            _ => child.describe_exit().await,
        };
        tracing::warn!(reason = %why, "language server ended");
        child.kill();
        self.fail(why);
    }

    fn initialize(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": INITIALIZE_ID,
            "method": "initialize",
            "params": {
                // Inside the sandbox's PID namespace tern's pid means nothing.
                "processId": null,
                "clientInfo": {"name": "tern"},
                "rootUri": self.root,
                "workspaceFolders": [{"uri": self.root, "name": "workspace"}],
                "capabilities": {
                    "textDocument": {
                        "synchronization": {"didSave": false, "dynamicRegistration": false},
                        "publishDiagnostics": {"versionSupport": true, "relatedInformation": false}
                    },
                    "workspace": {"configuration": true, "workspaceFolders": true},
                    "window": {"workDoneProgress": false}
                }
            }
        })
    }

    /// Handles every whole message decoded so far; true once the server answered `shutdown`.
    fn take_messages(&self, decoder: &mut Decoder) -> Result<bool, String> {
        while let Some(message) = decoder.next_message().map_err(|e| e.to_string())? {
            let method = message.get("method").and_then(Value::as_str);
            let id = message.get("id");
            match (method, id) {
                (Some(method), Some(id)) => self.answer(method, id, &message),
                (Some("textDocument/publishDiagnostics"), None) => self.publish(&message),
                (Some(_), None) => {}
                (None, Some(id)) if id.as_i64() == Some(INITIALIZE_ID) => {
                    if let Some(error) = message.get("error") {
                        return Err(format!("refused to initialize: {}", error_text(error)));
                    }
                    self.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
                    self.state.ready.store(true, std::sync::atomic::Ordering::Release);
                    self.bump.send_modify(|n| *n += 1);
                }
                (None, Some(id)) if id.as_i64() == Some(SHUTDOWN_ID) => return Ok(true),
                (None, _) => {}
            }
        }
        Ok(false)
    }

    /// Answers a request of the server's with what a client without those features says.
    fn answer(&self, method: &str, id: &Value, message: &Value) {
        let result = match method {
            // One `null` per item asked: no settings, the server's defaults hold.
            "workspace/configuration" => {
                let items = message
                    .pointer("/params/items")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                Value::Array(vec![Value::Null; items])
            }
            "workspace/workspaceFolders" => json!([{"uri": self.root, "name": "workspace"}]),
            "client/registerCapability"
            | "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest"
            | "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh" => Value::Null,
            _ => {
                self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "not supported"}}));
                return;
            }
        };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn publish(&self, message: &Value) {
        let Some(params) = message.get("params") else { return };
        let Some(path) = params.get("uri").and_then(Value::as_str).and_then(crate::uri::to_path) else {
            return;
        };
        // Only documents tern sent are kept: a server that publishes for every file of the project (or for made-up
        // ones, without end) grows nothing.
        let sent = self.state.versions.lock().is_ok_and(|versions| {
            versions
                .keys()
                .any(|uri| crate::uri::to_path(uri).as_ref() == Some(&path))
        });
        if !sent {
            return;
        }
        let list = params
            .get("diagnostics")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let diagnostics = parse(list);
        let version = params.get("version").and_then(Value::as_i64);
        // Only this task moves the counter; it is told after the insert, so a waiter that wakes finds them.
        let seq = *self.bump.borrow() + 1;
        if let Ok(mut published) = self.state.published.lock() {
            published.insert(
                path,
                Published {
                    seq,
                    version,
                    diagnostics,
                },
            );
        }
        self.bump.send_replace(seq);
    }

    fn send_document(&self, document: Document, opened: &mut std::collections::HashSet<String>) {
        let message = if opened.insert(document.uri.clone()) {
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": document.uri, "languageId": document.language_id, "version": document.version,
                "text": document.text}}})
        } else {
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": document.uri, "version": document.version},
                "contentChanges": [{"text": document.text}]}})
        };
        self.send(&message);
    }

    fn send(&self, message: &Value) {
        let _ = self.out.send(encode(message));
    }

    fn fail(&self, reason: String) {
        if let Ok(mut failed) = self.state.failed.lock() {
            failed.get_or_insert(reason);
        }
        self.bump.send_modify(|n| *n += 1);
    }
}

fn error_text(error: &Value) -> String {
    let text = error.get("message").and_then(Value::as_str).unwrap_or("an error");
    text.chars().filter(|c| !c.is_control()).take(200).collect()
}

#[cfg(test)]
mod tests;
