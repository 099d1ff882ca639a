//! What diagnostics add to an edit on a warm language server: the time from an edit's write to its diagnostics (what
//! the call pipeline waits after the tool ran), with a real pyright run in the OS sandbox (the built `tern-sandbox` as
//! launcher), the edits alternating between a type error and its fix. Prints median and p90 (goal: under 300 ms).
//! Needs pyright (`bash .ci/install-language-servers`). Run with `cargo bench --bench lsp`; `TERN_BENCH_RUNS` sets the
//! number of edits (default 30).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tern::lsp::{LspSettings, Servers};
use tern::sandbox::SandboxPolicy;

fn main() {
    let runs: usize = std::env::var("TERN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let pyright =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/language-servers/node_modules/.bin/pyright-langserver");
    assert!(
        pyright.is_file(),
        "pyright is not installed: bash .ci/install-language-servers"
    );
    assert!(
        tern::sandbox::probe().is_available(),
        "the sandbox is not available here"
    );
    let work = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(work.path()).unwrap();
    let file = root.join("app.py");
    let settings = LspSettings {
        deadline: Duration::from_secs(60),
        commands: [(
            "python".to_string(),
            vec![pyright.display().to_string(), "--stdio".into()],
        )]
        .into(),
    };
    let servers = Servers::new(
        settings,
        SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox")),
        root.clone(),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let edit = |k: usize| {
        let text = if k.is_multiple_of(2) {
            "count: int = 'many'\n"
        } else {
            "count: int = 3\n"
        };
        std::fs::write(&file, text).unwrap();
        vec![(file.clone(), "app.py".to_string(), text.to_string())]
    };
    let mut took = Vec::with_capacity(runs);
    runtime.block_on(async {
        let cold = Instant::now();
        let first = servers.after_edit(edit(0)).await.unwrap();
        assert_eq!(first.files.len(), 1, "{}", first.text);
        println!("first edit (server starting): {}", ms(cold.elapsed()));
        for k in 1..=runs {
            let start = Instant::now();
            let report = servers.after_edit(edit(k)).await.unwrap();
            took.push(start.elapsed());
            assert_eq!(
                report.files[0].1.errors,
                usize::from(k.is_multiple_of(2)),
                "{}",
                report.text
            );
        }
    });
    took.sort();
    let at = |p: usize| took[(took.len() * p / 100).min(took.len() - 1)];
    println!("diagnostics after an edit on a warm server, {runs} edits:");
    println!("  median {}  p90 {}  (goal: under 300 ms)", ms(at(50)), ms(at(90)));
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
