//! Starting a stdio MCP server: its command as configured, with the scrubbed environment every child gets plus its
//! configured variables, as a `ServerChild` (the one way tern runs a server child, in `tern-process`).

use tokio::process::{ChildStdin, ChildStdout, Command};

use super::config::StdioConfig;
pub(crate) use tern_process::server::{LogLimiter, ServerChild as ChildProcess};

/// Starts the server of `config`; the pipes are for the transport.
pub(crate) fn spawn(server: &str, config: &StdioConfig) -> Result<(ChildProcess, ChildStdout, ChildStdin), String> {
    if !config.cwd.is_dir() {
        return Err(format!("working directory {} does not exist", config.cwd.display()));
    }
    let mut cmd = Command::new(&config.command);
    // The same scrubbed environment as commands get, so no server inherits tern's keys, plus its configured env. It
    // runs outside the sandbox: no search list (PATH, LD_LIBRARY_PATH, ...) names a directory commands may write.
    let mut vars = tern_process::env::child_env(&[]);
    tern_fs::search_path::own_env(&mut vars);
    cmd.args(&config.args)
        .env_clear()
        .envs(vars)
        .envs(config.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&config.cwd);
    ChildProcess::spawn("MCP server", server, cmd, &config.command)
}
