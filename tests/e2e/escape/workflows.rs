//! The ordinary work next to the seals, under the default sandbox: building a Rust crate, running a Python test
//! suite, `npm install` with the network allowed, and a dev server on the sandbox's own loopback, each for real.

use super::sandboxed::{exit_code, policy, run, tool, workspace};

#[tokio::test]
async fn cargo_builds_and_runs_a_crate() {
    let (dir, ctx) = workspace();
    std::fs::create_dir_all(dir.path().join("tiny/src")).unwrap();
    std::fs::write(
        dir.path().join("tiny/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tiny/src/main.rs"),
        "fn main() { println!(\"tiny-ran\"); }\n",
    )
    .unwrap();
    let out = run(
        &tool(policy()),
        &ctx,
        "cd tiny && cargo build --offline -q 2>&1 && ./target/debug/tiny",
    )
    .await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(out.text.contains("tiny-ran"), "{}", out.text);
}

#[tokio::test]
async fn a_python_test_suite_runs() {
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(
        dir.path().join("test_calc.py"),
        "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        \
         self.assertEqual(add(2, 3), 5)\n",
    )
    .unwrap();
    let out = run(&tool(policy()), &ctx, "python3 -m unittest -v 2>&1").await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(out.text.contains("test_add") && out.text.contains("OK"), "{}", out.text);
    assert!(
        dir.path().join("__pycache__").is_dir(),
        "byte code is written in the workspace"
    );
}

#[tokio::test]
async fn npm_installs_a_package_with_the_network_allowed() {
    let (dir, ctx) = workspace();
    let dep = dir.path().join("dep");
    std::fs::create_dir_all(&dep).unwrap();
    std::fs::write(
        dep.join("package.json"),
        r#"{"name": "dep", "version": "1.0.0", "main": "index.js"}"#,
    )
    .unwrap();
    std::fs::write(dep.join("index.js"), "module.exports = () => 'dep-loaded';\n").unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"name": "app", "version": "1.0.0"}"#,
    )
    .unwrap();
    let mut networked = policy();
    networked.network = true;
    let out = run(
        &tool(networked),
        &ctx,
        "npm install --no-audit --no-fund ./dep 2>&1 && node -e \"console.log(require('dep')())\"",
    )
    .await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(out.text.contains("dep-loaded"), "{}", out.text);
}

#[tokio::test]
async fn a_dev_server_answers_on_the_sandboxes_own_loopback() {
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("index.html"), "dev-server-page\n").unwrap();
    let command = "python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & \
                   for i in $(seq 50); do curl -s 127.0.0.1:8765/index.html && break; sleep 0.1; done; kill %1";
    let out = run(&tool(policy()), &ctx, command).await;
    assert!(out.text.contains("dev-server-page"), "{}", out.text);
}

/// `tern run` starts each command through `tern-sandbox`, the small launcher next to it (PID 1 of the command's PID
/// namespace is the launcher's init), and the command still runs sandboxed.
#[tokio::test]
async fn tern_run_starts_commands_through_the_small_launcher() {
    use std::time::Duration;

    use serde_json::json;

    use crate::support::mock_llm::{MockLlm, Reply};
    use crate::support::tern::{command, model_flags, output, tool_results};

    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let probe = "tr '\\0' ' ' < /proc/1/cmdline";
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({ "command": probe })),
        Reply::text("Done."),
    ])
    .await;
    let mut cmd = command(work.path(), home.path());
    cmd.env("OPENAI_API_KEY", "test-key")
        .args(model_flags(&mock))
        .args(["run", "--mode", "full-auto", "go"]);
    let out = output(cmd, Duration::from_secs(60)).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.requests();
    let results = tool_results(requests.last().unwrap()).join("\n");
    assert!(results.contains("/tern-sandbox __sandbox --"), "{results}");
}
