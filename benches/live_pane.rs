//! A live process's pane (issue 20): 10 MB of coloured output (SGR colours, 256 and 24-bit colours, `\r` progress
//! bars, scrolling log lines) fed to the real `App` in 4 KB chunks as `Event::ProcessOutput` events come, a frame
//! drawn into ratatui's `TestBackend` (120x40) after every few chunks as the terminal loop draws them (it takes all
//! waiting events, then one frame), once with the process's pane in the transcript and once focused (its whole
//! screen). Prints the frame times (median, p99, max; goal p99 < 2 ms), the time to take the chunks in, and the
//! total; then whether the app is at rest once the output stops (`App::at_rest`: the terminal loop then draws no frame
//! and sets no timer, so idle costs nothing), and what a frame drawn with nothing new costs.
//!
//! Run with `cargo bench --bench live_pane`. Knobs (environment): `TERN_BENCH_MB` (10), `TERN_BENCH_CHUNK` (4096
//! bytes), `TERN_BENCH_CHUNKS_PER_FRAME` (8: 32 KB a frame, ~1 MB/s at the loop's 30 frames a second of streamed
//! output).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "tui/report.rs"]
#[allow(dead_code)]
mod report;

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use report::{Clock, Measure, Row, Timed, print_table};
use serde_json::json;
use tern::protocol::process::{ProcessEnd, ProcessInfo};
use tern::protocol::{Event, Op, ToolKind, ToolOutput};
use tern::tui::app::{App, slash_commands};
use tern::tui::composer::Composer;
use tern::tui::keymap::Keymap;
use tern::tui::theme::Theme;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const GOAL_US: f64 = 2_000.0;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A small deterministic generator (no clock, no crate): the same output every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// About `bytes` of what a dev server and a build print on a terminal: coloured log lines that scroll, progress bars
/// redrawn with `\r`, 256-colour and 24-bit text, a status line rewritten with a cursor move and a line erase.
fn output(bytes: usize) -> String {
    let mut rng = Lcg(20);
    let mut out = String::with_capacity(bytes + 512);
    let levels = [
        "\x1b[32mINFO\x1b[0m",
        "\x1b[33mWARN\x1b[0m",
        "\x1b[1;31mERROR\x1b[0m",
        "\x1b[2mDEBUG\x1b[0m",
    ];
    let paths = [
        "/api/items",
        "/static/app.js",
        "/login",
        "/api/users/me",
        "/favicon.ico",
    ];
    let mut n = 0u64;
    while out.len() < bytes {
        n += 1;
        match rng.below(10) {
            0..=5 => {
                let status = [200, 200, 304, 404, 500][rng.below(5) as usize];
                let colour = if status >= 500 {
                    31
                } else if status >= 400 {
                    33
                } else {
                    32
                };
                out.push_str(&format!(
                    "\x1b[2m12:{:02}:{:02}\x1b[0m {} GET {}/{} \x1b[{colour}m{status}\x1b[0m {}ms\r\n",
                    n / 60 % 60,
                    n % 60,
                    levels[rng.below(4) as usize],
                    paths[rng.below(5) as usize],
                    rng.below(10_000),
                    rng.below(900)
                ));
            }
            6 | 7 => {
                // A progress bar drawn over itself a few times, then left.
                for step in 0..=10 {
                    let done = "=".repeat(step * 3);
                    let left = " ".repeat(30 - step * 3);
                    out.push_str(&format!(
                        "\r\x1b[36m[{done}>{left}]\x1b[0m \x1b[1m{:>3}%\x1b[0m {}/{} chunks",
                        step * 10,
                        step * 512,
                        5120
                    ));
                }
                out.push_str("\r\n");
            }
            8 => {
                // 256 and 24-bit colours, one run per word.
                for word in 0..8 {
                    out.push_str(&format!(
                        "\x1b[38;5;{}m\x1b[48;2;{};{};{}mword{word}\x1b[0m ",
                        rng.below(256),
                        rng.below(64),
                        rng.below(64),
                        rng.below(64)
                    ));
                }
                out.push_str("\r\n");
            }
            _ => {
                // A status line rewritten in place: save the cursor, go up, erase, write, come back.
                out.push_str(&format!(
                    "\x1b7\x1b[1A\x1b[2K\x1b[7m compiled {} modules in {} ms \x1b[0m\x1b8",
                    rng.below(2_000),
                    rng.below(5_000)
                ));
            }
        }
    }
    out
}

/// The output cut into chunks of about `size` bytes, on character boundaries (events carry text).
fn chunks(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(text[start..end].to_string());
        start = end;
    }
    out
}

/// An App whose session has a live process `p1` started by an `exec` call, its channels kept open.
struct Harness {
    app: App,
    terminal: Terminal<TestBackend>,
    ops: UnboundedReceiver<Op>,
    _notify: UnboundedReceiver<()>,
}

