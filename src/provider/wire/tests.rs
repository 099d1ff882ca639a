//! The bodies built from stored wire forms are byte for byte the bodies built whole, for both formats, through every
//! change a conversation goes through (pushes, replaced ranges, truncation, a repair).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::json;

use tern_protocol::{Image, Message, Reasoning, ReasoningBlock, ToolCall, ToolDefinition};

use super::*;
use crate::anthropic::AnthropicProvider;
use crate::openai::OpenAiProvider;
use crate::responses::ResponsesProvider;
use crate::{ChatRequest, Http, Provider, ProviderConfig, ProviderKind};

/// A conversation's messages and their wire forms, kept as the agent's `Conversation` keeps them (a form made once,
/// dropped with its message; a new `History` when a message already in it changes), without the agent's repair:
/// what the agent sends is its concern, and its own tests check that its forms are the ones made afresh.
struct Conversation {
    messages: Vec<Message>,
    encoded: Vec<Option<Encoded>>,
    history: History,
}

impl Default for Conversation {
    fn default() -> Self {
        Self {
            messages: Vec::new(),
            encoded: Vec::new(),
            history: History::new(),
        }
    }
}

impl std::ops::Deref for Conversation {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.messages
    }
}

impl Conversation {
    fn new(messages: Vec<Message>) -> Self {
        let encoded = vec![None; messages.len()];
        Self {
            messages,
            encoded,
            history: History::new(),
        }
    }

    fn push(&mut self, message: Message) {
        self.messages.push(message);
        self.encoded.push(None);
    }

    fn replace(&mut self, from: usize, to: usize, with: Vec<Message>) {
        let to = to.min(self.messages.len());
        let from = from.min(to);
        self.encoded.splice(from..to, std::iter::repeat_n(None, with.len()));
        if from < self.messages.len() {
            self.history = History::new();
        }
        self.messages.splice(from..to, with);
    }

    fn truncate(&mut self, len: usize) {
        self.replace(len, self.messages.len(), Vec::new());
    }

    fn clear(&mut self) {
        *self = Self::default();
    }

    fn encode_with(&mut self, encode: impl Fn(&Message) -> Option<Encoded>) {
        for (message, slot) in self.messages.iter().zip(self.encoded.iter_mut()) {
            if slot.is_none() {
                *slot = encode(message);
            }
        }
    }

    fn encoded(&self) -> &[Option<Encoded>] {
        &self.encoded
    }
}

fn image() -> Image {
    Image {
        media_type: "image/png".into(),
        data_base64: "iVBOR".into(),
    }
}

fn user(text: &str, images: Vec<Image>) -> Message {
    Message::User {
        content: text.into(),
        images,
    }
}

fn calls(ids: &[&str], text: &str, signed: bool) -> Message {
    Message::Assistant {
        content: text.into(),
        reasoning: Some(Reasoning {
            text: "thinking \"quoted\" é".into(),
            signature: signed.then(|| "sig".to_string()),
            // Signed reasoning as each provider keeps it; every provider sends back only its own kinds.
            blocks: if signed {
                vec![
                    ReasoningBlock::Thinking {
                        thinking: "thinking \"quoted\" é".into(),
                        signature: "sig".into(),
                    },
                    ReasoningBlock::RedactedThinking { data: "EmwK".into() },
                    ReasoningBlock::ResponsesReasoning {
                        id: "rs_1".into(),
                        summary: vec!["**Plan**".into()],
                        encrypted_content: Some("gAAAA".into()),
                    },
                ]
            } else {
                Vec::new()
            },
        }),
        tool_calls: ids
            .iter()
            .map(|id| ToolCall {
                id: (*id).into(),
                name: "read_file".into(),
                arguments: json!({"path": format!("{id}.rs"), "z": 1, "a": [true, null]}),
            })
            .collect(),
    }
}

fn result(id: &str, text: &str, images: Vec<Image>, is_error: bool) -> Message {
    Message::Tool {
        call_id: id.into(),
        name: "read_file".into(),
        content: text.into(),
        is_error,
        images,
    }
}

fn answer(text: &str) -> Message {
    Message::Assistant {
        content: text.into(),
        reasoning: None,
        tool_calls: vec![],
    }
}

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "read_file".into(),
        description: "reads".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }]
}

/// The body from the conversation's stored forms, and the body built whole from a copy of its messages.
type Bodies = Box<dyn Fn(&Conversation) -> (Vec<u8>, Vec<u8>)>;

