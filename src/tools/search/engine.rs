//! The grep engine: builds the matcher, walks the tree in parallel and searches each file with a per-thread reusable
//! searcher, collecting what matched per file. It knows nothing about output wording; grep.rs formats the results.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::SystemTime;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::types::Types;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use super::walk::{self, PathGlob};

/// Files larger than this are skipped (and counted) in directory searches: generated bundles, data dumps, logs.
pub(super) const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// A matched line longer than this is cut to a window around the match; a context line to its start.
pub(super) const MAX_LINE_BYTES: usize = 500;
/// Text kept in memory for content mode. Past it, files keep only their counts and the page re-reads the few it shows.
const LINE_BUDGET_BYTES: isize = 64 * 1024 * 1024;
/// Largest buffer the searcher may grow to (one enormous line, or a whole file in multiline mode).
const HEAP_LIMIT: usize = 256 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Files,
    Content,
    Count,
}

/// What to search for and how.
pub(super) struct Query {
    pub matcher: RegexMatcher,
    pub mode: Mode,
    pub before: usize,
    pub after: usize,
    pub multiline: bool,
    pub glob: Option<PathGlob>,
    pub types: Option<Types>,
    /// Directories a tree search does not enter: the credential stores (`PathPolicy::stores`).
    pub skip: Vec<PathBuf>,
}

/// One output line of content mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Line {
    pub number: u64,
    pub is_match: bool,
    pub text: String,
}

/// One file that matched.
#[derive(Debug)]
pub(super) struct FileHits {
    pub path: PathBuf,
    pub modified: Option<SystemTime>,
    /// Matching lines (match groups in multiline mode). In files mode the search stops at the first, so it is 1.
    pub matches: u64,
    /// Content mode: match plus context lines.
    pub line_count: u64,
    /// Content mode: the lines, unless the memory budget ran out (then `reload_lines` reads them again).
    pub lines: Option<Vec<Line>>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Totals {
    pub searched: u64,
    pub binary: u64,
    pub too_large: u64,
    pub unreadable: u64,
    /// Files whose names say they hold secrets (`.env`, `*.pem` ...), left out of tree searches.
    pub secret: u64,
}

impl Totals {
    fn add(&mut self, other: Totals) {
        self.searched += other.searched;
        self.binary += other.binary;
        self.too_large += other.too_large;
        self.unreadable += other.unreadable;
        self.secret += other.secret;
    }
}

#[derive(Debug, Default)]
pub(super) struct Outcome {
    pub hits: Vec<FileHits>,
    pub totals: Totals,
}

/// The matcher for a pattern, configured like ripgrep: `^`/`$` match at line boundaries, and outside multiline mode
/// the regex can never match a newline, which lets the searcher scan whole buffers instead of line by line.
pub(super) fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
    fixed_strings: bool,
    multiline: bool,
) -> Result<RegexMatcher, grep_regex::Error> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(case_insensitive)
        .fixed_strings(fixed_strings)
        .multi_line(true);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern)
}

/// Searches every file under `root` that the ignore rules, `glob` and `types` let through, in parallel.
pub(super) fn search_tree(root: &Path, query: &Query, cancel: &CancellationToken) -> Outcome {
    let shared = Mutex::new(Outcome::default());
    let budget = AtomicIsize::new(LINE_BUDGET_BYTES);
    let mut builder = walk::walker(root, &query.skip);
    if let Some(types) = &query.types {
        builder.types(types.clone());
    }
    let mut visitors = GrepVisitors {
        root,
        query,
        cancel,
        budget: &budget,
        shared: &shared,
    };
    builder.build_parallel().visit(&mut visitors);
    shared.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Searches one file named explicitly: no size cap, and glob and type do not apply (as with ripgrep).
pub(super) fn search_single(path: &Path, query: &Query, cancel: &CancellationToken) -> Outcome {
    let budget = AtomicIsize::new(LINE_BUDGET_BYTES);
    let mut file_searcher = FileSearcher::new(query, cancel, &budget);
    let mut outcome = Outcome::default();
    if let Some(hits) = file_searcher.search(path, false, &mut outcome.totals) {
        outcome.hits.push(hits);
    }
    outcome
}

/// Reads a file's content-mode lines again (its lines were dropped when the memory budget ran out).
pub(super) fn reload_lines(path: &Path, query: &Query, cancel: &CancellationToken) -> Vec<Line> {
    let budget = AtomicIsize::new(isize::MAX);
    let mut totals = Totals::default();
    FileSearcher::new(query, cancel, &budget)
        .search(path, false, &mut totals)
        .and_then(|hits| hits.lines)
        .unwrap_or_default()
}

struct GrepVisitors<'s> {
    root: &'s Path,
    query: &'s Query,
    cancel: &'s CancellationToken,
    budget: &'s AtomicIsize,
    shared: &'s Mutex<Outcome>,
}

