use serde_json::json;
use tern_protocol::process::{ProcessEnd, ProcessInfo};
use tern_protocol::{Event, ToolKind, ToolOutput};

use crate::state::{AppState, CellKind};

pub(crate) fn info(id: &str, call_id: &str, pty: bool, cols: u16, rows: u16) -> ProcessInfo {
    ProcessInfo {
        id: id.into(),
        call_id: call_id.into(),
        command: "npm run dev".into(),
        pty,
        cols,
        rows,
    }
}

/// A state where call `c1` started live process `p1` (cols x rows, on a PTY), as the agent tells it.
pub(crate) fn started(cols: u16, rows: u16) -> AppState {
    let mut state = AppState::new();
    state.apply(Event::ToolCallBegin {
        call_id: "c1".into(),
        name: "exec".into(),
        kind: ToolKind::Command,
        args: json!({"command": "npm run dev", "background": true}),
    });
    state.apply(Event::ProcessStarted {
        process: info("p1", "c1", true, cols, rows),
    });
    state.apply(Event::ToolCallEnd {
        call_id: "c1".into(),
        name: "exec".into(),
        output: ToolOutput::text("started p1"),
        duration_ms: 3,
        full_output_path: None,
    });
    state
}

fn output(state: &mut AppState, chunk: &str) {
    state.apply(Event::ProcessOutput {
        id: "p1".into(),
        chunk: chunk.into(),
    });
}

fn screen_text(state: &AppState) -> String {
    state
        .processes
        .get("p1")
        .map(|p| p.screen().contents())
        .unwrap_or_default()
}

#[test]
fn output_feeds_the_emulator_and_redraws_the_calls_cell_only() {
    let mut state = started(20, 4);
    let cell = state.cell_of_call("c1").unwrap();
    assert!(matches!(state.cells[cell].kind, CellKind::Tools(_)));
    let rev = state.cells[cell].rev;
    // An escape sequence split across chunks is put back together.
    output(&mut state, "one\r\n\u{1b}[3");
    output(&mut state, "1mtwo\u{1b}[0m");
    assert_eq!(screen_text(&state), "one\ntwo");
    assert!(state.cells[cell].rev > rev);
    let p = state.processes.get("p1").unwrap();
    assert_eq!(p.screen().cell(1, 0).unwrap().fgcolor(), vt100::Color::Idx(1));
    assert_eq!(p.bytes, "one\r\n\u{1b}[31mtwo\u{1b}[0m".len());
    // Output of a process nobody told of changes nothing.
    let rev = state.cells[cell].rev;
    state.apply(Event::ProcessOutput {
        id: "p9".into(),
        chunk: "x".into(),
    });
    assert_eq!(state.cells[cell].rev, rev);
}

#[test]
fn a_process_on_pipes_gets_its_lines_from_the_left() {
    let mut state = AppState::new();
    state.apply(Event::ProcessStarted {
        process: info("p1", "c1", false, 20, 4),
    });
    output(&mut state, "first\nsecond\n");
    output(&mut state, "third");
    assert_eq!(screen_text(&state), "first\nsecond\nthird");
}

#[test]
fn an_ended_process_keeps_its_last_screen() {
    let mut state = started(20, 4);
    output(&mut state, "listening on :3000");
    state.apply(Event::ProcessExited {
        id: "p1".into(),
        end: ProcessEnd::Exited { code: 1 },
    });
    let p = state.processes.get("p1").unwrap();
    assert!(!p.running());
    assert_eq!(p.end, Some(ProcessEnd::Exited { code: 1 }));
    assert_eq!(screen_text(&state), "listening on :3000");
}

#[test]
fn the_emulator_size_is_bounded_and_resizes() {
    let mut state = AppState::new();
    state.apply(Event::ProcessStarted {
        process: info("p1", "c1", true, 60_000, 0),
    });
    assert_eq!(state.processes.get("p1").unwrap().size(), (500, 1));
    assert_eq!(state.resize_process("p1", 100, 30), Some((100, 30)));
    assert_eq!(state.resize_process("p2", 100, 30), None);
}

#[test]
fn scrolling_output_keeps_no_scrollback() {
    let mut state = started(10, 3);
    for i in 0..10_000 {
        output(&mut state, &format!("line {i}\r\n"));
    }
    let p = state.processes.get("p1").unwrap();
    assert_eq!(p.screen().scrollback_len(), 0);
    assert_eq!(screen_text(&state), "line 9998\nline 9999");
}
