//! Running commands in the sandbox for the escape tests: the real `ExecTool` with the built `tern` as the launcher.

use std::path::{Path, PathBuf};

use serde_json::json;
use tern::protocol::{ToolDetails, ToolOutput};
use tern::sandbox::SandboxPolicy;
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::{PathPolicy, Tool, ToolContext};

/// The strictest policy, with a session of its own.
pub fn policy() -> SandboxPolicy {
    SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox"))
}

/// An exec tool whose commands run in `policy` (and share its session: private temp, known repositories).
pub fn tool(policy: SandboxPolicy) -> ExecTool {
    ExecTool::new(ExecConfig {
        sandbox: Some(policy),
        ..ExecConfig::default()
    })
}

/// A workspace under the temp directory, and its tool context.
pub fn workspace() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    (dir, ctx)
}

/// A directory outside the temp directories (HOME, else the build's temp folder), as a user's sockets and
/// credentials are. Not `/var/tmp`: the sandbox covers it with the session's private temp, which would hide a socket
/// there for the wrong reason.
pub fn outside() -> tempfile::TempDir {
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    let base = [
        std::env::var_os("HOME").map(PathBuf::from),
        Some(env!("CARGO_TARGET_TMPDIR").into()),
    ]
    .into_iter()
    .flatten()
    .filter_map(|dir| std::fs::canonicalize(dir).ok())
    .find(|dir| !dir.starts_with(&temp) && tempfile::tempdir_in(dir).is_ok())
    .expect("a writable directory outside the temp directory");
    tempfile::tempdir_in(base).unwrap()
}

/// Runs `command` through `tool` in `ctx`'s workspace.
pub async fn run(tool: &ExecTool, ctx: &ToolContext, command: &str) -> ToolOutput {
    tool.execute(json!({ "command": command }), ctx).await.unwrap()
}

/// Runs `command` outside the sandbox (what the gate asks the user about), for showing an attack is real.
pub async fn run_unsandboxed(tool: &ExecTool, ctx: &ToolContext, command: &str) -> ToolOutput {
    tool.execute(json!({ "command": command, "unsandboxed": true }), ctx)
        .await
        .unwrap()
}

/// The exit code of an exec result.
pub fn exit_code(out: &ToolOutput) -> Option<i32> {
    match out.details {
        ToolDetails::Exec { exit_code, .. } => exit_code,
        ref other => panic!("not exec details: {other:?}"),
    }
}

/// A file name no other test uses.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}-{}", std::process::id(), fastrand::u32(..))
}

/// `path` quoted for bash.
pub fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}
