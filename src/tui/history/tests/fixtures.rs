//! A small session of tool calls and a harness that feeds keys to the layer and draws it.

use std::path::PathBuf;
use std::time::{Duration, Instant, UNIX_EPOCH};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use crate::history::HistoryLayer;
use crate::layer::{Ctx, Effect, Handled, Layer, View};
use crate::state::calls::ToolCallState;
use crate::theme::Theme;
use tern_protocol::{FileDiff, ToolDetails, ToolOutput};

/// Lines in the stored result file; the preview the model got holds only the first few.
pub(crate) const STORED_LINES: usize = 3000;

/// A call started at 12:00:`secs` UTC on some day.
pub(crate) fn call(id: &str, name: &str, args: Value, secs: u64) -> ToolCallState {
    let mut c = ToolCallState::new(
        id.into(),
        name.into(),
        tern_protocol::ToolKind::recorded_by_name(name),
        args,
    );
    c.started_at = UNIX_EPOCH + Duration::from_secs(86_400 * 20_000 + 12 * 3_600 + secs);
    c
}

pub(crate) fn done(mut c: ToolCallState, output: ToolOutput, ms: u64) -> ToolCallState {
    c.finish(output, Duration::from_millis(ms), None);
    c
}

/// Six calls: read, grep, a failed exec, an edit with a diff, an exec whose result is stored in `dir`, and a running
/// exec with live output. Returns the calls and the stored file's path.
pub(crate) fn session(dir: &std::path::Path) -> (Vec<ToolCallState>, PathBuf) {
    let source: String = (1..=40).map(|i| format!("line {i} of main.rs\n")).collect();
    let read = done(
        call("call_read", "read_file", json!({"path": "src/main.rs"}), 1),
        ToolOutput::text(source).with_details(ToolDetails::Read {
            path: "src/main.rs".into(),
            first_line: 1,
            last_line: 40,
            total_lines: Some(40),
        }),
        12,
    );
    let grep = done(
        call("call_grep", "grep", json!({"pattern": "fn main", "path": "src"}), 2),
        ToolOutput::text("src/main.rs:3:fn main() {\nsrc/bin/x.rs:1:fn main() {}\n").with_details(
            ToolDetails::Search {
                matches: 2,
                files: 2,
                skipped_binary: 0,
                truncated: false,
            },
        ),
        45,
    );
    let failed = done(
        call(
            "call_test",
            "exec",
            json!({"command": "cargo test --lib", "timeout": 120}),
            5,
        ),
        ToolOutput::error("thread 'main' panicked at src/lib.rs:9:5\nerror: test failed, to rerun pass `--lib`\n")
            .with_details(ToolDetails::Exec {
                exit_code: Some(101),
                duration_ms: 2_460,
                timed_out: false,
                sandboxed: true,
                new_git_repos: Vec::new(),
                background: None,
            }),
        2_460,
    );
    let old = "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    let new = "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
    let edit = done(
        call(
            "call_edit",
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "    a - b", "new_string": "    a + b"}),
            8,
        ),
        ToolOutput::text("Edited src/lib.rs (+1 -1)").with_details(ToolDetails::Diffs {
            diffs: vec![FileDiff::new("src/lib.rs", Some(old.into()), Some(new.into()))],
        }),
        3,
    );
    let full: String = (1..=STORED_LINES)
        .map(|i| format!("log line {i:04}: all good\n"))
        .collect();
    let path = dir.join("exec-call_log.txt");
    std::fs::write(&path, &full).unwrap();
    let preview: String = full.lines().take(3).map(|l| format!("{l}\n")).collect();
    let mut stored = call("call_log", "exec", json!({"command": "cat build.log"}), 9);
    stored.finish(
        ToolOutput::text(format!(
            "{preview}…\n[Output too large for context: saved to {}]",
            path.display()
        )),
        Duration::from_millis(80),
        Some(path.display().to_string()),
    );
    let mut running = call("call_build", "exec", json!({"command": "cargo build --release"}), 12);
    running.push_live("   Compiling tern v0.1.0\n   Compiling serde v1.0\n");
    set_running_since(&mut running, 3_500);
    (vec![read, grep, failed, edit, stored, running], path)
}

