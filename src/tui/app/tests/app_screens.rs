//! Snapshots of the start screen, the new pane summaries and the "new output below" marker, on the app harness of
//! `app.rs`, at 80x24 and 120x40.

use super::app_mcp::server;
use super::*;
use tern_protocol::mcp::ServerState;

fn with_start_info(h: &mut Harness) {
    h.app.start.context_files = vec!["/work/demo/AGENTS.md".into(), "/work/demo/crates/core/AGENTS.md".into()];
    h.app.start.agents = vec!["reviewer".into(), "test-writer".into()];
    h.event(Event::McpServers {
        servers: vec![
            server(
                "docs",
                ServerState::Ready {
                    tools: 3,
                    resources: 0,
                    prompts: 0,
                },
                false,
            ),
            server("github", ServerState::Connecting, false),
        ],
    });
}

#[test]
fn snapshot_start_screen() {
    let mut h = harness();
    with_start_info(&mut h);
    let small = h.screen(80, 24);
    assert!(small.contains("/work/demo") && small.contains("gpt-4.1") && small.contains("auto-edit"));
    assert!(small.contains("docs ✓ 3 tools") && small.contains("crates/core/AGENTS.md"));
    assert!(small.contains("agents      reviewer, test-writer"), "{small}");
    assert!(small.contains("Ctrl+T history") && small.contains("Ctrl+Q quit"));
    insta::assert_snapshot!("start_80x24", small);
    insta::assert_snapshot!("start_120x40", h.screen(120, 40));
    // The first message replaces it.
    h.event(Event::TurnStarted {
        turn: 1,
        text: "hello".into(),
    });
    assert!(!h.screen(80, 24).contains("Shift+Enter newline"));
}

#[test]
fn snapshot_start_screen_without_a_model() {
    let mut h = harness();
    h.event(Event::SessionStarted {
        provider: String::new(),
        model: String::new(),
        mode: ApprovalMode::Ask,
        workspace: "/work/demo".into(),
        tools: vec![],
    });
    h.app.state.notice("a warning from start-up", Level::Warning);
    let small = h.screen(80, 24);
    assert!(small.contains("tern --demo") && small.contains("a warning from start-up"));
    insta::assert_snapshot!("start_no_model_80x24", small);
    insta::assert_snapshot!("start_no_model_120x40", h.screen(120, 40));
}

fn exec_output(text: &str, code: i32) -> ToolOutput {
    let output = if code == 0 {
        ToolOutput::text(text)
    } else {
        ToolOutput::error(text)
    };
    output.with_details(ToolDetails::Exec {
        exit_code: Some(code),
        duration_ms: 900,
        timed_out: false,
        sandboxed: true,
        new_git_repos: Vec::new(),
        background: None,
    })
}

/// A failed build, a long listing and a patch, finished.
fn summaries() -> Harness {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "build it".into(),
    });
    begin(&mut h, "b", "exec", json!({"command": "cargo build"}));
    end(
        &mut h,
        "b",
        exec_output(
            "STDERR:\n   Compiling calc v0.1.0\nerror[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:3:5\n\
             error: could not compile `calc`\nExit code: 101 (took 0.90s)",
            101,
        ),
    );
    begin(&mut h, "s", "exec", json!({"command": "seq 1 500"}));
    let numbers: String = (1..=500).map(|i| format!("{i}\n")).collect();
    end(
        &mut h,
        "s",
        exec_output(&format!("{numbers}Exit code: 0 (took 0.01s)"), 0),
    );
    begin(
        &mut h,
        "p",
        "apply_patch",
        json!({"edits": [{"path": "src/lib.rs", "old_text": "x", "new_text": "y"}, {"path": "README.md", "action": "add", "new_text": "hi"}]}),
    );
    h
}

#[test]
fn snapshot_panes_with_summaries() {
    let mut h = summaries();
    let small = h.screen(80, 24);
    assert!(small.contains("└ error[E0425]: cannot find value `x`"), "{small}");
    assert!(small.contains("… +496 lines") && !small.contains("STDERR"), "{small}");
    assert!(small.contains("src/lib.rs, README.md (2 files)"), "{small}");
    insta::assert_snapshot!("summaries_80x24", small);
    insta::assert_snapshot!("summaries_120x40", h.screen(120, 40));
}

