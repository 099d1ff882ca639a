use std::time::{Duration, Instant};

use ratatui::style::Style;
use serde_json::json;

use super::*;
use tern_protocol::ToolKind;

/// Lines as text with each styled span marked by its colours and attributes, so a snapshot shows what a person sees.
fn marked(lines: &[Line<'static>]) -> String {
    let plain = Theme::dark();
    let mut out = String::new();
    for line in lines {
        for span in &line.spans {
            let s = span.style;
            if s == Style::default() || s == plain.dim || s == plain.border {
                out.push_str(&span.content);
            } else {
                let mut marks = Vec::new();
                if let Some(fg) = s.fg {
                    marks.push(format!("fg={fg}"));
                }
                if let Some(bg) = s.bg {
                    marks.push(format!("bg={bg}"));
                }
                if !s.add_modifier.is_empty() {
                    marks.push(format!("{:?}", s.add_modifier));
                }
                out.push_str(&format!("[{}]{}[/]", marks.join(" "), span.content));
            }
        }
        out.push('\n');
    }
    out
}

fn command(chunks: &[&str]) -> ToolCallState {
    let mut call = ToolCallState::new(
        "x".into(),
        "exec".into(),
        ToolKind::Command,
        json!({"command": "cargo test"}),
    );
    for chunk in chunks {
        call.push_live(chunk);
    }
    call
}

const OUTPUT: [&str; 3] = [
    "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m calc v0.1.0\n\u{1b}]0;title\u{7}running 2 tests\n",
    "test a ... \u{1b}[32mok\u{1b}[0m\ntest b ... \u{1b}[38;5;208;4mFAILED\u{1b}[0m\n",
    "progress  10%\rprogress 100%\r\n\u{1b}[48;2;10;20;30m\u{1b}[7mbar\u{1b}[0m",
];

#[test]
fn a_running_command_shows_its_colours() {
    let call = command(&OUTPUT);
    let theme = Theme::dark();
    let lines = render_call(&call, 60, &theme, false, Instant::now());
    insta::assert_snapshot!(marked(&lines[1..]));
}

/// A command left running in the background says which process it started, not that it was killed.
#[test]
fn a_background_command_says_it_started_its_process() {
    let mut call = command(&[]);
    let output = ToolOutput::text("Started process p1 (on a 120x40 terminal, in the sandbox).").with_details(
        ToolDetails::Exec {
            exit_code: None,
            duration_ms: 300,
            timed_out: false,
            sandboxed: true,
            new_git_repos: Vec::new(),
            background: Some("p1".into()),
        },
    );
    call.finish(output, Duration::from_millis(300), None);
    let lines = render_call(&call, 80, &Theme::dark(), false, Instant::now());
    let header: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
    assert!(header.contains("started p1 · 300ms"), "{header}");
    assert!(!header.contains("killed"), "{header}");
}

/// Done, the result (the model's text, no colours) is shown with the live output's colours, line by line.
#[test]
fn a_finished_command_keeps_the_colours_of_its_lines() {
    let mut call = command(&OUTPUT);
    let text = "   Compiling calc v0.1.0\nrunning 2 tests\ntest a ... ok\ntest b ... FAILED\nprogress  10%\rprogress 100%\r\nbar\nExit code: 101";
    let output = ToolOutput::error(text).with_details(ToolDetails::Exec {
        exit_code: Some(101),
        duration_ms: 5,
        timed_out: false,
        sandboxed: true,
        new_git_repos: Vec::new(),
        background: None,
    });
    call.finish(output, Duration::from_millis(5), None);
    call.expanded = true;
    let theme = Theme::dark();
    let lines = render_call(&call, 60, &theme, false, Instant::now());
    insta::assert_snapshot!(marked(&lines[1..]));
}

/// A colour never lets an escape byte through: what a line shows is cleaned text.
#[test]
fn no_escape_reaches_the_pane() {
    let call = command(&["\u{1b}[31mred \u{1b}[2J\u{1b}[Hcleared\u{1b}]52;c;eA==\u{7} \u{9b}1;1H\n"]);
    let theme = Theme::dark();
    let lines = render_call(&call, 60, &theme, false, Instant::now());
    let text: String = lines[1..]
        .iter()
        .flat_map(|l| l.spans.iter())
        .map(|s| s.content.to_string())
        .collect();
    assert!(!text.contains(['\u{1b}', '\u{9b}', '\u{7}']), "{text:?}");
    assert!(text.contains("red cleared"), "{text:?}");
}

#[test]
fn an_edit_shows_what_the_language_server_counted() {
    let mut diff = tern_protocol::FileDiff::new("app.py", Some("x = 1\n".into()), Some("x: int = 'a'\n".into()));
    diff.diagnostics = Some(DiagnosticCount { errors: 2, warnings: 1 });
    let mut call = ToolCallState::new(
        "e".into(),
        "write_file".into(),
        ToolKind::Edit,
        json!({"path": "app.py"}),
    );
    call.finish(
        ToolOutput::text("Wrote app.py").with_details(ToolDetails::Diffs { diffs: vec![diff] }),
        Duration::from_millis(5),
        None,
    );
    let shown = marked(&render_call(&call, 80, &Theme::dark(), false, Instant::now()));
    let last = shown.lines().last().unwrap();
    assert_eq!(last, "  language server: [fg=Red]2 errors, 1 warning[/]");
}
