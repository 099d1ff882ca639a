//! File modes through the real tools, under a umask of 027: files the tools create get 0666 & !umask (0640), files
//! that existed keep their mode exactly (write_file, edit_file, apply_patch, notebook_edit), and the session's own
//! files are private (0600 in 0700 directories).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::faults::common::*;
use crate::support::mock_llm::{MockLlm, Reply};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test(flavor = "multi_thread")]
async fn new_files_follow_the_umask_existing_files_keep_their_mode_and_sessions_are_private() {
    let notebook = json!({
        "cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["1 + 1"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    let sb = sandbox();
    let w = sb.work.path();
    let existing = [
        ("existing.txt", 0o664),
        ("edit.txt", 0o604),
        ("patch.txt", 0o755),
        ("nb.ipynb", 0o600),
    ];
    for (name, m) in existing {
        let content = if name.ends_with(".ipynb") {
            notebook.to_string()
        } else {
            format!("old {name}\n")
        };
        std::fs::write(w.join(name), content).unwrap();
        std::fs::set_permissions(w.join(name), std::fs::Permissions::from_mode(m)).unwrap();
    }
    let reads = existing
        .iter()
        .map(|(name, _)| ("read_file".to_string(), json!({"path": name})))
        .collect();
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(reads),
        Reply::ToolCalls(vec![
            ("write_file".into(), json!({"path": "new.txt", "content": "new\n"})),
            (
                "write_file".into(),
                json!({"path": "existing.txt", "content": "rewritten\n"}),
            ),
            (
                "edit_file".into(),
                json!({"path": "edit.txt", "old_text": "old", "new_text": "edited"}),
            ),
            (
                "apply_patch".into(),
                json!({"edits": [
                    {"path": "patch.txt", "old_text": "old", "new_text": "patched"},
                    {"path": "added/by-patch.txt", "action": "add", "new_text": "added\n"}
                ]}),
            ),
            (
                "notebook_edit".into(),
                json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "2 + 2"}),
            ),
        ]),
        Reply::text("Done."),
    ])
    .await;
    let cmd = sb.command(Some(&mock), &["run", "change the files"]);
    let mut wrapped = tokio::process::Command::new("sh");
    wrapped
        .args(["-c", "umask 027; exec \"$@\"", "sh"])
        .arg(cmd.as_std().get_program())
        .args(cmd.as_std().get_args())
        .envs(cmd.as_std().get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(w)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(60), wrapped.spawn().unwrap().wait_with_output())
        .await
        .expect("tern finishes")
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let results = tool_results(&mock.requests()[2]);
    assert_eq!(results.len(), 9);
    for result in &results[4..] {
        assert!(!result.starts_with("Error"), "every change applied: {results:#?}");
    }
    assert_eq!(
        std::fs::read_to_string(w.join("patch.txt")).unwrap(),
        "patched patch.txt\n"
    );
    assert!(std::fs::read_to_string(w.join("nb.ipynb")).unwrap().contains("2 + 2"));
    assert_eq!(mode(&w.join("new.txt")), 0o640);
    assert_eq!(mode(&w.join("added/by-patch.txt")), 0o640);
    for (name, m) in existing {
        assert_eq!(mode(&w.join(name)), m, "{name} keeps its mode");
    }
    let (_, log) = sb.session();
    let session_dir = log.parent().unwrap();
    assert_eq!(
        (mode(&log), mode(session_dir), mode(session_dir.parent().unwrap())),
        (0o600, 0o700, 0o700)
    );
    let log_file = sb.data().join("tern/logs/tern.log");
    assert_eq!(mode(&log_file), 0o600);
}
