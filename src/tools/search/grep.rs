//! The `grep` tool: arguments, the search call, and the text the model reads (paths, `path:line: text` lines or
//! per-file counts, newest files first, paged, with a footer that says what was skipped and how to see more).

use std::path::Path;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::engine::{self, Mode, Outcome, Query};
use super::walk::{PathGlob, file_types};
use super::{CappedText, Page, bool_arg, count_of, limit_arg, path_arg, str_arg, thousands, uint_arg};
use crate::{Effects, effects};
use crate::{PathPolicy, Tool, ToolContext, ToolError};
use tern_protocol::{ToolDetails, ToolKind, ToolOutput};

const DEFAULT_LIMIT: usize = 250;
const MAX_LIMIT: usize = 1000;
const MAX_CONTEXT: u64 = 20;

pub(crate) struct GrepTool;

const DESCRIPTION: &str = "Search file contents with a regular expression, using ripgrep's engine. Use this instead \
of running grep, rg or findstr through exec: it respects .gitignore, skips .git, binary files and files over 2 MB, \
and pages its results. Files that may hold secrets are not searched: .env files and keys only when named as \
`path` (the user is asked), files holding a key tern knows never. output_mode: files_with_matches (default) lists matching files, newest first; content shows \
matching lines as `path:line: text` (context lines as `path-line- text`, groups separated by `--`); count shows \
`path: N`. Narrow with path (a file or directory), glob (\"*.rs\", \"src/**/*.ts\") or type (rust, py, js, ts, go, \
...). The pattern is a Rust regex: escape ( ) [ ] { } . * + ? | \\ to match them literally, or set \
fixed_strings=true. Results are paged with head_limit (default 250) and offset.";

#[async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Grep)
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
        let context = |what: &str| {
            json!({"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT,
                   "description": format!("Content mode: lines of context to show {what} each match (0-20).")})
        };
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1,
                    "description": "Regular expression to search for (Rust regex syntax, as ripgrep), or literal text \
                                    with fixed_strings=true."},
                "path": {"type": "string",
                    "description": "File or directory to search, relative to the workspace. Default: the workspace."},
                "glob": {"type": "string",
                    "description": "Only search files matching this glob. Without '/' it matches the file name at any \
                                    depth (\"*.rs\", \"*.{ts,tsx}\"); with '/' the path relative to `path` \
                                    (\"src/**/*.py\"). A leading ! excludes (\"!*.min.js\")."},
                "type": {"type": "string",
                    "description": "Only search files of this ripgrep type: rust, py, js, ts, go, java, c, cpp, md, \
                                    json, yaml, toml, ... Several: \"rust,toml\"."},
                "case_insensitive": {"type": "boolean", "description": "Ignore case. Default false."},
                "fixed_strings": {"type": "boolean",
                    "description": "Treat pattern as literal text, not a regex. Default false."},
                "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"],
                    "description": "files_with_matches (default): matching file paths, newest first. content: \
                                    matching lines with line numbers. count: matching lines per file."},
                "context_before": context("before"),
                "context_after": context("after"),
                "context": context("before and after"),
                "multiline": {"type": "boolean",
                    "description": "Let the pattern span lines ('.' also matches newlines). Default false."},
                "head_limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                    "description": "At most this many entries (files, or lines in content mode). Default 250."},
                "offset": {"type": "integer", "minimum": 0,
                    "description": "Skip this many entries first, to page through results. Default 0."}
            },
            "required": ["pattern"],
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
        let args = GrepArgs::parse(&args)?;
        let root = ctx.policy.resolve_read(&args.path)?;
        let policy = ctx.policy.clone();
        let cancel = ctx.cancel.clone();
        super::run_blocking(move || grep(&args, &root, &policy, &cancel)).await
    }
}

struct GrepArgs {
    pattern: String,
    path: String,
    glob: Option<String>,
    types: Option<String>,
    case_insensitive: bool,
    fixed_strings: bool,
    mode: Mode,
    before: usize,
    after: usize,
    multiline: bool,
    limit: usize,
    offset: usize,
}

