//! Retention of the shadow repositories (`<data>/shadow/<key>/`, see `shadow.rs`): a session's snapshots are kept
//! for `keep` after they were taken, a workspace's repository as a whole for `keep` after its last use, and a
//! repository larger than `max_bytes` drops every session's snapshots but those of the last hour. Collected in the
//! background at a session's start, at most once a day per repository (the first time a day after it was made),
//! and never while another process writes it.
//!
//! Collection is explicit and the only one: shadow git never starts one by itself (`gc.auto=0`, see `shadow.rs`).
//! A repository's collection and its removal hold its lock (`tern.lock`) from start to end; the `git gc` is handed
//! the lock with its standard input, so a collection that outlives tern (a short `tern run` ends first) still holds
//! it, and nothing else writes or removes that repository until git is done.
//!
//! It must not remove what a running session needs: the index (whose objects `git gc` keeps, as it reads
//! `GIT_INDEX_FILE`) and snapshots newer than an hour, and it never waits for a writer (only a moment, `MOMENT`).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::shadow::{Shadow, ShadowError, lock};

/// How long retention leaves a repository alone after collecting it.
const EVERY: Duration = Duration::from_secs(24 * 3600);
/// Snapshots this recent are never dropped, and objects this recent never pruned: a session may be using them.
const GRACE: Duration = Duration::from_secs(3600);
/// How long one repository's collection may take.
const LIMIT: Duration = Duration::from_secs(600);
/// How long a collection waits for a repository's lock. Not zero: a process that this one (any of its threads)
/// starts holds a copy of every open file, the lock's included, from its fork until its exec, so a lock just let go
/// can still look held for a moment. A writer holds it far longer, and then the collection waits for another day.
const MOMENT: Duration = Duration::from_secs(2);
/// Names a repository being removed goes by (`.removing-<key>-<pid>`), next to the live ones.
const REMOVING: &str = ".removing-";

/// How long and how much shadow data is kept (the `[checkpoints]` settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub keep: Duration,
    pub max_bytes: u64,
}

/// Collects the shadow repositories under `shadows` in a background task (none without a tokio runtime), one after
/// the other.
pub fn collect_in_background(shadows: PathBuf, retention: Retention) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        let Ok(entries) = std::fs::read_dir(&shadows) else {
            return;
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            if entry.file_name().to_string_lossy().starts_with(REMOVING) {
                // What an earlier removal left (it was stopped half way): nobody uses it.
                let _ = std::fs::remove_dir_all(&dir);
            } else if dir.join("HEAD").is_file()
                && let Err(e) = collect(&dir, retention, SystemTime::now()).await
            {
                tracing::warn!(error = %e, dir = %dir.display(), "cannot collect old snapshots");
            }
        }
    });
}

/// Collects one repository as of `now`, unless it was collected in the last day or a writer holds it.
pub async fn collect(dir: &Path, retention: Retention, now: SystemTime) -> Result<(), ShadowError> {
    // Held by a writer, or the repository was just removed by another process: its business.
    let Ok(lock) = lock(&dir.join("tern.lock"), MOMENT).await else {
        return Ok(());
    };
    let age = |file: &str| {
        std::fs::metadata(dir.join(file))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
    };
    if age("used").is_some_and(|a| a > retention.keep) {
        tracing::info!(dir = %dir.display(), "removing an unused shadow repository");
        return remove(dir);
    }
    // Sizing walks every loose object: done only when a collection is due.
    if age("collected").is_some_and(|a| a < EVERY) {
        return Ok(());
    }
    let size = dir_size(dir);
    let shadow = Shadow::new(dir.to_path_buf(), dir.to_path_buf());
    let refs = shadow
        .git(&[
            "for-each-ref",
            "--format=%(committerdate:unix) %(refname)",
            "refs/sessions/",
        ])
        .await?;
    let now_secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let keep = if size > retention.max_bytes {
        GRACE
    } else {
        retention.keep.max(GRACE)
    };
    let mut drop = Vec::new();
    for line in String::from_utf8_lossy(&refs).lines() {
        let Some((time, name)) = line.split_once(' ') else {
            continue;
        };
        let time: u64 = time.parse().unwrap_or(0);
        if now_secs.saturating_sub(time) > keep.as_secs() {
            drop.push(format!("delete {name}\n"));
        }
    }
    if !drop.is_empty() {
        let mut update = shadow.command();
        update
            .args(["update-ref", "--stdin"])
            .stdin(std::process::Stdio::piped());
        run_with_input(update, drop.concat().as_bytes()).await?;
    }
    // Not killed with tern: a `tern run` that ends first leaves git to finish, holding the lock it was handed (git
    // reads nothing from its standard input).
    let mut gc = shadow.command();
    gc.kill_on_drop(false)
        .stdin(std::process::Stdio::from(lock.try_clone()?))
        .args(["gc", "--quiet", &format!("--prune={}.seconds.ago", GRACE.as_secs())]);
    match tokio::time::timeout(LIMIT, gc.output()).await {
        Ok(Ok(out)) if out.status.success() => {}
        Ok(Ok(out)) => {
            return Err(ShadowError::Failed {
                command: "gc".into(),
                stderr: String::from_utf8_lossy(&out.stderr).chars().take(300).collect(),
            });
        }
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => return Err(ShadowError::Timeout(LIMIT)),
    }
    std::fs::write(dir.join("collected"), b"")?;
    Ok(())
}

/// Removes a repository, under its lock: renamed away first, so a process opening it finds it whole or not at all,
/// and one waiting for its lock finds the lock file gone (see `shadow::lock`).
pub(super) fn remove(dir: &Path) -> Result<(), ShadowError> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let away = dir.with_file_name(format!("{REMOVING}{name}-{}", std::process::id()));
    std::fs::rename(dir, &away)?;
    std::fs::remove_dir_all(&away)?;
    Ok(())
}

async fn run_with_input(mut cmd: tokio::process::Command, input: &[u8]) -> Result<(), ShadowError> {
    use tokio::io::AsyncWriteExt;
    let mut child = cmd.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input).await?;
    }
    let out = child.wait_with_output().await?;
    if out.status.success() {
        Ok(())
    } else {
        Err(ShadowError::Failed {
            command: "update-ref".into(),
            stderr: String::from_utf8_lossy(&out.stderr).chars().take(300).collect(),
        })
    }
}

/// The bytes of the files under `dir` (symlinks not followed).
pub(crate) fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => total += entry.metadata().map(|m| m.len()).unwrap_or(0),
                _ => {}
            }
        }
    }
    total
}
