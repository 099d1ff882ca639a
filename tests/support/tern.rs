//! Running the real `tern` binary in a test: in a workspace and a home of the test's own, with nothing of the caller's
//! environment but PATH, so no user config, data or key is read or written.

use std::path::Path;
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
