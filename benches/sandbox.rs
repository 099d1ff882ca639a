//! The sandbox's cost per command: `true` through `ExecTool` (the real exec path: process group, pipes, capture,
//! leftover check), sandboxed with the built `tern` as launcher and unsandboxed, alternating so both see the same
//! machine load (and sandboxed without the session's holder, each command making its own namespaces). Prints median and p90 of each and the difference (goal: under 2 ms extra); then what finding the
//! git repositories a command created costs after each command on a 10,000-file tree. Run with
//! `cargo bench --bench sandbox`; `TERN_BENCH_RUNS` sets the number of runs of each (default 200).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::json;
use tern::sandbox::SandboxPolicy;
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::{PathPolicy, Tool, ToolContext};

fn main() {
    let runs: usize = std::env::var("TERN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let support = tern::sandbox::probe();
    assert!(support.is_available(), "the sandbox is not available here: {support:?}");
    let work = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(work.path()).unwrap());
    let sandboxed = ExecTool::new(ExecConfig {
        sandbox: Some(SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox"))),
        ..ExecConfig::default()
    });
    // Each command making its own namespaces and shared mounts, as before the session's holder.
    let mut unshared = SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox"));
    unshared.shared_namespaces = false;
    let alone = ExecTool::new(ExecConfig {
        sandbox: Some(unshared),
        ..ExecConfig::default()
    });
    let plain = ExecTool::new(ExecConfig::default());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut with, mut without) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let mut own = Vec::with_capacity(runs);
    runtime.block_on(async {
        // Warm-up: page cache, the launcher binary, the runtime's blocking pool.
        for _ in 0..5 {
            once(&sandboxed, &ctx).await;
            once(&alone, &ctx).await;
            once(&plain, &ctx).await;
        }
        for _ in 0..runs {
            with.push(once(&sandboxed, &ctx).await);
            own.push(once(&alone, &ctx).await);
            without.push(once(&plain, &ctx).await);
        }
    });
    let (with_median, with_p90) = (percentile(&mut with, 50), percentile(&mut with, 90));
    let (without_median, without_p90) = (percentile(&mut without, 50), percentile(&mut without, 90));
    let (own_median, own_p90) = (percentile(&mut own, 50), percentile(&mut own, 90));
    println!("exec `true`, {runs} runs each:");
    println!("  sandboxed    median {}  p90 {}", ms(with_median), ms(with_p90));
    println!(
        "  own namespaces per command (no holder)  median {}  p90 {}  extra {}",
        ms(own_median),
        ms(own_p90),
        ms(own_median.saturating_sub(without_median))
    );
    println!("  unsandboxed  median {}  p90 {}", ms(without_median), ms(without_p90));
    println!(
        "  extra        median {}  p90 {}  (goal: under 2 ms)",
        ms(with_median.saturating_sub(without_median)),
        ms(with_p90.saturating_sub(without_p90))
    );
    new_repos_check();
}

/// The check after each sandboxed command for repositories it created, on 1,000 directories of 10 files each.
fn new_repos_check() {
    let tree = tempfile::tempdir().unwrap();
    for d in 0..1000 {
        let dir = tree.path().join(format!("d{}/e{}", d / 10, d % 10));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..10 {
            std::fs::write(dir.join(format!("f{f}")), "x").unwrap();
        }
    }
    let policy = SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox"));
    let start = Instant::now();
    policy.prepare(tree.path());
    let walk = start.elapsed();
    let mut checks = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        assert!(policy.git_changes(tree.path()).new_repos.is_empty());
        checks.push(start.elapsed());
    }
    std::fs::create_dir_all(tree.path().join("d7/e3/new/.git")).unwrap();
    let start = Instant::now();
    assert_eq!(policy.git_changes(tree.path()).new_repos.len(), 1);
    let found = start.elapsed();
    println!("new git repositories, 10,000 files in 1,111 directories:");
    println!("  first walk (once per session, off the hot path)  {}", ms(walk));
    println!(
        "  check after a command, nothing new   median {}",
        ms(percentile(&mut checks, 50))
    );
    println!("  check after a command that made a repository   {}", ms(found));
}

/// One `true` through the tool; its wall time.
async fn once(tool: &ExecTool, ctx: &ToolContext) -> Duration {
    let start = Instant::now();
    let out = tool.execute(json!({ "command": "true" }), ctx).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    start.elapsed()
}

fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