impl<'s> ParallelVisitorBuilder<'s> for GrepVisitors<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(GrepVisitor {
            root: self.root,
            query: self.query,
            cancel: self.cancel,
            searcher: FileSearcher::new(self.query, self.cancel, self.budget),
            local: Outcome::default(),
            shared: self.shared,
        })
    }
}

/// One walker thread: searches the files it is handed and keeps results locally until the walk ends (Drop).
struct GrepVisitor<'s> {
    root: &'s Path,
    query: &'s Query,
    cancel: &'s CancellationToken,
    searcher: FileSearcher<'s>,
    local: Outcome,
    shared: &'s Mutex<Outcome>,
}

impl ParallelVisitor for GrepVisitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                self.local.totals.unreadable += 1;
                return WalkState::Continue;
            }
        };
        // Symlinks are not followed, so only real files are searched.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        if let Some(glob) = &self.query.glob {
            let relative = entry.path().strip_prefix(self.root).unwrap_or(entry.path());
            if !glob.keeps(relative) {
                return WalkState::Continue;
            }
        }
        // Read only when the user says yes to a call naming the file (then it is a single-file search).
        if tern_secrets::files::secret_name(entry.path()).is_some() {
            self.local.totals.secret += 1;
            return WalkState::Continue;
        }
        if let Some(hits) = self.searcher.search(entry.path(), true, &mut self.local.totals) {
            self.local.hits.push(hits);
        }
        WalkState::Continue
    }
}

impl Drop for GrepVisitor<'_> {
    fn drop(&mut self) {
        let local = std::mem::take(&mut self.local);
        let mut shared = walk::lock(self.shared);
        shared.totals.add(local.totals);
        shared.hits.extend(local.hits);
    }
}

/// A searcher configured for the query, reused file after file by one thread.
struct FileSearcher<'s> {
    query: &'s Query,
    cancel: &'s CancellationToken,
    budget: &'s AtomicIsize,
    searcher: Searcher,
}

impl<'s> FileSearcher<'s> {
    fn new(query: &'s Query, cancel: &'s CancellationToken, budget: &'s AtomicIsize) -> Self {
        let content = query.mode == Mode::Content;
        let searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\0'))
            .line_number(content)
            .before_context(if content { query.before } else { 0 })
            .after_context(if content { query.after } else { 0 })
            .multi_line(query.multiline)
            .heap_limit(Some(HEAP_LIMIT))
            .build();
        Self {
            query,
            cancel,
            budget,
            searcher,
        }
    }

    /// Searches one file. Binary, oversized (when `cap`) and unreadable files are counted in `totals`, not returned.
    fn search(&mut self, path: &Path, cap: bool, totals: &mut Totals) -> Option<FileHits> {
        // Found by the walk under a checked root: a directory swapped for a symlink since is not followed.
        let Ok(file) = tern_fs::open(path) else {
            totals.unreadable += 1;
            return None;
        };
        let Ok(meta) = file.metadata() else {
            totals.unreadable += 1;
            return None;
        };
        if cap && meta.len() > MAX_FILE_BYTES {
            totals.too_large += 1;
            return None;
        }
        totals.searched += 1;
        let store = self.query.mode == Mode::Content && self.budget.load(Ordering::Relaxed) > 0;
        let mut sink = HitSink {
            mode: self.query.mode,
            matcher: &self.query.matcher,
            cancel: self.cancel,
            store,
            matches: 0,
            line_count: 0,
            lines: Vec::new(),
            stored_bytes: 0,
            binary: false,
        };
        if self
            .searcher
            .search_file(&self.query.matcher, &file, &mut sink)
            .is_err()
        {
            totals.unreadable += 1;
            return None;
        }
        if sink.binary {
            totals.binary += 1;
            return None;
        }
        if sink.matches == 0 {
            return None;
        }
        // A file holding a known key never shows, whole or in part. Only matching files are checked, and one that
        // holds a key is left out without a word: a count or a note would tell the model whether its pattern matched
        // the key (one character at a time). A search of that one file is refused before it runs (grep.rs).
        if tern_secrets::holds_key(&file).unwrap_or(true) {
            return None;
        }
        if store {
            self.budget.fetch_sub(
                isize::try_from(sink.stored_bytes).unwrap_or(isize::MAX),
                Ordering::Relaxed,
            );
        }
        Some(FileHits {
            path: path.to_path_buf(),
            modified: meta.modified().ok(),
            matches: sink.matches,
            line_count: sink.line_count,
            lines: store.then_some(sink.lines),
        })
    }
}

