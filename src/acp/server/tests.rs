//! The connection over in-memory pipes, with a host whose sessions are channels the test plays the agent on.
use super::*;

use std::path::Path;
use std::sync::Mutex;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc::UnboundedReceiver;

/// Starts sessions whose agent is the test: their ops come out of `ops`, their events go in through `events`.
#[derive(Default)]
struct Agents {
    started: Mutex<Vec<(UnboundedReceiver<Op>, UnboundedSender<Event>)>>,
    /// What the editor offered each session started: reads, writes.
    offers: Mutex<Vec<(bool, bool)>>,
}

impl Host for Agents {
    fn start(&self, cwd: &Path, offer: &Offer) -> Result<Started, String> {
        self.offers
            .lock()
            .unwrap()
            .push((offer.editor_reads, offer.editor_writes));
        let (ops, ops_rx) = unbounded_channel();
        let (events_tx, events) = unbounded_channel();
        self.started.lock().unwrap().push((ops_rx, events_tx));
        Ok(Started {
            id: format!("s-{}", cwd.display()),
            ops,
            events,
            mode: ApprovalMode::AutoEdit,
            history: Vec::new(),
        })
    }

    fn load(&self, _id: &str, _cwd: &Path, _offer: &Offer) -> Result<Started, String> {
        Err("no such session".into())
    }
}

struct Editor {
    to_tern: DuplexStream,
    from_tern: tokio::io::Lines<BufReader<DuplexStream>>,
}

impl Editor {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_tern.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = self.from_tern.next_line().await.unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

fn connect(host: &'static Agents) -> Editor {
    let (to_tern, input) = tokio::io::duplex(1 << 16);
    let (output, from_tern) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve(host, input, output));
    Editor {
        to_tern,
        from_tern: BufReader::new(from_tern).lines(),
    }
}

fn prompt(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
           "params": {"sessionId": "s-/w", "prompt": [{"type": "text", "text": text}]}})
}

async fn new_session(editor: &mut Editor) {
    editor
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}))
        .await;
    let made = editor.next().await;
    assert_eq!(made["result"]["sessionId"], "s-/w");
    assert_eq!(made["result"]["modes"]["currentModeId"], "auto-edit");
}

#[tokio::test]
async fn a_prompt_is_answered_when_its_turn_ends_and_a_cancel_interrupts_it() {
    let host: &'static Agents = Box::leak(Box::default());
    let mut editor = connect(host);
    new_session(&mut editor).await;
    let (mut ops, events) = host.started.lock().unwrap().pop().unwrap();
    editor.send(prompt(2, "hello")).await;
    assert_eq!(ops.recv().await, Some(Op::UserTurn { text: "hello".into() }));
    events.send(Event::AssistantDelta { text: "Hi".into() }).unwrap();
    let update = editor.next().await;
    assert_eq!(update["method"], "session/update");
    assert_eq!(update["params"]["update"]["content"]["text"], "Hi");
    events
        .send(Event::TurnFinished {
            reason: TurnEnd::Completed,
        })
        .unwrap();
    assert_eq!(
        editor.next().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})
    );
    // A cancel interrupts the turn, which then ends as cancelled whatever the agent says.
    editor.send(prompt(3, "again")).await;
    ops.recv().await.unwrap();
    editor
        .send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-/w"}}))
        .await;
    assert_eq!(ops.recv().await, Some(Op::Interrupt));
    events
        .send(Event::TurnFinished {
            reason: TurnEnd::Completed,
        })
        .unwrap();
    assert_eq!(editor.next().await["result"]["stopReason"], "cancelled");
}

#[tokio::test]
async fn an_approval_is_asked_of_the_editor_and_its_answer_goes_to_the_agent() {
    let host: &'static Agents = Box::leak(Box::default());
    let mut editor = connect(host);
    new_session(&mut editor).await;
    let (mut ops, events) = host.started.lock().unwrap().pop().unwrap();
    let request = ApprovalRequest {
        id: 41,
        call_id: "c".into(),
        tool: "exec".into(),
        command: "make".into(),
        ..ApprovalRequest::default()
    };
    // A subagent's prompt is asked too.
    let inner = Box::new(Event::ApprovalRequest(request));
    events
        .send(Event::Subagent {
            id: "a".into(),
            label: "helper".into(),
            inner,
        })
        .unwrap();
    let asked = editor.next().await;
    assert_eq!(asked["method"], "session/request_permission");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
                        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
    editor.send(answer).await;
    assert_eq!(
        ops.recv().await,
        Some(Op::Approve {
            id: 41,
            decision: tern_protocol::ApprovalDecision::Once
        })
    );
}

