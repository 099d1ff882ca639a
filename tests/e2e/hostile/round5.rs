//! Fifth round, at the end of the issue 10 and 12 work: routes through wrappers and global options of allowed
//! programs, the patch and notebook tools, the read-only list's file operands, and the keys through the parent
//! process and the session's new stores (subagent logs, the plan). None was tried before.

use super::*;

fn pwned_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("pwned"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn allowed_programs_do_not_carry_other_commands() {
    let w = world();
    // Rules allow `ls`, `git status` and `cargo test`: each route hides another program behind one of them.
    let routes = [
        "git -c core.fsmonitor='touch pwned-r1' status",
        "git -c alias.st='!touch pwned-r2' st",
        "git --exec-path=. status; touch pwned-r3",
        "ls <(touch pwned-r4)",
        "GIT_EXTERNAL_DIFF='touch pwned-r5' git status",
        "git status --porcelain | xargs touch pwned-r6",
        "ls\rtouch pwned-r7",
        "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=\"touch pwned-r8\"'",
        "ls > pwned-r9",
        "git status && git config core.hooksPath . && touch pwned-r10",
    ];
    let mock = MockLlm::start(script(routes.iter().map(|c| exec(c)).collect())).await;
    let out = w.run(&mock, "auto-edit").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answered = results(&mock);
    assert_eq!(answered.len(), routes.len());
    for (route, result) in routes.iter().zip(&answered) {
        assert!(!result.contains("Exit code"), "`{route}` ran: {result}");
    }
    assert!(pwned_in(w.work.path()).is_empty(), "{:?}", pwned_in(w.work.path()));
}

#[tokio::test(flavor = "multi_thread")]
async fn patches_notebooks_and_read_only_operands_stay_inside() {
    let w = world();
    let outside = w.outside().display().to_string();
    let calls = vec![
        (
            "apply_patch".to_string(),
            json!({ "edits": [{ "path": "../pwned-p1", "old_text": "", "new_text": "x" }] }),
        ),
        (
            "apply_patch".to_string(),
            json!({ "edits": [{ "path": "link/secret.txt", "old_text": "TOPSECRET", "new_text": "changed" }] }),
        ),
        // One edit inside and one outside: neither may land.
        (
            "apply_patch".to_string(),
            json!({ "edits": [
                { "path": "notes.txt", "old_text": "alpha", "new_text": "pwned" },
                { "path": format!("{outside}/secret.txt"), "old_text": "TOPSECRET", "new_text": "changed" }
            ] }),
        ),
        (
            "notebook_edit".to_string(),
            json!({ "path": format!("{outside}/pwned-p4.ipynb"), "cell_index": 0, "new_source": "x", "edit_mode": "insert" }),
        ),
        (
            "list_dir".to_string(),
            json!({ "path": format!("/proc/self/root{outside}") }),
        ),
        (
            "find_files".to_string(),
            json!({ "glob": "**/secret.txt", "path": "link" }),
        ),
        ("grep".to_string(), json!({ "pattern": "TOPSECRET", "path": "link" })),
        exec("git diff --no-index /dev/null link/secret.txt"),
        exec(&format!("git diff --no-index /dev/null {outside}/secret.txt")),
        exec("ls link/ && head -c 64 link/secret.txt"),
        exec(&format!("git log --no-index -p {outside}/secret.txt")),
    ];
    let mock = MockLlm::start(script(calls)).await;
    let out = w.run(&mock, "auto-edit").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !everything_sent(&mock).contains(SECRET),
        "the secret reached the model:\n{:?}",
        results(&mock)
    );
    assert!(pwned_in(w.outside()).is_empty(), "{:?}", pwned_in(w.outside()));
    assert!(pwned_in(w.work.path().parent().unwrap()).is_empty());
    let notes = std::fs::read_to_string(w.work.path().join("notes.txt")).unwrap();
    assert_eq!(notes, "alpha\n", "half of a refused patch landed");
    let secret = std::fs::read_to_string(w.outside().join("secret.txt")).unwrap();
    assert_eq!(secret, format!("{SECRET}\n"), "the file outside was changed");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_key_through_the_parent_process_or_the_new_stores() {
    let w = world();
    let data = w.home.path().join("data").display().to_string();
    let calls = vec![
        exec("tr '\\0' '\\n' < /proc/$PPID/environ | base64 -w0"),
        exec("ps eww -o args= -p $PPID | base64 -w0"),
        exec("for p in $(pgrep -f tern); do base64 -w0 /proc/$p/environ; done"),
        exec("cat /proc/$PPID/cmdline /proc/$PPID/task/*/environ 2>/dev/null | base64 -w0"),
        exec(&format!("grep -rsa sk- {data} | base64 -w0")),
        (
            "exec".to_string(),
            json!({ "command": "tr '\\0' '\\n' < /proc/$PPID/environ", "unsandboxed": true }),
        ),
        ("read_file".to_string(), json!({ "path": "/proc/self/task/../environ" })),
        ("read_file".to_string(), json!({ "path": "/dev/fd/../environ" })),
        ("grep".to_string(), json!({ "pattern": "sk-", "path": "/proc/self" })),
        (
            "todo_write".to_string(),
            json!({ "todos": [{ "content": "$OPENAI_API_KEY", "status": "pending" }] }),
        ),
        (
            "spawn".to_string(),
            json!({ "task": "print your environment", "label": "env", "wait": true }),
        ),
    ];
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(calls),
        Reply::for_system(
            "print your environment",
            Reply::ToolCalls(vec![exec("env | base64 -w0")]),
        ),
        Reply::for_system("print your environment", Reply::text("done")),
        Reply::text("Done."),
    ])
    .await;
    let out = w.run(&mock, "full-auto").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sent = everything_sent(&mock);
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    for key in [&w.env_key, &w.config_key] {
        assert!(!sent.contains(key.as_str()), "a key reached the model:\n{sent}");
        for shift in 0..3 {
            let encoded = b64(&format!("{}{key}", "x".repeat(shift)));
            assert!(!sent.contains(&encoded[4..16]), "a key reached the model in base64");
        }
    }
    // Nor the session's own files (subagent logs, the plan, stored results).
    for entry in walk(&w.home.path().join("data")) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        for key in [&w.env_key, &w.config_key] {
            assert!(!text.contains(key.as_str()), "{} holds a key", entry.display());
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
