//! Resume of a day's session (issue 9): a session log of 10,000 messages and 2,000 tool results (diffs, 10 KB command
//! outputs, file reads) is written with the real `SessionLog`, then the release binary runs `tern resume <id>` on a
//! pseudo-terminal of its own (200x60) and the time from spawn to its first full frame is measured, as a ratio to a
//! fresh start's first frame; and the peak RSS of the resumed process. Also: the picker's listing of 301 sessions.
//!
//! Run with `cargo bench --bench resume`. Knobs (environment): `TERN_BENCH_RUNS` (7 runs of each start),
//! `TERN_BENCH_MESSAGES` (10000), `TERN_BENCH_RESULTS` (2000).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "tui/pty.rs"]
mod pty;

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use tern::protocol::{Event, FileDiff, Message, ToolCall, ToolDetails, ToolOutput, TurnEnd, Usage};
use tern::session::{SessionLog, SessionMeta};

/// Text the composer shows when empty: on screen means the first frame was drawn.
const PLACEHOLDER: &str = "Ask tern";
/// The last word of the notice a resume shows once the whole session is replayed (the first frame of a long session
/// shows its last turns only, from the log's tail).
const LOADED: &str = "conversation";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A few paragraphs of markdown, different for each `n`.
fn answer(n: usize) -> String {
    let mut text = format!("## Step {n}\n\nI looked at `src/module_{n}.rs` and changed how the parser handles ");
    for i in 0..(n % 5 + 2) {
        text.push_str(&format!(
            "case {i} of the input (see `fn parse_{i}`), which keeps the error path short and the happy path fast. "
        ));
    }
    text.push_str("\n\n- the tests pass\n- the bench is unchanged\n\n```rust\nlet x = parse(input)?;\n```\n");
    text
}

/// One tool call and its result: every third a diff, every third a 10 KB command output, the rest file reads.
fn call(n: usize) -> (ToolCall, ToolOutput) {
    let id = format!("call_{n}");
    match n % 3 {
        0 => {
            let old: String = (0..40)
                .map(|i| format!("    let v{i} = compute({i}, {n});\n"))
                .collect();
            let new = old.replace("compute(1", "compute_fast(1");
            let output = ToolOutput {
                details: ToolDetails::Diffs {
                    diffs: vec![FileDiff::new(format!("src/module_{n}.rs"), Some(old), Some(new))],
                },
                ..ToolOutput::text(format!("Edited src/module_{n}.rs: 10 lines changed"))
            };
            let args =
                json!({"path": format!("src/module_{n}.rs"), "old_text": "compute(1", "new_text": "compute_fast(1"});
            (
                ToolCall {
                    id,
                    name: "edit_file".into(),
                    arguments: args,
                },
                output,
            )
        }
        1 => {
            let text: String = (0..200)
                .map(|i| format!("test module_{n}::case_{i:03} ... ok ({i} ms)\n"))
                .collect();
            let args = json!({"command": format!("cargo test module_{n}")});
            (
                ToolCall {
                    id,
                    name: "exec".into(),
                    arguments: args,
                },
                ToolOutput::text(text),
            )
        }
        _ => {
            let text: String = (1..=80)
                .map(|i| format!("{i:>5}\tfn item_{i}(x: u32) -> u32 {{ x * {n} + {i} }}\n"))
                .collect();
            let args = json!({"path": format!("src/file_{n}.rs")});
            (
                ToolCall {
                    id,
                    name: "read_file".into(),
                    arguments: args,
                },
                ToolOutput::text(text),
            )
        }
    }
}

