//! Messages serialised once. Each message of a conversation is turned into its provider's wire bytes when it first
//! goes out (`Provider::encode`), and every later request splices those bytes into the body instead of building and
//! serialising the whole history again, so a step costs the same at message 4,000 as at message 4. The bytes are
//! exactly what serialising the whole body as one `serde_json::Value` gives (the providers' tests pin both).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;

use super::ProviderError;
use tern_protocol::{Message, ToolDefinition};

/// One message in one provider's wire format. Opaque outside the providers; a form of the wrong format is ignored
/// (the message is encoded afresh for that request).
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    pub(super) form: Form,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Form {
    /// OpenAI: the chat message, and the parts (a caption and images) of the user message that follows a run of tool
    /// messages, since tool messages carry only text.
    OpenAi {
        message: Vec<u8>,
        tool_images: Vec<Vec<u8>>,
    },
    /// Anthropic: the role and the content blocks; adjacent messages of one role merge at request time.
    Anthropic { role: &'static str, blocks: Vec<Block> },
    /// OpenAI Responses: the input items one message becomes (reasoning, message, function calls, outputs).
    Responses { items: Vec<Vec<u8>> },
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Block {
    pub tool_result: bool,
    pub bytes: Vec<u8>,
}

impl Encoded {
    pub(super) fn new(form: Form) -> Self {
        Self { form }
    }

    /// Roughly how many bytes the form holds, for memory accounting.
    #[cfg(test)]
    pub(crate) fn size(&self) -> usize {
        match &self.form {
            Form::OpenAi { message, tool_images } => message.len() + tool_images.iter().map(Vec::len).sum::<usize>(),
            Form::Anthropic { blocks, .. } => blocks.iter().map(|b| b.bytes.len()).sum(),
            Form::Responses { items } => items.iter().map(Vec::len).sum(),
        }
    }
}

/// One request whose messages may already be encoded: what the agent sends each step without copying its history.
#[derive(Debug, Clone, Copy)]
pub struct PreparedRequest<'a> {
    /// The model to ask; empty means the provider's configured model.
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    /// `encoded[i]` is the wire form of `messages[i]` from this provider's `encode`; a missing or shorter list just
    /// means those messages are encoded for this request.
    pub encoded: &'a [Option<Encoded>],
    pub tools: &'a [ToolDefinition],
    pub max_tokens: Option<u32>,
    /// Which conversation `messages` are, for growing the last body instead of writing the whole again; `None`
    /// writes the body whole and keeps nothing.
    pub history: Option<History>,
}

/// A conversation's identity for the bodies a provider keeps: two requests with the same `History` have the same
/// first messages up to the shorter one's length, because only messages were added between them. A conversation
/// takes a new one (`History::new`, never given out before in the process) when it starts and whenever a message
/// already in it is replaced or dropped, so a request can tell in constant time that the last body holds its first
/// messages, whatever the conversation's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct History(u64);

impl History {
    #[expect(
        clippy::new_without_default,
        reason = "each value is new: a default would suggest one value"
    )]
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl<'a> PreparedRequest<'a> {
    /// The stored form of message `i`, if it is one of `format`'s.
    pub(super) fn stored(&self, i: usize, openai: bool) -> Option<&'a Form> {
        match self.encoded.get(i)?.as_ref().map(|e| &e.form)? {
            form @ Form::OpenAi { .. } if openai => Some(form),
            form @ Form::Anthropic { .. } if !openai => Some(form),
            _ => None,
        }
    }

    /// The stored Responses items of message `i`, if it has them.
    pub(super) fn stored_items(&self, i: usize) -> Option<&'a [Vec<u8>]> {
        match self.encoded.get(i)?.as_ref().map(|e| &e.form)? {
            Form::Responses { items } => Some(items),
            _ => None,
        }
    }
}

/// Stands in for the messages array while the rest of the body is serialised; it cannot occur in real text (a
/// control character inside a JSON string is always escaped, so its serialised form only comes from this value).
const SLOT: &str = "\u{1}tern:messages\u{1}";

pub(super) fn to_bytes(value: &Value) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(value).map_err(|e| ProviderError::Decode(format!("cannot encode the request: {e}")))
}

/// The placeholder for the messages in a body skeleton.
pub(super) fn messages_slot() -> Value {
    Value::String(SLOT.to_string())
}

/// A request body written once, straight into its buffer: the skeleton (built with `messages_slot()` as its
/// messages) up to the slot, the messages array element by element, then the rest of the skeleton.
pub(super) struct BodyWriter {
    out: Vec<u8>,
    suffix: Vec<u8>,
    empty: bool,
}

impl BodyWriter {
    /// Goes on writing `out`, which holds the start of a body up to the end of a message (or its opening `[`).
    pub(super) fn resume(out: Vec<u8>, suffix: Vec<u8>) -> Self {
        let empty = out.last() == Some(&b'[');
        Self { out, suffix, empty }
    }

    /// How many bytes are written.
    pub(super) fn len(&self) -> usize {
        self.out.len()
    }

    /// A body written from the skeleton's two sides (`split_skeleton`); `capacity` is about how many bytes the
    /// messages take.
    pub(super) fn from_parts(prefix: &[u8], suffix: Vec<u8>, capacity: usize) -> Self {
        let mut out = Vec::with_capacity(prefix.len() + capacity + suffix.len() + 2);
        out.extend_from_slice(prefix);
        out.push(b'[');
        Self {
            out,
            suffix,
            empty: true,
        }
    }