fn openai() -> (Box<dyn Provider>, Bodies) {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "gpt-test");
    config.base_url = "http://127.0.0.1:1/v1".into();
    config.max_tokens = Some(300);
    let provider = OpenAiProvider::new(&config).unwrap();
    let again = OpenAiProvider::new(&config).unwrap();
    let bodies: Bodies = Box::new(move |c: &Conversation| {
        let whole = ChatRequest {
            model: String::new(),
            system: "be brief".into(),
            messages: c.to_vec(),
            tools: tools(),
            max_tokens: None,
        };
        let definitions = tools();
        let stored = PreparedRequest {
            encoded: c.encoded(),
            tools: &definitions,
            history: Some(c.history),
            ..whole.prepared()
        };
        let spliced = again.body_bytes(&stored).unwrap().to_vec();
        assert_eq!(spliced, again.body_bytes(&whole.prepared()).unwrap().to_vec());
        (spliced, serde_json::to_vec(&again.body(&whole)).unwrap())
    });
    (Box::new(Http(provider)), bodies)
}

fn anthropic() -> (Box<dyn Provider>, Bodies) {
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-test");
    config.base_url = "http://127.0.0.1:1".into();
    let provider = AnthropicProvider::new(&config).unwrap();
    let again = AnthropicProvider::new(&config).unwrap();
    let bodies: Bodies = Box::new(move |c: &Conversation| {
        let whole = ChatRequest {
            model: "other-model".into(),
            system: "be brief".into(),
            messages: c.to_vec(),
            tools: tools(),
            max_tokens: Some(77),
        };
        let definitions = tools();
        let stored = PreparedRequest {
            encoded: c.encoded(),
            tools: &definitions,
            history: Some(c.history),
            ..whole.prepared()
        };
        let spliced = again.body_bytes(&stored).unwrap().to_vec();
        assert_eq!(spliced, again.body_bytes(&whole.prepared()).unwrap().to_vec());
        (spliced, serde_json::to_vec(&again.body(&whole)).unwrap())
    });
    (Box::new(Http(provider)), bodies)
}

fn responses() -> (Box<dyn Provider>, Bodies) {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "gpt-5");
    config.base_url = "http://127.0.0.1:1/v1".into();
    config.max_tokens = Some(300);
    let provider = ResponsesProvider::new(&config).unwrap();
    let again = ResponsesProvider::new(&config).unwrap();
    let bodies: Bodies = Box::new(move |c: &Conversation| {
        let whole = ChatRequest {
            model: String::new(),
            system: "be brief".into(),
            messages: c.to_vec(),
            tools: tools(),
            max_tokens: None,
        };
        let definitions = tools();
        let stored = PreparedRequest {
            encoded: c.encoded(),
            tools: &definitions,
            history: Some(c.history),
            ..whole.prepared()
        };
        let spliced = again.body_bytes(&stored).unwrap().to_vec();
        assert_eq!(spliced, again.body_bytes(&whole.prepared()).unwrap().to_vec());
        (spliced, serde_json::to_vec(&again.body(&whole)).unwrap())
    });
    (Box::new(Http(provider)), bodies)
}

fn check(conversation: &mut Conversation, provider: &dyn Provider, bodies: &Bodies, step: &str) {
    conversation.encode_with(|m| provider.encode(m));
    assert!(
        conversation.encoded().iter().all(Option::is_some),
        "{step}: all encoded"
    );
    let (spliced, whole) = bodies(conversation);
    assert_eq!(
        String::from_utf8_lossy(&spliced),
        String::from_utf8_lossy(&whole),
        "{step}: the stored forms give the same body"
    );
}

