//! The connection: the editor's requests sorted and answered, the sessions' events turned into updates, and our own
//! requests (permission prompts) waited for, all on one task, so no state is shared.

use std::collections::{HashMap, VecDeque};

use serde_json::{Value, json};
use tern_protocol::{ApprovalMode, ApprovalRequest, ElicitationAnswer, Event, Op, TurnEnd};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::requests::{LoadSession, NewSession, Prompt, SetMode, absolute, internal, parse, prompt_text};
use crate::rpc::{self, Incoming, Outgoing};
use crate::updates::{self, Stream};
use crate::{Host, Offer, PROTOCOL_VERSION, Started};

/// Why an MCP server's request for input is declined: ACP has no way to ask the editor.
const NO_ELICITATION: &str = "tern acp cannot ask the editor for an MCP server's input";

/// How long the sessions get to finish when the editor goes away.
const SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(5);

/// Serves the editor on `input` and `output` until it closes `input`; then shuts every session down.
pub async fn serve<H: Host, R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(host: &H, input: R, output: W) {
    let (events, mut merged) = unbounded_channel();
    let mut connection = Connection {
        host,
        out: Outgoing::new(output),
        sessions: HashMap::new(),
        events,
        asked: HashMap::new(),
        next_id: 0,
        editor_reads: false,
        editor_writes: false,
    };
    let mut lines = BufReader::new(input).lines();
    loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => connection.line(&line).await,
                _ => break,
            },
            Some((session, event)) = merged.recv() => connection.event(session, event).await,
        }
    }
    connection.shut_down(&mut merged).await;
}

/// An event of session `.0`, or `None` when its agent ended.
type Tagged = (String, Option<Event>);

struct Connection<'h, H, W> {
    host: &'h H,
    out: Outgoing<W>,
    sessions: HashMap<String, Session>,
    /// Where each session's forwarder sends its events.
    events: UnboundedSender<Tagged>,
    /// Our requests waiting for the editor, by our request id.
    asked: HashMap<u64, Asked>,
    next_id: u64,
    /// The editor offered `fs/read_text_file` in `initialize`.
    editor_reads: bool,
    /// The editor offered `fs/write_text_file` in `initialize`.
    editor_writes: bool,
}

/// What one of our requests to the editor was for.
enum Asked {
    /// Session `.0`'s approval prompt.
    Permission(String, Box<ApprovalRequest>),
    /// Session `.0`'s read `.1` (`Event::ReadBuffer`).
    Read(String, u64),
    /// Session `.0`'s write `.1` (`Event::WriteBuffer`).
    Write(String, u64),
}

/// One ACP session: a tern session's ops, and what is waiting on its events.
struct Session {
    ops: UnboundedSender<Op>,
    stream: Stream,
    /// The `session/prompt` requests not yet answered, oldest first (a prompt sent while a turn runs is queued).
    prompts: VecDeque<Value>,
    /// The editor cancelled the running turn: it ends as `cancelled`, whatever the agent says.
    cancelled: bool,
}

