//! What work-tree snapshots cost, in git trees of 10,000 and 100,000 small files (generated in a temp dir):
//! - the real `tern run` process against the scripted model on 127.0.0.1: a one-answer turn inside git and the same
//!   files outside git (`.git` moved away), and a turn with one edit (`write_file`) in both;
//! - the data a workspace's runs leave besides the sessions' own logs (an earlier version's snapshots kept in a
//!   session's directory count as data): after ten unchanged runs;
//! - through the library, a turn that runs a command: the first indexing of a new workspace, and then, with the
//!   persistent index, the snapshot before the command and the one after the turn.
//!
//! Prints medians. `TERN_BENCH_RUNS` sets the runs per figure (default 7); `TERN_BENCH_SIZES` the tree sizes
//! (default "10000,100000"); `TERN_BIN` another `tern` binary to measure (an earlier build, for a before/after; the
//! library's figures are then left out).
//! Run with `cargo bench --bench checkpoint`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::mock_llm::{MockLlm, Reply};
use tern::agent::checkpoint::Checkpoints;

/// A git work tree (only `git init`: snapshots need no commit of the user's) of `files` small files in dirs of 100.
fn repo(files: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    for i in 0..files {
        let sub = dir.path().join(format!("d{}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&sub).unwrap();
        }
        std::fs::write(sub.join(format!("f{i}.rs")), format!("fn f{i}() {{}}\n")).unwrap();
    }
    dir
}

struct Runner {
    bin: String,
    mock: MockLlm,
    home: tempfile::TempDir,
}

impl Runner {
    /// One `tern run` in `work`; its wall time.
    fn run(&self, work: &Path, edit: bool) -> Duration {
        if edit {
            self.mock.push(Reply::tool(
                "write_file",
                json!({"path": "notes/new.txt", "content": "one line\n"}),
            ));
            self.mock.push(Reply::text("Written."));
        } else {
            self.mock.push(Reply::text("The answer."));
        }
        let started = Instant::now();
        let status = Command::new(&self.bin)
            .args([
                "run",
                "--provider",
                "openai",
                "--base-url",
                &self.mock.openai_base_url(),
                "--model",
                "m",
                "go",
            ])
            .current_dir(work)
            .env("HOME", self.home.path())
            .env("XDG_DATA_HOME", self.home.path().join("data"))
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("OPENAI_API_KEY", "k")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        let took = started.elapsed();
        assert!(status.success(), "tern run failed");
        let _ = std::fs::remove_dir_all(work.join("notes"));
        took
    }

    /// The median of `runs` runs (after one warm-up).
    fn median(&self, work: &Path, edit: bool, runs: usize) -> Duration {
        self.run(work, edit);
        let mut walls: Vec<Duration> = (0..runs).map(|_| self.run(work, edit)).collect();
        walls.sort();
        walls[walls.len() / 2]
    }

    fn data(&self) -> std::path::PathBuf {
        self.home.path().join("data/tern")
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64())
}

/// Bytes under `dir`; with `logs_only`, an earlier version's per-session snapshot data (`shadow.git`,
/// `checkpoints` in a session's directory) left out.
fn size(dir: &Path, logs_only: bool) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| !(logs_only && (e.file_name() == "shadow.git" || e.file_name() == "checkpoints")))
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size(&e.path(), logs_only),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

fn main() {
    let runs: usize = std::env::var("TERN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let sizes: Vec<usize> = std::env::var("TERN_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let other = std::env::var("TERN_BIN").ok();
    let bin = other.clone().unwrap_or_else(|| env!("CARGO_BIN_EXE_tern").to_string());
    println!("work-tree snapshots: tern run against the scripted model on 127.0.0.1, median of {runs} runs ({bin})");
    for files in sizes {
        let work = repo(files);
        let runner = Runner {
            bin: bin.clone(),
            mock: MockLlm::start_standalone(vec![]),
            home: tempfile::tempdir().unwrap(),
        };
        // Ten unchanged runs in a new data directory: what they leave besides the sessions' logs.
        for _ in 0..10 {
            runner.run(work.path(), false);
        }
        let logs = size(&runner.data().join("sessions"), true);
        let left = size(&runner.data(), false).saturating_sub(logs);
        let in_git = runner.median(work.path(), false, runs);
        let edit_in_git = runner.median(work.path(), true, runs);
        std::fs::rename(work.path().join(".git"), work.path().join(".git-away")).unwrap();
        let outside = runner.median(work.path(), false, runs);
        let edit_outside = runner.median(work.path(), true, runs);
        std::fs::rename(work.path().join(".git-away"), work.path().join(".git")).unwrap();
        println!(
            "{files:>7} files: one answer in git {} · outside git {} · {} (goal at most 1.2x)",
            ms(in_git),
            ms(outside),
            ratio(in_git, outside)
        );
        println!(
            "{files:>7} files: one edit in git {} · outside git {} · adds {} (goal under 50 ms)",
            ms(edit_in_git),
            ms(edit_outside),
            ms(edit_in_git.saturating_sub(edit_outside))
        );
        println!(
            "{files:>7} files: data left by ten unchanged runs besides the sessions' logs {:.1} KB (goal under 1 MB; \
             the logs: {:.1} KB)",
            left as f64 / 1024.0,
            logs as f64 / 1024.0
        );
        // The library's figures are this build's: left out when another binary is measured.
        if other.is_none() {
            command_turns(work.path(), files);
        }
    }
}

/// A turn that runs a command, through the library: the first indexing of a new workspace (once), then with the
/// persistent index the snapshot before the command (the index brought up to date in the background as the turn
/// starts) and the snapshot after the turn, with 10 files changed by the "command".
fn command_turns(work: &Path, files: usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let data = tempfile::tempdir().unwrap();
        let session = data.path().join("sessions/s1");
        std::fs::create_dir_all(&session).unwrap();
        let mut checkpoints = Checkpoints::new(Some(&session), work);
        let mut turn = 1;
        checkpoints.begin_turn(turn, "bench", 0, 0).await;
        let started = Instant::now();
        let mut notice = checkpoints.before_command().await;
        // A first indexing slower than the wait goes on in the background: wait for it as the next turn would.
        while notice.is_some() && started.elapsed() < Duration::from_secs(600) {
            checkpoints.end_turn().await;
            turn += 1;
            checkpoints.begin_turn(turn, "bench", 0, 0).await;
            notice = checkpoints.before_command().await;
        }
        let first = started.elapsed();
        checkpoints.end_turn().await;
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for turn in turn + 1..turn + 6 {
            checkpoints.begin_turn(turn, "bench", 0, 0).await;
            // The model's first request and answer take at least this long.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let started = Instant::now();
            assert_eq!(checkpoints.before_command().await, None);
            before.push(started.elapsed());
            for i in 0..10 {
                std::fs::write(work.join(format!("d0/f{i}.rs")), format!("fn t{turn}_{i}() {{}}\n")).unwrap();
            }
            let started = Instant::now();
            assert_eq!(checkpoints.end_turn().await, None);
            after.push(started.elapsed());
        }
        before.sort();
        after.sort();
        println!(
            "{files:>7} files: a command turn: first indexing of the workspace {} · then before the command {} · \
             after the turn (10 files changed) {}",
            ms(first),
            ms(before[before.len() / 2]),
            ms(after[after.len() / 2])
        );
    });
}
