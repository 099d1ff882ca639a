//! tern's own search paths without relative entries. A `PATH` entry such as `.`, `bin` or an empty one (which means
//! the current directory) makes `Command::new("git")` find a program the project planted in the workspace, and run it
//! outside the sandbox with the user's full access: the checkpoints' git, the clipboard program, a stdio MCP server's
//! `npx`. An `LD_LIBRARY_PATH` entry like that loads the project's libraries into those programs. So at start-up,
//! before any thread or child, tern keeps only the absolute entries of both, and its children (which inherit them)
//! find what an allowlist rule names, not a file of the same name in the workspace.
//!
//! Must not: add entries, or change the order of those kept.

use std::ffi::{OsStr, OsString};

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
