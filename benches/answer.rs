//! Memory and CPU of the release `tern` binary around one large streamed answer (issue 18): its RSS at start (idle,
//! split into the binary's own file-backed pages and the rest), the CPU time a 200 KB markdown answer costs while it
//! streams at a fixed token rate, and its peak and current RSS after each answer (memory given back or not).
//! tern runs in tmux at 200x60 against the scripted model server on 127.0.0.1.
//!
//! Run with `cargo bench --bench answer`. Knobs (environment): `TERN_BENCH_ANSWER_KB` (200), `TERN_BENCH_RUNS`
//! (2 answers, one after another in the same session; before a third 200 KB answer tern compacts the conversation to
//! fit the scripted model's context window, and the compaction takes the scripted answer), `TERN_BENCH_RATE` (2,000 word pieces a second), `TERN_BIN` (another build to compare).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "tui/corpus.rs"]
#[allow(dead_code)]
mod corpus;
#[path = "tui/report.rs"]
#[allow(dead_code)]
mod report;
#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use report::{ProcSample, memory_mb, ticks_per_second};
use support::mock_llm::{MockLlm, Reply};

const PLACEHOLDER: &str = "Ask tern";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.0, "-f", "/dev/null"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run tmux {args:?}: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_for(&self, needle: &str, every: Duration, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.run(&["capture-pane", "-p", "-t", "main"]).contains(needle) {
                return true;
            }
            std::thread::sleep(every);
        }
        false
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// Resident memory from /proc/PID/smaps_rollup in MB: (all, anonymous, file-backed).
fn rollup(pid: u32) -> Option<(f64, f64, f64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let field = |key: &str| report::status_field(&text, key).map(|kb| kb as f64 / 1024.0);
    let rss = field("Rss:")?;
    let anon = field("Anonymous:")?;
    Some((rss, anon, rss - anon))
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A markdown answer of at least `bytes` bytes (headings, lists, code blocks, tables), cut before a heading so no
/// block is left open.
fn answer(corpus: &mut corpus::Corpus, run: u64, bytes: usize) -> String {
    let mut text = corpus.streamed_answer(run, bytes / 4).concat();
    if let Some(at) = text[bytes.min(text.len())..].find("\n## ") {
        text.truncate(bytes + at + 1);
    }
    text
}

fn main() {
    let kb: usize = env_or("TERN_BENCH_ANSWER_KB", 200);
    let runs: usize = env_or("TERN_BENCH_RUNS", 2);
    let rate: u32 = env_or("TERN_BENCH_RATE", 2_000);
    // `TERN_BIN`: another build to compare (an earlier commit's release binary).
    let bin = std::env::var("TERN_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tern").to_string());
    let bin = bin.as_str();
    let mock = MockLlm::start_standalone(vec![]);
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tmux = Tmux(format!("tern-answer-{}", std::process::id()));
    let mut args: Vec<String> = ["new-session", "-d", "-s", "main", "-x", "200", "-y", "60", "-c"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(work.path().display().to_string());
    for (k, v) in [
        ("HOME", home.path().to_path_buf()),
        ("XDG_CONFIG_HOME", home.path().join("config")),
        ("XDG_DATA_HOME", home.path().join("data")),
        ("XDG_STATE_HOME", home.path().join("state")),
        ("XDG_CACHE_HOME", home.path().join("cache")),
        ("OPENAI_API_KEY", Path::new("k").to_path_buf()),
    ] {
        args.push("-e".into());
        args.push(format!("{k}={}", v.display()));
    }
    args.push("--".into());
    let base_url = mock.openai_base_url();
    args.extend([bin, "--provider", "openai", "--base-url", &base_url, "--model", "m"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    tmux.run(&refs);
    let pid: u32 = tmux
        .run(&["display-message", "-p", "-t", "main", "#{pane_pid}"])
        .trim()
        .parse()
        .expect("no pane pid");
    assert!(
        tmux.wait_for(PLACEHOLDER, Duration::from_millis(5), Duration::from_secs(10)),
        "tern never drew its first frame"
    );
    // Start-up work (the sandbox probe, anything warmed in the background) settles first.
    std::thread::sleep(Duration::from_secs(2));
    let (idle_rss, idle_hwm) = memory_mb(&pid.to_string()).unwrap();
    let (_, idle_anon, idle_file) = rollup(pid).unwrap();

    let ticks = ticks_per_second() as f64;
    let mut corpus = corpus::Corpus::new(18);
    let mut cpu = Vec::new();
    let mut walls = Vec::new();
    let mut threads = Vec::new();
    let mut after = Vec::new();
    let mut answer_bytes = 0;
    for run in 0..runs {
        let marker = format!("answer-end-{run}");
        let mut text = answer(&mut corpus, run as u64, kb * 1024);
        text.push_str(&format!(" {marker}\n"));
        answer_bytes = text.len();
        let pieces = text.split_inclusive(' ').count();
        mock.push(Reply::paced(text, rate));
        let requests = mock.request_count();
        tmux.run(&[
            "send-keys",
            "-t",
            "main",
            "-l",
            &format!("write it all down, part {run}"),
        ]);
        tmux.run(&["send-keys", "-t", "main", "Enter"]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while mock.request_count() == requests {
            assert!(Instant::now() < deadline, "the prompt never reached the model");
            std::thread::sleep(Duration::from_micros(500));
        }
        let before = ProcSample::read(pid).expect("tern exited");
        let start = Instant::now();
        let timeout = Duration::from_secs_f64(pieces as f64 / f64::from(rate) * 4.0 + 20.0);
        assert!(
            tmux.wait_for(&marker, Duration::from_millis(20), timeout),
            "run {run}: the answer never finished on screen:\n{}",
            tmux.run(&["capture-pane", "-p", "-t", "main"])
        );
        let wall = start.elapsed().as_secs_f64();
        // The turn ends and the UI settles before the next sample.
        std::thread::sleep(Duration::from_millis(1_000));
        let end = ProcSample::read(pid).expect("tern exited");
        cpu.push((end.ticks - before.ticks) as f64 / ticks);
        // Where it went: each thread's time on a CPU (schedstat, nanoseconds), threads of one name together.
        threads.push(
            end.by_name
                .iter()
                .map(|(name, ns)| {
                    let was = before.by_name.get(name).copied().unwrap_or(0);
                    format!("{name} {:.3}", ns.saturating_sub(was) as f64 / 1e9)
                })
                .collect::<Vec<_>>()
                .join(", "),
        );
        walls.push(wall);
        let (rss, hwm) = memory_mb(&pid.to_string()).unwrap();
        after.push((rss, hwm));
    }
    tmux.run(&["send-keys", "-t", "main", "C-c"]);
    tmux.run(&["send-keys", "-t", "main", "C-c"]);

    println!("tern (release) at 200x60 in tmux against the scripted model on 127.0.0.1");
    println!(
        "  idle at start   VmRSS {idle_rss:.1} MB (file-backed {idle_file:.1} + anonymous {idle_anon:.1})   VmHWM \
         {idle_hwm:.1} MB   (goal: under 15 MB)"
    );
    println!(
        "  {} KB answer at {rate} pieces/s, {runs} run(s): CPU median {:.2} s (runs {}; {:.1} s each)   (goal: \
         under 0.4 s)",
        answer_bytes / 1024,
        median(&cpu),
        cpu.iter().map(|c| format!("{c:.2}")).collect::<Vec<_>>().join(", "),
        median(&walls)
    );
    for (i, split) in threads.iter().enumerate() {
        println!("  answer {} by thread (s on a CPU): {split}", i + 1);
    }
    for (i, (rss, hwm)) in after.iter().enumerate() {
        println!(
            "  after answer {}   VmRSS {rss:.1} MB   VmHWM {hwm:.1} MB   (goal: peak under 30 MB)",
            i + 1
        );
    }
}
