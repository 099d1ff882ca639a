//! The client against a real pyright (installed by `.ci/install-language-servers`), run directly: the sandboxed launch
//! is the end-to-end suite's (`tests/e2e/lsp.rs`), which has tern's launcher binary.

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::report::Severity;

fn pyright() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/language-servers/node_modules/.bin/pyright-langserver");
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipped: pyright is not installed (run .ci/install-language-servers)");
        None
    }
}

#[tokio::test]
async fn pyright_reports_a_type_error_then_its_fix() {
    let Some(program) = pyright() else { return };
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let file = root.join("a.py");
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("--stdio").current_dir(&root);
    let server = Server::start("pyright-langserver", cmd, &root).unwrap();
    let deadline = || tokio::time::Instant::now() + Duration::from_secs(60);

    let pending = server.sync(&file, "python", "x: int = 'text'\n".into());
    let Waited::Diagnostics(found) = server.wait(&pending, deadline()).await else {
        panic!("no diagnostics: {:?}", server.failure());
    };
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].severity, found[0].line, found[0].column),
        (Severity::Error, 1, 10)
    );
    assert!(
        found[0].message.contains("\"Literal['text']\" is not assignable"),
        "{}",
        found[0].message
    );

    let pending = server.sync(&file, "python", "x: int = 1\n".into());
    let Waited::Diagnostics(found) = server.wait(&pending, deadline()).await else {
        panic!("no diagnostics for the fix");
    };
    assert!(found.is_empty(), "{found:?}");
}

#[tokio::test]
async fn a_server_that_exits_is_reported_failed() {
    let root = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", "echo broken >&2; exit 3"]);
    let server = Server::start("sh", cmd, root.path()).unwrap();
    let pending = server.sync(&root.path().join("a.py"), "python", String::new());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    match server.wait(&pending, deadline).await {
        Waited::Failed(why) => assert!(why.contains("status 3") && why.contains("broken"), "{why}"),
        _ => panic!("not reported failed"),
    }
}
