//! Each tool output is on disk once: a result equal to its recorded `ToolCallEnd`'s text is written without it and
//! loaded back whole, under resets, rewinds, replacements, resumed writers and torn lines; old logs (results written
//! whole) still load.

use std::io::Write;

use proptest::prelude::*;
use proptest::sample::Index;

use super::{MISSING_RESULT, SessionLog, SessionMeta, load};
use tern_protocol::{Event, Message, ToolOutput};
use tern_testkit::fuzz_config as config;

fn meta() -> SessionMeta {
    SessionMeta::new("s1", "/w", "openai", "m")
}

fn end(call_id: &str, text: &str) -> Event {
    Event::ToolCallEnd {
        call_id: call_id.into(),
        name: "exec".into(),
        output: ToolOutput::text(text),
        duration_ms: 3,
        full_output_path: None,
    }
}

fn result(call_id: &str, text: &str) -> Message {
    Message::Tool {
        call_id: call_id.into(),
        name: "exec".into(),
        content: text.into(),
        is_error: false,
        images: Vec::new(),
    }
}

fn user(text: &str) -> Message {
    Message::User {
        content: text.into(),
        images: Vec::new(),
    }
}

#[test]
fn a_result_equal_to_its_event_is_stored_once_and_loaded_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = SessionLog::path_for(dir.path(), "s1");
    let output = "line one\nline \"two\" é 中\n".repeat(50);
    let mut log = SessionLog::create(&path, &meta()).unwrap();
    log.record(&user("run it")).unwrap();
    log.event(1, &end("c1", &output)).unwrap();
    log.event(2, &end("c2", "short")).unwrap();
    log.record(&result("c1", &output)).unwrap();
    // A result that differs from its event (compacted, say) is kept as it is.
    log.record(&result("c2", "not the event's text")).unwrap();
    drop(log);
    let file = std::fs::read_to_string(&path).unwrap();
    assert_eq!(file.matches("line one").count(), 50, "the output is on disk once");
    assert!(file.contains("not the event's text"));
    let loaded = load(&path).unwrap();
    assert_eq!(
        loaded.messages,
        vec![
            user("run it"),
            result("c1", &output),
            result("c2", "not the event's text")
        ]
    );
    assert_eq!(loaded.events, vec![(1, end("c1", &output)), (2, end("c2", "short"))]);
}

#[test]
fn a_result_whose_event_this_writer_did_not_record_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = SessionLog::path_for(dir.path(), "s1");
    let mut log = SessionLog::create(&path, &meta()).unwrap();
    log.event(1, &end("c1", "before the crash")).unwrap();
    drop(log);
    // The process died after the event; the resumed one records the result (as repair does) without knowing it.
    let mut log = SessionLog::append_to(&path).unwrap();
    log.record(&result("c1", "before the crash")).unwrap();
    // An event that was reset away, and one rewound away, do not stand for later results either.
    log.event(2, &end("c2", "reset away")).unwrap();
    log.reset().unwrap();
    log.record(&result("c2", "reset away")).unwrap();
    log.event(3, &end("c3", "rewound away")).unwrap();
    log.rewind(1, 0).unwrap();
    log.record(&result("c3", "rewound away")).unwrap();
    drop(log);
    let file = std::fs::read_to_string(&path).unwrap();
    assert_eq!(file.matches("before the crash").count(), 2);
    assert_eq!(file.matches("reset away").count(), 2);
    assert_eq!(file.matches("rewound away").count(), 2);
    let loaded = load(&path).unwrap();
    assert_eq!(
        loaded.messages,
        vec![result("c2", "reset away"), result("c3", "rewound away")]
    );
}

#[test]
fn an_old_log_with_whole_results_loads_and_an_unreadable_event_is_not_an_empty_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    let lines = [
        r#"{"type":"meta","id":"s1","workspace":"/w","provider":"openai","model":"m"}"#,
        r#"{"type":"event","at":1,"event":{"event":"tool_call_end","call_id":"c1","name":"exec","output":{"text":"out"},"duration_ms":1}}"#,
        r#"{"type":"message","message":{"role":"tool","call_id":"c1","name":"exec","content":"out"}}"#,
        // An event line that no longer parses, then a result that points at it.
        r#"{"type":"event","at":2,"event":{"event":"tool_call_end","call_id":"c2"}}"#,
        r#"{"type":"message","message":{"role":"tool","call_id":"c2","name":"exec","content":""},"text_in_event":true}"#,
    ];
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
    drop(file);
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.messages, vec![result("c1", "out"), result("c2", MISSING_RESULT)]);
}

