//! JSON-RPC 2.0 as ACP frames it: one message per line. `Incoming` sorts a line the editor sent; `Outgoing` writes
//! ours, masked (no key reaches the editor) and with the controls serde_json leaves raw escaped.

use std::io::Write;

use serde_json::{Value, json};
use tern_secrets::MaskingWriter;
use tern_text::{CleanWriter, Stream};
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// The standard error codes we answer with.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;

/// One line from the editor.
#[derive(Debug, PartialEq)]
pub(crate) enum Incoming {
    /// A call that wants an answer (`id` is the editor's, a number or a string).
    Request { id: Value, method: String, params: Value },
    /// A call that wants none (`session/cancel`).
    Notification { method: String, params: Value },
    /// The answer to one of our requests: its result, or the error's message.
    Response { id: Value, result: Result<Value, String> },
}

/// Sorts one line; `Err` is the error to answer (with a null id) when it is not JSON-RPC at all.
pub(crate) fn parse(line: &str) -> Result<Incoming, (i64, String)> {
    let value: Value = serde_json::from_str(line).map_err(|e| (PARSE_ERROR, format!("not JSON: {e}")))?;
    let Value::Object(mut fields) = value else {
        return Err((INVALID_REQUEST, "a message is a JSON object".into()));
    };
    let params = fields.remove("params").unwrap_or(Value::Null);
    match (fields.remove("id"), fields.remove("method")) {
        (Some(id), Some(Value::String(method))) => Ok(Incoming::Request { id, method, params }),
        (None, Some(Value::String(method))) => Ok(Incoming::Notification { method, params }),
        (Some(id), None) => {
            let result = match (fields.remove("result"), fields.remove("error")) {
                (_, Some(error)) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_string()),
                (result, None) => Ok(result.unwrap_or(Value::Null)),
            };
            Ok(Incoming::Response { id, result })
        }
        _ => Err((INVALID_REQUEST, "neither a request nor a response".into())),
    }
}

/// Where our messages go: the editor's end of stdout. Nothing else may write there.
pub(crate) struct Outgoing<W> {
    out: W,
}

impl<W: AsyncWrite + Unpin> Outgoing<W> {
    pub(crate) fn new(out: W) -> Self {
        Self { out }
    }

    pub(crate) async fn result(&mut self, id: Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result})).await;
    }

    pub(crate) async fn error(&mut self, id: Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
            .await;
    }

    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    pub(crate) async fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    async fn send(&mut self, message: Value) {
        let line = frame(&message);
        // The editor went away: the read side ends the connection.
        let _ = self.out.write_all(&line).await;
        let _ = self.out.flush().await;
    }
}

/// One message as its line: masked (a tool result or a file may show a key) and escaped (serde_json leaves DEL,
/// C1 and bidi controls raw in strings).
pub(crate) fn frame(message: &Value) -> Vec<u8> {
    // Whole, in one write: the masking writer sees a key only within one write.
    let raw = serde_json::to_vec(message).unwrap_or_default();
    let mut line = Vec::with_capacity(raw.len() + 1);
    {
        let mut writer = CleanWriter::new(MaskingWriter::new(&mut line), Stream::Json);
        let _ = writer.write_all(&raw);
        let _ = writer.flush();
    }
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests;