impl GrepArgs {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let pattern = str_arg(args, "pattern").unwrap_or_default();
        if pattern.is_empty() {
            return Err(ToolError::Invalid(
                "pattern is empty: give the text or regex to search for".into(),
            ));
        }
        let mode = match str_arg(args, "output_mode").unwrap_or("files_with_matches") {
            "files_with_matches" => Mode::Files,
            "content" => Mode::Content,
            "count" => Mode::Count,
            other => {
                return Err(ToolError::Invalid(format!(
                    "output_mode '{other}' is not one of files_with_matches, content, count"
                )));
            }
        };
        let context = |key: &str| uint_arg(args, key).map(|n| n.min(MAX_CONTEXT) as usize);
        let both = context("context").unwrap_or(0);
        let non_empty = |key: &str| {
            str_arg(args, key)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        Ok(Self {
            pattern: pattern.to_string(),
            path: path_arg(args),
            glob: non_empty("glob"),
            types: non_empty("type"),
            case_insensitive: bool_arg(args, "case_insensitive"),
            fixed_strings: bool_arg(args, "fixed_strings"),
            mode,
            before: context("context_before").unwrap_or(both),
            after: context("context_after").unwrap_or(both),
            multiline: bool_arg(args, "multiline"),
            limit: limit_arg(args, DEFAULT_LIMIT, MAX_LIMIT),
            offset: uint_arg(args, "offset").map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        })
    }

    /// The pattern as the model wrote it, marked as regex or literal.
    fn shown_pattern(&self) -> String {
        if self.fixed_strings {
            format!("\"{}\"", self.pattern)
        } else {
            format!("/{}/", self.pattern)
        }
    }
}

fn grep(
    args: &GrepArgs,
    root: &Path,
    policy: &PathPolicy,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::Invalid(format!("path '{}' does not exist", args.path)),
        _ => ToolError::io(&args.path, e),
    })?;
    let matcher = engine::build_matcher(&args.pattern, args.case_insensitive, args.fixed_strings, args.multiline)
        .map_err(|e| invalid_regex(args, &e.to_string()))?;
    let query = Query {
        matcher,
        mode: args.mode,
        before: args.before,
        after: args.after,
        multiline: args.multiline,
        glob: args
            .glob
            .as_deref()
            .map(PathGlob::new)
            .transpose()
            .map_err(ToolError::Invalid)?,
        types: args
            .types
            .as_deref()
            .map(file_types)
            .transpose()
            .map_err(ToolError::Invalid)?,
        skip: policy.stores().to_vec(),
    };
    if !meta.is_dir() {
        refuse_key_holder(root, &args.path)?;
    }
    let mut outcome = if meta.is_dir() {
        engine::search_tree(root, &query, cancel)
    } else {
        engine::search_single(root, &query, cancel)
    };
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    // Newest first: what was just edited is most likely what the model is after. Path breaks ties deterministically.
    outcome
        .hits
        .sort_unstable_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.path.cmp(&b.path)));
    let shown_root = policy.display(root);
    if outcome.hits.is_empty() {
        return Ok(no_matches(args, &query, &outcome, &shown_root, meta.is_dir()));
    }
    let rendered = match args.mode {
        Mode::Files => render_files(args, &outcome, policy)?,
        Mode::Count => render_counts(args, &outcome, policy)?,
        Mode::Content => render_content(args, &query, &mut outcome, policy, cancel)?,
    };
    let matches = outcome.hits.iter().map(|h| h.matches).sum();
    let mut text = rendered.text;
    if let Some(note) = skipped_note(&outcome) {
        text.push_str(&note);
        text.push('\n');
    }
    Ok(
        ToolOutput::text(text.trim_end().to_string()).with_details(ToolDetails::Search {
            matches,
            files: outcome.hits.len() as u64,
            skipped_binary: outcome.totals.binary,
            truncated: rendered.truncated,
        }),
    )
}

struct Rendered {
    text: String,
    truncated: bool,
}