fn exercise(provider: &dyn Provider, bodies: &Bodies) {
    let mut c = Conversation::new(vec![user("start", vec![])]);
    check(&mut c, provider, bodies, "loaded");
    c.push(calls(&["a", "b"], "", true));
    c.push(result("a", "A\nline \u{1} ctrl", vec![image()], false));
    c.push(result("b", "", vec![], true));
    check(&mut c, provider, bodies, "a step with an image result");
    c.push(user("[a note after results]", vec![image()]));
    c.push(calls(&["c"], "text before the call", false));
    c.push(result("c", "C", vec![], false));
    c.push(answer("done"));
    c.push(user("   ", vec![]));
    c.push(user("next", vec![]));
    check(&mut c, provider, bodies, "pushes");
    let before = c.encoded().len();
    c.replace(2, 3, vec![result("a", "[compacted]", vec![], false)]);
    assert_eq!(c.encoded().len(), before);
    assert_eq!(
        c.encoded().iter().filter(|e| e.is_none()).count(),
        1,
        "only the replaced message"
    );
    check(&mut c, provider, bodies, "a replaced result");
    c.replace(0, 5, vec![user("[summary of earlier work]", vec![])]);
    check(&mut c, provider, bodies, "a replaced range");
    c.truncate(3);
    check(&mut c, provider, bodies, "truncated");
    c.push(calls(&["d", "e"], "", false));
    c.push(result("e", "E", vec![], false));
    c.push(result("zzz", "orphan", vec![], false));
    check(&mut c, provider, bodies, "an interrupted step and an orphan result");
    c.clear();
    check(&mut c, provider, bodies, "cleared");
}

#[test]
fn openai_bodies_from_stored_forms_match_whole_bodies() {
    let (provider, bodies) = openai();
    exercise(provider.as_ref(), &bodies);
}

#[test]
fn anthropic_bodies_from_stored_forms_match_whole_bodies() {
    let (provider, bodies) = anthropic();
    exercise(provider.as_ref(), &bodies);
}

#[test]
fn responses_bodies_from_stored_forms_match_whole_bodies() {
    let (provider, bodies) = responses();
    exercise(provider.as_ref(), &bodies);
}

/// A provider whose bodies grow from the last one (`wire::Kept`).
trait Grows {
    /// One message's wire form, as the provider keeps it.
    fn encoded(&self, message: &Message) -> Option<Encoded>;
    fn bytes(&self, request: &PreparedRequest<'_>) -> Bytes;
    fn whole(&self, request: &ChatRequest) -> Vec<u8>;
    fn last(&self) -> &Mutex<Option<Kept>>;

    /// Where the kept body lives, to tell a grown body from one written afresh.
    fn kept_at(&self) -> Option<*const Vec<u8>> {
        self.last().lock().ok()?.as_ref().map(|kept| Arc::as_ptr(&kept.body))
    }
}

impl Grows for OpenAiProvider {
    fn encoded(&self, message: &Message) -> Option<Encoded> {
        <Self as crate::WireFormat>::encode(message).ok()
    }
    fn bytes(&self, request: &PreparedRequest<'_>) -> Bytes {
        self.body_bytes(request).unwrap()
    }
    fn whole(&self, request: &ChatRequest) -> Vec<u8> {
        serde_json::to_vec(&self.body(request)).unwrap()
    }
    fn last(&self) -> &Mutex<Option<Kept>> {
        &self.last
    }
}

impl Grows for AnthropicProvider {
    fn encoded(&self, message: &Message) -> Option<Encoded> {
        <Self as crate::WireFormat>::encode(message).ok()
    }
    fn bytes(&self, request: &PreparedRequest<'_>) -> Bytes {
        self.body_bytes(request).unwrap()
    }
    fn whole(&self, request: &ChatRequest) -> Vec<u8> {
        serde_json::to_vec(&self.body(request)).unwrap()
    }
    fn last(&self) -> &Mutex<Option<Kept>> {
        &self.last
    }
}

/// `system_first`: the system prompt comes before the messages (OpenAI), so another one means a new body; after them
/// (Anthropic) it is written again with the rest anyway.
impl Grows for ResponsesProvider {
    fn encoded(&self, message: &Message) -> Option<Encoded> {
        <Self as crate::WireFormat>::encode(message).ok()
    }
    fn bytes(&self, request: &PreparedRequest<'_>) -> Bytes {
        self.body_bytes(request).unwrap()
    }
    fn whole(&self, request: &ChatRequest) -> Vec<u8> {
        serde_json::to_vec(&self.body(request)).unwrap()
    }
    fn last(&self) -> &Mutex<Option<Kept>> {
        &self.last
    }
}

fn grows_only_from_the_very_same_messages(provider: &dyn Grows, system_first: bool) {
    let definitions = tools();
    let body = |c: &mut Conversation, system: &str| {
        c.encode_with(|m| provider.encoded(m));
        let whole = ChatRequest {
            model: String::new(),
            system: system.into(),
            messages: c.to_vec(),
            tools: definitions.clone(),
            max_tokens: None,
        };
        let stored = PreparedRequest {
            encoded: c.encoded(),
            history: Some(c.history),
            ..whole.prepared()
        };
        let bytes = provider.bytes(&stored);
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            String::from_utf8_lossy(&provider.whole(&whole))
        );
        bytes
    };
    let mut c = Conversation::new(vec![user("start", vec![])]);
    drop(body(&mut c, "be brief"));
    c.push(calls(&["c0"], "", false));
    c.push(result("c0", "result 0", vec![], false));
    drop(body(&mut c, "be brief"));
    let first = provider.kept_at();
    for i in 1..20 {
        let id = format!("c{i}");
        c.push(calls(&[id.as_str()], "", i % 3 == 0));
        c.push(result(&id, &format!("result {i}"), vec![], i % 5 == 0));
        if i % 4 == 0 {
            // A note after the results joins their message (Anthropic) or follows it (OpenAI).
            c.push(user("a note", vec![]));
        }
        drop(body(&mut c, "be brief"));
        assert_eq!(provider.kept_at(), first, "step {i}: grown, not written afresh");
    }
    // An early message replaced by one of the same length and place, other content: a new encoding, a new body.
    c.replace(2, 3, vec![result("c0", "RESULT 0", vec![], false)]);
    drop(body(&mut c, "be brief"));
    let rewritten = provider.kept_at();
    assert_ne!(rewritten, first, "a replaced message is never taken from the last body");
    c.truncate(c.len() - 2);
    drop(body(&mut c, "be brief"));
    assert_ne!(
        provider.kept_at(),
        rewritten,
        "a shorter conversation is written afresh"
    );
    let other = provider.kept_at();
    drop(body(&mut c, "be terse"));
    if system_first {
        assert_ne!(provider.kept_at(), other, "another system prompt is written afresh");
    }
    // A body still being sent is not touched: the next one is written apart.
    let held = body(&mut c, "be terse");
    let before = held.to_vec();
    c.push(user("more", vec![]));
    let next = body(&mut c, "be terse");
    assert_eq!(held.to_vec(), before, "the body in flight is unchanged");
    assert_ne!(next.len(), held.len());
    drop((held, next));
    // An answer without calls, then the user: the last message changes role twice.
    c.push(answer("done"));
    drop(body(&mut c, "be terse"));
    c.push(user("again", vec![]));
    drop(body(&mut c, "be terse"));
    // Images: OpenAI moves them as the conversation grows and writes such bodies whole; all stay right.
    c.push(calls(&["img"], "", false));
    c.push(result("img", "a picture", vec![image()], false));
    drop(body(&mut c, "be terse"));
    c.push(user("after", vec![]));
    drop(body(&mut c, "be terse"));
}

