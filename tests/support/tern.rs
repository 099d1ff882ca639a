//! Running the real `tern` binary in a test: in a workspace and a home of the test's own, with nothing of the caller's
//! environment but PATH, so no user config, data or key is read or written.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use tokio::process::Command;

use super::mock_llm::MockLlm;

pub const BIN: &str = env!("CARGO_BIN_EXE_tern");

/// `tern` in `work` with `home` as HOME (config and data under it); stdin closed, output piped, killed when dropped.
pub fn command(work: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// The flags that point tern at the scripted model.
pub fn model_flags(mock: &MockLlm) -> [String; 6] {
    [
        "--provider",
        "openai",
        "--base-url",
        &mock.openai_base_url(),
        "--model",
        "m",
    ]
    .map(String::from)
}

/// Runs `cmd` to the end (at most `limit`) and returns what it printed.
pub async fn output(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd.spawn().unwrap();
    tokio::time::timeout(limit, child.wait_with_output())
        .await
        .expect("tern finished in time")
        .unwrap()
}

/// The tool results (role `tool`) of one request the scripted model received, in call order.
pub fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A workspace (holding `notes.txt`) and a home of the test's own, so no user config or data is read or written.
pub struct Scratch {
    pub work: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Self {
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        Self {
            work,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// Where tern keeps its data here (`XDG_DATA_HOME`).
    pub fn data(&self) -> PathBuf {
        self.home.path().join("data")
    }

    /// `tern <args>` in the workspace, pointed at `mock` (with a test key) when there is one.
    pub fn command(&self, mock: Option<&MockLlm>, args: &[&str]) -> Command {
        let mut cmd = command(self.work.path(), self.home.path());
        if let Some(mock) = mock {
            cmd.env("OPENAI_API_KEY", "test-key").args(model_flags(mock));
        }
        cmd.args(args);
        cmd
    }

    /// `command` run to the end (at most a minute).
    pub async fn run(&self, mock: Option<&MockLlm>, args: &[&str]) -> Output {
        output(self.command(mock, args), Duration::from_secs(60)).await
    }
}