/// Text for a page: the lines, then a footer with the totals (`whole`) and where the page sits.
fn finish(out: CappedText, page: &Page, shown: usize, unit: &str, whole: &str) -> Rendered {
    let mut text = out.text;
    let truncated = page.start > 0 || page.start + shown < page.total;
    let footer = match page.summary(shown, unit) {
        None => format!("({whole})"),
        Some(summary) if whole.is_empty() => format!("({summary})"),
        Some(summary) => format!("({whole}. {summary})"),
    };
    text.push_str(&footer);
    text.push('\n');
    if out.cut {
        text.push_str(&format!(
            "(Output stopped at the {}-character limit: page with offset or narrow the search.)\n",
            thousands(super::OUTPUT_CAP as u64)
        ));
    }
    Rendered { text, truncated }
}

fn render_files(args: &GrepArgs, outcome: &Outcome, policy: &PathPolicy) -> Result<Rendered, ToolError> {
    let page = Page::new(outcome.hits.len(), args.offset, args.limit, "matching files")?;
    let mut out = CappedText::new();
    let mut shown = 0;
    for hit in &outcome.hits[page.start..page.end] {
        if !out.push_line(&policy.display(&hit.path)) {
            break;
        }
        shown += 1;
    }
    // When paged, the summary already gives the total.
    let whole = if page.start == 0 && shown == page.total {
        count_of(page.total as u64, "matching file", "matching files")
    } else {
        String::new()
    };
    Ok(finish(out, &page, shown, "matching files", &whole))
}

fn render_counts(args: &GrepArgs, outcome: &Outcome, policy: &PathPolicy) -> Result<Rendered, ToolError> {
    let page = Page::new(outcome.hits.len(), args.offset, args.limit, "files")?;
    let mut out = CappedText::new();
    let mut shown = 0;
    for hit in &outcome.hits[page.start..page.end] {
        if !out.push_line(&format!("{}: {}", policy.display(&hit.path), hit.matches)) {
            break;
        }
        shown += 1;
    }
    Ok(finish(out, &page, shown, "files", &match_totals(outcome)))
}

/// "57 matching lines in 3 files".
fn match_totals(outcome: &Outcome) -> String {
    let matches: u64 = outcome.hits.iter().map(|h| h.matches).sum();
    format!(
        "{} in {}",
        count_of(matches, "matching line", "matching lines"),
        count_of(outcome.hits.len() as u64, "file", "files")
    )
}

/// Content mode pages over the output lines (matches and context) of all files in order; with context, `--`
/// separates groups that are not adjacent.
fn render_content(
    args: &GrepArgs,
    query: &Query,
    outcome: &mut Outcome,
    policy: &PathPolicy,
    cancel: &CancellationToken,
) -> Result<Rendered, ToolError> {
    let total_lines: u64 = outcome.hits.iter().map(|h| h.line_count).sum();
    let page = Page::new(
        usize::try_from(total_lines).unwrap_or(usize::MAX),
        args.offset,
        args.limit,
        "lines",
    )?;
    let with_context = args.before > 0 || args.after > 0;
    let mut out = CappedText::new();
    let mut shown = 0;
    // Index in the whole sequence of output lines of the current file's first line.
    let mut base = 0usize;
    let mut previous: Option<(usize, u64)> = None;
    'files: for (index, hit) in outcome.hits.iter_mut().enumerate() {
        let count = usize::try_from(hit.line_count).unwrap_or(usize::MAX);
        if base >= page.end {
            break;
        }
        if base.saturating_add(count) <= page.start {
            base = base.saturating_add(count);
            continue;
        }
        let lines = match hit.lines.take() {
            Some(lines) => lines,
            None => engine::reload_lines(&hit.path, query, cancel),
        };
        let path = policy.display(&hit.path);
        for (at, line) in (base..).zip(lines.iter().take(count)) {
            if at < page.start {
                continue;
            }
            if at >= page.end {
                break 'files;
            }
            let adjacent = previous.is_some_and(|(i, n)| i == index && n + 1 == line.number);
            if with_context && previous.is_some() && !adjacent && !out.push_line("--") {
                break 'files;
            }
            let sep = if line.is_match { ':' } else { '-' };
            let gap = if line.text.is_empty() { "" } else { " " };
            if !out.push_line(&format!("{path}{sep}{}{sep}{gap}{}", line.number, line.text)) {
                break 'files;
            }
            previous = Some((index, line.number));
            shown += 1;
        }
        base = base.saturating_add(count);
    }
    Ok(finish(out, &page, shown, "lines", &match_totals(outcome)))
}

