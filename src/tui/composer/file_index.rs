//! The `@` file index: a gitignore-aware walk of the workspace (the `ignore` crate: `.gitignore`, `.ignore`, git's
//! excludes, even outside a git repository; hidden files kept, `.git` skipped, symlinks not followed), run ONCE, lazily,
//! in a background thread the first time the composer needs it, capped at [`MAX_PATHS`] entries. The same thread then
//! answers fuzzy queries, so neither walking nor scoring ever runs on the UI thread: the composer sends the query
//! text, and the thread replies with the best [`MAX_RESULTS`] matches and pokes `notify` so the app redraws. Queries
//! that pile up while it is busy are collapsed to the newest. The index is not refreshed: files created later are not
//! offered until the next session.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use tokio::sync::mpsc::UnboundedSender;

use super::fuzzy::fuzzy_match;

/// At most this many paths (files and directories) are indexed, so a session started in `$HOME` stays cheap.
pub(crate) const MAX_PATHS: usize = 50_000;
/// How many matches a reply carries (what the popup shows).
pub(crate) const MAX_RESULTS: usize = 8;

/// One offered path: workspace-relative with `/` separators, directories ending in `/`; `positions` are the char
/// indices that matched the query, for highlighting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileMatch {
    pub(crate) path: String,
    pub(crate) positions: Vec<usize>,
}

impl FileMatch {
    pub(crate) fn is_dir(&self) -> bool {
        self.path.ends_with('/')
    }
}

/// The answer to one query.
#[derive(Debug, Clone)]
pub(crate) struct IndexReply {
    pub(crate) query: String,
    pub(crate) matches: Vec<FileMatch>,
    /// True when the walk stopped at [`MAX_PATHS`].
    pub(crate) truncated: bool,
}

/// The handle the composer holds. Dropping it stops the thread (between entries of the walk, or at the next query).
pub(crate) struct FileIndex {
    queries: mpsc::Sender<String>,
    replies: mpsc::Receiver<IndexReply>,
    stop: Arc<AtomicBool>,
    error: Option<String>,
}

impl FileIndex {
    /// Starts the walk of `root` in a new thread and returns at once.
    pub(crate) fn start(root: PathBuf, notify: UnboundedSender<()>) -> Self {
        let (queries, query_rx) = mpsc::channel::<String>();
        let (reply_tx, replies) = mpsc::channel::<IndexReply>();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let spawned = std::thread::Builder::new()
            .name("tern-file-index".into())
            .spawn(move || serve(&root, &thread_stop, &query_rx, &reply_tx, &notify));
        let error = spawned
            .err()
            .map(|e| format!("could not start the file index thread: {e}"));
        Self {
            queries,
            replies,
            stop,
            error,
        }
    }

    /// Asks for the best matches of `query`; the reply arrives later through [`FileIndex::latest`].
    pub(crate) fn query(&self, query: &str) {
        // A send fails only when the thread is gone (it could not start); `error` says so.
        let _ = self.queries.send(query.to_string());
    }

    /// The newest reply that arrived since the last call, if any (older ones are dropped).
    pub(crate) fn latest(&self) -> Option<IndexReply> {
        let mut last = None;
        while let Ok(reply) = self.replies.try_recv() {
            last = Some(reply);
        }
        last
    }

