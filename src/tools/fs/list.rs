//! list_dir: what a directory holds, optionally recursively, honouring .gitignore and leaving out the folders that are
//! never worth a model's attention (version control, dependencies, caches).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use ignore::WalkBuilder;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{bool_arg, int_arg, opt_str_arg, run_blocking};
use crate::{Effects, effects};
use crate::{Tool, ToolContext, ToolError};
use tern_fs::{Dir, WalkCheck};
use tern_protocol::{ToolDetails, ToolKind, ToolOutput};

const DEFAULT_MAX_ENTRIES: u64 = 200;
const MAX_MAX_ENTRIES: u64 = 2000;
/// Past the entries shown, how many more are counted before the listing just says "at least".
const COUNT_LIMIT: u64 = 100_000;
/// Directories never listed, wherever they are and whatever .gitignore says.
const ALWAYS_SKIPPED: &[&str] = &[
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
    ".cache",
];

pub(super) struct ListDirTool;

#[async_trait]
impl Tool for ListDirTool {
    fn name(&self) -> &str {
        "list_dir"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Ls)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn effects(&self, args: &Value) -> Effects {
        Effects::reads(effects::text(args, "path"))
    }

    fn description(&self) -> &str {
        "List the files and directories in a directory (directories end with `/`), sorted by name. Set recursive to \
         list the whole tree below it. Entries ignored by .gitignore are left out, and so are .git, node_modules, \
         __pycache__, virtualenvs and cache folders. Prefer this over ls/find in a shell; to find files by name or \
         pattern across the tree use find_files."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The directory to list, relative to the workspace root or absolute (default: \
                                    the workspace root)."
                },
                "recursive": {
                    "type": "boolean",
                    "description": "List everything below the directory, not just its direct entries (default false)."
                },
                "max_entries": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_MAX_ENTRIES,
                    "description": "Maximum number of entries to return (default 200, at most 2000)."
                }
            },
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // An empty path means the default, the workspace root, as an absent one does.
        let path = opt_str_arg(&args, "path")?
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(".");
        let recursive = bool_arg(&args, "recursive", false)?;
        let max = int_arg(&args, "max_entries", DEFAULT_MAX_ENTRIES, 1, MAX_MAX_ENTRIES)?;
        let resolved = ctx.policy.resolve_read(path)?;
        let display = ctx.policy.display(&resolved);
        let cancel = ctx.cancel.clone();
        run_blocking(move || list(&resolved, &display, recursive, max, &cancel)).await
    }
}

/// Lists `dir` (shown as `display`): its entries, up to `max`, and notes on what was left out.
fn list(
    dir: &Path,
    display: &str,
    recursive: bool,
    max: u64,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    check_dir(dir, display)?;
    let skipped = Arc::new(Mutex::new(BTreeSet::new()));
    let walker = walker(dir, recursive, Arc::clone(&skipped));
    let listing = walk(walker, dir, max, cancel)?;
    let skipped = skipped.lock().map(|s| s.clone()).unwrap_or_default();
    Ok(report(listing, display, &skipped))
}

/// An error unless `dir` is a directory.
fn check_dir(dir: &Path, display: &str) -> Result<(), ToolError> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ToolError::Invalid(format!("Directory not found: '{display}'.")))
        }
        Err(e) => Err(ToolError::io(display, e)),
        Ok(meta) if !meta.is_dir() => Err(ToolError::Invalid(format!(
            "'{display}' is a file, not a directory. Use read_file to read it."
        ))),
        Ok(_) => Ok(()),
    }
}

/// The walk over `dir` (its direct entries unless `recursive`), sorted by name, honouring ignore files and leaving
/// out the `ALWAYS_SKIPPED` directories, whose names it adds to `skipped`.
fn walker(dir: &Path, recursive: bool, skipped: Arc<Mutex<BTreeSet<String>>>) -> ignore::Walk {
    WalkBuilder::new(dir)
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        // .gitignore applies even where the workspace is not (yet) a git repository.
        .require_git(false)
        .follow_links(false)
        .max_depth(if recursive { None } else { Some(1) })
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            let name = entry.file_name().to_string_lossy();
            let skip = entry.depth() > 0
                && entry.file_type().is_some_and(|t| t.is_dir())
                && ALWAYS_SKIPPED.contains(&name.as_ref());
            if skip && let Ok(mut set) = skipped.lock() {
                set.insert(name.into_owned());
            }
            !skip
        })
        .build()
}

