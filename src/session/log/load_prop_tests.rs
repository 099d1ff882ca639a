//! Fuzz target for the session loader: arbitrary bytes, valid logs cut at every kind of place (inside a multi-byte
//! char included), and valid logs with garbage appended. `load` never panics; on a log whose meta line survived it
//! returns a valid prefix: the messages of the whole lines before the cut, or those and the last line when the cut
//! fell right after its JSON.

use proptest::prelude::*;
use proptest::sample::Index;

use super::{SessionLog, SessionMeta, load};
use tern_protocol::{Message, ToolCall};
use tern_testkit::fuzz_config as config;

fn text() -> impl Strategy<Value = String> {
    "[a \n\"\\\\é中😀\u{0}]{0,12}"
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        text().prop_map(|content| Message::User {
            content,
            images: Vec::new()
        }),
        (text(), prop::collection::vec(text(), 0..2)).prop_map(|(content, args)| Message::Assistant {
            content,
            reasoning: None,
            tool_calls: args
                .into_iter()
                .enumerate()
                .map(|(i, a)| ToolCall {
                    id: format!("call_{i}"),
                    name: "grep".into(),
                    arguments: serde_json::json!({"pattern": a}),
                })
                .collect(),
        }),
        (text(), any::<bool>()).prop_map(|(content, is_error)| Message::Tool {
            call_id: "call_0".into(),
            name: "grep".into(),
            content,
            is_error,
            images: Vec::new(),
        }),
    ]
}

/// `None` marks a reset (a new conversation in the same session).
fn entries() -> impl Strategy<Value = Vec<Option<Message>>> {
    prop::collection::vec(prop::option::weighted(0.9, message()), 0..8)
}

fn meta() -> SessionMeta {
    SessionMeta {
        id: "s1".into(),
        workspace: "/w é".into(),
        provider: "openai".into(),
        model: "m".into(),
        forked_from: None,
        forked_messages: None,
    }
}

/// Writes a log with the real writer; returns its bytes and the conversation after each whole line (index 0: after
/// the meta line).
fn write_log(dir: &std::path::Path, entries: &[Option<Message>]) -> std::io::Result<(Vec<u8>, Vec<Vec<Message>>)> {
    let path = dir.join("full.jsonl");
    let mut log = SessionLog::create(&path, &meta())?;
    let mut states = vec![Vec::new()];
    let mut now: Vec<Message> = Vec::new();
    for entry in entries {
        match entry {
            Some(m) => {
                log.record(m)?;
                now.push(m.clone());
            }
            None => {
                log.reset()?;
                now.clear();
            }
        }
        states.push(now.clone());
    }
    Ok((std::fs::read(&path)?, states))
}

fn load_bytes(dir: &std::path::Path, bytes: &[u8]) -> std::io::Result<(SessionMeta, Vec<Message>)> {
    let path = dir.join("cut.jsonl");
    std::fs::write(&path, bytes)?;
    load(&path).map(|l| (l.meta, l.messages))
}

fn io(e: std::io::Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), lines in any::<bool>()) {
        let dir = tempfile::tempdir().map_err(io)?;
        let bytes = if lines {
            // Mostly line-shaped: JSON-ish fragments split by newlines.
            bytes.iter().map(|b| if b % 7 == 0 { b'\n' } else { *b }).collect()
        } else {
            bytes
        };
        let _ = load_bytes(dir.path(), &bytes);
        let mut with_meta = br#"{"type":"meta","id":"s","workspace":"/w","provider":"p","model":"m"}"#.to_vec();
        with_meta.push(b'\n');
        with_meta.extend(&bytes);
        prop_assert!(load_bytes(dir.path(), &with_meta).is_ok(), "a log with a meta line must load");
    }

    #[test]
    fn a_cut_log_loads_a_valid_prefix(entries in entries(), cut in any::<Index>()) {
        let dir = tempfile::tempdir().map_err(io)?;
        let (bytes, states) = write_log(dir.path(), &entries).map_err(io)?;
        let cut = cut.index(bytes.len() + 1);
        let whole_lines = bytes[..cut].iter().filter(|b| **b == b'\n').count();
        let loaded = load_bytes(dir.path(), &bytes[..cut]);
        if whole_lines == 0 {
            // The meta line itself is torn (or exactly complete): either way, no messages.
            if let Ok((_, messages)) = loaded {
                prop_assert!(messages.is_empty());
            }
            return Ok(());
        }
        let (loaded_meta, messages) = loaded.map_err(io)?;
        prop_assert_eq!(loaded_meta, meta());
        let whole = &states[whole_lines - 1];
        let with_last = states.get(whole_lines);
        prop_assert!(
            &messages == whole || with_last == Some(&messages),
            "cut at {} of {}: loaded {:?}", cut, bytes.len(), messages
        );
    }

    #[test]
    fn garbage_after_a_log_is_skipped(entries in entries(), tail in prop::collection::vec(any::<u8>(), 1..60)) {
        let dir = tempfile::tempdir().map_err(io)?;
        let (mut bytes, states) = write_log(dir.path(), &entries).map_err(io)?;
        // A torn write of garbage never starts a line that parses: make sure it is not valid JSON.
        bytes.push(b'{');
        bytes.extend(tail.iter().filter(|b| **b != b'\n'));
        let (_, messages) = load_bytes(dir.path(), &bytes).map_err(io)?;
        prop_assert_eq!(Some(&messages), states.last());
    }
}
