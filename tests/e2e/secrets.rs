//! Keys stay secret, end to end: the real `tern run` with `OPENAI_API_KEY` set, against the scripted model over HTTP
//! on 127.0.0.1. A command that dumps its environment and every `/proc/<pid>/environ` it can read, a stdio MCP server
//! (server-everything's `get-env`) and a provider error that echoes the key must not show it in any output, request,
//! session file or log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};

/// A variable on the allowlist whose value is no credential: its presence proves the dumps really read the environment.
const MARKER: (&str, &str) = ("EDITOR", "visible-marker-value");

/// A secret under a name that says nothing: only the allowlist keeps it from commands and servers.
const UNNAMED: (&str, &str) = ("DATABASE_URL", "postgres://app:db-pw-unnamed@db.local/app");

/// A key no one else has: `sk-test-` and random hex.
fn random_key(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}{:x}{:x}", std::process::id(), nanos)
}

struct Run {
    work: tempfile::TempDir,
    home: tempfile::TempDir,
    key: String,
    other_secret: String,
}

impl Run {
    fn new() -> Self {
        Self {
            work: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            key: random_key("sk-test-"),
            other_secret: random_key("ghp_"),
        }
    }

    async fn tern(&self, mock: &MockLlm, args: &[&str]) -> Output {
        let mut cmd = support::tern::command(self.work.path(), self.home.path());
        cmd.env("TERN_LOG", "tern=trace")
            .env("OPENAI_API_KEY", &self.key)
            .env("GITHUB_TOKEN", &self.other_secret)
            .env(MARKER.0, MARKER.1)
            .env(UNNAMED.0, UNNAMED.1)
            .args(support::tern::model_flags(mock))
            .args(args);
        support::tern::output(cmd, Duration::from_secs(60)).await
    }

    /// Fails when a secret appears in `what`.
    fn assert_clean(&self, label: &str, what: &str) {
        for secret in [&self.key, &self.other_secret] {
            assert!(!what.contains(secret.as_str()), "{label} shows a secret:\n{what}");
        }
    }

