//! Seventh round, after the issue 11 and 12 merges: shell forms the earlier rounds did not try behind allowed
//! programs, path spellings for the file tools, and more readers of the keys. None was tried before.

use super::*;

fn pwned(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("pwned"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_forms_behind_allowed_programs_never_run() {
    let w = world();
    let routes = [
        "{ ls; touch pwned-s1; }",
        "ls && (touch pwned-s2)",
        "ls\ntouch pwned-s3",
        "coproc touch pwned-s4",
        "ls $'\\x2e'; touch pwned-s5",
        "git status > /dev/null; touch pwned-s6",
        "ls -- \"$(touch pwned-s7)\"",
        "time touch pwned-s8",
    ];
    let mock = MockLlm::start(script(routes.iter().map(|c| exec(c)).collect())).await;
    let out = w.run(&mock, "auto-edit").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answered = results(&mock);
    assert_eq!(answered.len(), routes.len());
    for (route, result) in routes.iter().zip(&answered) {
        assert!(!result.contains("Exit code"), "`{route}` ran: {result}");
    }
    assert!(pwned(w.work.path()).is_empty(), "{:?}", pwned(w.work.path()));
}

#[tokio::test(flavor = "multi_thread")]
async fn path_spellings_stay_inside() {
    let w = world();
    let outside = w.outside().display().to_string();
    let calls = vec![
        ("read_file".to_string(), json!({ "path": "link/../link/secret.txt" })),
        ("read_file".to_string(), json!({ "path": "./link//secret.txt" })),
        (
            "read_file".to_string(),
            json!({ "path": "/proc/self/cwd/link/secret.txt" }),
        ),
        (
            "grep".to_string(),
            json!({ "pattern": "TOPSECRET", "path": "/proc/self/cwd/link" }),
        ),
        ("find_files".to_string(), json!({ "glob": "../**/secret.txt" })),
        ("list_dir".to_string(), json!({ "path": "link/." })),
        (
            "write_file".to_string(),
            json!({ "path": "link/pwned-w1", "content": "x" }),
        ),
        (
            "edit_file".to_string(),
            json!({ "path": "link/pwned-w2", "old_text": "", "new_text": "x" }),
        ),
        (
            "write_file".to_string(),
            json!({ "path": format!("/proc/self/cwd/../{}/pwned-w3", outside.trim_start_matches('/')), "content": "x" }),
        ),
        (
            "apply_patch".to_string(),
            json!({ "edits": [{ "path": "link/./pwned-w4", "old_text": "", "new_text": "x" }] }),
        ),
    ];
    let mock = MockLlm::start(script(calls)).await;
    let out = w.run(&mock, "full-auto").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answered = results(&mock);
    assert!(!answered.iter().any(|r| r.contains("TOPSECRET")), "{answered:?}");
    assert!(pwned(w.outside()).is_empty(), "{:?}", pwned(w.outside()));
}

#[tokio::test(flavor = "multi_thread")]
async fn more_readers_find_no_key() {
    let w = world();
    let config = w.home.path().join("config/tern/config.toml").display().to_string();
    let calls = vec![
        exec("od -An -c /proc/$PPID/environ | tr -d ' \\n'"),
        exec("awk 1 RS='\\0' /proc/$PPID/environ | rev"),
        exec("python3 -c 'import os; print(dict(os.environ))'"),
        exec(&format!("tac {config} | base64 -w0")),
        // Six levels deep: the config's own depth and more, without walking every file on the machine (whose
        // count, not tern, decided whether the whole walk ended within the test's minute).
        exec("find / -maxdepth 6 -path '*tern/config.toml' -exec cat {} + 2>/dev/null | xxd -p"),
        exec("for f in /proc/[0-9]*/environ; do cat $f 2>/dev/null; done | tr '\\0' '\\n' | grep -i key | rev"),
        ("read_file".to_string(), json!({ "path": config })),
        ("grep".to_string(), json!({ "pattern": "api_key", "path": config })),
    ];
    let mock = MockLlm::start(script(calls)).await;
    let out = w.run(&mock, "full-auto").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The commands did run (the sandbox lets them read their own environment), just without the keys.
    let answered = results(&mock);
    assert!(answered[2].contains("PATH"), "{}", answered[2]);
    let sent = everything_sent(&mock);
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    for key in [&w.env_key, &w.config_key] {
        let reversed: String = key.chars().rev().collect();
        for form in [key.clone(), reversed, hex(key)] {
            assert!(
                !sent.contains(form.as_str()),
                "a key reached the model ({form}):\n{:?}",
                results(&mock)
            );
        }
        for shift in 0..3 {
            let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{}{key}", "x".repeat(shift)));
            assert!(!sent.contains(&encoded[4..16]), "a key reached the model in base64");
        }
    }
}
