use serde_json::json;

use crate::approval::{ApprovalGate, ApprovalMode, CommandRule, Verdict};
use tern_tools::processes::{ProcessInputTool, ProcessOutputTool, ProcessStopTool, ProcessTable};
use tern_tools::{Effects, PathPolicy, ProcessInput, Tool};

fn input(process: &str, unsandboxed: bool) -> Effects {
    Effects {
        input: Some(ProcessInput {
            process: process.into(),
            command: "python3".into(),
            unsandboxed,
            data: "import os\r".into(),
        }),
        ..Effects::default()
    }
}

fn decide(gate: &ApprovalGate, effects: &Effects) -> Verdict {
    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(dir.path()).unwrap();
    let tool = ProcessInputTool::new(ProcessTable::new());
    gate.decide(&tool, effects, &policy)
}

fn gate(mode: ApprovalMode) -> ApprovalGate {
    ApprovalGate::new(mode, Vec::new(), Vec::new())
}

#[test]
fn input_asks_where_a_command_would_and_runs_only_in_full_auto() {
    for mode in [ApprovalMode::Ask, ApprovalMode::AutoEdit] {
        assert!(
            matches!(decide(&gate(mode), &input("p1", false)), Verdict::Ask { .. }),
            "{mode}"
        );
    }
    assert!(matches!(
        decide(&gate(ApprovalMode::ReadOnly), &input("p1", false)),
        Verdict::Deny { .. }
    ));
    assert_eq!(
        decide(&gate(ApprovalMode::FullAuto), &input("p1", false)),
        Verdict::Allow
    );
    // A deny rule cannot see what the program makes of its input.
    let denying = ApprovalGate::new(
        ApprovalMode::FullAuto,
        Vec::new(),
        vec!["rm".parse::<CommandRule>().unwrap()],
    );
    assert!(matches!(decide(&denying, &input("p1", false)), Verdict::Ask { .. }));
}

#[test]
fn input_to_a_process_outside_the_sandbox_always_asks() {
    let mut full = gate(ApprovalMode::FullAuto);
    full.add_session_input("p1");
    let Verdict::Ask { reason, .. } = decide(&full, &input("p1", true)) else {
        panic!("did not ask");
    };
    assert!(reason.contains("outside the OS sandbox"), "{reason}");
}

#[test]
fn always_means_input_to_this_process() {
    let mut ask = gate(ApprovalMode::Ask);
    ask.add_session_input("p1");
    assert_eq!(decide(&ask, &input("p1", false)), Verdict::Allow);
    assert!(matches!(decide(&ask, &input("p2", false)), Verdict::Ask { .. }));
}

#[test]
fn input_to_no_process_sends_nothing_and_needs_no_answer() {
    let mut effects = input("p9", false);
    if let Some(input) = &mut effects.input {
        input.command.clear();
    }
    assert_eq!(decide(&gate(ApprovalMode::Ask), &effects), Verdict::Allow);
}

#[test]
fn reading_and_stopping_run_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(dir.path()).unwrap();
    let table = ProcessTable::new();
    let output = ProcessOutputTool::new(table.clone());
    let stop = ProcessStopTool::new(table.clone());
    let input_tool = ProcessInputTool::new(table);
    let args = json!({"id": "p1"});
    for mode in [
        ApprovalMode::ReadOnly,
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::FullAuto,
    ] {
        assert_eq!(gate(mode).check(&output, &args, &policy), Verdict::Allow, "{mode}");
        assert_eq!(gate(mode).check(&stop, &args, &policy), Verdict::Allow, "{mode}");
    }
    // The tool says what it sends, exactly: text, then its keys as the bytes a terminal sends.
    let effects = input_tool.effects(&json!({"id": "p1", "text": "y", "keys": ["Enter", "Ctrl+C"]}));
    assert_eq!(effects.input.unwrap().data, "y\r\u{3}");
}

#[test]
fn a_hook_cannot_waive_the_question_for_input_outside_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(dir.path()).unwrap();
    let ask = gate(ApprovalMode::Ask);
    assert!(crate::hooks::firm_question(&ask, &input("p1", true), &policy));
    assert!(!crate::hooks::firm_question(&ask, &input("p1", false), &policy));
    let denying = ApprovalGate::new(
        ApprovalMode::Ask,
        Vec::new(),
        vec!["rm".parse::<CommandRule>().unwrap()],
    );
    assert!(crate::hooks::firm_question(&denying, &input("p1", false), &policy));
}
