//! The `find_files` tool: paths under a directory that match a glob and/or a text query, found with ignore's
//! parallel walker (so .gitignore is respected and .git skipped), sorted and paged.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::walk::{self, PathGlob};
use super::{CappedText, Page, count_of, limit_arg, path_arg, str_arg, thousands, uint_arg};
use crate::{Effects, effects};
use crate::{PathPolicy, Tool, ToolContext, ToolError};
use tern_fs::WalkCheck;
use tern_protocol::{ToolDetails, ToolKind, ToolOutput};

const DEFAULT_LIMIT: usize = 200;
const MAX_LIMIT: usize = 1000;

pub(crate) struct FindFilesTool;

const DESCRIPTION: &str = "Find files (or directories) by name or path. Use this instead of find, ls -R, fd or \
tree through exec: it respects .gitignore, skips .git, and pages its results. glob matches the path relative to \
`path`: without '/' it matches the file name at any depth (\"*.rs\", \"*test*\", \"Cargo.toml\"); with '/' the \
whole relative path (\"src/**/*.ts\"). query is case-insensitive text that must appear in the relative path (each \
word, in any order: \"user service\" finds src/user_service.rs). With a query, results come best match first; \
otherwise sorted by path, or by modification time (newest first) with sort=modified. Returns workspace-relative \
paths, directories ending in '/'. To search file contents, use grep.";

#[async_trait]
impl Tool for FindFilesTool {
    fn name(&self) -> &str {
        "find_files"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Glob)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn effects(&self, args: &Value) -> Effects {
        Effects::reads(effects::text(args, "path"))
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string",
                    "description": "Directory to search under, relative to the workspace. Default: the workspace."},
                "glob": {"type": "string",
                    "description": "Glob on the path relative to `path`. Without '/' it matches the name at any depth \
                                    (\"*.py\", \"*.{ts,tsx}\"); with '/' the whole relative path \
                                    (\"src/**/mod.rs\"). A leading ! excludes."},
                "query": {"type": "string",
                    "description": "Case-insensitive text to look for in the relative path; several words must all \
                                    appear."},
                "type": {"type": "string", "enum": ["file", "dir"],
                    "description": "Find files (default) or directories."},
                "sort": {"type": "string", "enum": ["path", "modified"],
                    "description": "path, or modified (newest first). Default: best match first with a query, \
                                    else path."},
                "head_limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                    "description": "At most this many results. Default 200."},
                "offset": {"type": "integer", "minimum": 0,
                    "description": "Skip this many results first, to page. Default 0."}
            },
            "required": [],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let args = FindArgs::parse(&args)?;
        let root = ctx.policy.resolve_read(&args.path)?;
        let policy = ctx.policy.clone();
        let cancel = ctx.cancel.clone();
        super::run_blocking(move || find(&args, &root, &policy, &cancel)).await
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Relevance,
    Path,
    Modified,
}

struct FindArgs {
    path: String,
    glob: Option<String>,
    /// Lower-cased words of the query.
    terms: Vec<String>,
    dirs: bool,
    sort: Sort,
    limit: usize,
    offset: usize,
}

impl FindArgs {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let dirs = match str_arg(args, "type").unwrap_or("file") {
            "file" | "f" | "" => false,
            "dir" | "d" | "directory" => true,
            other => return Err(ToolError::Invalid(format!("type '{other}' is not one of file, dir"))),
        };
        let terms: Vec<String> = str_arg(args, "query")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let sort = match str_arg(args, "sort") {
            None | Some("") if terms.is_empty() => Sort::Path,
            None | Some("") => Sort::Relevance,
            Some("path") => Sort::Path,
            Some("modified") => Sort::Modified,
            Some(other) => {
                return Err(ToolError::Invalid(format!(
                    "sort '{other}' is not one of path, modified"
                )));
            }
        };
        Ok(Self {
            path: path_arg(args),
            glob: str_arg(args, "glob")
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(String::from),
            terms,
            dirs,
            sort,
            limit: limit_arg(args, DEFAULT_LIMIT, MAX_LIMIT),
            offset: uint_arg(args, "offset").map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        })
    }

    fn unit(&self) -> &'static str {
        if self.dirs { "directories" } else { "files" }
    }

    fn unit_singular(&self) -> &'static str {
        if self.dirs { "directory" } else { "file" }
    }
}

/// One path found.
struct Found {
    path: PathBuf,
    modified: Option<SystemTime>,
    ino: Option<u64>,
}