impl<H: Host, W: AsyncWrite + Unpin> Connection<'_, H, W> {
    async fn line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        match rpc::parse(line) {
            Ok(Incoming::Request { id, method, params }) => match self.request(&id, &method, params).await {
                Ok(Some(result)) => self.out.result(id, result).await,
                // Answered later (a prompt, when its turn ends).
                Ok(None) => {}
                Err((code, message)) => self.out.error(id, code, &message).await,
            },
            Ok(Incoming::Notification { method, params }) => self.notification(&method, &params),
            Ok(Incoming::Response { id, result }) => self.answer(&id, result),
            Err((code, message)) => self.out.error(Value::Null, code, &message).await,
        }
    }

    async fn request(&mut self, id: &Value, method: &str, params: Value) -> Result<Option<Value>, (i64, String)> {
        match method {
            "initialize" => {
                let fs = &params["clientCapabilities"]["fs"];
                self.editor_reads = fs["readTextFile"] == true;
                self.editor_writes = fs["writeTextFile"] == true;
                Ok(Some(initialize()))
            }
            // tern's keys come from its configuration and environment: there is nothing to log in to here.
            "authenticate" => Ok(Some(json!({}))),
            "session/new" => {
                let new: NewSession = parse(params)?;
                let offer = self.offer(&new.mcp_servers);
                let started = self.host.start(absolute(&new.cwd)?, &offer).map_err(internal)?;
                Ok(Some(self.open(started, false).await))
            }
            "session/load" => {
                let load: LoadSession = parse(params)?;
                let offer = self.offer(&load.mcp_servers);
                let mut started = self
                    .host
                    .load(&load.session_id, absolute(&load.cwd)?, &offer)
                    .map_err(internal)?;
                // The editor goes on naming it as it did.
                started.id = load.session_id;
                let mut opened = self.open(started, true).await;
                opened.as_object_mut().map(|o| o.remove("sessionId"));
                Ok(Some(opened))
            }
            "session/prompt" => {
                let prompt: Prompt = parse(params)?;
                let text = prompt_text(&prompt.prompt);
                if text.trim().is_empty() {
                    return Err((rpc::INVALID_PARAMS, "the prompt is empty".into()));
                }
                let session = self.session_mut(&prompt.session_id)?;
                let _ = session.ops.send(Op::UserTurn { text });
                session.prompts.push_back(id.clone());
                Ok(None)
            }
            "session/set_mode" => {
                let set: SetMode = parse(params)?;
                let mode: ApprovalMode = set
                    .mode_id
                    .parse()
                    .map_err(|_| (rpc::INVALID_PARAMS, format!("no mode {}", set.mode_id)))?;
                let _ = self.session(&set.session_id)?.ops.send(Op::SetApprovalMode { mode });
                Ok(Some(json!({})))
            }
            _ => Err((rpc::METHOD_NOT_FOUND, format!("tern acp has no method {method}"))),
        }
    }

    /// Registers a started or loaded session (replaying a loaded one's history first) and says what it is.
    async fn open(&mut self, started: Started, replay: bool) -> Value {
        if replay {
            for event in &started.history {
                for update in updates::recorded(event) {
                    self.update(&started.id, update).await;
                }
            }
        }
        forward(started.id.clone(), started.events, self.events.clone());
        let session = Session {
            ops: started.ops,
            stream: Stream::default(),
            prompts: VecDeque::new(),
            cancelled: false,
        };
        self.sessions.insert(started.id.clone(), session);
        json!({"sessionId": started.id, "modes": updates::modes(started.mode)})
    }

    fn notification(&mut self, method: &str, params: &Value) {
        if method != "session/cancel" {
            return;
        }
        let Some(session) = params["sessionId"].as_str().and_then(|id| self.sessions.get_mut(id)) else {
            return;
        };
        if !session.prompts.is_empty() {
            session.cancelled = true;
            let _ = session.ops.send(Op::Interrupt);
        }
    }

    /// The editor's answer to one of our requests: a permission's decision, or a read's text, for the agent.
    fn answer(&mut self, id: &Value, result: Result<Value, String>) {
        let Some(asked) = id.as_u64().and_then(|id| self.asked.remove(&id)) else {
            return;
        };
        let (session, op) = match asked {
            Asked::Permission(session, request) => {
                let decision = match result {
                    Ok(answer) => crate::permission::decision(&request, &answer),
                    Err(_) => tern_protocol::ApprovalDecision::Deny { feedback: None },
                };
                (
                    session,
                    Op::Approve {
                        id: request.id,
                        decision,
                    },
                )
            }
            // An editor that cannot read the file: tern reads it from disk.
            Asked::Read(session, id) => {
                let text = result.ok().and_then(|r| r["content"].as_str().map(str::to_string));
                (session, Op::BufferText { id, text })
            }
            // An editor that did not write the text: the edit fails with its reason.
            Asked::Write(session, id) => {
                let error = result.err().map(|why| format!("the editor refused: {why}"));
                (session, Op::BufferWritten { id, error })
            }
        };
        if let Some(session) = self.sessions.get(&session) {
            let _ = session.ops.send(op);
        }
    }

    async fn event(&mut self, id: String, event: Option<Event>) {
        let Some(event) = event else {
            self.ended(&id).await;
            return;
        };
        if let Some(request) = approval_request(&event) {
            self.ask(&id, request.clone()).await;
            return;
        }
        if let Some((read, path)) = buffer_read(&event) {
            self.read(&id, read, path).await;
            return;
        }
        if let Some((write, path, text)) = buffer_write(&event) {
            self.write(&id, write, path, text).await;
            return;
        }
        let Some(session) = self.sessions.get_mut(&id) else {
            return;
        };
        match event {
            Event::Elicitation { id: asked, .. } => {
                let _ = session.ops.send(Op::Elicit {
                    id: asked,
                    answer: ElicitationAnswer::Decline {
                        reason: Some(NO_ELICITATION.to_string()),
                    },
                });
            }
            Event::TurnFinished { reason } => self.finished(&id, reason).await,
            event => {
                for update in session.stream.live(&event) {
                    self.update(&id, update).await;
                }
            }
        }
    }

    /// Asks the editor about a call waiting for approval (the main agent's or a subagent's).
    async fn ask(&mut self, session: &str, request: ApprovalRequest) {
        self.next_id += 1;
        let params = crate::permission::params(session, &request);
        self.asked
            .insert(self.next_id, Asked::Permission(session.to_string(), Box::new(request)));
        self.out
            .request(self.next_id, "session/request_permission", params)
            .await;
    }

    /// Asks the editor for its text of a file a read wants (its buffer, saved or not).
    async fn read(&mut self, session: &str, read: u64, path: &str) {
        self.next_id += 1;
        self.asked.insert(self.next_id, Asked::Read(session.to_string(), read));
        let params = json!({"sessionId": session, "path": path});
        self.out.request(self.next_id, "fs/read_text_file", params).await;
    }

    /// Gives the editor an edit's new text of a file, to write to its buffer (and, as editors do, to save).
    async fn write(&mut self, session: &str, write: u64, path: &str, text: &str) {
        self.next_id += 1;
        self.asked
            .insert(self.next_id, Asked::Write(session.to_string(), write));
        let params = json!({"sessionId": session, "path": path, "content": text});
        self.out.request(self.next_id, "fs/write_text_file", params).await;
    }

    /// A turn's end answers the oldest prompt waiting.
    async fn finished(&mut self, id: &str, reason: TurnEnd) {
        let Some(session) = self.sessions.get_mut(id) else {
            return;
        };
        let Some(prompt) = session.prompts.pop_front() else {
            return;
        };
        let cancelled = std::mem::take(&mut session.cancelled);
        let stop = match reason {
            _ if cancelled => "cancelled",
            TurnEnd::Completed => "end_turn",
            TurnEnd::IterationLimit => "max_turn_requests",
            TurnEnd::Interrupted | TurnEnd::Aborted => "cancelled",
            TurnEnd::Error { message } => {
                self.out.error(prompt, rpc::INTERNAL_ERROR, &message).await;
                return;
            }
        };
        self.out.result(prompt, json!({"stopReason": stop})).await;
    }

    /// A session whose agent ended: its waiting prompts are answered with an error.
    async fn ended(&mut self, id: &str) {
        let Some(session) = self.sessions.remove(id) else {
            return;
        };
        for prompt in session.prompts {
            self.out
                .error(prompt, rpc::INTERNAL_ERROR, "the session's agent stopped")
                .await;
        }
    }

    async fn update(&mut self, session: &str, update: Value) {
        self.out
            .notify("session/update", json!({"sessionId": session, "update": update}))
            .await;
    }

    fn offer(&self, servers: &Value) -> Offer {
        Offer {
            editor_reads: self.editor_reads,
            editor_writes: self.editor_writes,
            servers: crate::servers::read(servers),
        }
    }

    fn session(&self, id: &str) -> Result<&Session, (i64, String)> {
        self.sessions
            .get(id)
            .ok_or_else(|| (rpc::INVALID_PARAMS, format!("no session {id}")))
    }

    /// Stops every session and waits (a while) for their agents to end, so their commands' process groups end too.
    fn session_mut(&mut self, id: &str) -> Result<&mut Session, (i64, String)> {
        self.sessions
            .get_mut(id)
            .ok_or_else(|| (rpc::INVALID_PARAMS, format!("no session {id}")))
    }

    async fn shut_down(&mut self, merged: &mut tokio::sync::mpsc::UnboundedReceiver<Tagged>) {
        for session in self.sessions.values() {
            let _ = session.ops.send(Op::Interrupt);
            let _ = session.ops.send(Op::Shutdown);
        }
        let _ = tokio::time::timeout(SHUTDOWN, async {
            while !self.sessions.is_empty() {
                match merged.recv().await {
                    Some((id, None)) => {
                        self.sessions.remove(&id);
                    }
                    Some(_) => {}
                    None => break,
                }
            }
        })
        .await;
    }
}