impl Harness {
    fn new() -> Self {
        let (ops_tx, ops) = unbounded_channel();
        let (notify_tx, notify) = unbounded_channel();
        let workspace = std::env::temp_dir();
        let host = std::sync::Arc::new(tern::tui_host::TuiHost::new(&workspace, None));
        let composer = Composer::new(workspace, slash_commands(), notify_tx, host);
        let mut app = App::new(ops_tx, composer, Keymap::default(), Theme::dark(), 200_000);
        app.on_agent_event(Event::TurnStarted {
            turn: 1,
            text: "start the dev server".into(),
        });
        app.on_agent_event(Event::ToolCallBegin {
            call_id: "c1".into(),
            name: "exec".into(),
            kind: ToolKind::Command,
            args: json!({"command": "npm run dev", "background": true}),
        });
        app.on_agent_event(Event::ProcessStarted {
            process: ProcessInfo {
                id: "p1".into(),
                call_id: "c1".into(),
                command: "npm run dev".into(),
                pty: true,
                cols: 100,
                rows: 30,
            },
        });
        app.on_agent_event(Event::ToolCallEnd {
            call_id: "c1".into(),
            name: "exec".into(),
            output: ToolOutput::text("started live process p1"),
            duration_ms: 2,
            full_output_path: None,
        });
        app.on_agent_event(Event::TurnFinished {
            reason: tern::protocol::TurnEnd::Completed,
        });
        let terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
        Self {
            app,
            terminal,
            ops,
            _notify: notify,
        }
    }

    fn draw(&mut self) -> Timed {
        let clock = Clock::start();
        self.terminal.draw(|f| self.app.render(f)).unwrap();
        clock.stop()
    }
}

/// What one run measured.
struct Run {
    frames: Vec<Timed>,
    feed: Duration,
    total: Duration,
}

/// Feeds every chunk, drawing a frame after each `per_frame` of them.
fn stream(h: &mut Harness, chunks: &[String], per_frame: usize) -> Run {
    let mut frames = Vec::with_capacity(chunks.len() / per_frame + 1);
    let mut feed = Duration::ZERO;
    let start = Instant::now();
    for batch in chunks.chunks(per_frame) {
        let clock = Instant::now();
        for chunk in batch {
            h.app.on_agent_event(Event::ProcessOutput {
                id: "p1".into(),
                chunk: chunk.clone(),
            });
        }
        feed += clock.elapsed();
        frames.push(h.draw());
    }
    Run {
        frames,
        feed,
        total: start.elapsed(),
    }
}

fn rows_of(label: &str, run: &Run, bytes: usize) -> Vec<Row> {
    let mb = bytes as f64 / 1e6;
    vec![
        Row::measured(
            format!("{label}: frame"),
            &Measure::new(&run.frames),
            Some(GOAL_US),
            false,
        ),
        Row::value(
            format!("{label}: taking the chunks in"),
            format!(
                "{:.1} ms ({:.0} MB/s)",
                run.feed.as_secs_f64() * 1e3,
                mb / run.feed.as_secs_f64()
            ),
            "",
            None,
        ),
        Row::value(
            format!("{label}: total, {} frames", run.frames.len()),
            format!("{:.1} ms", run.total.as_secs_f64() * 1e3),
            "",
            None,
        ),
    ]
}

fn main() {
    let mb: usize = env_or("TERN_BENCH_MB", 10);
    let chunk: usize = env_or("TERN_BENCH_CHUNK", 4096);
    let per_frame: usize = env_or("TERN_BENCH_CHUNKS_PER_FRAME", 8).max(1);
    let text = output(mb * 1_000_000);
    let chunks = chunks(&text, chunk);
    println!(
        "live process pane: {:.1} MB in {} chunks of {chunk} bytes, a frame every {per_frame} chunks, {WIDTH}x{HEIGHT}",
        text.len() as f64 / 1e6,
        chunks.len()
    );
    let mut rows = Vec::new();

    let mut pane = Harness::new();
    pane.draw();
    let run = stream(&mut pane, &chunks, per_frame);
    rows.extend(rows_of("pane in the transcript", &run, text.len()));

    let mut focused = Harness::new();
    focused.app.focus_process("p1");
    focused.draw();
    let run = stream(&mut focused, &chunks, per_frame);
    rows.extend(rows_of("focused (whole screen)", &run, text.len()));
    let resized = std::iter::from_fn(|| focused.ops.try_recv().ok())
        .filter(|op| matches!(op, Op::ProcessResize { .. }))
        .count();

    // Silence: the loop draws a frame only when something changed (an event, a key) or something moves on screen;
    // at rest it sets no timer at all.
    let rest_pane = pane.app.at_rest();
    let rest_focused = focused.app.at_rest();
    rows.push(Row::value(
        "at rest once the output stops (pane / focused)",
        format!("{rest_pane} / {rest_focused}"),
        "true / true",
        Some(rest_pane && rest_focused),
    ));
    // A frame drawn anyway with nothing new (the pane's lines come from the transcript's cache).
    let still: Vec<Timed> = (0..200).map(|_| pane.draw()).collect();
    rows.push(Row::measured(
        "pane: frame with nothing new",
        &Measure::new(&still),
        Some(GOAL_US),
        false,
    ));
    pane.app.on_agent_event(Event::ProcessExited {
        id: "p1".into(),
        end: ProcessEnd::Exited { code: 0 },
    });
    rows.push(Row::value(
        "at rest after it exits",
        format!("{}", pane.app.at_rest()),
        "true",
        Some(pane.app.at_rest()),
    ));
    rows.push(Row::value(
        "resizes sent when focused",
        format!("{resized}"),
        "1",
        Some(resized == 1),
    ));
    print_table(&rows);
}