/// What a walk found.
struct Listing {
    /// The entries shown, one line each.
    lines: Vec<String>,
    /// How many entries were counted, shown or not.
    total: u64,
    /// Whether the count stopped at `COUNT_LIMIT` past the entries shown.
    complete: bool,
    /// How many entries could not be read.
    errors: u64,
    /// What the first of those errors said.
    first_error: Option<String>,
    /// How many entries changed or went away while listing.
    changed: u64,
}

/// Runs `walker` over `dir`: describes the first `max` entries and counts the rest, up to `COUNT_LIMIT` more.
fn walk(walker: ignore::Walk, dir: &Path, max: u64, cancel: &CancellationToken) -> Result<Listing, ToolError> {
    let mut listing = Listing {
        lines: Vec::new(),
        total: 0,
        complete: true,
        errors: 0,
        first_error: None,
        changed: 0,
    };
    let mut check = WalkCheck::default();
    for item in walker {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let entry = match item {
            Ok(entry) => entry,
            Err(e) => {
                listing.errors += 1;
                listing.first_error.get_or_insert_with(|| error_text(dir, &e));
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if listing.total < max {
            // Shown only if it is really there (the walker reads directories by path; see `WalkCheck`).
            match check.entry(entry.path(), entry.ino()) {
                Some((parent, meta)) => listing.lines.push(describe(dir, entry.path(), &meta, parent)),
                None => {
                    listing.changed += 1;
                    continue;
                }
            }
        }
        listing.total += 1;
        if listing.total >= max + COUNT_LIMIT {
            listing.complete = false;
            break;
        }
    }
    Ok(listing)
}

/// The tool's output: the listing's lines, then notes on what was not shown (`skipped` directories among them).
fn report(listing: Listing, display: &str, skipped: &BTreeSet<String>) -> ToolOutput {
    let Listing {
        lines,
        total,
        complete,
        errors,
        first_error,
        changed,
    } = listing;
    let shown = lines.len() as u64;
    let mut out = if shown == 0 {
        format!("(Directory {display} has no entries to show.)")
    } else {
        lines.join("\n")
    };
    let mut notes = Vec::new();
    if total > shown {
        let of = if complete {
            format!("{total}")
        } else {
            format!("at least {total}")
        };
        notes.push(format!(
            "(Showing {shown} of {of} entries. Raise max_entries (up to {MAX_MAX_ENTRIES}) or list a subdirectory \
             to see more.)"
        ));
    }
    if !skipped.is_empty() {
        let names: Vec<String> = skipped.iter().map(|n| format!("{n}/")).collect();
        notes.push(format!("(Not listed: {}.)", names.join(", ")));
    }
    if changed > 0 {
        notes.push(format!(
            "({changed} entries changed or went away while listing and were left out: something is changing this \
             directory)"
        ));
    }
    if let Some(first) = first_error {
        notes.push(format!("({errors} entries could not be read; first: {first})"));
    }
    if !notes.is_empty() {
        out.push_str("\n\n");
        out.push_str(&notes.join("\n"));
    }
    ToolOutput::text(out).with_details(ToolDetails::List {
        entries: shown,
        truncated: total > shown,
    })
}

/// What a walker error says in the listing. Its path is named only if it is really in the listed tree (not a name the
/// walker read through a directory swapped for a symlink), and the message is the system's, never text from an ignore
/// file the walker read.
fn error_text(dir: &Path, error: &ignore::Error) -> String {
    // The io error's own text may name the path (walkdir's does), so only its kind is kept.
    let reason = error.io_error().map_or_else(
        || "an ignore file's rules could not be read".to_string(),
        |e| match e.raw_os_error() {
            Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
            None => e.kind().to_string(),
        },
    );
    let mut inner = error;
    let path = loop {
        match inner {
            ignore::Error::WithPath { path, .. } => break Some(path),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => inner = err,
            _ => break None,
        }
    };
    match path {
        Some(path) if tern_fs::metadata(path).is_ok() => {
            format!("{}: {reason}", path.strip_prefix(dir).unwrap_or(path).display())
        }
        _ => reason,
    }
}

/// One line of the listing: the path relative to the listed directory, `/` after directories, and where a symlink
/// points (read in the directory checked to hold it).
fn describe(dir: &Path, path: &Path, meta: &std::fs::Metadata, parent: &Dir) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    let mut line = rel.to_string_lossy().into_owned();
    let is_link = meta.file_type().is_symlink();
    if meta.is_dir() || (is_link && path.is_dir()) {
        line.push('/');
    }
    if is_link {
        let name = path.file_name().unwrap_or_default();
        let target = parent.read_link(name).unwrap_or_else(|_| PathBuf::from("?"));
        let _ = write!(line, " -> {}", target.to_string_lossy());
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::testing::{Workspace, workspace};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;

    async fn ls(ws: &Workspace, args: Value) -> ToolOutput {
        ws.run(&ListDirTool, args).await.unwrap()
    }

    fn tree(ws: &Workspace) {
        ws.write("src/main.rs", "");
        ws.write("src/tools/fs.rs", "");
        ws.write("README.md", "");
        ws.write(".env", "");
        ws.write(".github/ci.yml", "");
        ws.write(".git/HEAD", "");
        ws.write("node_modules/x/index.js", "");
        ws.write("src/__pycache__/m.pyc", "");
        ws.write("target/debug/tern", "");
        ws.write("app.log", "");
        ws.write(".gitignore", "target/\n*.log\n");
    }

    #[tokio::test]
    async fn lists_sorted_with_dotfiles_and_skips_noise() {
        let ws = workspace();
        tree(&ws);
        let out = ls(&ws, json!({})).await;
        assert_eq!(
            out.text,
            ".env\n.github/\n.gitignore\nREADME.md\nsrc/\n\n(Not listed: .git/, node_modules/.)"
        );
        assert_eq!(
            out.details,
            ToolDetails::List {
                entries: 5,
                truncated: false
            }
        );
        // An empty path is the workspace root too.
        assert_eq!(ls(&ws, json!({"path": ""})).await.text, out.text);
    }

    #[tokio::test]
    async fn recursive_lists_the_tree_in_order() {
        let ws = workspace();
        tree(&ws);
        let out = ls(&ws, json!({"path": ".", "recursive": true})).await;
        let expected = ".env\n.github/\n.github/ci.yml\n.gitignore\nREADME.md\nsrc/\nsrc/main.rs\nsrc/tools/\n\
                        src/tools/fs.rs\n\n(Not listed: .git/, __pycache__/, node_modules/.)";
        assert_eq!(out.text, expected);
        let out = ls(&ws, json!({"path": "src", "recursive": true})).await;
        assert!(out.text.starts_with("main.rs\ntools/\ntools/fs.rs"), "{}", out.text);
    }

    #[tokio::test]
    async fn truncation_says_how_many_more() {
        let ws = workspace();
        for i in 0..10 {
            ws.write(&format!("f{i}.txt"), "");
        }
        let out = ls(&ws, json!({"max_entries": 3})).await;
        assert_eq!(
            out.text,
            "f0.txt\nf1.txt\nf2.txt\n\n(Showing 3 of 10 entries. Raise max_entries (up to 2000) or list a \
             subdirectory to see more.)"
        );
        assert_eq!(
            out.details,
            ToolDetails::List {
                entries: 3,
                truncated: true
            }
        );
    }

    #[tokio::test]
    async fn odd_names_links_and_empty_dirs() {
        let ws = workspace();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(ws.root.join(name), "").unwrap();
        ws.write("real/x", "");
        symlink("real", ws.path("alias")).unwrap();
        symlink("missing", ws.path("broken")).unwrap();
        let out = ls(&ws, json!({})).await;
        assert_eq!(out.text, "alias/ -> real\nbroken -> missing\ncaf\u{FFFD}.txt\nreal/");
        std::fs::create_dir(ws.path("void")).unwrap();
        assert_eq!(
            ls(&ws, json!({"path": "void"})).await.text,
            "(Directory void has no entries to show.)"
        );
    }

    #[tokio::test]
    async fn refuses_files_missing_dirs_and_outside_paths() {
        let ws = workspace();
        ws.write("f.txt", "");
        let err = ws.fail(&ListDirTool, json!({"path": "f.txt"})).await;
        assert!(err.contains("is a file") && err.contains("read_file"), "{err}");
        let err = ws.fail(&ListDirTool, json!({"path": "nope"})).await;
        assert!(err.contains("Directory not found: 'nope'"), "{err}");
        assert!(
            ws.fail(&ListDirTool, json!({"path": ".."}))
                .await
                .contains("outside the workspace")
        );
        let abs = ws.tmp.path().to_str().unwrap().to_string();
        assert!(
            ws.fail(&ListDirTool, json!({"path": abs}))
                .await
                .contains("outside the workspace")
        );
        symlink(ws.tmp.path(), ws.path("up")).unwrap();
        assert!(
            ws.fail(&ListDirTool, json!({"path": "up"}))
                .await
                .contains("outside the workspace")
        );
    }
}