#[test]
fn snapshot_new_output_below_marker() {
    let mut h = harness();
    for i in 0..30 {
        h.event(Event::TurnStarted {
            turn: i,
            text: format!("message number {i}"),
        });
    }
    let _ = h.screen(80, 24);
    h.press(key(KeyCode::PageUp));
    let scrolled = h.screen(80, 24);
    assert!(!scrolled.contains("new output below"), "nothing new yet:\n{scrolled}");
    h.event(Event::AssistantDelta {
        text: "an answer arriving below".into(),
    });
    let small = h.screen(80, 24);
    assert!(h.app.transcript.new_output_below());
    insta::assert_snapshot!("new_output_below_80x24", small);
    insta::assert_snapshot!("new_output_below_120x40", h.screen(120, 40));
    // Back at the bottom, it goes.
    h.press(key(KeyCode::End));
    assert!(!h.screen(80, 24).contains("new output below"));
    assert!(!h.app.transcript.new_output_below());
}

fn offer(workspace: &std::path::Path, user_config: &std::path::Path) -> crate::host::TrustOffer {
    crate::host::TrustOffer {
        workspace: workspace.to_path_buf(),
        user_config: user_config.to_path_buf(),
        digest: "digest-of-the-project".into(),
        files: vec![".tern/config.toml".into(), ".mcp.json".into()],
        servers: vec![
            ("db".into(), "db-server --port 5432".into()),
            ("docs".into(), "npx -y @acme/docs-mcp --token ${DOCS_TOKEN}".into()),
        ],
        changes: vec![
            "commands run without asking: cargo test, make".into(),
            "its hooks run commands at points of the session".into(),
        ],
    }
}

#[test]
fn snapshot_trust_prompt() {
    let mut h = harness();
    let offer = offer(
        std::path::Path::new("/work/proj"),
        std::path::Path::new("/home/u/.config/tern/config.toml"),
    );
    h.app.layers.push(Box::new(crate::view::trust::TrustLayer::new(
        offer,
        std::sync::Arc::new(crate::testing::TestHost::new(std::path::Path::new("/work/proj"))),
    )));
    let small = h.screen(80, 24);
    assert!(small.contains("Trust this project?") && small.contains("t trust") && small.contains("n not now"));
    assert!(small.contains("npx -y @acme/docs-mcp") && small.contains("cargo test, make"));
    insta::assert_snapshot!("trust_80x24", small);
    insta::assert_snapshot!("trust_120x40", h.screen(120, 40));
}

#[test]
fn trusting_writes_the_user_config_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config/tern/config.toml");
    let mut h = harness();
    let host = std::sync::Arc::new(crate::testing::TestHost::new(dir.path()));
    h.app.layers.push(Box::new(crate::view::trust::TrustLayer::new(
        offer(dir.path(), &user),
        host.clone(),
    )));
    // Other keys wait for the answer.
    h.keys("x");
    assert_eq!(h.app.layers.len(), 1);
    assert!(h.app.switch.is_none());
    h.keys("t");
    assert!(h.app.layers.is_empty());
    assert_eq!(h.app.switch, Some(crate::host::SessionSwitch::Reload));
    // The host writes it where trust is read from (`tern::tui_host` has the test of that).
    assert_eq!(*host.trusted.lock().unwrap(), [offer(dir.path(), &user)]);
}

#[test]
fn not_now_leaves_everything_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config.toml");
    for answer in [key(KeyCode::Char('n')), key(KeyCode::Esc)] {
        let mut h = harness();
        let host = std::sync::Arc::new(crate::testing::TestHost::new(dir.path()));
        h.app.layers.push(Box::new(crate::view::trust::TrustLayer::new(
            offer(dir.path(), &user),
            host.clone(),
        )));
        h.press(answer);
        assert!(h.app.layers.is_empty());
        assert!(h.app.switch.is_none());
        assert!(
            host.trusted.lock().unwrap().is_empty(),
            "nothing is written when not trusted"
        );
        assert!(
            h.app
                .state
                .status
                .flash
                .as_ref()
                .is_some_and(|f| f.text.contains("asked again next start"))
        );
    }
}

#[test]
fn a_long_trust_prompt_scrolls_within_a_small_screen() {
    let mut h = harness();
    let mut offer = offer(
        std::path::Path::new("/work/proj"),
        std::path::Path::new("/home/u/.config/tern/config.toml"),
    );
    offer.servers = (0..30)
        .map(|i| (format!("server{i}"), format!("run-server-{i}")))
        .collect();
    h.app.layers.push(Box::new(crate::view::trust::TrustLayer::new(
        offer,
        std::sync::Arc::new(crate::testing::TestHost::new(std::path::Path::new("/work/proj"))),
    )));
    let first = h.screen(80, 24);
    assert!(first.contains("t trust") && first.contains("↑↓ more"), "{first}");
    assert!(!first.contains("server29"), "{first}");
    for _ in 0..40 {
        h.press(key(KeyCode::Down));
    }
    let last = h.screen(80, 24);
    assert!(last.contains("server29") && last.contains("t trust"), "{last}");
}