/// Receives one file's matches and context lines from the searcher.
struct HitSink<'a> {
    mode: Mode,
    matcher: &'a RegexMatcher,
    cancel: &'a CancellationToken,
    store: bool,
    matches: u64,
    line_count: u64,
    lines: Vec<Line>,
    stored_bytes: usize,
    binary: bool,
}

impl HitSink<'_> {
    fn push(&mut self, number: u64, is_match: bool, text: String) {
        self.line_count += 1;
        if self.store {
            self.stored_bytes += text.len() + std::mem::size_of::<Line>();
            self.lines.push(Line { number, is_match, text });
        }
    }
}

impl Sink for HitSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        match self.mode {
            // One match is enough to list the file, exactly like `rg -l`.
            Mode::Files => Ok(false),
            Mode::Count => Ok(!self.cancel.is_cancelled()),
            Mode::Content => {
                let first = mat.line_number().unwrap_or(0);
                for (i, line) in (0u64..).zip(mat.lines()) {
                    let text = if self.store {
                        match_text(self.matcher, line)
                    } else {
                        String::new()
                    };
                    self.push(first + i, true, text);
                }
                Ok(!self.cancel.is_cancelled())
            }
        }
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        let text = if self.store {
            context_text(context.bytes())
        } else {
            String::new()
        };
        self.push(context.line_number().unwrap_or(0), false, text);
        Ok(!self.cancel.is_cancelled())
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn trim_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A matched line as text; a long one becomes a window of about `MAX_LINE_BYTES` around its first match.
fn match_text(matcher: &RegexMatcher, line: &[u8]) -> String {
    let line = trim_terminator(line);
    if line.len() <= MAX_LINE_BYTES {
        return String::from_utf8_lossy(line).into_owned();
    }
    let at = matcher.find(line).ok().flatten().map_or(0, |m| m.start());
    let start = floor_char_boundary(line, at.saturating_sub(MAX_LINE_BYTES / 5));
    let end = floor_char_boundary(line, (start + MAX_LINE_BYTES).min(line.len()));
    let mut text = String::new();
    if start > 0 {
        text.push('…');
    }
    text.push_str(&String::from_utf8_lossy(&line[start..end]));
    if end < line.len() {
        text.push('…');
    }
    text.push_str(&format!(" [line of {} bytes cut]", line.len()));
    text
}

/// A context line as text; a long one is cut to its start.
fn context_text(line: &[u8]) -> String {
    let line = trim_terminator(line);
    if line.len() <= MAX_LINE_BYTES {
        return String::from_utf8_lossy(line).into_owned();
    }
    let end = floor_char_boundary(line, MAX_LINE_BYTES);
    format!("{}…", String::from_utf8_lossy(&line[..end]))
}

/// The largest index <= `at` that does not split a UTF-8 sequence (on valid text; any index is fine on garbage).
fn floor_char_boundary(bytes: &[u8], at: usize) -> usize {
    let mut at = at.min(bytes.len());
    while at > 0 && at < bytes.len() && (bytes[at] & 0b1100_0000) == 0b1000_0000 {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_match_line_is_windowed_around_the_match() {
        let matcher = build_matcher("NEEDLE", false, true, false).unwrap();
        let line = format!("{}NEEDLE{}\n", "a".repeat(5000), "b".repeat(5000));
        let text = match_text(&matcher, line.as_bytes());
        assert!(text.starts_with('…') && text.contains("NEEDLE"), "{text}");
        assert!(text.ends_with("[line of 10006 bytes cut]"), "{text}");
        assert!(text.len() < MAX_LINE_BYTES + 60, "{}", text.len());
    }

    #[test]
    fn cuts_never_split_a_character() {
        let line = "é".repeat(600);
        let text = context_text(line.as_bytes());
        assert!(text.ends_with('…'));
        assert!(text.chars().filter(|&c| c == 'é').count() == MAX_LINE_BYTES / 2);
        assert_eq!(trim_terminator(b"x\r\n"), b"x");
    }

    #[test]
    fn matcher_refuses_newline_outside_multiline() {
        assert!(build_matcher("a\\nb", false, false, false).is_err());
        assert!(build_matcher("a\\nb", false, false, true).is_ok());
    }
}