/// Makes a running call look started `ms` ago (its elapsed column shows whole seconds).
pub(crate) fn set_running_since(c: &mut ToolCallState, ms: u64) {
    c.started = Instant::now().checked_sub(Duration::from_millis(ms)).unwrap();
}

pub(crate) struct Harness {
    pub(crate) layer: HistoryLayer,
    pub(crate) calls: Vec<ToolCallState>,
    pub(crate) theme: Theme,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) stored_path: PathBuf,
}

impl Harness {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (calls, stored_path) = session(dir.path());
        Self {
            layer: HistoryLayer::new(),
            calls,
            theme: Theme::default(),
            dir,
            stored_path,
        }
    }

    pub(crate) fn press_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> (Handled, Vec<Effect>) {
        let mut ctx = Ctx::new(View {
            calls: &self.calls,
            processes: crate::state::processes::Processes::none(),
            theme: &self.theme,
        });
        let handled = self.layer.handle_key(KeyEvent::new(code, modifiers), &mut ctx);
        (handled, ctx.effects)
    }

    pub(crate) fn press(&mut self, code: KeyCode) -> Vec<Effect> {
        let (handled, effects) = self.press_with(code, KeyModifiers::NONE);
        assert_eq!(handled, Handled::Consumed, "{code:?} should be consumed");
        effects
    }

    pub(crate) fn paste(&mut self, text: &str) -> Handled {
        let mut ctx = Ctx::new(View {
            calls: &self.calls,
            processes: crate::state::processes::Processes::none(),
            theme: &self.theme,
        });
        self.layer.handle_paste(text, &mut ctx)
    }

    /// Types each character as a key press.
    pub(crate) fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    pub(crate) fn draw(&mut self, width: u16, height: u16) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| {
                let view = View {
                    calls: &self.calls,
                    processes: crate::state::processes::Processes::none(),
                    theme: &self.theme,
                };
                let area = frame.area();
                self.layer.render(frame, area, &view);
            })
            .unwrap();
        terminal
    }

    /// The screen as text, one string per row.
    pub(crate) fn screen(&mut self, width: u16, height: u16) -> Vec<String> {
        let terminal = self.draw(width, height);
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect()
    }

    pub(crate) fn screen_text(&mut self, width: u16, height: u16) -> String {
        self.screen(width, height).join("\n")
    }

    /// Draws until background work (stored-result load, size probes) is done; fails after ~2 s.
    pub(crate) fn wait_background(&mut self) {
        for _ in 0..200 {
            self.draw(100, 20);
            let job_pending = self.layer.job.as_ref().is_some_and(|j| j.is_pending());
            if !job_pending && !self.layer.catalog.sizes_pending() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("background work did not finish in 2 s");
    }

    pub(crate) fn selected_id(&self) -> Option<String> {
        self.layer.list.selected.map(|i| self.calls[i].call_id.clone())
    }

    pub(crate) fn visible_ids(&self) -> Vec<String> {
        self.layer
            .catalog
            .visible()
            .iter()
            .map(|&i| self.calls[i].call_id.clone())
            .collect()
    }
}

/// Effects as short strings, for assertions (`Effect` has no Debug: it can hold a layer).
pub(crate) fn describe(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .map(|e| match e {
            Effect::Close => "close".to_string(),
            Effect::Push(layer) => format!("push {}", layer.name()),
            Effect::Op(_) => "op".to_string(),
            Effect::JumpToCall(id) => format!("jump {id}"),
            Effect::Copy(text) => format!("copy {} bytes", text.len()),
            Effect::Notice(text) => format!("notice {text}"),
            Effect::Switch(path) => format!("switch {}", path.display()),
            Effect::Reload => "reload".to_string(),
            Effect::EditText(text) => format!("edit {} bytes", text.len()),
            Effect::Focus(id) => format!("focus {id}"),
        })
        .collect()
}

pub(crate) fn copied(effects: &[Effect]) -> Option<&str> {
    effects.iter().find_map(|e| match e {
        Effect::Copy(text) => Some(text.as_str()),
        _ => None,
    })
}
