//! tern's own search paths without relative entries. A `PATH` entry such as `.`, `bin` or an empty one (which means
//! the current directory) makes `Command::new("git")` find a program the project planted in the workspace, and run it
//! outside the sandbox with the user's full access: the checkpoints' git, the clipboard program, a stdio MCP server's
//! `npx`. An `LD_LIBRARY_PATH` entry like that loads the project's libraries into those programs. So at start-up,
//! before any thread or child, tern keeps only the absolute entries of both, and its children (which inherit them)
//! find what an allowlist rule names, not a file of the same name in the workspace.
//!
//! An absolute entry can name a directory commands write, too: direnv's `PATH_add bin` puts the workspace's `bin` in
//! PATH, and a command in the sandbox may write the workspace. So the programs tern starts itself, outside the
//! sandbox (the checkpoints' git, hooks, language and MCP servers, the clipboard program, the shell of a command),
//! are looked up in `own_path`: PATH without the entries inside a directory `guard` was told commands may write; and
//! the library and module search lists they get leave those directories out the same way (`own_env`).
//! Commands themselves keep the whole PATH (what they run is what the prompt showed, in the sandbox).
//!
//! Must not: add entries, or change the order of those kept.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The directories commands may write (the workspaces and writable roots of the sessions started so far).
static GUARDED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Tells that commands may write under `roots`: no program tern starts itself is looked up there from now on.
pub fn guard(roots: &[PathBuf]) {
    let mut guarded = GUARDED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for root in roots {
        let root = resolved(root);
        if !guarded.contains(&root) {
            guarded.push(root);
        }
    }
}

/// The variables that list directories a program looks things up in: programs, libraries, Python and Node modules,
/// headers and pkg-config files. For a program tern starts itself, none may name a directory commands may write.
pub const SEARCH_LISTS: [&str; 7] = [
    "PATH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "NODE_PATH",
    "PKG_CONFIG_PATH",
    "LIBRARY_PATH",
    "CPATH",
];

/// What a program tern starts itself outside the sandbox gets for each of `SEARCH_LISTS` tern has: tern's own value
/// without the entries inside a guarded directory, or `None` (unset) when none is left, since an empty list can
/// mean the current directory. A PATH left empty is `/usr/bin:/bin`.
pub fn own_lists() -> Vec<(&'static str, Option<OsString>)> {
    lists_without(&|name| std::env::var_os(name), &guarded())
}

/// `own_lists` for the environment `env` reads and the directories `guarded`.
fn lists_without(env: &dyn Fn(&str) -> Option<OsString>, guarded: &[PathBuf]) -> Vec<(&'static str, Option<OsString>)> {
    SEARCH_LISTS
        .iter()
        .filter_map(|&name| Some((name, without_guarded(&env(name)?, guarded))))
        .map(|(name, kept)| match (name, kept.is_empty()) {
            (_, false) => (name, Some(kept)),
            ("PATH", true) => (name, Some(OsString::from(FALLBACK_PATH))),
            (_, true) => (name, None),
        })
        .collect()
}

/// `vars` (a child's environment) made fit for a program tern starts itself outside the sandbox: each search list it
/// holds is tern's own without guarded entries, or gone (`own_lists`).
pub fn own_env(vars: &mut std::collections::BTreeMap<OsString, OsString>) {
    for (name, value) in own_lists() {
        match value {
            Some(value) => {
                if let Some(held) = vars.get_mut(OsStr::new(name)) {
                    *held = value;
                }
            }
            None => {
                vars.remove(OsStr::new(name));
            }
        }
    }
}

/// The PATH of a program tern starts itself when nothing of the user's is left.
const FALLBACK_PATH: &str = "/usr/bin:/bin";

fn guarded() -> Vec<PathBuf> {
    GUARDED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// tern's PATH without the entries inside a guarded directory (followed through symlinks, including in a part of it
/// that does not exist yet, which a command could create): where tern looks up the programs it starts itself, and the
/// PATH they get (`/usr/bin:/bin` when none is left).
pub fn own_path() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept = without_guarded(&path, &guarded());
    if kept.is_empty() {
        OsString::from(FALLBACK_PATH)
    } else {
        kept
    }
}

/// `path` without its entries inside any of `guarded` (resolved) and without relative ones.
pub fn without_guarded(path: &OsStr, guarded: &[PathBuf]) -> OsString {
    let kept = std::env::split_paths(path).filter(|entry| {
        entry.is_absolute() && {
            let real = resolved(entry);
            !guarded
                .iter()
                .any(|root| entry.starts_with(root) || real.starts_with(root))
        }
    });
    std::env::join_paths(kept).unwrap_or_default()
}

/// The bash that runs a command outside the sandbox: the one in `own_path`, else `/bin/bash`.
pub fn bash() -> PathBuf {
    find("bash").unwrap_or_else(|| PathBuf::from("/bin/bash"))
}

/// The executable `name` in `own_path`; a name with a slash is taken as it is. `None` when there is none.
pub fn find(name: &str) -> Option<PathBuf> {
    find_in(name, &own_path())
}

/// The executable `name` in the absolute entries of `path`; a name with a slash is taken as it is.
pub fn find_in(name: &str, path: &OsStr) -> Option<PathBuf> {
    let executable = |candidate: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let candidate = PathBuf::from(name);
        return executable(&candidate).then_some(candidate);
    }
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| executable(candidate))
}

/// `path` with its symlinks resolved as far as it exists, the rest (not there yet) joined as written.
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The variables that name directories a program or library is looked up in.
pub const SEARCH_VARS: [&str; 2] = ["PATH", "LD_LIBRARY_PATH"];

/// `value` (a `:`-separated search path) with its relative and empty entries left out; `None` when it has none.
pub fn absolute_only(value: &OsStr) -> Option<OsString> {
    let entries: Vec<_> = std::env::split_paths(value).collect();
    if entries.iter().all(|entry| entry.is_absolute()) {
        return None;
    }
    let kept = entries.into_iter().filter(|entry| entry.is_absolute());
    Some(std::env::join_paths(kept).unwrap_or_default())
}

/// Takes the relative entries out of tern's own `SEARCH_VARS`; returns the names of those it changed.
///
/// # Safety
/// Must be called while the process has a single thread (first thing in `main`): it changes the environment.
pub unsafe fn drop_relative_entries() -> Vec<&'static str> {
    let mut changed = Vec::new();
    for name in SEARCH_VARS {
        let Some(kept) = std::env::var_os(name).and_then(|value| absolute_only(&value)) else {
            continue;
        };
        // SAFETY: single-threaded, per this function's contract.
        unsafe { std::env::set_var(name, kept) };
        changed.push(name);
    }
    changed
}

#[cfg(test)]
mod tests;