#[test]
fn an_openai_body_grows_from_the_last_only_while_it_holds_the_very_same_messages() {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "gpt-test");
    config.base_url = "http://127.0.0.1:1/v1".into();
    grows_only_from_the_very_same_messages(&OpenAiProvider::new(&config).unwrap(), true);
}

#[test]
fn a_responses_body_grows_from_the_last_only_while_it_holds_the_very_same_messages() {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "gpt-test");
    config.base_url = "http://127.0.0.1:1/v1".into();
    grows_only_from_the_very_same_messages(&ResponsesProvider::new(&config).unwrap(), false);
}

#[test]
fn an_anthropic_body_grows_from_the_last_only_while_it_holds_the_very_same_messages() {
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-test");
    config.base_url = "http://127.0.0.1:1".into();
    grows_only_from_the_very_same_messages(&AnthropicProvider::new(&config).unwrap(), false);
}

#[test]
fn a_form_of_the_other_format_is_not_used() {
    let message = user("hello", vec![]);
    let openai_form = crate::openai::encode(&message).unwrap();
    let (provider, _) = anthropic();
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-test");
    config.base_url = "http://127.0.0.1:1".into();
    let anthropic = AnthropicProvider::new(&config).unwrap();
    let messages = vec![message];
    let wrong = vec![Some(openai_form)];
    let request = ChatRequest {
        model: String::new(),
        system: String::new(),
        messages: messages.clone(),
        tools: vec![],
        max_tokens: None,
    };
    let with_wrong = PreparedRequest {
        encoded: &wrong,
        ..request.prepared()
    };
    assert_eq!(
        anthropic.body_bytes(&with_wrong).unwrap(),
        anthropic.body_bytes(&request.prepared()).unwrap()
    );
    assert!(provider.encode(&messages[0]).is_some_and(|e| e.size() > 0));
}
