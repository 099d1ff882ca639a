//! A resumed session's "always" rules: what a fresh offer could have been holds again; anything wider, or a place
//! edits may no longer be allowed, is dropped with a warning; deny rules still win.

use std::os::unix::fs::symlink;

use serde_json::json;
use tern_protocol::ApprovalMode;
use tern_session::log::Granted;
use tern_tools::PathPolicy;

use crate::approval::{ApprovalGate, Verdict};

fn command(rule: &str) -> Granted {
    Granted::Command { rule: rule.into() }
}

#[test]
fn command_rules_hold_again_only_as_the_gate_would_offer_them() {
    let ws = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(ws.path()).unwrap();
    let mut gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), Vec::new());
    let granted: Vec<Granted> = [
        "cargo test",
        "git commit",
        "touch",
        "python3 manage.py",
        "web_fetch docs.rs",
        "mcp__github__create_issue",
        // What no offer gives: wider than any rule shown, or not one simple command.
        "cargo",
        "bash",
        "sudo ls",
        "cd",
        "mcp__github",
        "mcp__github__*",
        "git status && rm -rf /",
        "echo $(id)",
        "",
    ]
    .into_iter()
    .map(command)
    .collect();
    let (kept, dropped) = gate.restore(&granted, &policy);
    assert_eq!(
        kept,
        [
            "`cargo test`",
            "`git commit`",
            "`touch`",
            "`python3 manage.py`",
            "`web_fetch docs.rs`",
            "`mcp__github__create_issue`"
        ]
    );
    assert_eq!(dropped.len(), 9, "{dropped:?}");
    assert!(dropped.iter().all(|w| w.contains("was dropped")), "{dropped:?}");
    assert!(dropped.iter().any(|w| w.contains("no longer parses")), "{dropped:?}");
    assert!(dropped.iter().any(|w| w.contains("`cargo` is wider")), "{dropped:?}");
    assert_eq!(gate.check_command("cargo test -q && touch x"), Verdict::Allow);
    for asks in ["cargo build", "bash -c 'rm -rf ~'", "git push"] {
        assert!(matches!(gate.check_command(asks), Verdict::Ask { .. }), "{asks}");
    }
}

#[test]
fn a_deny_rule_still_wins_over_a_restored_rule() {
    let ws = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(ws.path()).unwrap();
    let deny = vec!["cargo publish".parse().unwrap()];
    let mut gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), deny);
    let (kept, _) = gate.restore(&[command("cargo publish"), command("cargo test")], &policy);
    assert_eq!(kept.len(), 2);
    assert!(matches!(
        gate.check_command("cargo publish --dry-run"),
        Verdict::Deny { .. }
    ));
    assert!(matches!(
        gate.check_command("cargo test && cargo publish"),
        Verdict::Deny { .. }
    ));
    assert_eq!(gate.check_command("cargo test"), Verdict::Allow);
}

#[test]
fn edit_rules_hold_again_only_for_places_the_gate_would_offer() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".tern")).unwrap();
    symlink(outside.path(), root.join("out")).unwrap();
    let policy = PathPolicy::new(&root).unwrap();
    let mut gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), Vec::new());
    let granted = [
        Granted::EditFile {
            path: root.join("src/a.rs"),
        },
        Granted::EditDir { path: root.join("src") },
        // Not places an edit "always" is offered for.
        Granted::EditDir { path: root.clone() },
        Granted::EditDir {
            path: root.join(".git"),
        },
        Granted::EditFile {
            path: root.join(".tern/config.toml"),
        },
        Granted::EditFile {
            path: outside.path().join("x"),
        },
        Granted::EditDir { path: root.join("out") },
        Granted::EditFile {
            path: root.join("src/../../escape"),
        },
        Granted::EditFile {
            path: "src/relative.rs".into(),
        },
    ];
    let (kept, dropped) = gate.restore(&granted, &policy);
    assert_eq!(kept.len(), 2, "{kept:?} {dropped:?}");
    assert_eq!(dropped.len(), 7, "{dropped:?}");
    let edit = |path: &str| {
        gate.check(
            &tern_tools::edit::EditFileTool,
            &json!({"path": path, "old_text": "a", "new_text": "b"}),
            &policy,
        )
    };
    assert_eq!(edit("src/b.rs"), Verdict::Allow);
    assert!(matches!(edit("top.rs"), Verdict::Ask { .. }));
    assert!(matches!(edit(".tern/config.toml"), Verdict::Ask { .. }));
}
