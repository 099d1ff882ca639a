//! Finding the tools a server can only run as tasks (`execution.taskSupport: "required"`, protocol 2025-11-25).
//!
//! tern does not run MCP tasks, so such a tool would fail every call; it is not offered. rmcp 3.9 models tasks as an
//! extension and drops a tool's `execution` field when it reads `tools/list`, so the field is read here, from the
//! stdio server's output on its way to rmcp: each line that carries a tool list updates the set. Remote (HTTP, SSE)
//! servers are read by rmcp's own transports, where this tap does not reach.
//!
//! The same tap notes lines too long for rmcp to take (`oversize`), so the request they answered fails with their
//! size instead of waiting for its timeout.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use super::oversize::{DroppedReplies, END_BYTES, reply_id};

/// Lines longer than this are not inspected (a tool list is far smaller; a huge result is not a tool list), and rmcp
/// drops them (the transport is given the same limit).
const MAX_LINE: usize = super::oversize::MAX_REPLY_BYTES;

/// The names of the tools a server marked task-only, as last listed.
pub(crate) type TaskOnly = Arc<Mutex<HashSet<String>>>;

/// Passes a stdio server's output through unchanged, noting task-only tools from its `tools/list` answers.
pub(crate) struct TaskTap<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line passed `MAX_LINE` and is skipped up to its end.
    skipping: bool,
    found: TaskOnly,
    /// A skipped line: its length so far (line end included, as rmcp counts), its first and its last bytes.
    skipped: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    dropped: Arc<DroppedReplies>,
}

impl<R> TaskTap<R> {
    pub(crate) fn new(inner: R, found: TaskOnly, dropped: Arc<DroppedReplies>) -> Self {
        Self {
            inner,
            line: Vec::new(),
            skipping: false,
            found,
            skipped: 0,
            head: Vec::new(),
            tail: Vec::new(),
            dropped,
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|b| *b == b'\n');
            let (part, rest) = match end {
                Some(i) => (&bytes[..i], &bytes[i + 1..]),
                None => (bytes, &[][..]),
            };
            let counted = part.len() + usize::from(end.is_some());
            if self.skipping {
                self.skipped += counted;
                keep_tail(&mut self.tail, part);
            } else if self.line.len() + counted > MAX_LINE {
                self.skipping = true;
                self.skipped = self.line.len() + counted;
                // Both ends are taken from what was kept and this piece, without growing the kept line.
                let mut head = self.line[..self.line.len().min(END_BYTES)].to_vec();
                let room = END_BYTES - head.len();
                head.extend_from_slice(&part[..part.len().min(room)]);
                self.head = head;
                self.tail.clear();
                keep_tail(&mut self.tail, &self.line);
                keep_tail(&mut self.tail, part);
                self.line = Vec::new();
            } else {
                self.line.extend_from_slice(part);
            }
            if end.is_some() {
                if self.skipping {
                    self.dropped.record(reply_id(&self.head, &self.tail), self.skipped);
                    self.head.clear();
                    self.tail.clear();
                } else {
                    note_task_only(&self.line, &self.found);
                }
                self.line.clear();
                self.skipping = false;
            }
            bytes = rest;
        }
    }
}

/// Keeps the last `END_BYTES` of a skipped line.
fn keep_tail(tail: &mut Vec<u8>, part: &[u8]) {
    tail.extend_from_slice(&part[part.len().saturating_sub(END_BYTES)..]);
    let excess = tail.len().saturating_sub(END_BYTES);
    tail.drain(..excess);
}

impl<R: AsyncRead + Unpin> AsyncRead for TaskTap<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &poll {
            let read = buf.filled()[before..].to_vec();
            self.scan(&read);
        }
        poll
    }
}

/// Updates `found` from one JSON-RPC line when it is a tool list: each listed tool is added or removed.
fn note_task_only(line: &[u8], found: &TaskOnly) {
    const TOOLS: &[u8] = b"\"tools\"";
    if !line.windows(TOOLS.len()).any(|w| w == TOOLS) {
        return;
    }
    let Ok(message) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let Some(tools) = message.pointer("/result/tools").and_then(Value::as_array) else {
        return;
    };
    let Ok(mut found) = found.lock() else { return };
    for tool in tools {
        let Some(name) = tool["name"].as_str() else { continue };
        if tool.pointer("/execution/taskSupport").and_then(Value::as_str) == Some("required") {
            found.insert(name.to_string());
        } else {
            found.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn task_only_tools_are_noted_from_the_stream_which_passes_unchanged() {
        let list = |required: bool| {
            let execution = if required { "required" } else { "optional" };
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"tools\":[{{\"name\":\"plain\",\"inputSchema\":{{}}}},\
                 {{\"name\":\"research\",\"inputSchema\":{{}},\"execution\":{{\"taskSupport\":\"{execution}\"}}}}]}}}}\n"
            )
        };
        let stream = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"data\":\"tools\"}}}}\n{}",
            list(true)
        );
        let found = TaskOnly::default();
        // Read in small pieces, so lines arrive split.
        let reader = tokio::io::BufReader::with_capacity(7, stream.as_bytes());
        let mut tap = TaskTap::new(reader, Arc::clone(&found), Arc::default());
        let mut out = String::new();
        tap.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, stream);
        assert_eq!(found.lock().unwrap().iter().collect::<Vec<_>>(), ["research"]);
        let relisted = list(false);
        let mut tap = TaskTap::new(relisted.as_bytes(), Arc::clone(&found), Arc::default());
        tap.read_to_string(&mut String::new()).await.unwrap();
        assert!(found.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_line_too_long_to_take_is_recorded_with_its_id_and_size() {
        let big = "x".repeat(MAX_LINE);
        let stream = format!(
            "{{\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{big}\"}}]}},\"jsonrpc\":\"2.0\",\"id\":4}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{{}}}}\n"
        );
        let dropped = Arc::new(DroppedReplies::default());
        let since = dropped.mark();
        let reader = tokio::io::BufReader::with_capacity(64 * 1024, stream.as_bytes());
        let mut tap = TaskTap::new(reader, TaskOnly::default(), Arc::clone(&dropped));
        let mut out = Vec::new();
        tap.read_to_end(&mut out).await.unwrap();
        assert_eq!(out.len(), stream.len(), "the stream passes unchanged");
        let first_line = stream.find('\n').unwrap() + 1;
        assert_eq!(dropped.wait("4", since).await, first_line);
        assert!(tap.line.capacity() < MAX_LINE, "the skipped line is not kept");
    }
}