/// What the walker threads share: the filter, and where they put what they found.
struct Filter<'s> {
    root: &'s Path,
    glob: Option<&'s PathGlob>,
    terms: &'s [String],
    dirs: bool,
    want_mtime: bool,
    cancel: &'s CancellationToken,
    found: &'s Mutex<(Vec<Found>, u64)>,
}

impl Filter<'_> {
    fn keeps(&self, entry: &DirEntry) -> bool {
        if entry.depth() == 0 {
            return false;
        }
        let Some(kind) = entry.file_type() else {
            return false;
        };
        let right_kind = if kind.is_symlink() {
            // A link is listed as what it points to; following it only for this check never enters a loop.
            std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir() == self.dirs && (m.is_dir() || m.is_file()))
        } else if self.dirs {
            kind.is_dir()
        } else {
            kind.is_file()
        };
        if !right_kind {
            return false;
        }
        let relative = entry.path().strip_prefix(self.root).unwrap_or(entry.path());
        if self.glob.is_some_and(|g| !g.keeps(relative)) {
            return false;
        }
        self.terms
            .iter()
            .all(|t| contains_ignore_case(relative.as_os_str().as_bytes(), t))
    }
}

/// Case-insensitive substring test on a path, without allocating for the usual ASCII query.
fn contains_ignore_case(haystack: &[u8], needle_lower: &str) -> bool {
    let needle = needle_lower.as_bytes();
    if needle.is_ascii() {
        return needle.is_empty() || haystack.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle));
    }
    String::from_utf8_lossy(haystack).to_lowercase().contains(needle_lower)
}

struct Visitors<'s>(&'s Filter<'s>);

impl<'s> ParallelVisitorBuilder<'s> for Visitors<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            filter: self.0,
            found: Vec::new(),
            unreadable: 0,
        })
    }
}

/// One walker thread; merges what it found when the walk ends (Drop).
struct Visitor<'s> {
    filter: &'s Filter<'s>,
    found: Vec<Found>,
    unreadable: u64,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.filter.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        match entry {
            Ok(entry) if self.filter.keeps(&entry) => {
                let modified = if self.filter.want_mtime {
                    entry.metadata().ok().and_then(|m| m.modified().ok())
                } else {
                    None
                };
                self.found.push(Found {
                    ino: entry.ino(),
                    path: entry.into_path(),
                    modified,
                });
            }
            Ok(_) => {}
            Err(_) => self.unreadable += 1,
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut shared = walk::lock(self.filter.found);
        shared.0.append(&mut self.found);
        shared.1 += self.unreadable;
    }
}

/// Finds the paths under `root` that `args` asks for; the page of them it asks to see, with notes on what was left
/// out.
fn find(
    args: &FindArgs,
    root: &Path,
    policy: &PathPolicy,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    check_root(args, root)?;
    let glob = args
        .glob
        .as_deref()
        .map(PathGlob::new)
        .transpose()
        .map_err(ToolError::Invalid)?;
    let (mut found, unreadable) = search(args, root, glob.as_ref(), policy, cancel)?;
    sort(&mut found, args, root);
    let shown_root = policy.display(root);
    if found.is_empty() {
        return Ok(nothing_found(args, glob.as_ref(), &shown_root, unreadable));
    }
    let page = Page::new(found.len(), args.offset, args.limit, args.unit())?;
    let (out, shown, changed) = page_lines(&found[page.start..page.end], args.dirs, policy);
    let mut text = out.text;
    let footer = page
        .summary(shown, args.unit())
        .unwrap_or_else(|| count_of(page.total as u64, args.unit_singular(), args.unit()));
    text.push_str(&format!("({footer})\n"));
    if out.cut {
        text.push_str(&format!(
            "(Output stopped at the {}-character limit: page with offset or narrow the search.)\n",
            thousands(super::OUTPUT_CAP as u64)
        ));
    }
    if unreadable > 0 {
        text.push_str(&format!(
            "(Skipped {}.)\n",
            count_of(unreadable, "unreadable path", "unreadable paths")
        ));
    }
    if changed > 0 {
        text.push_str(&format!(
            "(Left out {} that changed or went away while searching: something is changing this tree.)\n",
            count_of(changed, "path", "paths")
        ));
    }
    Ok(
        ToolOutput::text(text.trim_end().to_string()).with_details(ToolDetails::Search {
            matches: found.len() as u64,
            files: found.len() as u64,
            skipped_binary: 0,
            truncated: page.start > 0 || page.start + shown < page.total,
        }),
    )
}

