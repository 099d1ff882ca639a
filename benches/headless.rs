//! One headless turn against the scripted model on 127.0.0.1 (one tool call, then a final answer): wall time and peak
//! RSS of the real `tern run` process over several runs. Run with `cargo bench --bench headless`; `TERN_BENCH_RUNS`
//! sets the number of runs (default 10).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply};

fn main() {
    let runs: usize = std::env::var("TERN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    // `TERN_BIN`: another build to compare (an earlier commit's release binary).
    let bin = std::env::var("TERN_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tern").to_string());
    let bin = bin.as_str();
    let mock = MockLlm::start_standalone(vec![]);
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut walls = Vec::new();
    let mut rss = Vec::new();
    // One warm-up run so the page cache holds the binary.
    for i in 0..=runs {
        mock.push(Reply::tool("read_file", json!({"path": "notes.txt"})));
        mock.push(Reply::text("The notes list alpha, beta and gamma."));
        let start = Instant::now();
        #[allow(clippy::zombie_processes)] // reaped by wait4 below
        let child = Command::new(bin)
            .args([
                "run",
                "--provider",
                "openai",
                "--base-url",
                &mock.openai_base_url(),
                "--model",
                "m",
                "what is in notes.txt?",
            ])
            .current_dir(work.path())
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("OPENAI_API_KEY", "k")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // wait4 reaps the child and gives its peak RSS.
        let (status, max_rss_kb) = wait_with_rusage(child.id() as i32);
        let wall = start.elapsed();
        assert_eq!(status, 0, "tern run failed");
        if i > 0 {
            walls.push(wall.as_secs_f64() * 1000.0);
            rss.push(max_rss_kb as f64 / 1024.0);
        }
    }
    walls.sort_by(f64::total_cmp);
    rss.sort_by(f64::total_cmp);
    println!("headless turn (read_file call + final answer) against the scripted model on 127.0.0.1, {runs} runs");
    println!(
        "  wall time  median {:.1} ms   min {:.1} ms   max {:.1} ms   (goal: under 20 ms)",
        median(&walls),
        walls[0],
        walls[walls.len() - 1]
    );
    println!(
        "  peak RSS   median {:.1} MB   max {:.1} MB   (goal: under 12 MB)",
        median(&rss),
        rss[rss.len() - 1]
    );
}

fn median(sorted: &[f64]) -> f64 {
    sorted[sorted.len() / 2]
}

/// Waits for `pid` and returns its exit code and peak resident set size in KB (from the kernel's rusage).
fn wait_with_rusage(pid: i32) -> (i32, i64) {
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4 failed");
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}
