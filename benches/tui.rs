//! The TUI's figures (issue 4): frame time with a 5,000-cell transcript at 200x60 (following a streaming answer,
//! scrolled to the middle, after a resize), key press to frame, start to first frame, CPU while idle and while an
//! answer streams at 2,000 tokens/s, and memory with that transcript. In-process figures draw the real `App` into
//! ratatui's `TestBackend`; process figures run the release binary in tmux against the scripted model server.
//!
//! Run with `cargo bench --bench tui`. Knobs (environment): `TERN_BENCH_CELLS` (5000), `TERN_BENCH_FRAMES` (600 per
//! situation), `TERN_BENCH_RUNS` (10 start-up runs), `TERN_BENCH_STREAM_RUNS` (3), `TERN_BENCH_IDLE_SECS` (30).
//! `TERN_BENCH_PROCESS=0` skips the process figures (for profiling the in-process ones); without tmux they are
//! skipped with a note.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "tui/corpus.rs"]
mod corpus;
#[path = "tui/inproc.rs"]
mod inproc;
#[path = "tui/process.rs"]
mod process;
#[path = "tui/pty.rs"]
mod pty;
#[path = "tui/report.rs"]
mod report;
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use report::{Row, Samples, median, ms, print_table};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

const TOKENS: usize = 5_000;
const TOKENS_PER_SECOND: u32 = 2_000;

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let load_start = load_average();
    let frames: usize = env_or("TERN_BENCH_FRAMES", 600);
    let inproc = inproc::run(&inproc::Options {
        cells: env_or("TERN_BENCH_CELLS", 5_000),
        frames,
    });
    let process = if env_or("TERN_BENCH_PROCESS", 1) == 0 {
        None
    } else if process::tmux_available() {
        let mut answers = corpus::Corpus::new(7);
        let opts = process::Options {
            start_runs: env_or("TERN_BENCH_RUNS", 10),
            idle: Duration::from_secs_f64(env_or("TERN_BENCH_IDLE_SECS", 30.0)),
            stream_runs: env_or("TERN_BENCH_STREAM_RUNS", 3),
            stream_tokens: TOKENS,
            tokens_per_second: TOKENS_PER_SECOND,
        };
        // The answer is markdown like any other (headings, lists, code blocks), `TOKENS` word pieces long.
        let answer = move |run: usize| answers.streamed_answer(run as u64, TOKENS - 1).concat();
        Some(process::run(env!("CARGO_BIN_EXE_tern"), &opts, answer))
    } else {
        None
    };
    print_report(&inproc, process.as_ref());
    println!(
        "load average (1 min) at start / end: {load_start} / {} on {} cores",
        load_average(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
}

fn print_report(r: &inproc::Results, p: Option<&process::Results>) {
    const FRAME_GOAL: Option<f64> = Some(2_000.0);
    const START_GOAL: Option<f64> = Some(25_000.0);
    println!(
        "\ntern TUI figures: {} cells / {} lines ({} tool calls, {} events) at {}x{}; transcript built in {:.0} ms",
        r.cells,
        r.lines,
        r.calls,
        r.events,
        inproc::WIDTH,
        inproc::HEIGHT,
        r.build.as_secs_f64() * 1000.0
    );
    let mut rows = vec![
        Row::measured("1a frame: tail, answer streaming", &r.tail_streaming, FRAME_GOAL, false),
        Row::measured(
            "1b frame: PageUp to middle, first visit",
            &r.middle_first,
            FRAME_GOAL,
            false,
        ),
        Row::measured("1b frame: middle, steady", &r.middle_steady, FRAME_GOAL, false),
        Row::measured("1b frame: PageDown top to end", &r.page_through, FRAME_GOAL, false),
        Row::measured("1c frame after resize: tail", &r.resize_tail, FRAME_GOAL, false),
        Row::measured("1c frame after resize: middle", &r.resize_middle, FRAME_GOAL, false),
        Row::measured("1d frame: tail, nothing changed", &r.redraw_tail, FRAME_GOAL, false),
        Row::measured(
            format!("1d the same with {} cells", inproc::SMALL_CELLS),
            &r.redraw_small,
            FRAME_GOAL,
            false,
        ),
    ];
    for (kind, m) in &r.layout {
        rows.push(Row::measured(format!("   layout of one cell: {kind}"), m, None, false));
    }
    rows.extend([
        Row::measured("2  key press to frame", &r.key_to_frame, None, false),
        Row::value(
            "   Home: jump to top + frame",
            ms(r.jump_top.wall.as_secs_f64() * 1e6),
            "-",
            None,
        ),
        Row::value(
            "5a App::new + first draw, first in process",
            ms(r.first_frame_cold.wall.as_secs_f64() * 1e6),
            "< 25 ms",
            Some(r.first_frame_cold.wall < Duration::from_millis(25)),
        ),
        Row::measured("5a App::new + first draw, again", &r.first_frame_warm, START_GOAL, true),
    ]);
    let mut problems = Vec::new();
    match p {
        None => {
            for figure in ["3  CPU idle", "4  CPU streaming", "5b/c start to first frame"] {
                rows.push(Row::skipped(figure, "tmux not installed, or TERN_BENCH_PROCESS=0"));
            }
        }
        Some(p) => {
            let (tmux, pty) = (Samples::from_ms(&p.start_ms), Samples::from_ms(&p.start_pty_ms));
            rows.push(Row::latency(
                "5b spawn to first frame on screen (tmux)",
                &tmux,
                START_GOAL,
                true,
            ));
            rows.push(Row::latency(
                "5c spawn to first frame's bytes (pty)",
                &pty,
                START_GOAL,
                true,
            ));
            match &p.idle {
                Some(idle) => rows.push(Row::value(
                    format!("3  CPU over {:.0} s idle", idle.secs),
                    format!(
                        "{:.0} ms ({:.2} ms on-CPU, {} wake-ups)",
                        idle.cpu_ms_ticks, idle.cpu_ms_sched, idle.wakeups
                    ),
                    "< 10 ms",
                    Some(idle.cpu_ms_ticks < 10.0),
                )),
                None => rows.push(Row::skipped("3  CPU idle", "tern was not running")),
            }
            match &p.stream {
                Some(s) => {
                    let share = median(&s.shares) * 100.0;
                    let runs: Vec<String> = s.shares.iter().map(|v| format!("{:.1}", v * 100.0)).collect();
                    rows.push(Row::value(
                        format!("4  CPU streaming {TOKENS} tokens at {TOKENS_PER_SECOND}/s"),
                        format!(
                            "{share:.1}% of a core (runs {}; {:.2} s)",
                            runs.join(", "),
                            median(&s.walls)
                        ),
                        "< 15%",
                        Some(share < 15.0),
                    ));
                }
                None => rows.push(Row::skipped("4  CPU streaming", "no run completed")),
            }
            problems.extend(p.problems.iter().cloned());
        }
    }
    rows.push(Row::value(
        "6a RSS: transcript built / all laid out",
        format!("{:.1} / {:.1} MB", r.rss_built, r.rss_all),
        "< 60 MB",
        Some(r.rss_all < 60.0),
    ));
    let base = r.rss_before_syntax + r.rss_syntax;
    rows.push(Row::value(
        "   = bench + syntect + cells + layouts",
        format!(
            "{:.1} + {:.1} + {:.1} + {:.1} MB",
            r.rss_before_syntax,
            r.rss_syntax,
            r.rss_built - base,
            r.rss_all - r.rss_built
        ),
        format!("peak {:.1} MB", r.hwm_end),
        None,
    ));
    rows.push(Row::value(
        "   syntax warm-up (background, at start)",
        ms(r.warm_up.wall.as_secs_f64() * 1e6),
        "-",
        None,
    ));
    if let Some(rss) = p.and_then(|p| p.idle_rss_mb) {
        rows.push(Row::value(
            "6b tern's VmRSS at start (idle)",
            format!("{rss:.1} MB"),
            "-",
            None,
        ));
    }
    if let Some(hwm) = p.and_then(|p| p.hwm_mb) {
        rows.push(Row::value(
            "6b tern's VmHWM after streaming",
            format!("{hwm:.1} MB"),
            "< 60 MB",
            Some(hwm < 60.0),
        ));
    }
    print_table(&rows);
    println!(
        "\nHow: 1, 2, 5a and 6a run in this process: the real App::draw (planned, rendered, written as changes by \
         Screen, the escapes formatted into a sink), timed (terminal I/O not); wall time, and the thread's CPU time (the work itself on a \
         shared machine). 1a: {} word deltas, 8 applied between frames. 1b: PageUp from the tail to the middle (each \
         cell laid out on its first visit), PageUp/PageDown there, then Home and PageDown to the end. 1c: the frame \
         after each resize between 200x60 and 180x50 (tail) or 180x60 (middle). 1d: a frame with nothing new. \
         Layout: cells::render_cell per cell, by kind. 2: on_terminal_event(Key) + draw. 5a excludes the syntax \
         warm-up, which `launch` runs on a background thread. 6a: this process's VmRSS (syntect = what \
         highlight::warm_up added; cells = the transcript's state; layouts = every cell laid out at 199 columns).",
        r.stream_words
    );
    println!(
        "3, 4, 5b/c, 6b: the release binary at 200x60 against the scripted model server. 5b: from `tmux new-session` \
         to \"Ask tern\" in `capture-pane`, polled every ms (includes tmux's own work). 5c: from spawn on a pty of \
         our own to those bytes written. 3: utime+stime from /proc/PID/stat (10 ms ticks); on-CPU = schedstat of \
         living threads; wake-ups = their context switches. 4: utime+stime from the request reaching the model to \
         the last word on screen, over that wall time. 6b: VmHWM from /proc/PID/status."
    );
    for problem in problems {
        println!("problem: {problem}");
    }
}
