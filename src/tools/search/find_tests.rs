//! Tests of the find_files tool through its public `Tool` API, on real temporary trees.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;

use serde_json::{Value, json};

use super::FindFilesTool;
use super::grep_tests::Workspace;
use crate::{Tool, ToolError};
use tern_protocol::{ToolDetails, ToolOutput};

async fn find(ws: &Workspace, args: Value) -> Result<ToolOutput, ToolError> {
    FindFilesTool.execute(args, &ws.ctx).await
}

async fn text(ws: &Workspace, args: Value) -> String {
    let out = find(ws, args).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    out.text
}

fn tree() -> Workspace {
    let ws = Workspace::new();
    for path in [
        "Cargo.toml",
        "src/main.rs",
        "src/lib.rs",
        "src/tools/user_service.rs",
        "src/user/service_impl.rs",
    ] {
        ws.write(path, "x\n");
    }
    ws.write("docs/guide.md", "x\n");
    ws
}

#[tokio::test]
async fn glob_without_slash_matches_names_at_any_depth() {
    let ws = tree();
    let out = find(&ws, json!({"glob": "*.rs"})).await.unwrap();
    assert_eq!(
        out.text,
        "src/lib.rs\nsrc/main.rs\nsrc/tools/user_service.rs\nsrc/user/service_impl.rs\n(4 files)"
    );
    assert_eq!(
        out.details,
        ToolDetails::Search {
            matches: 4,
            files: 4,
            skipped_binary: 0,
            truncated: false
        }
    );
    assert_eq!(text(&ws, json!({"glob": "Cargo.toml"})).await, "Cargo.toml\n(1 file)");
}

#[tokio::test]
async fn glob_with_slash_is_relative_to_path() {
    let ws = tree();
    assert_eq!(
        text(&ws, json!({"glob": "src/*/*.rs"})).await,
        "src/tools/user_service.rs\nsrc/user/service_impl.rs\n(2 files)"
    );
    assert_eq!(
        text(&ws, json!({"path": "src", "glob": "tools/*.rs"})).await,
        "src/tools/user_service.rs\n(1 file)"
    );
    let none = text(&ws, json!({"glob": "tools/*.rs"})).await;
    assert!(
        none.starts_with("No files matching glob 'tools/*.rs' under ."),
        "{none}"
    );
    assert!(none.contains("\"**/name\""), "{none}");
}

#[tokio::test]
async fn query_matches_words_case_insensitively_best_first() {
    let ws = tree();
    let out = text(&ws, json!({"query": "User SERVICE"})).await;
    assert_eq!(out, "src/tools/user_service.rs\nsrc/user/service_impl.rs\n(2 files)");
    let by_path = text(&ws, json!({"query": "service", "sort": "path"})).await;
    assert_eq!(
        by_path,
        "src/tools/user_service.rs\nsrc/user/service_impl.rs\n(2 files)"
    );
    let with_glob = text(&ws, json!({"query": "main", "glob": "*.rs"})).await;
    assert_eq!(with_glob, "src/main.rs\n(1 file)");
    let unicode = Workspace::new();
    unicode.write("Ünïcode/Straße.txt", "x");
    assert_eq!(
        text(&unicode, json!({"query": "üNÏ"})).await,
        "Ünïcode/Straße.txt\n(1 file)"
    );
}

#[tokio::test]
async fn directories_end_with_a_slash() {
    let ws = tree();
    assert_eq!(
        text(&ws, json!({"type": "dir"})).await,
        "docs/\nsrc/\nsrc/tools/\nsrc/user/\n(4 directories)"
    );
    assert_eq!(
        text(&ws, json!({"type": "dir", "glob": "user"})).await,
        "src/user/\n(1 directory)"
    );
}

#[tokio::test]
async fn sort_by_modified_is_newest_first() {
    let ws = Workspace::new();
    for (name, age) in [("a.txt", 300), ("b.txt", 100), ("c.txt", 200)] {
        ws.write(name, "x");
        ws.age(name, age);
    }
    assert_eq!(
        text(&ws, json!({"sort": "modified"})).await,
        "b.txt\nc.txt\na.txt\n(3 files)"
    );
}

#[tokio::test]
async fn pagination() {
    let ws = Workspace::new();
    for i in 0..7 {
        ws.write(format!("f{i}.txt"), "x");
    }
    let out = find(&ws, json!({"head_limit": 3, "offset": 3})).await.unwrap();
    assert_eq!(
        out.text,
        "f3.txt\nf4.txt\nf5.txt\n(Showing 4-6 of 7 files. Use offset=6 to see more.)"
    );
    assert!(matches!(out.details, ToolDetails::Search { truncated: true, .. }));
    let err = find(&ws, json!({"offset": 7})).await.unwrap_err().to_string();
    assert!(
        err.contains("offset 7 is past the end: there are only 7 files"),
        "{err}"
    );
}

#[tokio::test]
async fn gitignore_and_git_dir_are_respected() {
    let ws = Workspace::new();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("target/debug/app.rs", "x");
    ws.write("run.log", "x");
    ws.write(".git/HEAD", "x");
    ws.write("keep.rs", "x");
    assert_eq!(text(&ws, json!({})).await, ".gitignore\nkeep.rs\n(2 files)");
    let none = text(&ws, json!({"glob": "*.log"})).await;
    assert!(none.contains(".gitignored paths and .git are not listed"), "{none}");
}

#[tokio::test]
async fn refusals_and_errors() {
    let ws = tree();
    let file = find(&ws, json!({"path": "Cargo.toml"})).await.unwrap_err().to_string();
    assert!(file.contains("path 'Cargo.toml' is a file, not a directory"), "{file}");
    let outside = find(&ws, json!({"path": "/etc"})).await.unwrap_err();
    assert!(matches!(outside, ToolError::Path(_)), "{outside}");
    let missing = find(&ws, json!({"path": "nope"})).await.unwrap_err().to_string();
    assert!(missing.contains("path 'nope' does not exist"), "{missing}");
    let bad_glob = find(&ws, json!({"glob": "src/[a"})).await.unwrap_err().to_string();
    assert!(bad_glob.contains("invalid glob 'src/[a'"), "{bad_glob}");
    ws.ctx.cancel.cancel();
    assert!(matches!(find(&ws, json!({})).await, Err(ToolError::Cancelled)));
}

#[tokio::test]
async fn symlinks_listed_as_their_targets_and_loops_do_not_hang() {
    let ws = Workspace::new();
    ws.write("real/a.txt", "x");
    symlink(ws.path("real/a.txt"), ws.path("link.txt")).unwrap();
    symlink(ws.path("real"), ws.path("real/loop")).unwrap();
    symlink("..", ws.path("real/up")).unwrap();
    symlink(ws.path("dangling-self"), ws.path("dangling-self")).unwrap();
    assert_eq!(text(&ws, json!({})).await, "link.txt\nreal/a.txt\n(2 files)");
    assert_eq!(
        text(&ws, json!({"type": "dir"})).await,
        "real/\nreal/loop/\nreal/up/\n(3 directories)"
    );
}

#[tokio::test]
async fn non_utf8_names_are_found() {
    let ws = Workspace::new();
    ws.write(OsStr::from_bytes(b"caf\xe9.txt"), "x");
    assert_eq!(text(&ws, json!({"glob": "*.txt"})).await, "caf\u{fffd}.txt\n(1 file)");
    assert_eq!(text(&ws, json!({"query": "caf"})).await, "caf\u{fffd}.txt\n(1 file)");
}
