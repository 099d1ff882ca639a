use serde_json::json;

use super::*;
use tern_protocol::ToolCall;

fn user(text: &str) -> Message {
    Message::User {
        content: text.into(),
        images: vec![],
    }
}

fn calls(ids: &[&str]) -> Message {
    Message::Assistant {
        content: String::new(),
        reasoning: None,
        tool_calls: ids
            .iter()
            .map(|id| ToolCall {
                id: (*id).into(),
                name: "grep".into(),
                arguments: json!({"pattern": id}),
            })
            .collect(),
    }
}

fn result(id: &str) -> Message {
    Message::Tool {
        call_id: id.into(),
        name: "grep".into(),
        content: format!("result of {id}"),
        is_error: false,
        images: vec![],
    }
}

#[test]
fn a_valid_conversation_is_left_as_it_is_and_an_invalid_one_is_repaired() {
    let mut c = Conversation::new(vec![user("go")]);
    c.push(calls(&["a", "b"]));
    c.push(result("a"));
    c.push(result("b"));
    let before = c.to_vec();
    c.ensure_valid();
    assert_eq!(c.to_vec(), before);
    // Out of call order, and a call left unanswered: repaired as `context::repair` does.
    c.push(calls(&["c", "d"]));
    c.push(result("d"));
    c.ensure_valid();
    assert_eq!(
        c.to_vec(),
        context::repair(&[before, vec![calls(&["c", "d"]), result("d")]].concat())
    );
    assert!(
        matches!(&c[5], Message::Tool { call_id, content, .. } if call_id == "c" && content == context::LOST_RESULT)
    );
    // Duplicate ids in one message are left to the whole repair too.
    let mut dup = Conversation::new(vec![user("go")]);
    dup.push(calls(&["x", "x"]));
    dup.push(result("x"));
    dup.push(result("x"));
    let copy = dup.to_vec();
    dup.ensure_valid();
    assert_eq!(dup.to_vec(), context::repair(&copy));
}

#[test]
fn loaded_history_is_repaired() {
    let c = Conversation::new(vec![result("orphan"), user("go"), calls(&["a"])]);
    assert_eq!(c.len(), 3);
    assert!(matches!(&c[2], Message::Tool { call_id, .. } if call_id == "a"));
}

#[test]
fn the_kept_estimate_never_undercounts() {
    let mut c = Conversation::new(vec![user("go")]);
    for i in 0..50 {
        let id = format!("c{i}");
        c.push(calls(&[&id]));
        c.push(result(&id));
    }
    let exact = context::estimate_tokens(&c, "", 0);
    assert!(c.estimated_tokens() >= exact && c.estimated_tokens() <= exact + c.len() as u64 * 2);
    c.replace(1, 41, vec![user("[summary]")]);
    let exact = context::estimate_tokens(&c, "", 0);
    assert!(c.estimated_tokens() >= exact && c.estimated_tokens() <= exact + c.len() as u64 * 2);
    c.truncate(1);
    assert_eq!(c.estimated_tokens(), context::estimate_tokens(&c, "", 0) + 1);
}

#[test]
fn a_replaced_result_is_checked_again_with_its_call() {
    let mut c = Conversation::new(vec![user("go")]);
    c.push(calls(&["a", "b"]));
    c.push(result("a"));
    c.push(result("b"));
    c.ensure_valid();
    // A replacement that answers a call twice is caught by the next check, though the check starts late.
    c.replace(3, 4, vec![result("a")]);
    c.ensure_valid();
    assert_eq!(
        c.to_vec(),
        vec![user("go"), calls(&["a", "b"]), result("a"), {
            let mut lost = result("b");
            if let Message::Tool { content, is_error, .. } = &mut lost {
                *content = context::LOST_RESULT.into();
                *is_error = true;
            }
            lost
        }]
    );
}

/// Through pushes, replaced ranges, truncation and a repair, every stored wire form is the one the provider makes
/// afresh for its message: a form is never kept for a message that changed. (The provider's own tests check that a
/// body spliced from such forms is the body built whole.)
#[test]
fn stored_wire_forms_are_the_forms_made_afresh() {
    for kind in [
        tern_provider::ProviderKind::OpenAi,
        tern_provider::ProviderKind::Anthropic,
    ] {
        let mut config = tern_provider::ProviderConfig::new(kind, "test-model");
        config.base_url = "http://127.0.0.1:1".into();
        let provider = tern_provider::build(&config).unwrap();
        let check = |c: &mut Conversation, step: &str| {
            c.ensure_valid();
            c.encode_with(provider.as_ref());
            let fresh: Vec<Option<Encoded>> = c.iter().map(|m| provider.encode(m)).collect();
            assert_eq!(c.encoded(), fresh.as_slice(), "{kind:?}, {step}");
            assert!(c.encoded().iter().all(Option::is_some), "{kind:?}, {step}: all encoded");
        };
        let mut c = Conversation::new(vec![user("start")]);
        check(&mut c, "loaded");
        c.push(calls(&["a", "b"]));
        c.push(result("a"));
        c.push(result("b"));
        c.push(user("next"));
        check(&mut c, "pushes");
        c.replace(2, 3, vec![user("[compacted]")]);
        check(&mut c, "a replaced result");
        c.truncate(2);
        c.push(calls(&["d", "e"]));
        c.push(result("e"));
        c.push(result("zzz"));
        check(&mut c, "repaired after an interrupted step");
        assert!(matches!(&c[c.len() - 1], Message::Tool { call_id, .. } if call_id == "e"));
        c.clear();
        check(&mut c, "cleared");
    }
}

/// The conversation keeps its `History` while messages are only added and takes a new one whenever a message already
/// in it is replaced, dropped or moved: the provider grows its last body by the messages after the ones it holds only
/// for the same history, without looking at those before.
#[test]
fn the_history_changes_exactly_when_a_message_already_there_changes() {
    let mut c = Conversation::new(vec![user("start")]);
    let first = c.history();
    c.push(calls(&["a"]));
    c.push(result("a"));
    c.replace(c.len(), c.len(), vec![user("appended")]);
    c.truncate(c.len());
    c.ensure_valid();
    assert_eq!(c.history(), first, "pushes, an append and a check keep it");
    type Change = fn(&mut Conversation);
    let changes: [(&str, Change); 5] = [
        ("a replaced message", |c| c.replace(3, 4, vec![user("other")])),
        ("an insertion", |c| c.replace(1, 1, vec![user("inserted")])),
        ("a truncation", |c| c.truncate(1)),
        ("a repair", |c| {
            c.push(result("orphan"));
            c.ensure_valid();
        }),
        ("clearing", Conversation::clear),
    ];
    for (what, change) in changes {
        let before = c.history();
        change(&mut c);
        assert_ne!(c.history(), before, "{what}");
    }
    assert_ne!(
        Conversation::default().history(),
        Conversation::default().history(),
        "two conversations"
    );
}