/// Writes the session as a live one would (messages and recorded events, in order); returns (messages, results).
fn write_session(data: &Path, workspace: &Path, id: &str, messages: usize, results: usize) -> (usize, usize) {
    let meta = SessionMeta {
        id: id.into(),
        workspace: workspace.display().to_string(),
        provider: "openai".into(),
        model: "m".into(),
        forked_from: None,
        forked_messages: None,
    };
    let mut log = SessionLog::create(&SessionLog::path_for(data, id), &meta).unwrap();
    let (mut written, mut calls, mut turn) = (0, 0, 0u64);
    let mut total = Usage::default();
    let mut at = 1_763_900_000_000u64;
    while written < messages {
        turn += 1;
        at += 30_000;
        let prompt = format!("Please look at part {turn} of the parser and fix what is wrong");
        log.event(
            at,
            &Event::TurnStarted {
                turn,
                text: prompt.clone(),
            },
        )
        .unwrap();
        log.record(&Message::User {
            content: prompt,
            images: vec![],
        })
        .unwrap();
        written += 1;
        // Tool turns until the results are all written, then plain questions and answers.
        if calls < results && written + 3 <= messages {
            let (tool_call, output) = call(calls);
            calls += 1;
            log.record(&Message::Assistant {
                content: String::new(),
                reasoning: None,
                tool_calls: vec![tool_call.clone()],
            })
            .unwrap();
            log.event(
                at + 1_000,
                &Event::ToolCallBegin {
                    call_id: tool_call.id.clone(),
                    name: tool_call.name.clone(),
                    kind: tern::protocol::ToolKind::recorded_by_name(&tool_call.name.clone()),
                    args: tool_call.arguments.clone(),
                },
            )
            .unwrap();
            log.event(
                at + 2_000,
                &Event::ToolCallEnd {
                    call_id: tool_call.id.clone(),
                    name: tool_call.name.clone(),
                    output: output.clone(),
                    duration_ms: 850,
                    full_output_path: None,
                },
            )
            .unwrap();
            log.record(&Message::Tool {
                call_id: tool_call.id,
                name: tool_call.name,
                content: output.text,
                is_error: false,
                images: vec![],
            })
            .unwrap();
            written += 2;
        }
        let text = answer(turn as usize);
        log.event(
            at + 3_000,
            &Event::AssistantMessage {
                text: text.clone(),
                reasoning: None,
            },
        )
        .unwrap();
        log.record(&Message::Assistant {
            content: text,
            reasoning: None,
            tool_calls: vec![],
        })
        .unwrap();
        written += 1;
        let last = Usage {
            input_tokens: 2_000 + turn * 40,
            output_tokens: 300,
            ..Usage::default()
        };
        total.input_tokens += last.input_tokens;
        total.output_tokens += last.output_tokens;
        log.event(
            at + 3_001,
            &Event::TokenUsage {
                last,
                total,
                context: None,
            },
        )
        .unwrap();
        log.event(
            at + 3_002,
            &Event::TurnFinished {
                reason: TurnEnd::Completed,
            },
        )
        .unwrap();
    }
    (written, calls)
}

/// A directory removed at the end of the run, or kept.
enum Kept {
    Temp(tempfile::TempDir),
    Path(std::path::PathBuf),
}

impl Kept {
    fn path(&self) -> &Path {
        match self {
            Kept::Temp(dir) => dir.path(),
            Kept::Path(path) => path,
        }
    }
}

/// The time (ms) of the first draw of `state` at 200x60 in process, on a test backend.
fn first_draw(state: tern::tui::state::AppState) -> f64 {
    let (ops, _ops_rx) = tokio::sync::mpsc::unbounded_channel();
    let (notify, _notify_rx) = tokio::sync::mpsc::unbounded_channel();
    let host = std::sync::Arc::new(tern::tui_host::TuiHost::new(&std::env::temp_dir(), None));
    let composer =
        tern::tui::composer::Composer::new(std::env::temp_dir(), tern::tui::app::slash_commands(), notify, host);
    let keymap = tern::tui::keymap::Keymap::load(None).unwrap_or_default();
    let mut app = tern::tui::app::App::new(ops, composer, keymap, tern::tui::theme::Theme::dark(), 200_000);
    app.state = state;
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 60)).unwrap();
    let t = Instant::now();
    terminal.draw(|f| app.render(f)).unwrap();
    t.elapsed().as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

/// The largest peak RSS (MB) of any child this process has reaped so far.
fn children_peak_mb() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    usage.ru_maxrss as f64 / 1024.0
}

/// Median spawn-to-frame times (ms) of `argv` for each of `needles` (the first frame, then what later frames show),
/// after one unmeasured run.
fn first_frames(
    argv: &[&str],
    cwd: &Path,
    env: &[(String, String)],
    runs: usize,
    needles: &[&str],
) -> Vec<(f64, Vec<f64>)> {
    let mut times = vec![Vec::new(); needles.len()];
    for i in 0..=runs {
        match pty::frames(argv, cwd, env, needles) {
            Ok(found) => {
                for (k, took) in found.into_iter().enumerate() {
                    match took {
                        Some(took) if i > 0 => times[k].push(took.as_secs_f64() * 1000.0),
                        Some(_) => {}
                        None => println!("  run {i} of {argv:?}: no {:?} within 10 s", needles[k]),
                    }
                }
            }
            Err(e) => println!("  run {i} of {argv:?}: {e}"),
        }
    }
    times.into_iter().map(|t| (median(t.clone()), t)).collect()
}

