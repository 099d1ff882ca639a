use proptest::prelude::*;
use serde_json::json;

use super::plan::*;
use super::{ContextMeter, Count};
use crate::context::message_tokens;
use tern_protocol::{Message, ToolCall, ToolKind};

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
                name: "read_file".into(),
                arguments: json!({"path": format!("{id}.rs")}),
            })
            .collect(),
    }
}

fn answer(text: &str) -> Message {
    Message::Assistant {
        content: text.into(),
        reasoning: None,
        tool_calls: vec![],
    }
}

fn result(id: &str, chars: usize) -> Message {
    Message::Tool {
        call_id: id.into(),
        name: "read_file".into(),
        content: "x".repeat(chars),
        is_error: false,
        images: vec![],
    }
}

/// A conversation the API accepts: user turns of steps, each step a call batch followed by its results.
fn conversation(turns: &[(usize, &[usize])]) -> Vec<Message> {
    let mut out = Vec::new();
    let mut next = 0;
    for (prompt, steps) in turns {
        out.push(user(&"u".repeat(*prompt)));
        for results in *steps {
            let ids: Vec<String> = (0..*results).map(|k| format!("c{next}_{k}")).collect();
            next += 1;
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            out.push(calls(&refs));
            out.extend(ids.iter().map(|id| result(id, 800)));
        }
        out.push(answer("done"));
    }
    out
}

#[test]
fn the_split_keeps_recent_turns_that_fit() {
    let msgs = vec![
        user(&"a".repeat(4_000)),
        answer(&"b".repeat(4_000)),
        user(&"c".repeat(400)),
        answer(&"d".repeat(400)),
    ];
    // 200 tokens keep the last two messages (100 each), not the thousand-token ones.
    assert_eq!(split_point(&msgs, 200), 2);
    assert_eq!(split_point(&msgs, 10_000), 0);
    // Too little room still keeps the last step.
    assert_eq!(split_point(&msgs, 0), 3);
}

#[test]
fn the_split_never_falls_between_a_call_and_its_results() {
    let msgs = vec![
        user("go"),
        calls(&["a", "b"]),
        result("a", 4_000),
        result("b", 4_000),
        answer("ok"),
    ];
    // The budget would cut after result a: the split moves on past the results instead.
    let split = split_point(&msgs, 1_010);
    assert_eq!(split, 4);
    // The last step is a call with its results: it is kept whole, whatever the budget.
    let mid_turn = vec![user("go"), calls(&["a"]), result("a", 40_000)];
    assert_eq!(split_point(&mid_turn, 0), 1);
    assert_eq!(split_point(&[], 100), 0);
}

#[test]
fn a_lone_summary_is_not_summarised_again() {
    let msgs = vec![summary_message("before"), user("next"), answer("ok")];
    assert!(only_a_summary(&msgs, 1));
    assert!(only_a_summary(&msgs, 0));
    assert!(!only_a_summary(&msgs, 2));
    assert!(!only_a_summary(&[user("a"), answer("b")], 1));
}

#[test]
fn a_compacted_result_names_its_call_and_how_to_get_it_again() {
    let msgs = vec![user("go"), calls(&["a", "b"]), result("a", 5_000), result("b", 10)];
    assert_eq!(compactable_results(&msgs, msgs.len()), vec![2]);
    assert_eq!(compactable_results(&msgs, 2), Vec::<usize>::new());
    let Some(Message::Tool {
        call_id, content, name, ..
    }) = compacted_result(&msgs, 2, |_| ToolKind::Read)
    else {
        panic!("not a result");
    };
    assert_eq!((call_id.as_str(), name.as_str()), ("a", "read_file"));
    assert!(content.contains(r#"{"path":"a.rs"}"#), "{content}");
    assert!(
        content.contains("5000 characters") && content.contains("Call the tool again with the same arguments"),
        "{content}"
    );
    // A tool whose call may change things is not offered as one to call again freely.
    let Some(Message::Tool { content, .. }) = compacted_result(&msgs, 2, |_| ToolKind::Mcp) else {
        panic!("not a result");
    };
    assert!(content.contains("only if doing so has no side effects"), "{content}");
    assert!(compacted_result(&msgs, 1, |_| ToolKind::Read).is_none());
}

#[test]
fn the_transcript_shows_roles_calls_and_clipped_results_within_its_limit() {
    let msgs = vec![
        summary_message("earlier work"),
        user("fix the bug"),
        calls(&["a"]),
        result("a", 10_000),
        answer("fixed"),
    ];
    let text = transcript(&msgs, 100_000);
    assert!(text.contains("### Summary of what came before\nearlier work"), "{text}");
    assert!(text.contains("### User\nfix the bug"));
    assert!(text.contains(r#"[calls read_file {"path":"a.rs"}]"#));
    assert!(text.contains("[... 8000 more characters]"));
    assert!(text.contains("### Assistant\nfixed"));
    let short = transcript(&msgs, 1_000);
    assert!(short.len() < 1_100, "{}", short.len());
    assert!(short.contains("### Summary of what came before") && short.contains("fixed"));
    assert!(short.contains("characters of the conversation left out"));
    // Multi-byte text is cut on character boundaries.
    let wide = transcript(&[user(&"é".repeat(3_000))], 1_001);
    assert!(wide.contains("left out"));
}

proptest! {
    #![proptest_config(tern_testkit::fuzz_config(256))]
    /// Whatever the conversation and the budget, the kept part never begins with a tool result, and never loses
    /// the last step.
    #[test]
    fn split_points_are_valid(
        turns in prop::collection::vec((0usize..3_000, prop::collection::vec(1usize..4, 0..4)), 1..6),
        keep in 0u64..4_000,
    ) {
        let shaped: Vec<(usize, &[usize])> = turns.iter().map(|(p, s)| (*p, s.as_slice())).collect();
        let msgs = conversation(&shaped);
        let split = split_point(&msgs, keep);
        let last_step = msgs.iter().rposition(|m| !matches!(m, Message::Tool { .. })).unwrap();
        prop_assert!(split <= last_step);
        let starts_with_result = matches!(msgs.get(split), Some(Message::Tool { .. }));
        prop_assert!(!starts_with_result);
        // The kept part fits the budget unless the split had to move back to keep the last step whole.
        let kept: u64 = msgs[split..].iter().map(message_tokens).sum();
        let last: u64 = msgs[last_step..].iter().map(message_tokens).sum();
        prop_assert!(kept <= keep.max(last), "kept {} keep {} last {}", kept, keep, last);
    }
}

/// A server's count far below tern's estimate (a fixed or partial number) is doubted, and the estimate stays in
/// charge; a plausible count is taken; none leaves the estimate.
#[test]
fn a_count_far_below_the_estimate_is_doubted_once() {
    let mut meter = ContextMeter::default();
    assert_eq!(meter.counted(0, 4, 4, 5_000), Count::Missing);
    assert_eq!(meter.counted(10, 4, 4, 5_000), Count::Doubted { first: true });
    assert_eq!(meter.counted(12, 6, 6, 6_000), Count::Doubted { first: false });
    assert_eq!(meter.counted(4_000, 8, 8, 5_000), Count::Taken);
    assert_eq!(meter.tokens, 4_000);
    // A count well above the estimate (the server's tokenizer, images) is the server's to know: taken.
    assert_eq!(meter.counted(20_000, 8, 8, 5_000), Count::Taken);
}