/// Sends session `id`'s events to the connection, then `None` when its agent is gone.
fn forward(id: String, mut events: tokio::sync::mpsc::UnboundedReceiver<Event>, to: UnboundedSender<Tagged>) {
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if to.send((id.clone(), Some(event))).is_err() {
                return;
            }
        }
        let _ = to.send((id, None));
    });
}

/// A prompt to answer: the main agent's, or one of its subagents'.
fn approval_request(event: &Event) -> Option<&ApprovalRequest> {
    match event {
        Event::ApprovalRequest(request) => Some(request),
        Event::Subagent { inner, .. } => approval_request(inner),
        _ => None,
    }
}

/// A read that wants the editor's text: the main agent's, or one of its subagents'.
fn buffer_read(event: &Event) -> Option<(u64, &str)> {
    match event {
        Event::ReadBuffer { id, path } => Some((*id, path)),
        Event::Subagent { inner, .. } => buffer_read(inner),
        _ => None,
    }
}

/// A write for the editor to make: the main agent's, or one of its subagents'.
fn buffer_write(event: &Event) -> Option<(u64, &str, &str)> {
    match event {
        Event::WriteBuffer { id, path, text } => Some((*id, path, text)),
        Event::Subagent { inner, .. } => buffer_write(inner),
        _ => None,
    }
}

/// What tern says of itself in `initialize`: ACP v1, sessions it can load, prompts of text, links and embedded files.
fn initialize() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": true,
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": true},
        },
        "authMethods": [],
        "agentInfo": {"name": "tern", "version": env!("CARGO_PKG_VERSION")},
    })
}

#[cfg(test)]
mod tests;