fn main() {
    let runs: usize = env_or("TERN_BENCH_RUNS", 7);
    let messages: usize = env_or("TERN_BENCH_MESSAGES", 10_000);
    let results: usize = env_or("TERN_BENCH_RESULTS", 2_000);
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // With TERN_BENCH_KEEP set, the workspace and home stay on disk (their paths are printed) to profile by hand.
    let (work, home) = if std::env::var_os("TERN_BENCH_KEEP").is_some() {
        let (work, home) = (work.keep(), home.keep());
        println!("kept: workspace {} home {}", work.display(), home.display());
        (Kept::Path(work), Kept::Path(home))
    } else {
        (Kept::Temp(work), Kept::Temp(home))
    };
    let workspace = std::fs::canonicalize(work.path()).unwrap();
    let data = home.path().join("data/tern");
    let id = "20261124-000000-beef";
    let built = Instant::now();
    let (written, calls) = write_session(&data, &workspace, id, messages, results);
    let log = SessionLog::path_for(&data, id);
    let size = std::fs::metadata(&log).unwrap().len();
    println!(
        "session: {written} messages, {calls} tool results, {:.1} MB on disk (written in {:.0} ms)",
        size as f64 / 1e6,
        built.elapsed().as_secs_f64() * 1000.0
    );
    let loaded = Instant::now();
    let session = tern::session::log::load(&log).unwrap();
    println!(
        "load alone: {:.0} ms ({} messages, {} events)",
        loaded.elapsed().as_secs_f64() * 1000.0,
        session.messages.len(),
        session.events.len()
    );
    let tailed = Instant::now();
    let tail = tern::session::tail::events(&log).unwrap().unwrap_or_default();
    let tail_ms = tailed.elapsed().as_secs_f64() * 1000.0;
    let previewed = Instant::now();
    let mut preview = tern::tui::state::AppState::new();
    let tail_events = tail.len();
    preview.preview(tail);
    let preview_ms = previewed.elapsed().as_secs_f64() * 1000.0;
    let drawn = first_draw(preview);
    println!(
        "first frame's part: the log's tail read in {tail_ms:.1} ms ({tail_events} events), previewed in \
         {preview_ms:.1} ms, drawn (200x60, in process) in {drawn:.1} ms"
    );
    let replayed = Instant::now();
    let mut state = tern::tui::state::AppState::new();
    state.replay(&[], session.events);
    println!(
        "replay alone: {:.0} ms ({} cells, {} calls)",
        replayed.elapsed().as_secs_f64() * 1000.0,
        state.cells.len(),
        state.calls.len()
    );
    let repaired = Instant::now();
    let messages = tern::agent::context::repair(&session.messages);
    println!(
        "repair alone: {:.0} ms ({} messages)",
        repaired.elapsed().as_secs_f64() * 1000.0,
        messages.len()
    );
    drop((state, messages));

    // The picker's listing with hundreds of sessions: each small (a few turns), plus the big one.
    for i in 0..300 {
        write_session(&data, &workspace, &format!("20261123-{i:06}-0000"), 24, 4);
    }
    let mut listing = Vec::new();
    let mut listed = 0;
    for _ in 0..7 {
        let t = Instant::now();
        listed = tern::session::list::list(&data, &workspace.display().to_string()).len();
        listing.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "listing {listed} sessions for the picker: median {:.1} ms",
        median(listing)
    );

    let bin = env!("CARGO_BIN_EXE_tern");
    let env: Vec<(String, String)> = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", home.path().display().to_string()),
        ("XDG_DATA_HOME", home.path().join("data").display().to_string()),
        ("XDG_CONFIG_HOME", home.path().join("config").display().to_string()),
        ("OPENAI_API_KEY", "k".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let flags = [
        "--provider",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    ];
    let mut fresh_argv = vec![bin];
    fresh_argv.extend(flags);
    let mut resume_argv = fresh_argv.clone();
    resume_argv.extend(["resume", id]);

    let (fresh, fresh_runs) = first_frames(&fresh_argv, &workspace, &env, runs, &[PLACEHOLDER]).remove(0);
    let fresh_peak = children_peak_mb();
    let mut resume = first_frames(&resume_argv, &workspace, &env, runs, &[PLACEHOLDER, LOADED]).into_iter();
    let (resumed, resume_runs) = resume.next().unwrap();
    let (loaded, loaded_runs) = resume.next().unwrap();
    let resume_peak = children_peak_mb();
    // Each resume appended nothing (no prompt was sent), so every run saw the same session.
    println!("\ntern resume figures ({runs} runs each, 200x60 pty, release build: {bin})");
    println!("  fresh start to first frame:  median {fresh:>7.1} ms  (runs: {fresh_runs:.1?})");
    println!("  resume to first full frame:  median {resumed:>7.1} ms  (runs: {resume_runs:.1?})");
    println!("  ratio resume / fresh:        {:>7.2}x  (goal ≤ 3x)", resumed / fresh);
    println!("  whole session on screen:     median {loaded:>7.1} ms  (runs: {loaded_runs:.1?})");
    // getrusage keeps the largest child's peak: after the fresh runs it is theirs, after the resumes the larger one.
    println!("  peak RSS, fresh start:       {fresh_peak:>7.1} MB");
    println!(
        "  peak RSS, resume:            {resume_peak:>7.1} MB  (goal < 80 MB; the larger of both if resume is smaller)"
    );
}