#[tokio::test]
async fn requests_the_connection_cannot_serve_are_errors() {
    let host: &'static Agents = Box::leak(Box::default());
    let mut editor = connect(host);
    editor.send(prompt(5, "to nobody")).await;
    assert_eq!(editor.next().await["error"]["code"], rpc::INVALID_PARAMS);
    editor
        .send(json!({"jsonrpc": "2.0", "id": 6, "method": "session/new", "params": {"cwd": "relative", "mcpServers": []}}))
        .await;
    assert_eq!(editor.next().await["error"]["code"], rpc::INVALID_PARAMS);
    editor
        .send(json!({"jsonrpc": "2.0", "id": 7, "method": "session/load", "params": {"sessionId": "x", "cwd": "/w", "mcpServers": []}}))
        .await;
    assert_eq!(editor.next().await["error"]["message"], "no such session");
}

#[tokio::test]
async fn a_read_asks_the_editor_that_offered_its_buffers() {
    let host: &'static Agents = Box::leak(Box::default());
    let mut editor = connect(host);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}}}});
    editor.send(init).await;
    assert_eq!(editor.next().await["result"]["protocolVersion"], 1);
    new_session(&mut editor).await;
    let (mut ops, events) = host.started.lock().unwrap().pop().unwrap();
    events
        .send(Event::ReadBuffer {
            id: 12,
            path: "/w/a.rs".into(),
        })
        .unwrap();
    let asked = editor.next().await;
    assert_eq!(asked["method"], "fs/read_text_file");
    assert_eq!(asked["params"], json!({"sessionId": "s-/w", "path": "/w/a.rs"}));
    editor
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"content": "unsaved"}}))
        .await;
    assert_eq!(
        ops.recv().await,
        Some(Op::BufferText {
            id: 12,
            text: Some("unsaved".into())
        })
    );
    // An editor that fails the read: the agent reads from disk.
    events
        .send(Event::ReadBuffer {
            id: 13,
            path: "/w/b.rs".into(),
        })
        .unwrap();
    let asked = editor.next().await;
    editor
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -32603, "message": "no"}}))
        .await;
    assert_eq!(ops.recv().await, Some(Op::BufferText { id: 13, text: None }));
}

#[tokio::test]
async fn a_write_goes_to_the_editor_that_takes_writes_and_its_answer_back_to_the_agent() {
    let host: &'static Agents = Box::leak(Box::default());
    let mut editor = connect(host);
    let fs = json!({"readTextFile": true, "writeTextFile": true});
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": 1, "clientCapabilities": {"fs": fs}}});
    editor.send(init).await;
    editor.next().await;
    new_session(&mut editor).await;
    assert_eq!(*host.offers.lock().unwrap(), [(true, true)]);
    let (mut ops, events) = host.started.lock().unwrap().pop().unwrap();
    let write = |id: u64| Event::WriteBuffer {
        id,
        path: "/w/a.rs".into(),
        text: "edited\n".into(),
    };
    events.send(write(21)).unwrap();
    let asked = editor.next().await;
    assert_eq!(asked["method"], "fs/write_text_file");
    assert_eq!(
        asked["params"],
        json!({"sessionId": "s-/w", "path": "/w/a.rs", "content": "edited\n"})
    );
    editor
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": null}))
        .await;
    assert_eq!(ops.recv().await, Some(Op::BufferWritten { id: 21, error: None }));
    // A subagent's write, which the editor refuses: the edit fails with the editor's reason.
    events
        .send(Event::Subagent {
            id: "sub".into(),
            label: "helper".into(),
            inner: Box::new(write(22)),
        })
        .unwrap();
    let asked = editor.next().await;
    editor
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -32603, "message": "read-only buffer"}}))
        .await;
    let Some(Op::BufferWritten {
        id: 22,
        error: Some(error),
    }) = ops.recv().await
    else {
        panic!("no refusal")
    };
    assert!(error.contains("read-only buffer"), "{error}");
}