/// One step of a session, as the runner records it.
#[derive(Debug, Clone)]
enum Step {
    User(String),
    /// A call ends (call id from a small set, so ids repeat) with this text.
    End(u8, String),
    /// A call's result: its event's text when `same`, else this text.
    Result(u8, bool, String),
    Reset,
    Rewind(usize, usize),
    Replace(usize, usize),
    /// The process ends; the next steps are written by a writer opened with `append_to`.
    Resume,
}

fn text() -> impl Strategy<Value = String> {
    "[a \n\"\\\\é中]{0,8}"
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => text().prop_map(Step::User),
        4 => (0..3u8, text()).prop_map(|(id, t)| Step::End(id, t)),
        4 => (0..3u8, any::<bool>(), text()).prop_map(|(id, same, t)| Step::Result(id, same, t)),
        1 => Just(Step::Reset),
        1 => (0..6usize, 0..6usize).prop_map(|(m, e)| Step::Rewind(m, e)),
        1 => (0..6usize, 0..6usize).prop_map(|(a, b)| Step::Replace(a.min(b), a.max(b))),
        1 => Just(Step::Resume),
    ]
}

/// Writes `steps` with the real writer; returns the conversation after each whole line (index 0: after the meta line).
fn write(path: &std::path::Path, steps: &[Step]) -> std::io::Result<Vec<Vec<Message>>> {
    let mut log = SessionLog::create(path, &meta())?;
    let mut states = vec![Vec::new()];
    let mut now: Vec<Message> = Vec::new();
    // The last text each call ended with, as the runner would put it in the result.
    let mut last_end: std::collections::HashMap<u8, String> = Default::default();
    for step in steps {
        match step {
            Step::User(t) => {
                log.record(&user(t))?;
                now.push(user(t));
            }
            Step::End(id, t) => {
                log.event(7, &end(&format!("c{id}"), t))?;
                last_end.insert(*id, t.clone());
            }
            Step::Result(id, same, t) => {
                let text = match (same, last_end.get(id)) {
                    (true, Some(ended)) => ended.clone(),
                    _ => t.clone(),
                };
                let m = result(&format!("c{id}"), &text);
                log.record(&m)?;
                now.push(m);
            }
            Step::Reset => {
                log.reset()?;
                now.clear();
            }
            Step::Rewind(m, e) => {
                log.rewind(*m, *e)?;
                now.truncate(*m);
            }
            Step::Replace(from, to) => {
                let with = vec![user("summary")];
                log.replace(*from, *to, &with)?;
                let to = (*to).min(now.len());
                now.splice((*from).min(to)..to, with);
            }
            Step::Resume => {
                drop(log);
                log = SessionLog::append_to(path)?;
                // No line written.
                continue;
            }
        }
        states.push(now.clone());
    }
    Ok(states)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn loads_what_was_recorded_whole_or_cut(steps in prop::collection::vec(step(), 0..24), cut in any::<Index>()) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let path = dir.path().join("s.jsonl");
        let states = write(&path, &steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let loaded = load(&path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(Some(&loaded.messages), states.last());
        // Cut anywhere (a crash mid-write): the messages of the whole lines, never a result without its text.
        let bytes = std::fs::read(&path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let cut = cut.index(bytes.len() + 1);
        let lines = bytes[..cut].iter().filter(|b| **b == b'\n').count();
        prop_assume!(lines > 0);
        let cut_path = dir.path().join("cut.jsonl");
        std::fs::write(&cut_path, &bytes[..cut]).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let messages = load(&cut_path).map_err(|e| TestCaseError::fail(e.to_string()))?.messages;
        let whole = &states[lines - 1];
        prop_assert!(
            &messages == whole || states.get(lines) == Some(&messages),
            "cut at {}: {:?}", cut, messages
        );
        let missing = messages.iter().any(|m| matches!(m, Message::Tool { content, .. } if content == MISSING_RESULT));
        prop_assert!(!missing, "a result lost its text");
    }
}
