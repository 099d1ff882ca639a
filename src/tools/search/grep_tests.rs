//! Tests of the grep tool through its public `Tool` API, on real temporary trees.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::GrepTool;
use super::engine::{self, Mode, Query};
use crate::{PathPolicy, Tool, ToolContext, ToolError};
use tern_protocol::{ToolDetails, ToolOutput};

pub(super) struct Workspace {
    pub dir: tempfile::TempDir,
    pub ctx: ToolContext,
}

impl Workspace {
    /// A workspace that is a git repository (so .gitignore applies, as with ripgrep).
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".git")).unwrap();
        let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
        Self { dir, ctx }
    }

    pub(crate) fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub(crate) fn write(&self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    /// Sets a file's modification time to `secs` seconds ago.
    pub(crate) fn age(&self, rel: impl AsRef<Path>, secs: u64) {
        let file = fs::File::options().write(true).open(self.path(rel)).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(secs))
            .unwrap();
    }

    async fn grep(&self, args: Value) -> Result<ToolOutput, ToolError> {
        GrepTool.execute(args, &self.ctx).await
    }

    async fn text(&self, args: Value) -> String {
        let out = self.grep(args).await.unwrap();
        assert!(!out.is_error, "{}", out.text);
        out.text
    }
}

fn search_details(out: &ToolOutput) -> (u64, u64, u64, bool) {
    match out.details {
        ToolDetails::Search {
            matches,
            files,
            skipped_binary,
            truncated,
        } => (matches, files, skipped_binary, truncated),
        ref other => panic!("unexpected details {other:?}"),
    }
}

