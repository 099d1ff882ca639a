//! Running the real `tern` binary in a test: in a workspace and a home of the test's own, with nothing of the caller's
//! environment but PATH, so no user config, data or key is read or written.

use std::path::Path;
use std::process::Stdio;

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