    /// Starts the next element of the messages array; the caller writes it into the returned buffer.
    pub(super) fn element(&mut self) -> &mut Vec<u8> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        &mut self.out
    }

    pub(super) fn push(&mut self, element: &[u8]) {
        self.element().extend_from_slice(element);
    }

    pub(super) fn finish_vec(mut self) -> Vec<u8> {
        self.out.push(b']');
        self.out.extend_from_slice(&self.suffix);
        self.out
    }
}

/// The serialised skeleton (built with `messages_slot()` as its messages) before and after the messages array.
pub(super) fn split_skeleton(skeleton: &Value) -> Result<(Vec<u8>, Vec<u8>), ProviderError> {
    let mut outer = to_bytes(skeleton)?;
    let slot = to_bytes(&Value::String(SLOT.to_string()))?;
    let at = outer
        .windows(slot.len())
        .position(|w| w == slot.as_slice())
        .ok_or_else(|| ProviderError::Decode("cannot encode the request: no place for the messages".into()))?;
    let suffix = outer[at + slot.len()..].to_vec();
    outer.truncate(at);
    Ok((outer, suffix))
}

/// A request body kept so that the next request of the same conversation copies only the messages added since: in
/// a long turn every step resends the whole history, and copying it again each step would make a step's cost grow
/// with the conversation. A provider grows it only for a request of the same `History` that begins the same way, and
/// only once no request holds it any more (`Arc::get_mut`). It costs one body's bytes between requests.
pub(super) struct Kept {
    pub body: Arc<Vec<u8>>,
    /// `body[..start]` is what precedes the first conversation message.
    pub start: usize,
    /// `body[..end]` ends with the part that stays; what follows is written again by the next request.
    pub end: usize,
    /// The conversation the body was written for.
    pub history: History,
    /// How many of its first messages `body[start..end]` holds.
    pub count: usize,
    /// The role of the last message in that part ("" when none or when the format does not merge roles).
    pub role: &'static str,
}

impl Kept {
    /// The body for a request, lent without copying it.
    pub(super) fn lend(&self) -> Bytes {
        Bytes::from_owner(Lent(Arc::clone(&self.body)))
    }

    /// Whether this body was written for `request`'s conversation, with `start` bytes before its first message, and
    /// holds no more messages than it has: then its part that stays holds the request's first `count` messages.
    pub(super) fn holds_start_of(&self, request: &PreparedRequest<'_>, start: usize) -> bool {
        request.history == Some(self.history) && self.start == start && self.count <= request.messages.len()
    }
}

/// The body of `request`, whose array of messages begins with `head` (the skeleton up to the array, `[`, and any
/// elements before the conversation's messages), holds then the elements of its messages (`elements(i)` for message
/// `i`, `None` when it has no stored form that can be spliced) and ends with `]` and `suffix`: the body kept in `last`
/// grown by the messages added since, when it holds the request's first messages; otherwise `whole()`, kept for the
/// next request when every message has its elements. Growing looks only at the new messages, so a step costs what it
/// added.
pub(super) fn grow_or_write<'e>(
    last: &Mutex<Option<Kept>>,
    head: &[u8],
    request: &PreparedRequest<'e>,
    elements: impl Fn(usize) -> Option<&'e [Vec<u8>]>,
    suffix: &[u8],
    whole: impl FnOnce() -> Result<Vec<u8>, ProviderError>,
) -> Result<Bytes, ProviderError> {
    let Some(history) = request.history else {
        return whole().map(Bytes::from);
    };
    let len = request.messages.len();
    let mut kept = last.lock().ok().and_then(|mut last| last.take());
    let grown = kept.as_mut().and_then(|kept| {
        if !kept.holds_start_of(request, head.len()) {
            return None;
        }
        let added: Vec<&[Vec<u8>]> = (kept.count..len).map(&elements).collect::<Option<_>>()?;
        let body = Arc::get_mut(&mut kept.body)?;
        if body.get(..head.len()) != Some(head) {
            return None;
        }
        body.truncate(kept.end);
        for element in added.into_iter().flatten() {
            if body.last() != Some(&b'[') {
                body.push(b',');
            }
            body.extend_from_slice(element);
        }
        kept.end = body.len();
        body.push(b']');
        body.extend_from_slice(suffix);
        kept.count = len;
        Some(())
    });
    let kept = match (grown, kept) {
        (Some(()), Some(kept)) => kept,
        _ => {
            let body = whole()?;
            if !(0..len).all(|i| elements(i).is_some()) {
                return Ok(Bytes::from(body));
            }
            Kept {
                end: body.len() - 1 - suffix.len(),
                body: Arc::new(body),
                start: head.len(),
                history,
                count: len,
                role: "",
            }
        }
    };
    let bytes = kept.lend();
    if let Ok(mut last) = last.lock() {
        *last = Some(kept);
    }
    Ok(bytes)
}

struct Lent(Arc<Vec<u8>>);

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// A JSON array of already serialised elements.
pub(super) struct ArrayWriter {
    out: Vec<u8>,
    empty: bool,
}

impl ArrayWriter {
    pub(super) fn with_capacity(bytes: usize) -> Self {
        let mut out = Vec::with_capacity(bytes + 2);
        out.push(b'[');
        Self { out, empty: true }
    }

    pub(super) fn push(&mut self, element: &[u8]) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.extend_from_slice(element);
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        self.out.push(b']');
        self.out
    }
}

/// Writes `{"role":<role>,"content":` as `json!` does (keys in insertion order); the caller writes the content and
/// the closing `}`.
pub(super) fn open_role_message(out: &mut Vec<u8>, role: &str) {
    out.extend_from_slice(b"{\"role\":\"");
    out.extend_from_slice(role.as_bytes());
    out.extend_from_slice(b"\",\"content\":");
}

#[cfg(test)]
mod tests;