#[tokio::test]
async fn files_with_matches_lists_newest_first() {
    let ws = Workspace::new();
    ws.write("old.rs", "fn needle() {}\n");
    ws.write("src/new.rs", "let x = needle;\n");
    ws.write("src/mid.rs", "needle\n");
    ws.write("other.txt", "nothing here\n");
    ws.age("old.rs", 3000);
    ws.age("src/mid.rs", 2000);
    ws.age("src/new.rs", 1000);
    let out = ws.grep(json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(out.text, "src/new.rs\nsrc/mid.rs\nold.rs\n(3 matching files)");
    assert_eq!(search_details(&out), (3, 3, 0, false));
}

#[tokio::test]
async fn content_mode_shows_lines_context_and_group_breaks() {
    let ws = Workspace::new();
    let body: String = (1..=12)
        .map(|i| {
            if i == 3 || i == 9 {
                format!("hit {i}\n")
            } else {
                format!("l{i}\n")
            }
        })
        .collect();
    ws.write("f.txt", body);
    let text = ws
        .text(json!({"pattern": "hit", "output_mode": "content", "context": 1}))
        .await;
    assert_eq!(
        text,
        "f.txt-2- l2\nf.txt:3: hit 3\nf.txt-4- l4\n--\nf.txt-8- l8\nf.txt:9: hit 9\nf.txt-10- l10\n\
         (2 matching lines in 1 file)"
    );
    let asym = ws
        .text(json!({"pattern": "hit 9", "output_mode": "content", "context_before": 2, "context_after": 0}))
        .await;
    assert!(
        asym.starts_with("f.txt-7- l7\nf.txt-8- l8\nf.txt:9: hit 9\n("),
        "{asym}"
    );
    let plain = ws.text(json!({"pattern": "hit", "output_mode": "content"})).await;
    assert_eq!(plain, "f.txt:3: hit 3\nf.txt:9: hit 9\n(2 matching lines in 1 file)");
}

#[tokio::test]
async fn content_mode_separates_files_and_merges_adjacent_matches() {
    let ws = Workspace::new();
    ws.write("a.txt", "x\nhit\nhit\n\nx\n");
    ws.write("b.txt", "hit\n");
    ws.age("a.txt", 100);
    let text = ws
        .text(json!({"pattern": "hit", "output_mode": "content", "context_after": 1}))
        .await;
    assert_eq!(
        text,
        "b.txt:1: hit\n--\na.txt:2: hit\na.txt:3: hit\na.txt-4-\n(3 matching lines in 2 files)"
    );
}

#[tokio::test]
async fn count_mode_counts_matching_lines() {
    let ws = Workspace::new();
    ws.write("a.rs", "foo foo\nbar\nfoo\n");
    ws.write("b.rs", "foo\n");
    ws.age("a.rs", 100);
    let out = ws
        .grep(json!({"pattern": "foo", "output_mode": "count"}))
        .await
        .unwrap();
    assert_eq!(out.text, "b.rs: 1\na.rs: 2\n(3 matching lines in 2 files)");
    assert_eq!(search_details(&out), (3, 2, 0, false));
}

#[tokio::test]
async fn case_insensitive_and_fixed_strings() {
    let ws = Workspace::new();
    ws.write("a.py", "def Handler(x):\n    return x.get(1)\n");
    assert!(
        ws.text(json!({"pattern": "handler"}))
            .await
            .starts_with("No matches for /handler/ in .")
    );
    assert!(
        ws.text(json!({"pattern": "handler", "case_insensitive": true}))
            .await
            .starts_with("a.py\n")
    );
    let fixed = ws
        .text(json!({"pattern": "x.get(1)", "fixed_strings": true, "output_mode": "content"}))
        .await;
    assert!(fixed.starts_with("a.py:2:     return x.get(1)\n"), "{fixed}");
    // As a regex, "." matches any character, so a literal search must not match "xxget(1)".
    ws.write("b.py", "xxget(1)\n");
    let literal = ws.text(json!({"pattern": "x.get(1)", "fixed_strings": true})).await;
    assert!(!literal.contains("b.py"), "{literal}");
}

#[tokio::test]
async fn invalid_regex_is_an_error_with_a_hint() {
    let ws = Workspace::new();
    ws.write("a.rs", "foo(\n");
    let err = ws.grep(json!({"pattern": "foo("})).await.unwrap_err();
    assert!(matches!(err, ToolError::Invalid(_)));
    let msg = err.to_string();
    assert!(
        msg.contains("invalid regex /foo(/") && msg.contains("unclosed group"),
        "{msg}"
    );
    assert!(msg.contains("fixed_strings=true"), "{msg}");
    let nl = ws.grep(json!({"pattern": "a\\nb"})).await.unwrap_err().to_string();
    assert!(nl.contains("multiline=true"), "{nl}");
}

#[tokio::test]
async fn no_match_message_names_pattern_path_and_hints() {
    let ws = Workspace::new();
    ws.write("src/a.rs", "call(x)\n");
    let text = ws
        .text(json!({"pattern": "Call\\(y", "path": "src", "glob": "*.rs"}))
        .await;
    assert!(
        text.starts_with("No matches for /Call\\(y/ in src (glob '*.rs')\n"),
        "{text}"
    );
    assert!(text.contains("Searched 1 file"), "{text}");
    assert!(text.contains("set fixed_strings=true"), "{text}");
    assert!(text.contains("case_insensitive=true"), "{text}");
    let filtered = ws.text(json!({"pattern": "call", "type": "py"})).await;
    assert!(filtered.contains("no file passed the glob/type filter"), "{filtered}");
}

#[tokio::test]
async fn glob_and_type_filters() {
    let ws = Workspace::new();
    ws.write("src/a.rs", "needle\n");
    ws.write("src/deep/b.rs", "needle\n");
    ws.write("src/c.py", "needle\n");
    ws.write("tests/d.rs", "needle\n");
    let sorted = |text: String| {
        let mut lines: Vec<String> = text.lines().filter(|l| !l.starts_with('(')).map(String::from).collect();
        lines.sort();
        lines
    };
    let any_depth = ws.text(json!({"pattern": "needle", "glob": "*.rs"})).await;
    assert_eq!(sorted(any_depth), ["src/a.rs", "src/deep/b.rs", "tests/d.rs"]);
    let anchored = ws.text(json!({"pattern": "needle", "glob": "src/**/*.rs"})).await;
    assert_eq!(sorted(anchored), ["src/a.rs", "src/deep/b.rs"]);
    let relative_to_path = ws
        .text(json!({"pattern": "needle", "path": "src", "glob": "deep/*.rs"}))
        .await;
    assert_eq!(sorted(relative_to_path), ["src/deep/b.rs"]);
    let excluded = ws.text(json!({"pattern": "needle", "glob": "!*.rs"})).await;
    assert_eq!(sorted(excluded), ["src/c.py"]);
    let py = ws.text(json!({"pattern": "needle", "type": "py"})).await;
    assert_eq!(sorted(py), ["src/c.py"]);
    let rust = ws
        .text(json!({"pattern": "needle", "type": "rust", "path": "tests"}))
        .await;
    assert_eq!(sorted(rust), ["tests/d.rs"]);
    let err = ws
        .grep(json!({"pattern": "needle", "type": "nosuchlang"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown file type 'nosuchlang'"), "{err}");
}

#[tokio::test]
async fn files_pagination() {
    let ws = Workspace::new();
    for i in 0..5 {
        ws.write(format!("f{i}.txt"), "needle\n");
        ws.age(format!("f{i}.txt"), 100 * (i + 1));
    }
    let out = ws
        .grep(json!({"pattern": "needle", "head_limit": 2, "offset": 2}))
        .await
        .unwrap();
    assert_eq!(
        out.text,
        "f2.txt\nf3.txt\n(Showing 3-4 of 5 matching files. Use offset=4 to see more.)"
    );
    assert_eq!(search_details(&out), (5, 5, 0, true));
    let last = ws
        .text(json!({"pattern": "needle", "head_limit": 2, "offset": 4}))
        .await;
    assert_eq!(last, "f4.txt\n(Showing 5-5 of 5 matching files.)");
    let err = ws
        .grep(json!({"pattern": "needle", "offset": 5}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("offset 5 is past the end") && err.contains("only 5 matching files"),
        "{err}"
    );
}

#[tokio::test]
async fn content_and_count_pagination() {
    let ws = Workspace::new();
    ws.write("a.txt", (1..=4).map(|i| format!("hit a{i}\n")).collect::<String>());
    ws.write("b.txt", (1..=4).map(|i| format!("hit b{i}\n")).collect::<String>());
    ws.age("a.txt", 50);
    ws.age("b.txt", 100);
    let text = ws
        .text(json!({"pattern": "hit", "output_mode": "content", "head_limit": 3, "offset": 3}))
        .await;
    assert_eq!(
        text,
        "a.txt:4: hit a4\nb.txt:1: hit b1\nb.txt:2: hit b2\n\
         (8 matching lines in 2 files. Showing 4-6 of 8 lines. Use offset=6 to see more.)"
    );
    let counts = ws
        .text(json!({"pattern": "hit", "output_mode": "count", "head_limit": 1}))
        .await;
    assert_eq!(
        counts,
        "a.txt: 4\n(8 matching lines in 2 files. Showing 1-1 of 2 files. Use offset=1 to see more.)"
    );
}

#[tokio::test]
async fn gitignore_and_git_dir_are_respected() {
    let ws = Workspace::new();
    ws.write(".gitignore", "ignored/\n*.log\n");
    ws.write("ignored/a.txt", "needle\n");
    ws.write("debug.log", "needle\n");
    ws.write(".git/config", "needle\n");
    ws.write("kept.txt", "needle\n");
    ws.write(".github/workflow.yml", "needle\n");
    let text = ws.text(json!({"pattern": "needle"})).await;
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines, ["(2 matching files)", ".github/workflow.yml", "kept.txt"]);
    // Searching an ignored file by name still works, like ripgrep.
    assert!(
        ws.text(json!({"pattern": "needle", "path": "debug.log"}))
            .await
            .starts_with("debug.log\n")
    );
}

#[tokio::test]
async fn binary_files_are_skipped_and_counted() {
    let ws = Workspace::new();
    ws.write("blob.bin", b"needle\0\x01\x02needle\n");
    ws.write("text.txt", "needle\n");
    let out = ws
        .grep(json!({"pattern": "needle", "output_mode": "content"}))
        .await
        .unwrap();
    assert_eq!(
        out.text,
        "text.txt:1: needle\n(1 matching line in 1 file)\n(Skipped: 1 binary file.)"
    );
    assert_eq!(search_details(&out), (1, 1, 1, false));
    let none = ws.grep(json!({"pattern": "zzz"})).await.unwrap();
    assert!(none.text.contains("(Skipped: 1 binary file.)"), "{}", none.text);
    assert_eq!(search_details(&none).2, 1);
}

#[tokio::test]
async fn large_files_are_skipped_in_directory_searches_only() {
    let ws = Workspace::new();
    let mut big = "filler line\n".repeat(200_000);
    big.push_str("needle\n");
    assert!(big.len() as u64 > engine::MAX_FILE_BYTES);
    ws.write("big.txt", &big);
    ws.write("small.txt", "needle\n");
    let text = ws.text(json!({"pattern": "needle"})).await;
    assert_eq!(text, "small.txt\n(1 matching file)\n(Skipped: 1 file over 2 MB.)");
    let single = ws
        .text(json!({"pattern": "needle", "path": "big.txt", "output_mode": "content"}))
        .await;
    assert!(single.starts_with("big.txt:200001: needle\n"), "{single}");
}

#[tokio::test]
async fn single_file_search() {
    let ws = Workspace::new();
    ws.write("src/lib.rs", "fn a() {}\nfn b() {}\n");
    ws.write("src/other.rs", "fn c() {}\n");
    let text = ws
        .text(json!({"pattern": "fn \\w+", "path": "src/lib.rs", "output_mode": "content"}))
        .await;
    assert_eq!(
        text,
        "src/lib.rs:1: fn a() {}\nsrc/lib.rs:2: fn b() {}\n(2 matching lines in 1 file)"
    );
    let missing = ws
        .grep(json!({"pattern": "x", "path": "src/nope.rs"}))
        .await
        .unwrap_err();
    assert!(
        missing.to_string().contains("path 'src/nope.rs' does not exist"),
        "{missing}"
    );
}

#[tokio::test]
async fn non_utf8_names_and_content() {
    let ws = Workspace::new();
    let name = OsStr::from_bytes(b"caf\xe9.txt");
    ws.write(name, b"caf\xe9 needle \xff\n");
    let text = ws.text(json!({"pattern": "needle", "output_mode": "content"})).await;
    assert_eq!(
        text,
        "caf\u{fffd}.txt:1: caf\u{fffd} needle \u{fffd}\n(1 matching line in 1 file)"
    );
}

#[tokio::test]
async fn long_lines_are_cut_around_the_match() {
    let ws = Workspace::new();
    ws.write("min.js", format!("{}NEEDLE{}\n", "a".repeat(3000), "b".repeat(3000)));
    let text = ws.text(json!({"pattern": "NEEDLE", "output_mode": "content"})).await;
    let line = text.lines().next().unwrap();
    assert!(line.starts_with("min.js:1: …") && line.contains("NEEDLE"), "{line}");
    assert!(line.ends_with("[line of 6006 bytes cut]"), "{line}");
    assert!(line.len() < 600, "{}", line.len());
}

#[tokio::test]
async fn output_is_capped() {
    let ws = Workspace::new();
    let line = format!("needle {}\n", "x".repeat(450));
    ws.write("many.txt", line.repeat(1000));
    let out = ws
        .grep(json!({"pattern": "needle", "output_mode": "content", "head_limit": 1000}))
        .await
        .unwrap();
    assert!(out.text.len() <= super::OUTPUT_CAP, "{}", out.text.len());
    assert!(
        out.text.contains("Output stopped at the 128,000-character limit"),
        "{}",
        &out.text[out.text.len() - 300..]
    );
    assert!(out.text.contains("Use offset="));
    assert!(search_details(&out).3);
}

#[tokio::test]
async fn multiline_patterns_span_lines() {
    let ws = Workspace::new();
    ws.write("a.rs", "struct A {\n    x: u8,\n}\n");
    let text = ws
        .text(json!({"pattern": "struct A \\{.*?\\}", "multiline": true, "output_mode": "content"}))
        .await;
    assert_eq!(
        text,
        "a.rs:1: struct A {\na.rs:2:     x: u8,\na.rs:3: }\n(1 matching line in 1 file)"
    );
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let ws = Workspace::new();
    let err = ws.grep(json!({"pattern": "root", "path": "/etc"})).await.unwrap_err();
    assert!(matches!(err, ToolError::Path(_)), "{err}");
    let err = ws.grep(json!({"pattern": "x", "path": "../"})).await.unwrap_err();
    assert!(err.to_string().contains("outside the workspace"), "{err}");
}

#[tokio::test]
async fn cancelled_call_returns_cancelled() {
    let ws = Workspace::new();
    ws.write("a.txt", "needle\n");
    ws.ctx.cancel.cancel();
    assert!(matches!(
        ws.grep(json!({"pattern": "needle"})).await,
        Err(ToolError::Cancelled)
    ));
}

#[tokio::test]
async fn symlink_loops_do_not_hang_or_duplicate() {
    let ws = Workspace::new();
    ws.write("a/file.txt", "needle\n");
    symlink(ws.path("a"), ws.path("a/loop")).unwrap();
    symlink("..", ws.path("a/up")).unwrap();
    symlink(ws.path("self"), ws.path("self")).unwrap();
    let text = ws.text(json!({"pattern": "needle"})).await;
    assert_eq!(text, "a/file.txt\n(1 matching file)");
}

#[test]
fn reloading_lines_gives_what_the_search_kept() {
    let ws = Workspace::new();
    ws.write("f.txt", "a\nhit\nb\nhit\n");
    let query = Query {
        matcher: engine::build_matcher("hit", false, false, false).unwrap(),
        mode: Mode::Content,
        before: 1,
        after: 0,
        multiline: false,
        glob: None,
        types: None,
        skip: Vec::new(),
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let outcome = engine::search_tree(ws.dir.path(), &query, &cancel);
    assert_eq!(outcome.hits.len(), 1);
    let kept = outcome.hits[0].lines.clone().unwrap();
    assert_eq!(kept.len(), 4);
    assert_eq!(engine::reload_lines(&outcome.hits[0].path, &query, &cancel), kept);
}

#[test]
fn walker_stops_when_cancelled() {
    let ws = Workspace::new();
    for i in 0..50 {
        ws.write(format!("d{}/f{i}.txt", i % 5), "hit\n");
    }
    let query = Query {
        matcher: engine::build_matcher("hit", false, false, false).unwrap(),
        mode: Mode::Files,
        before: 0,
        after: 0,
        multiline: false,
        glob: None,
        types: None,
        skip: Vec::new(),
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    assert_eq!(engine::search_tree(ws.dir.path(), &query, &cancel).hits.len(), 50);
    cancel.cancel();
    let outcome = engine::search_tree(ws.dir.path(), &query, &cancel);
    assert!(outcome.hits.is_empty() && outcome.totals.searched == 0, "{outcome:?}");
}
