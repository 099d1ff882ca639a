//! The child process of a server tern talks to over its stdin and stdout (a stdio MCP server, a language server):
//! started in its own session (so it has no controlling terminal to scribble on and its whole process tree can be
//! signalled at once), its stderr sent to the log with the last lines kept for error messages, and its process group
//! killed when tern lets go of it, so no server outlives the session.
//!
//! Must not: choose the program or its environment (the caller builds the command: scrubbed environment, working
//! directory, the sandbox launcher when it runs in one).

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::group::{Group, Signal, own_group};

/// Log lines one server may write per second; a server that floods its stderr or log notifications must not fill
/// the log file.
const LOG_LINES_PER_SECOND: u32 = 50;
/// Lines of stderr kept for error messages.
const TAIL_LINES: usize = 12;
/// Longest stderr line kept or logged; the rest of the line is dropped.
const MAX_LINE: usize = 2000;

pub struct ServerChild {
    child: Mutex<Child>,
    /// The server's process group (= its pid, as session leader); `None` once the leader was reaped and its leftovers
    /// killed, so a later signal can never reach a group that reused the number.
    pgid: Mutex<Option<Group>>,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_task: tokio::task::JoinHandle<()>,
}

impl ServerChild {
    /// Starts `cmd` (built by the caller: program, arguments, environment, working directory) as the server `server`,
    /// a `kind` of server (`"MCP server"`, `"language server"`) for the log; `program` names it in errors. The pipes
    /// are for the transport.
    pub fn spawn(
        kind: &'static str,
        server: &str,
        mut cmd: Command,
        program: &str,
    ) -> Result<(Self, ChildStdout, ChildStdin), String> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own group, to end everything it starts, and it dies with tern even when tern is killed outright.
        own_group(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("command not found: {program} (is it installed and on PATH?)")
            }
            std::io::ErrorKind::PermissionDenied => format!("cannot run {program}: permission denied"),
            _ => format!("cannot start {program}: {e}"),
        })?;
        let pgid = child.id().and_then(Group::led_by);
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(format!("cannot start {program}: its pipes were not set up"));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_task = match child.stderr.take() {
            Some(stderr) => tokio::spawn(log_stderr(server.to_string(), stderr, Arc::clone(&tail))),
            None => tokio::spawn(async {}),
        };
        tracing::info!(server, kind, pid = ?pgid.map(Group::id), command = %program, "server started");
        Ok((
            Self {
                child: Mutex::new(child),
                pgid: Mutex::new(pgid),
                tail,
                stderr_task,
            },
            stdout,
            stdin,
        ))
    }

    /// The process id while the server runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.lock().ok().and_then(|c| c.id())
    }

    /// The exit status once the process has ended, waiting for it up to `wait`.
    pub async fn exit_status(&self, wait: Duration) -> Option<ExitStatus> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let status = self.child.lock().ok().and_then(|mut c| c.try_wait().ok().flatten());
            if status.is_some() {
                // Helpers the server started may outlive it in its group: end them while the number is still ours.
                self.signal(Signal::KILL);
                if let Ok(mut pgid) = self.pgid.lock() {
                    *pgid = None;
                }
                return status;
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Why the process is gone, for a status line: `exited with status 1; stderr: ...`.
    pub async fn describe_exit(&self) -> String {
        let mut text = match self.exit_status(Duration::from_millis(500)).await {
            Some(status) => describe_status(status),
            None => "closed its output".to_string(),
        };
        // Its last words may still be in the pipe.
        let deadline = tokio::time::Instant::now() + Duration::from_millis(200);
        while !self.stderr_task.is_finished() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let tail = self.stderr_tail();
        if !tail.is_empty() {
            text.push_str("; stderr: ");
            text.push_str(&tail);
        }
        text
    }

    /// The last lines the server wrote to stderr, joined with ` | `.
    pub fn stderr_tail(&self) -> String {
        self.tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join(" | "))
            .unwrap_or_default()
    }

    /// Asks the whole process group to end (after the transport closed stdin), then kills what is left.
    pub async fn terminate(&self, grace: Duration) {
        if self.exit_status(grace / 2).await.is_none() {
            self.signal(Signal::TERM);
            if self.exit_status(grace / 2).await.is_none() {
                self.kill();
            }
        }
    }

    /// Kills the process group now.
    pub fn kill(&self) {
        self.signal(Signal::KILL);
        if let Ok(mut child) = self.child.lock() {
            let _ = child.start_kill();
        }
    }

    fn signal(&self, signal: Signal) {
        if let Some(group) = self.pgid.lock().ok().and_then(|p| *p) {
            group.signal(signal);
        }
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        self.kill();
        self.stderr_task.abort();
    }
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "exited".to_string(),
    }
}

/// Logs stderr line by line and keeps the last lines. A line without end is cut, never buffered without bound.
async fn log_stderr(server: String, mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let limiter = LogLimiter::default();
    let mut buf = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let flush = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line).trim_end().to_string();
        line.clear();
        if text.is_empty() {
            return;
        }
        if limiter.allow(&server) {
            tracing::info!(target: "tern::server::stderr", server = %server, "{text}");
        }
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text);
        }
    };
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &byte in &buf[..n] {
            if byte == b'\n' {
                flush(&mut line);
            } else if line.len() < MAX_LINE {
                line.push(byte);
            }
        }
    }
    flush(&mut line);
}

/// Lets a server write at most `LOG_LINES_PER_SECOND` log lines a second, and says how many it held back.
#[derive(Default)]
pub struct LogLimiter {
    window: Mutex<(Option<std::time::Instant>, u32, u64)>,
}

impl LogLimiter {
    /// Whether the next line may be logged now.
    pub fn allow(&self, server: &str) -> bool {
        let Ok(mut window) = self.window.lock() else {
            return false;
        };
        let (start, count, dropped) = &mut *window;
        if start.is_none_or(|s| s.elapsed() >= Duration::from_secs(1)) {
            if *dropped > 0 {
                tracing::warn!(server, dropped = *dropped, "server logs too fast; lines were left out");
            }
            *window = (Some(std::time::Instant::now()), 1, 0);
            return true;
        }
        if *count < LOG_LINES_PER_SECOND {
            *count += 1;
            return true;
        }
        *dropped += 1;
        false
    }
}
