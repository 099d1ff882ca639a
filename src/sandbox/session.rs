//! What a sandbox keeps for the length of a session: its holder process (`holder`), its private temp directory and the
//! git repositories found under each workspace.
//!
//! The private temp directory, `<temp>/tern-sandbox-<uid>/<pid>-<random>/`, holds `tmp/` (mounted over `/tmp`,
//! `/var/tmp` and `$TMPDIR` inside the sandbox) and `shm/` (over `/dev/shm`), kept between the session's commands and
//! removed when the session's last policy is dropped. Each holds a `lock` file, locked (`flock`) for the session's
//! life: a directory whose lock can be taken belongs to a session that crashed, and is collected when the next
//! session starts. Commands never see the session directory itself, only its `tmp/` and `shm/`.
//!
//! This module must not decide what a command may do: it only keeps state.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rustix::fs::FlockOperation;

use super::git_repos::RepoScan;

/// A session's state, shared by every clone of its `SandboxPolicy`.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// Ends before the private temp goes (it has it mounted).
    pub(crate) holder: Mutex<super::holder::HolderSlot>,
    temp: OnceLock<Result<PrivateTemp, String>>,
    repos: Mutex<HashMap<PathBuf, RepoScan>>,
}

impl SessionState {
    /// The session's private temp directory, made on first use.
    pub(crate) fn private_temp(&self) -> io::Result<&Path> {
        match self
            .temp
            .get_or_init(|| PrivateTemp::create().map_err(|e| e.to_string()))
        {
            Ok(temp) => Ok(&temp.dir),
            Err(e) => Err(io::Error::other(format!(
                "cannot make the sandbox's private temp directory: {e}"
            ))),
        }
    }

    /// Runs `f` on the scan of `workspace`, walking it first if this session has not yet.
    pub(crate) fn with_repos<T>(&self, workspace: &Path, f: impl FnOnce(&mut RepoScan) -> T) -> T {
        let mut repos = self.repos.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let scan = repos
            .entry(workspace.to_path_buf())
            .or_insert_with(|| RepoScan::walk(workspace));
        f(scan)
    }
}

/// A private temp directory, removed on drop.
#[derive(Debug)]
struct PrivateTemp {
    dir: PathBuf,
    /// Holds the `flock` that marks the session alive.
    _lock: File,
}

impl PrivateTemp {
    fn create() -> io::Result<Self> {
        let base = base_dir()?;
        collect_stale(&base);
        let dir = base.join(format!("{}-{:08x}", std::process::id(), fastrand::u32(..)));
        fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let lock = File::create(dir.join("lock"))?;
        rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
        for sub in ["tmp", "shm"] {
            fs::DirBuilder::new().mode(0o700).create(dir.join(sub))?;
        }
        Ok(Self { dir, _lock: lock })
    }
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        remove(&self.dir);
    }
}

/// `<temp>/tern-sandbox-<uid>`, made private to the user; refused when someone else owns it or it is a symlink
/// (another user on a shared `/tmp` could otherwise read or plant files in it).
fn base_dir() -> io::Result<PathBuf> {
    let temp = std::env::temp_dir();
    let temp = fs::canonicalize(&temp).unwrap_or(temp);
    let uid = rustix::process::getuid().as_raw();
    let base = temp.join(format!("tern-sandbox-{uid}"));
    match fs::DirBuilder::new().mode(0o700).create(&base) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = fs::symlink_metadata(&base)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a private directory of this user",
            base.display()
        )));
    }
    Ok(base)
}

/// How old a session directory must be before it may be collected.
const STARTING: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes the directories of sessions that ended without cleaning up (their lock is free).
fn collect_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let dir = entry.path();
        // A session directory is made a moment before its lock is taken: a young one may be starting now.
        let young = fs::symlink_metadata(&dir)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age < STARTING);
        let Ok(lock) = File::open(dir.join("lock")) else {
            continue;
        };
        if young {
            continue;
        }
        if rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok() {
            remove(&dir);
        }
    }
}

/// Removes `dir` and everything in it, first making writable any directory a command made unwritable.
fn remove(dir: &Path) {
    if fs::remove_dir_all(dir).is_ok() {
        return;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let _ = fs::set_permissions(&d, fs::Permissions::from_mode(0o700));
        for entry in fs::read_dir(&d).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|k| k.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    let _ = fs::remove_dir_all(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_temp_lives_as_long_as_the_session_and_stale_ones_are_collected() {
        let state = SessionState::default();
        let dir = state.private_temp().unwrap().to_path_buf();
        assert!(dir.join("tmp").is_dir() && dir.join("shm").is_dir());
        // A crashed session's directory: nobody holds its lock.
        let stale = dir.parent().unwrap().join("1-deadbeef");
        fs::create_dir_all(stale.join("tmp/locked")).unwrap();
        File::create(stale.join("lock")).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        File::open(&stale).unwrap().set_modified(old).unwrap();
        fs::set_permissions(stale.join("tmp/locked"), fs::Permissions::from_mode(0o500)).unwrap();
        let other = SessionState::default();
        let other_dir = other.private_temp().unwrap().to_path_buf();
        assert!(!stale.exists());
        assert!(dir.exists(), "a live session's directory is kept");
        drop(state);
        assert!(!dir.exists());
        drop(other);
        assert!(!other_dir.exists());
    }
}