/// `(Skipped: 3 binary files, 1 file over 2 MB.)`, or nothing when nothing was skipped.
/// A search of one file that holds a known key is refused whole, whatever the pattern: an answer that depended on the
/// pattern would give the key away a piece at a time.
fn refuse_key_holder(file: &Path, shown: &str) -> Result<(), ToolError> {
    let holds = std::fs::File::open(file).and_then(|f| tern_secrets::holds_key(&f));
    match holds {
        Ok(false) => Ok(()),
        Ok(true) => Err(ToolError::Invalid(format!(
            "'{shown}' holds a key tern knows (an API key or another secret it was given); it is never searched or \
             shown, whole or in part"
        ))),
        Err(e) => Err(ToolError::io(shown, e)),
    }
}

fn skipped_note(outcome: &Outcome) -> Option<String> {
    let t = &outcome.totals;
    let mut parts = Vec::new();
    if t.binary > 0 {
        parts.push(count_of(t.binary, "binary file", "binary files"));
    }
    if t.too_large > 0 {
        parts.push(format!("{} over 2 MB", count_of(t.too_large, "file", "files")));
    }
    if t.unreadable > 0 {
        parts.push(count_of(t.unreadable, "unreadable path", "unreadable paths"));
    }
    if t.secret > 0 {
        parts.push(format!(
            "{} that may hold secrets (.env, keys; grep one by its path to ask the user)",
            count_of(t.secret, "file", "files")
        ));
    }
    (!parts.is_empty()).then(|| format!("(Skipped: {}.)", parts.join(", ")))
}

fn no_matches(args: &GrepArgs, query: &Query, outcome: &Outcome, shown_root: &str, is_dir: bool) -> ToolOutput {
    let mut text = format!("No matches for {} in {shown_root}", args.shown_pattern());
    let mut filters = Vec::new();
    if let Some(glob) = &args.glob {
        filters.push(format!("glob '{glob}'"));
    }
    if let Some(types) = &args.types {
        filters.push(format!("type {types}"));
    }
    if is_dir && !filters.is_empty() {
        text.push_str(&format!(" ({})", filters.join(", ")));
    }
    text.push('\n');
    if is_dir {
        let searched = count_of(outcome.totals.searched, "file", "files");
        text.push_str(&format!(
            "(Searched {searched}; .gitignored files and .git are not searched.)\n"
        ));
    }
    if let Some(note) = skipped_note(outcome) {
        text.push_str(&note);
        text.push('\n');
    }
    if is_dir && outcome.totals.searched == 0 && !filters.is_empty() {
        text.push_str("Hint: no file passed the glob/type filter; loosen it.\n");
    }
    if query.glob.as_ref().is_some_and(PathGlob::is_anchored) {
        text.push_str(&format!(
            "Hint: a glob containing '/' is matched against paths relative to '{shown_root}'.\n"
        ));
    }
    if !args.fixed_strings
        && args
            .pattern
            .contains(['(', ')', '[', ']', '{', '}', '*', '+', '?', '|', '^', '$', '\\'])
    {
        text.push_str(
            "Hint: the pattern is a regex, where ( ) [ ] { } * + ? | ^ $ \\ are special. To search for the text as \
             written, set fixed_strings=true.\n",
        );
    }
    if !args.case_insensitive && args.pattern.chars().any(char::is_uppercase) {
        text.push_str("Hint: the search is case-sensitive; set case_insensitive=true to ignore case.\n");
    }
    ToolOutput::text(text.trim_end().to_string()).with_details(ToolDetails::Search {
        matches: 0,
        files: 0,
        skipped_binary: outcome.totals.binary,
        truncated: false,
    })
}

fn invalid_regex(args: &GrepArgs, error: &str) -> ToolError {
    let mut msg = format!("invalid regex {}: {error}", args.shown_pattern());
    if error.contains("\\n") && !args.multiline {
        msg.push_str("\nHint: to match across lines set multiline=true.");
    }
    msg.push_str("\nHint: to search for the text literally, set fixed_strings=true.");
    ToolError::Invalid(msg)
}
