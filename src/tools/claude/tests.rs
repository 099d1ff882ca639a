use serde_json::json;

use super::*;

fn policy() -> (tempfile::TempDir, PathPolicy) {
    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(dir.path()).unwrap();
    (dir, policy)
}

fn one(tool: ClaudeTool, args: serde_json::Value, policy: &PathPolicy) -> ClaudeCall {
    let mut calls = tool.calls(&args, policy);
    assert_eq!(calls.len(), 1, "{calls:?}");
    calls.remove(0)
}

#[test]
fn calls_are_spelled_as_claude_code_spells_them_with_absolute_paths() {
    let (_dir, policy) = policy();
    let root = policy.root().display().to_string();
    let bash = one(
        ClaudeTool::Bash,
        json!({"command": "rm -rf build", "timeout": 30}),
        &policy,
    );
    assert_eq!(bash.name, "Bash");
    assert_eq!(
        bash.input,
        json!({"command": "rm -rf build", "timeout": 30_000, "run_in_background": false})
    );
    let edit = one(
        ClaudeTool::Edit,
        json!({"path": "src/.env", "old_text": "a", "new_text": "b", "line_hint": 3}),
        &policy,
    );
    assert_eq!(edit.name, "Edit");
    assert_eq!(
        edit.input,
        json!({"file_path": format!("{root}/src/.env"), "old_string": "a", "new_string": "b", "line_hint": 3})
    );
    let read = one(ClaudeTool::Read, json!({"path": "/etc/hosts", "limit": 5}), &policy);
    assert_eq!(read.input, json!({"file_path": "/etc/hosts", "limit": 5}));
    let grep = one(
        ClaudeTool::Grep,
        json!({"pattern": "x", "case_insensitive": true}),
        &policy,
    );
    assert_eq!(grep.input, json!({"pattern": "x", "-i": true}));
    let ls = one(ClaudeTool::Ls, json!({}), &policy);
    assert_eq!(
        (ls.name.as_str(), ls.input["path"].as_str()),
        ("LS", Some(root.as_str()))
    );
    let task = one(
        ClaudeTool::Task,
        json!({"task": "find the bug", "label": "bug hunt"}),
        &policy,
    );
    assert_eq!(
        task.input,
        json!({"description": "bug hunt", "prompt": "find the bug", "subagent_type": "general-purpose"})
    );
    // A custom agent is the Task's subagent type, and comes back as the agent to spawn.
    let custom = one(
        ClaudeTool::Task,
        json!({"task": "review", "label": "review", "agent": "reviewer"}),
        &policy,
    );
    assert_eq!(custom.input["subagent_type"], "reviewer");
    assert_eq!(
        ClaudeTool::Task.args(&custom.input),
        Some(json!({"task": "review", "label": "review", "agent": "reviewer"}))
    );
    assert_eq!(ClaudeTool::Task.args(&task.input).unwrap().get("agent"), None);
}

/// A guard that checks one file per call sees every file a patch touches.
#[test]
fn a_patch_is_shown_file_by_file() {
    let (_dir, policy) = policy();
    let root = policy.root().display().to_string();
    let args = json!({"edits": [
        {"path": "a.rs", "old_text": "1", "new_text": "2"},
        {"path": ".env", "action": "add", "new_text": "KEY=1"},
        {"path": "a.rs", "old_text": "3", "new_text": "4", "replace_all": true},
        {"path": "old's.txt", "action": "delete"},
        {"path": "b.rs", "old_text": "5", "new_text": "6"},
    ]});
    let calls = ClaudeTool::Patch.calls(&args, &policy);
    let shown: Vec<(&str, &serde_json::Value)> = calls.iter().map(|c| (c.name.as_str(), &c.input)).collect();
    assert_eq!(
        shown,
        vec![
            (
                "MultiEdit",
                &json!({"file_path": format!("{root}/a.rs"), "edits": [
                    {"old_string": "1", "new_string": "2"},
                    {"old_string": "3", "new_string": "4", "replace_all": true},
                ]})
            ),
            (
                "Write",
                &json!({"file_path": format!("{root}/.env"), "content": "KEY=1"})
            ),
            (
                "Bash",
                &json!({"command": format!("rm -- '{root}/old'\\''s.txt'"), "description": "apply_patch deletes the file",
                    "run_in_background": false})
            ),
            (
                "Edit",
                &json!({"file_path": format!("{root}/b.rs"), "old_string": "5", "new_string": "6"})
            ),
        ]
    );
    assert_eq!(
        ClaudeTool::Patch.args(&calls[0].input),
        None,
        "a patch is not rebuilt from one file's call"
    );
}

