//! The text printer across retries: what stdout and stderr hold after a failed attempt's partial answer.

use super::*;

fn delta(text: &str) -> Event {
    Event::AssistantDelta { text: text.into() }
}

fn retrying() -> Event {
    Event::Retrying {
        attempt: 2,
        max_attempts: 5,
        delay_ms: 100,
        reason: "the response stream broke".into(),
    }
}

fn message(text: &str) -> Event {
    Event::AssistantMessage {
        text: text.into(),
        reasoning: None,
    }
}

/// Prints `events` in text format; (stdout, stderr).
fn print(events: &[Event]) -> (String, String) {
    let mut printer = Printer::new(OutputFormat::Text, None);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    for event in events {
        printer.print(event, &mut out, &mut err);
    }
    printer.finish(Some(&TurnEnd::Completed), &mut out, &mut err);
    (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn a_retried_answer_that_repeats_the_partial_one_is_printed_once() {
    let (out, err) = print(&[
        delta("Hello "),
        delta("wor"),
        retrying(),
        delta("Hel"),
        delta("lo w"),
        delta("orld, again"),
        delta("."),
        message("Hello world, again."),
    ]);
    assert_eq!(out, "Hello world, again.\n");
    assert!(
        err.starts_with("\ntern: the response stream broke; retrying"),
        "{err:?}"
    );
    assert!(!err.contains("differs"), "{err}");
}

#[test]
fn two_retries_in_a_row_still_print_once() {
    let (out, _) = print(&[
        delta("One two"),
        retrying(),
        delta("One"),
        retrying(),
        delta("One two three"),
        message("One two three"),
    ]);
    assert_eq!(out, "One two three\n");
}

#[test]
fn a_different_retried_answer_starts_on_a_new_line_and_says_so() {
    let (out, err) = print(&[
        delta("Yes, because"),
        retrying(),
        delta("No"),
        delta(", since"),
        message("No, since"),
    ]);
    assert_eq!(out, "Yes, because\nNo, since\n");
    assert!(err.contains("differs from the partial one"), "{err}");
}

#[test]
fn a_retried_answer_shorter_than_the_partial_one_is_printed_in_full() {
    let (out, err) = print(&[delta("Done. And more"), retrying(), delta("Done."), message("Done.")]);
    assert_eq!(out, "Done. And more\nDone.\n");
    assert!(err.contains("differs"), "{err}");
}

#[test]
fn a_retry_before_any_text_changes_nothing() {
    let (out, err) = print(&[retrying(), delta("Fine."), message("Fine.")]);
    assert_eq!(out, "Fine.\n");
    assert!(err.starts_with("tern: the response stream broke"), "{err}");
}

#[test]
fn the_next_message_of_the_turn_is_not_matched_against_the_previous_one() {
    let (out, _) = print(&[
        delta("Looking."),
        message("Looking."),
        delta("Looking."),
        delta(" Found it."),
        message("Looking. Found it."),
    ]);
    assert_eq!(out, "Looking.\n\nLooking. Found it.\n");
}

fn plan_event(statuses: &[(&str, PlanStatus)]) -> Event {
    Event::PlanUpdated {
        items: statuses
            .iter()
            .map(|(content, status)| PlanItem {
                content: content.to_string(),
                status: *status,
            })
            .collect(),
    }
}

fn todo_call(id: &str, output: ToolOutput) -> [Event; 2] {
    [
        Event::ToolCallBegin {
            call_id: id.into(),
            name: "todo_write".into(),
            kind: tern_protocol::ToolKind::Plan,
            args: serde_json::json!({"todos": []}),
        },
        Event::ToolCallEnd {
            call_id: id.into(),
            name: "todo_write".into(),
            output,
            duration_ms: 0,
            full_output_path: None,
        },
    ]
}

#[test]
fn the_plan_prints_compactly_when_it_changes() {
    let first = plan_event(&[("Read", PlanStatus::InProgress), ("Fix", PlanStatus::Pending)]);
    let second = plan_event(&[("Read", PlanStatus::Completed), ("Fix", PlanStatus::InProgress)]);
    let mut events = Vec::new();
    events.extend(todo_call("t1", ToolOutput::text("Plan saved: 0/2 done.")));
    events.push(first.clone());
    events.extend(todo_call("t2", ToolOutput::text("Plan saved: 0/2 done.")));
    events.push(first);
    events.extend(todo_call(
        "t3",
        ToolOutput::error("Error: steps 1, 2 are all in_progress"),
    ));
    events.push(second);
    let (out, err) = print(&events);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "plan: 0/2 done\n  ◐ Read\n  ☐ Fix\n● todo_write\n  ✗ Error: steps 1, 2 are all in_progress (0.0s)\n\
         plan: 1/2 done\n  ☑ Read\n  ◐ Fix\n"
    );
}

#[test]
fn json_output_carries_the_last_plan() {
    let mut printer = Printer::new(OutputFormat::Json, None);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    printer.print(&plan_event(&[("Read", PlanStatus::Completed)]), &mut out, &mut err);
    printer.finish(Some(&TurnEnd::Completed), &mut out, &mut err);
    let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        value["plan"],
        serde_json::json!([{"content": "Read", "status": "completed"}])
    );
    let mut stream = Printer::new(OutputFormat::Events, None);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    stream.print(&plan_event(&[("Read", PlanStatus::Pending)]), &mut out, &mut err);
    assert!(err.is_empty());
    let line: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        line,
        serde_json::json!({"event": "plan_updated", "items": [{"content": "Read", "status": "pending"}]})
    );
}
