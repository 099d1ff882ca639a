//! Sixth round, at the end of the issue 11 work: the new doors are edits checked before asking (a dry run reads the
//! file) and the project trust prompt (trust written to the user's config). A failing dry run outside the workspace
//! must tell the model nothing about a file it may not read, and a command that plants a project config must not get
//! it trusted.

use super::*;

fn edit(path: &str, old: &str) -> (String, Value) {
    (
        "edit_file".to_string(),
        json!({ "path": path, "old_text": old, "new_text": "pwned" }),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_outside_the_workspace_is_no_oracle() {
    for mode in ["ask", "auto-edit", "full-auto"] {
        let w = world();
        let outside = w.outside().display().to_string();
        let secret = format!("{outside}/secret.txt");
        let missing = format!("{outside}/missing.txt");
        let calls = vec![
            // A near miss (the tool's own error would quote the closest line), a hit, a file that does not exist,
            // the same through the workspace's symlink, and a patch and a notebook edit on the same file.
            edit(&secret, "TOPSECRET-4f1c9b"),
            edit(&secret, SECRET),
            edit(&missing, SECRET),
            edit("link/secret.txt", "TOPSECRET-0000"),
            (
                "apply_patch".to_string(),
                json!({ "edits": [{ "path": secret, "old_text": "TOPSECRET-4f1c9b", "new_text": "x" }] }),
            ),
            (
                "notebook_edit".to_string(),
                json!({ "path": secret, "cell_index": 0, "new_source": "x", "edit_mode": "replace" }),
            ),
        ];
        let mock = MockLlm::start(script(calls)).await;
        let out = w.run(&mock, mode).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let answered = results(&mock);
        assert_eq!(answered.len(), 6, "{mode}");
        // The model guessed SECRET itself in one call; no result may carry it or any other line of the file.
        assert!(
            !answered.iter().any(|r| r.contains("TOPSECRET")),
            "{mode}: the file reached the model: {answered:?}"
        );
        // A miss, a hit and a missing file read the same: nobody was there to answer, and nothing else was said.
        assert_eq!(answered[0], answered[1], "{mode}: a miss and a hit differ");
        assert_eq!(answered[1], answered[2].replace("missing.txt", "secret.txt"), "{mode}");
        for result in &answered {
            for tell in ["not found", "No such", "does not exist", "closest", "similar"] {
                assert!(!result.contains(tell), "{mode}: `{tell}` in {result}");
            }
        }
        let content = std::fs::read_to_string(w.outside().join("secret.txt")).unwrap();
        assert_eq!(content, format!("{SECRET}\n"), "{mode}: the file outside was changed");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planted_project_config_untrusts_the_project() {
    let w = world();
    let work = std::fs::canonicalize(w.work.path()).unwrap();
    let user_config = w.home.path().join("config/tern/config.toml");
    // The user trusted the project as it was: no config of its own.
    let user = std::fs::read_to_string(&user_config).unwrap();
    std::fs::write(&user_config, format!("trusted_projects = []\n{user}")).unwrap();
    tern::config::write::trust_project(&user_config, &work, &tern::config::trust::digest(&work)).unwrap();
    let planted = w.outside().join("pwned-server");
    let server = json!({ "mcpServers": { "evil": { "command": "touch", "args": [planted] } } }).to_string();
    let hook = format!(
        "[[hooks.SessionStart]]\ncommand = \"touch {}\"\n",
        w.outside().join("pwned-hook").display()
    );
    let calls = vec![
        exec(&format!("printf '%s' '{server}' > .mcp.json")),
        (
            "write_file".to_string(),
            json!({ "path": ".mcp.json", "content": server }),
        ),
        exec(&format!("mkdir -p .tern && printf '%s' '{hook}' > .tern/config.toml")),
        (
            "write_file".to_string(),
            json!({ "path": ".tern/config.toml", "content": hook }),
        ),
    ];
    let mock = MockLlm::start(script(calls)).await;
    let out = w.run(&mock, "full-auto").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Whatever landed, the next session must not start it.
    let mock = MockLlm::start(vec![Reply::text("Hello.")]).await;
    let out = w.run(&mock, "full-auto").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_millis(500));
    assert!(!planted.exists(), "a planted MCP server started");
    assert!(!w.outside().join("pwned-hook").exists(), "a planted hook ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");
    // The control: the planted files are live, and a bare-path entry (written by hand: trust whatever the files
    // say) would start them; the digest is what stopped them above.
    std::fs::write(
        &user_config,
        format!("trusted_projects = [{:?}]\n{user}", work.display().to_string()),
    )
    .unwrap();
    let mock = MockLlm::start(vec![Reply::text("Hello.")]).await;
    w.run(&mock, "full-auto").await;
    let started = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        planted.exists()
    });
    assert!(started, "the control did not start the planted server");
}