/// An error unless `root` is a directory.
fn check_root(args: &FindArgs, root: &Path) -> Result<(), ToolError> {
    let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::Invalid(format!("path '{}' does not exist", args.path)),
        _ => ToolError::io(&args.path, e),
    })?;
    if !meta.is_dir() {
        return Err(ToolError::Invalid(format!(
            "path '{}' is a file, not a directory: find_files searches under a directory (use read_file to read a \
             file)",
            args.path
        )));
    }
    Ok(())
}

/// Walks `root` in parallel for the paths `args` and `glob` keep; those paths, unsorted, and how many could not be
/// read.
fn search(
    args: &FindArgs,
    root: &Path,
    glob: Option<&PathGlob>,
    policy: &PathPolicy,
    cancel: &CancellationToken,
) -> Result<(Vec<Found>, u64), ToolError> {
    let found = Mutex::new((Vec::new(), 0u64));
    let filter = Filter {
        root,
        glob,
        terms: &args.terms,
        dirs: args.dirs,
        want_mtime: args.sort == Sort::Modified,
        cancel,
        found: &found,
    };
    walk::walker(root, policy.stores())
        .build_parallel()
        .visit(&mut Visitors(&filter));
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    Ok(found.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// The lines of one page of paths (directories ending in `/` when `dirs`), up to the output cap; how many were shown,
/// and how many were left out because they changed or went away.
fn page_lines(page: &[Found], dirs: bool, policy: &PathPolicy) -> (CappedText, usize, u64) {
    let mut out = CappedText::new();
    let mut shown = 0;
    let mut check = WalkCheck::default();
    let mut changed = 0u64;
    for item in page {
        // Shown only if it is really there (the walker reads directories by path; see `WalkCheck`).
        if check.entry(&item.path, item.ino).is_none() {
            changed += 1;
            continue;
        }
        let mut line = policy.display(&item.path);
        if dirs {
            line.push('/');
        }
        if !out.push_line(&line) {
            break;
        }
        shown += 1;
    }
    (out, shown, changed)
}

fn sort(found: &mut [Found], args: &FindArgs, root: &Path) {
    match args.sort {
        Sort::Path => found.sort_unstable_by(|a, b| a.path.cmp(&b.path)),
        Sort::Modified => {
            found.sort_unstable_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.path.cmp(&b.path)));
        }
        // Best first: every word in the file name, then fewer path components, then shorter, then by path.
        Sort::Relevance => found.sort_by_cached_key(|f| {
            let relative = f.path.strip_prefix(root).unwrap_or(&f.path);
            let name = relative.file_name().map(|n| n.as_bytes()).unwrap_or_default();
            let in_name = args.terms.iter().all(|t| contains_ignore_case(name, t));
            (
                !in_name,
                relative.components().count(),
                relative.as_os_str().len(),
                f.path.clone(),
            )
        }),
    }
}

fn nothing_found(args: &FindArgs, glob: Option<&PathGlob>, shown_root: &str, unreadable: u64) -> ToolOutput {
    let mut what = Vec::new();
    if let Some(g) = &args.glob {
        what.push(format!("glob '{g}'"));
    }
    if !args.terms.is_empty() {
        what.push(format!("query '{}'", args.terms.join(" ")));
    }
    let mut text = if what.is_empty() {
        format!("No {} under {shown_root}", args.unit())
    } else {
        format!("No {} matching {} under {shown_root}", args.unit(), what.join(" and "))
    };
    text.push_str("\n(.gitignored paths and .git are not listed.)");
    if unreadable > 0 {
        text.push_str(&format!(
            "\n(Skipped {}.)",
            count_of(unreadable, "unreadable path", "unreadable paths")
        ));
    }
    if glob.is_some_and(PathGlob::is_anchored) {
        text.push_str(&format!(
            "\nHint: a glob containing '/' is matched against the whole path relative to '{shown_root}'; use \
             \"**/name\" to match at any depth."
        ));
    }
    if args.dirs {
        text.push_str("\nHint: type=dir lists directories only; omit it to find files.");
    }
    ToolOutput::text(text).with_details(ToolDetails::Search {
        matches: 0,
        files: 0,
        skipped_binary: 0,
        truncated: false,
    })
}
