//! The base protocol of LSP: JSON-RPC messages framed by a `Content-Length` header over a byte stream. `encode` frames
//! one message; `Decoder` takes bytes as they come and gives whole messages back, split or joined as the pipe
//! delivered them. A message longer than the limit is refused, never buffered: the server is hostile input.

use serde_json::Value;

/// The longest message tern reads from a language server (diagnostics of a big file fit many times over).
pub(crate) const MAX_MESSAGE: usize = 8 * 1024 * 1024;
/// The longest header block: a few short lines in practice.
const MAX_HEADER: usize = 4096;

/// Why the stream cannot be read on: each ends the server.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// A message longer than the limit (its declared length).
    Oversize(usize),
    /// A header block without a valid `Content-Length`, or too long.
    BadHeader,
    /// A body that is not JSON.
    BadJson,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Oversize(n) => write!(f, "sent a message of {n} bytes (more than {MAX_MESSAGE})"),
            Self::BadHeader => write!(f, "sent a message without a valid Content-Length header"),
            Self::BadJson => write!(f, "sent a message that is not JSON"),
        }
    }
}

/// One message framed for the wire.
pub(crate) fn encode(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Whole messages out of a byte stream.
#[derive(Default)]
pub(crate) struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// Adds bytes read from the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, `None` until one has arrived whole.
    pub(crate) fn next_message(&mut self) -> Result<Option<Value>, FrameError> {
        let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            return if self.buf.len() > MAX_HEADER {
                Err(FrameError::BadHeader)
            } else {
                Ok(None)
            };
        };
        if end > MAX_HEADER {
            return Err(FrameError::BadHeader);
        }
        let length = content_length(&self.buf[..end])?;
        if length > MAX_MESSAGE {
            return Err(FrameError::Oversize(length));
        }
        let start = end + 4;
        if self.buf.len() < start + length {
            return Ok(None);
        }
        let message = serde_json::from_slice(&self.buf[start..start + length]).map_err(|_| FrameError::BadJson);
        self.buf.drain(..start + length);
        message.map(Some)
    }
}

/// The `Content-Length` of a header block (other headers, such as `Content-Type`, are allowed and ignored).
fn content_length(header: &[u8]) -> Result<usize, FrameError> {
    let header = std::str::from_utf8(header).map_err(|_| FrameError::BadHeader)?;
    header
        .split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .ok_or(FrameError::BadHeader)
}

#[cfg(test)]
mod tests;
