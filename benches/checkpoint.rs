//! What work-tree snapshots cost at the start and end of a turn. In git repositories of 1,000, 10,000 and 20,000
//! files: the first snapshot without the background indexing (every file hashed at the turn start), a second with
//! nothing changed, one after 10 files changed, and the first turn start of a session whose background indexing
//! (`Checkpoints::prepare`) had finished; in a repository of 50,000 files, what the start of a turn costs when the
//! size check turns snapshots off. Prints each figure. Run with `cargo bench --bench checkpoint`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use tern::agent::checkpoint::Checkpoints;

/// A git work tree (only `git init`: snapshots need no commit of the user's) of `files` small files in dirs of 100.
fn repo(files: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("git")
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

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

async fn timed(checkpoints: &mut Checkpoints, turn: u64) -> (Duration, Option<String>) {
    let started = Instant::now();
    let notice = checkpoints.begin_turn(turn, "bench", 0, 0).await;
    (started.elapsed(), notice)
}

fn touch(root: &Path, n: usize) {
    for i in 0..n {
        std::fs::write(root.join(format!("d0/f{i}.rs")), format!("fn changed{i}() {{}}\n")).unwrap();
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for files in [1_000, 10_000, 20_000] {
            let work = repo(files);
            let data = tempfile::tempdir().unwrap();
            let mut checkpoints = Checkpoints::new(Some(data.path()), work.path());
            let (first, notice) = timed(&mut checkpoints, 1).await;
            let started = Instant::now();
            checkpoints.end_turn().await;
            let unchanged = started.elapsed();
            touch(work.path(), 10);
            let (changed, _) = timed(&mut checkpoints, 2).await;
            // A new session on the same tree: indexing starts in the background; the user's first message comes
            // a few seconds later.
            let data = tempfile::tempdir().unwrap();
            let mut prepared = Checkpoints::new(Some(data.path()), work.path());
            prepared.prepare();
            tokio::time::sleep(Duration::from_secs(5)).await;
            let (after_prepare, _) = timed(&mut prepared, 1).await;
            println!(
                "{files:>6} files: first snapshot at a turn start {} · unchanged {} · 10 files changed {} · first turn \
                 start after background indexing {}{}",
                ms(first),
                ms(unchanged),
                ms(changed),
                ms(after_prepare),
                notice.map(|n| format!(" · {n}")).unwrap_or_default()
            );
        }
        let work = repo(50_000);
        let data = tempfile::tempdir().unwrap();
        let mut checkpoints = Checkpoints::new(Some(data.path()), work.path());
        let (start, notice) = timed(&mut checkpoints, 1).await;
        println!(
            "{:>6} files: turn start {} · {}",
            50_000,
            ms(start),
            notice.unwrap_or_else(|| "snapshotted".into())
        );
    });
}