    /// Why the index is unavailable, if it is.
    pub(crate) fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

impl Drop for FileIndex {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(
    root: &Path,
    stop: &AtomicBool,
    queries: &mpsc::Receiver<String>,
    replies: &mpsc::Sender<IndexReply>,
    notify: &UnboundedSender<()>,
) {
    let (paths, truncated) = walk(root, stop);
    tracing::debug!(root = %root.display(), paths = paths.len(), truncated, "file index built");
    // The previous query and the indices it matched: a query that extends it can only match a subset of those.
    let mut last: Option<(String, Vec<u32>)> = None;
    while let Ok(mut query) = queries.recv() {
        while let Ok(newer) = queries.try_recv() {
            query = newer;
        }
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let within = match &last {
            Some((prev, matched)) if !prev.is_empty() && query.starts_with(prev.as_str()) => Some(matched.as_slice()),
            _ => None,
        };
        let (matches, matched) = search(&paths, &query, within);
        last = Some((query.clone(), matched));
        let reply = IndexReply {
            query,
            matches,
            truncated,
        };
        if replies.send(reply).is_err() {
            return;
        }
        // The app may have stopped listening (shutting down); the reply is still there to drain.
        let _ = notify.send(());
    }
}

/// Walks `root`, returning workspace-relative paths in name order and whether the cap cut the walk short.
fn walk(root: &Path, stop: &AtomicBool) -> (Vec<String>, bool) {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git");
    let mut paths = Vec::new();
    for entry in builder.build() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                tracing::debug!(%err, "file index: entry skipped");
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let mut parts = Vec::new();
        for component in rel.components() {
            // Paths that are not UTF-8 cannot be typed into the composer; they are left out.
            let Some(part) = component.as_os_str().to_str() else {
                parts.clear();
                break;
            };
            parts.push(part);
        }
        if parts.is_empty() {
            continue;
        }
        let mut path = parts.join("/");
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            path.push('/');
        }
        if paths.len() >= MAX_PATHS {
            return (paths, true);
        }
        paths.push(path);
    }
    (paths, false)
}

/// Ranks `paths` (or only the indices in `within`) against `query`; returns the best [`MAX_RESULTS`] and every index
/// that matched. An empty query offers the shallowest paths first.
pub(crate) fn search(paths: &[String], query: &str, within: Option<&[u32]>) -> (Vec<FileMatch>, Vec<u32>) {
    // Sort key (ascending): negated score, depth, length; ties go by name.
    type Key = (i64, usize, usize);
    let mut best: Vec<(Key, usize, Vec<usize>)> = Vec::with_capacity(MAX_RESULTS + 1);
    let mut matched = Vec::new();
    let empty = query.trim().is_empty();
    let mut consider = |i: usize| {
        let path = &paths[i];
        let Some(m) = fuzzy_match(query, path) else {
            return;
        };
        matched.push(i as u32);
        // The empty query lists by depth, then by name; a real query prefers shorter paths among equal scores.
        let key: Key = if empty {
            (0, path.trim_end_matches('/').matches('/').count(), 0)
        } else {
            (-m.score, 0, path.len())
        };
        let at = best.partition_point(|(k, j, _)| (*k, paths[*j].as_str()) <= (key, path.as_str()));
        if at < MAX_RESULTS {
            best.insert(at, (key, i, m.positions));
            best.truncate(MAX_RESULTS);
        }
    };
    match within {
        Some(indices) => indices.iter().for_each(|&i| consider(i as usize)),
        None => (0..paths.len()).for_each(&mut consider),
    }
    let matches = best
        .into_iter()
        .map(|(_, i, positions)| FileMatch {
            path: paths[i].clone(),
            positions,
        })
        .collect();
    (matches, matched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn search_ranks_and_narrows() {
        let all = paths(&[
            "README.md",
            "src/",
            "src/main.rs",
            "src/tui/",
            "src/tui/composer.rs",
            "tests/main_test.rs",
        ]);
        let (top, matched) = search(&all, "main", None);
        assert_eq!(top[0].path, "src/main.rs");
        assert_eq!(top.len(), 2);
        // Narrowing from the previous match set gives the same answer as a full search.
        let (narrow, _) = search(&all, "mainr", Some(&matched));
        let (full, _) = search(&all, "mainr", None);
        assert_eq!(narrow, full);
        // The empty query offers the shallowest paths first.
        let (top, _) = search(&all, "", None);
        let shown: Vec<&str> = top.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(&shown[..2], ["README.md", "src/"]);
    }

    #[test]
    fn walks_respecting_gitignore_in_background() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(root.join("debug.log"), "").unwrap();
        std::fs::write(root.join("target/debug/app"), "").unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let index = FileIndex::start(root.to_path_buf(), tx);
        assert!(index.error().is_none());
        index.query("");
        let deadline = Instant::now() + Duration::from_secs(20);
        let reply = loop {
            if rx.try_recv().is_ok()
                && let Some(reply) = index.latest()
            {
                break reply;
            }
            assert!(Instant::now() < deadline, "the index never answered");
            std::thread::sleep(Duration::from_millis(5));
        };
        let shown: Vec<&str> = reply.matches.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(shown, [".gitignore", "src/", "src/lib.rs"]);
        assert!(!reply.truncated);
    }
}