/// A hook's `updatedInput` becomes tern's arguments again: what a hook changes is what runs.
#[test]
fn an_updated_input_becomes_the_tools_arguments() {
    let (_dir, policy) = policy();
    let cases = [
        (
            ClaudeTool::Bash,
            json!({"command": "ls", "timeout": 2, "working_dir": "src"}),
        ),
        (
            ClaudeTool::Edit,
            json!({"path": "/w/a.rs", "old_text": "a", "new_text": "b", "replace_all": true}),
        ),
        (ClaudeTool::Write, json!({"path": "/w/a.rs", "content": "x"})),
        (
            ClaudeTool::Grep,
            json!({"pattern": "p", "path": "/w", "case_insensitive": false}),
        ),
        (
            ClaudeTool::TodoWrite,
            json!({"todos": [{"content": "one", "status": "pending"}]}),
        ),
        (
            ClaudeTool::NotebookEdit,
            json!({"path": "/w/n.ipynb", "cell_index": 2, "new_source": "x"}),
        ),
    ];
    for (tool, args) in cases {
        let shown = one(tool, args.clone(), &policy);
        assert_eq!(tool.args(&shown.input).unwrap(), args, "{tool:?}");
    }
    let rounded = ClaudeTool::Bash
        .args(&json!({"command": "ls", "timeout": 1500}))
        .unwrap();
    assert_eq!(rounded["timeout"], json!(2), "milliseconds round up to whole seconds");
    assert_eq!(ClaudeTool::Bash.args(&json!("ls")), None);
}

/// A guard sees the file a call touches: a link is shown as where it leads, `~` as the home directory.
#[test]
fn paths_are_shown_as_the_tool_resolves_them() {
    let (dir, policy) = policy();
    let root = policy.root().to_path_buf();
    std::fs::write(root.join(".env"), "KEY=1\n").unwrap();
    std::os::unix::fs::symlink(root.join(".env"), root.join("notes.txt")).unwrap();
    let shown = one(ClaudeTool::Write, json!({"path": "notes.txt", "content": "x"}), &policy);
    assert_eq!(shown.input["file_path"], root.join(".env").display().to_string());
    if let Some(home) = std::env::home_dir() {
        let shown = one(ClaudeTool::Read, json!({"path": "~/.bashrc"}), &policy);
        let path = shown.input["file_path"].as_str().unwrap();
        assert!(!path.contains('~') && path.ends_with(".bashrc"), "{path}");
        assert!(
            path.starts_with(&*std::fs::canonicalize(&home).unwrap_or(home).to_string_lossy()),
            "{path}"
        );
    }
    drop(dir);
}

#[test]
fn live_processes_are_shown_as_claude_codes_background_shells() {
    let (_dir, policy) = policy();
    let bash = one(
        ClaudeTool::Bash,
        json!({"command": "npm run dev", "background": true, "tty": false}),
        &policy,
    );
    assert_eq!(
        bash.input,
        json!({"command": "npm run dev", "run_in_background": true, "tty": false})
    );
    let output = one(ClaudeTool::BashOutput, json!({"id": "p1", "wait": 5}), &policy);
    assert_eq!(
        (output.name.as_str(), &output.input),
        ("BashOutput", &json!({"bash_id": "p1", "wait": 5}))
    );
    let kill = one(ClaudeTool::KillShell, json!({"id": "p2"}), &policy);
    assert_eq!(
        (kill.name.as_str(), &kill.input),
        ("KillShell", &json!({"shell_id": "p2"}))
    );
    // A hook's changed input comes back in tern's words.
    assert_eq!(
        ClaudeTool::Bash.args(&bash.input),
        Some(json!({"command": "npm run dev", "background": true, "tty": false}))
    );
    assert_eq!(
        ClaudeTool::BashOutput.args(&output.input),
        Some(json!({"id": "p1", "wait": 5}))
    );
    assert_eq!(ClaudeTool::KillShell.args(&kill.input), Some(json!({"id": "p2"})));
    assert_eq!(ClaudeTool::named("BashOutput"), Some(ClaudeTool::BashOutput));
    assert_eq!(ClaudeTool::named("KillShell"), Some(ClaudeTool::KillShell));
}