    /// Every file tern wrote under its home (sessions, tool results, the log), none holding a secret.
    fn assert_files_clean(&self) -> Vec<PathBuf> {
        let files = files_under(self.home.path());
        for file in &files {
            let bytes = std::fs::read(file).unwrap();
            self.assert_clean(&file.display().to_string(), &String::from_utf8_lossy(&bytes));
        }
        files
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tool results the model received in its second request.
fn tool_results(mock: &MockLlm) -> String {
    let requests = mock.requests();
    assert!(
        requests.len() >= 2,
        "the model was asked again after the tool: {requests:#?}"
    );
    support::tern::tool_results(&requests[1]).concat()
}

/// The key reached the provider (so it was captured and read back), and only there.
fn assert_key_was_sent(mock: &MockLlm, key: &str) {
    let recorded = mock.recorded();
    let auth = recorded[0]
        .headers
        .iter()
        .find(|(n, _)| n == "authorization")
        .map(|(_, v)| v.clone());
    assert_eq!(auth, Some(format!("Bearer {key}")));
    for request in &recorded {
        assert!(!request.body.to_string().contains(key), "a request body holds the key");
    }
}

#[tokio::test]
async fn commands_cannot_read_the_key_from_env_or_proc() {
    let command = "env; echo '==tern=='; cat /proc/$PPID/environ | tr '\\0' '\\n'; echo '==all=='; \
                   for p in /proc/[0-9]*; do cat $p/environ; done 2>&1 | tr '\\0' '\\n'; echo '==end=='";
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({ "command": command })),
        Reply::text("Looked."),
    ])
    .await;
    let run = Run::new();
    let out = run
        .tern(
            &mock,
            &["run", "--mode", "full-auto", "--output-format", "events", "look"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let results = tool_results(&mock);
    run.assert_clean("the command's output", &results);
    run.assert_clean("stdout", &text(&out.stdout));
    run.assert_clean("stderr", &text(&out.stderr));
    assert_key_was_sent(&mock, &run.key);

    // The command ran and saw the environment: its own, without the secrets, with the marker.
    let marker = format!("{}={}", MARKER.0, MARKER.1);
    let (env_part, rest) = results.split_once("==tern==").expect("the command ran to its end");
    assert!(env_part.contains(&marker) && env_part.contains("PATH="), "{env_part}");
    assert!(
        !env_part.contains("OPENAI_API_KEY") && !env_part.contains("GITHUB_TOKEN") && !env_part.contains(UNNAMED.1),
        "{env_part}"
    );
    // The parent's /proc entry. In the sandbox that is the namespace's init, which is not dumpable (and whose
    // environment is its launcher's, which the holder starts with none); without one it is tern, readable only by
    // root (tern is not dumpable), and the key was overwritten in the environment block the kernel reports. Either
    // way, no key.
    let (tern_part, _) = rest.split_once("==all==").unwrap();
    assert!(!tern_part.contains("OPENAI_API_KEY="), "{tern_part}");
    let root = unsafe { libc::geteuid() } == 0;
    eprintln!(
        "root: {root}; the command's output: {} bytes, {} environ lines",
        results.len(),
        results.lines().count()
    );
    let files = run.assert_files_clean();
    assert!(
        files.iter().any(|f| f.ends_with("tern.log")),
        "the log was written: {files:?}"
    );
    assert!(
        files.iter().any(|f| f.extension().is_some_and(|e| e == "jsonl")),
        "a session was written: {files:?}"
    );
}

#[tokio::test]
async fn an_error_body_echoing_the_key_is_masked() {
    let run = Run::new();
    let message = format!(
        "Incorrect API key provided: {}. You can find your API key at ...",
        run.key
    );
    let mock = MockLlm::start(vec![Reply::status(401, &message); 3]).await;
    for format in ["text", "json", "events"] {
        let out = run.tern(&mock, &["run", "--output-format", format, "hi"]).await;
        assert_eq!(out.status.code(), Some(1), "{format}: stderr: {}", text(&out.stderr));
        let both = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
        run.assert_clean(format, &both);
        assert!(
            both.contains("Incorrect API key provided: [redacted]"),
            "{format}: {both}"
        );
    }
    assert_key_was_sent(&mock, &run.key);
    run.assert_files_clean();
}

/// The installed server-everything; in CI it must be there.
fn everything() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.is_file() {
        return Some(path);
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| v == "true"),
        "{} is missing: run .ci/install-mcp-servers before the tests",
        path.display()
    );
    eprintln!("note: MCP secrets test skipped: run .ci/install-mcp-servers to install server-everything");
    None
}

#[tokio::test]
async fn stdio_mcp_servers_get_the_scrubbed_environment_plus_their_own() {
    let Some(js) = everything() else { return };
    let run = Run::new();
    let config = json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [js, "stdio"],
        "env": {"TERN_MCP_CONFIGURED": "configured-value"},
    }}});
    let config_path = run.home.path().join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_everything_get-env", json!({})),
        Reply::text("Seen."),
    ])
    .await;
    let out = run
        .tern(
            &mock,
            &[
                "run",
                "--mode",
                "full-auto",
                "--mcp-config",
                config_path.to_str().unwrap(),
                "env?",
            ],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let results = tool_results(&mock);
    let env: Value = serde_json::from_str(&results).unwrap_or_else(|e| panic!("{e}: {results}"));
    assert_eq!(env["TERN_MCP_CONFIGURED"], "configured-value");
    assert_eq!(env[MARKER.0], MARKER.1);
    assert!(env["PATH"].is_string());
    assert!(
        env.get("OPENAI_API_KEY").is_none() && env.get("GITHUB_TOKEN").is_none() && env.get(UNNAMED.0).is_none(),
        "{env:#}"
    );
    run.assert_clean("the server's environment", &results);
    run.assert_clean(
        "stdout and stderr",
        &format!("{}{}", text(&out.stdout), text(&out.stderr)),
    );
    assert_key_was_sent(&mock, &run.key);
    run.assert_files_clean();
}
