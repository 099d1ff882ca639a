//! Replies from a stdio server too large to take. rmcp drops a message longer than its line limit (set here, as
//! `MAX_REPLY_BYTES`) without telling the request it answered, which then waits out its timeout and reads "timed
//! out". The output tap (`tasks::TaskTap`) sees the same line go by; it records its size and, when the line shows it,
//! the JSON-RPC id it answered, and the waiting request ends at once with "the server's reply passed N MB". This
//! module only keeps that record; it reads no stream and decides nothing about the call.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::Notify;

/// The largest message taken from a stdio server (rmcp's default too, and its HTTP transport's event limit).
pub(crate) const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;
/// Bytes kept from each end of a dropped line, where a JSON-RPC id sits (`{"jsonrpc":"2.0","id":3,...` or
/// `...,"jsonrpc":"2.0","id":3}`).
pub(crate) const END_BYTES: usize = 256;
/// Dropped lines remembered; a request looks only at those dropped after it was sent.
const KEPT: usize = 16;

#[derive(Debug)]
struct Dropped {
    seq: u64,
    id: Option<String>,
    bytes: usize,
}

/// The lines a server's output had too large to take, for the requests waiting on them.
#[derive(Debug, Default)]
pub(crate) struct DroppedReplies {
    seen: Mutex<(u64, VecDeque<Dropped>)>,
    notify: Notify,
}

impl DroppedReplies {
    /// A mark to pass to `wait`: only lines dropped after it count.
    pub(crate) fn mark(&self) -> u64 {
        self.seen.lock().map(|s| s.0).unwrap_or(0)
    }

    /// A line of `bytes` bytes was dropped; `id` is the request it answered, when its ends show it.
    pub(crate) fn record(&self, id: Option<String>, bytes: usize) {
        tracing::warn!(
            ?id,
            bytes,
            "an MCP server's message passed the size limit and was dropped"
        );
        if let Ok(mut seen) = self.seen.lock() {
            seen.0 += 1;
            let seq = seen.0;
            seen.1.push_back(Dropped { seq, id, bytes });
            while seen.1.len() > KEPT {
                seen.1.pop_front();
            }
        }
        self.notify.notify_waiters();
    }

    /// Waits for a dropped line (after `since`) that was, or may have been, the answer to request `id`; its size.
    pub(crate) async fn wait(&self, id: &str, since: u64) -> usize {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(bytes) = self.find(id, since) {
                return bytes;
            }
            notified.await;
        }
    }

    fn find(&self, id: &str, since: u64) -> Option<usize> {
        let seen = self.seen.lock().ok()?;
        seen.1
            .iter()
            .find(|d| d.seq > since && d.id.as_deref().is_none_or(|own| own == id))
            .map(|d| d.bytes)
    }
}

/// The id of a JSON-RPC response from the first and last bytes of its line: the top-level `"id"` is either before
/// `"result"` / `"error"` at the start or the last member at the end. `None` when neither end shows it.
pub(crate) fn reply_id(head: &[u8], tail: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(head);
    let body = ["\"result\"", "\"error\""]
        .iter()
        .filter_map(|key| head.find(key))
        .min()
        .unwrap_or(head.len());
    if let Some(at) = head[..body].find("\"id\"") {
        return value_after(&head[at + 4..]).map(|(value, _)| value);
    }
    let tail = String::from_utf8_lossy(tail);
    let at = tail.rfind("\"id\"")?;
    let (value, rest) = value_after(&tail[at + 4..])?;
    rest.trim_start().starts_with('}').then_some(value)
}

/// `: 12` or `: "abc"` at the start of `text`: the id as rmcp prints it, and what follows.
fn value_after(text: &str) -> Option<(String, &str)> {
    let text = text.trim_start().strip_prefix(':')?.trim_start();
    if let Some(quoted) = text.strip_prefix('"') {
        let end = quoted.find('"')?;
        return Some((quoted[..end].to_string(), &quoted[end + 1..]));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(text.len());
    (end > 0).then(|| (text[..end].to_string(), &text[end..]))
}

/// Megabytes for a message, one decimal.
pub(crate) fn megabytes(bytes: usize) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_id_is_read_from_either_end() {
        assert_eq!(
            reply_id(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"te"#, b"").as_deref(),
            Some("7")
        );
        assert_eq!(
            reply_id(
                br#"{"result":{"content":[{"type":"text","text":"xx"#,
                br#"xx"}]},"jsonrpc":"2.0","id":12}"#
            )
            .as_deref(),
            Some("12")
        );
        assert_eq!(
            reply_id(br#"{"jsonrpc":"2.0","id":"req-1","result":"#, b"").as_deref(),
            Some("req-1")
        );
        // An "id" inside the result is not the reply's.
        assert_eq!(
            reply_id(br#"{"result":{"id":5,"content":"#, br#"...,"id":3,"text":"x"}]}"#),
            None
        );
        assert_eq!(reply_id(b"garbage", b"garbage"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_learns_of_a_dropped_reply_meant_for_it_or_for_nobody_known() {
        let dropped = Arc::new(DroppedReplies::default());
        let old = dropped.mark();
        dropped.record(Some("1".into()), 100);
        let since = dropped.mark();
        // Dropped before the request was sent: not its answer.
        let early = tokio::time::timeout(std::time::Duration::from_millis(50), dropped.wait("1", since)).await;
        assert!(early.is_err());
        assert_eq!(dropped.find("1", old), Some(100));
        let waiting = tokio::spawn({
            let dropped = Arc::clone(&dropped);
            async move { dropped.wait("2", since).await }
        });
        dropped.record(Some("3".into()), 5);
        dropped.record(None, 20_000_000);
        assert_eq!(waiting.await.unwrap(), 20_000_000);
        assert_eq!(megabytes(20_000_000), "19.1");
    }
}
