//! Running one hook: `sh -c` in a session and process group of its own, its JSON input written to stdin while stdout
//! and stderr are read (each kept to a cap, the rest read and dropped so the hook never blocks on a full pipe), and
//! the whole group SIGKILLed at the timeout, on interrupt, when the future is dropped, and after the hook exits (what
//! it left in the background goes with it, after a short grace to close the pipes). A hook is the user's own program:
//! it runs outside the OS sandbox, with the environment commands get (no secrets). What it printed is masked for
//! secrets before anything else sees it.

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tern_process::group::{Group, own_group};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::time::{Instant, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

/// The most of each stream kept.
const OUTPUT_CAP: usize = 64 * 1024;
/// After the hook exits: how long what it left behind may keep the pipes open.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// After SIGKILL: how long to wait for the shell to be reaped.
const REAP_LIMIT: Duration = Duration::from_secs(2);

/// How a hook's run ended.
#[derive(Debug)]
pub(super) enum Ending {
    Exit(i32),
    Signal(i32),
    TimedOut(Duration),
    Cancelled,
    NotStarted(io::Error),
}

/// One hook's run: how it ended and what it printed (masked, lossy UTF-8, capped).
#[derive(Debug)]
pub(super) struct Ran {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the hook `command` in `cwd` with `env`, `input` on its stdin, for at most `limit` or until `cancel`.
pub(super) async fn run(
    command: &str,
    input: &[u8],
    cwd: &Path,
    env: &[(OsString, OsString)],
    limit: Duration,
    cancel: &CancellationToken,
) -> Ran {
    let (mut child, group) = match spawn(hook_command(command, cwd, env)) {
        Ok(started) => started,
        Err(e) => {
            return Ran {
                ending: Ending::NotStarted(e),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    let mut stdin = child.stdin.take();
    let waited = wait(&mut child, &mut stdin, input, limit, cancel).await;
    // Whatever is left of the group goes now, hook and all.
    drop(group);
    let mut status = waited.status;
    if status.is_none()
        && let Ok(Ok(s)) = timeout(REAP_LIMIT, child.wait()).await
    {
        status = Some(s);
    }
    let ending = waited.ending.unwrap_or_else(|| ending_of(status));
    Ran {
        ending,
        stdout: masked(&waited.stdout),
        stderr: masked(&waited.stderr),
    }
}

/// The `sh -c` command of a hook: in `cwd`, with only `env`, its three streams piped, and killed when dropped.
fn hook_command(command: &str, cwd: &Path, env: &[(OsString, OsString)]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own group, to end everything it starts; no terminal to wait on; it dies with tern.
    own_group(&mut cmd);
    cmd
}

/// Starts `cmd` and the process group it leads, which is SIGKILLed when dropped.
fn spawn(mut cmd: Command) -> io::Result<(Child, KillOnDrop)> {
    let child = cmd.spawn()?;
    let Some(group) = child.id().and_then(Group::led_by) else {
        return Err(io::Error::other("the hook exited before its process id could be read"));
    };
    Ok((child, KillOnDrop(group)))
}

/// What waiting on a hook came to.
struct Waited {
    /// How the hook exited, when it did.
    status: Option<ExitStatus>,
    /// How the run ended without the hook's exit (timed out, cancelled, or waiting failed).
    ending: Option<Ending>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Writes `input` to the hook's stdin and reads its stdout and stderr until it has exited and its pipes are closed
/// (or `DRAIN_GRACE` after its exit), it passes `limit`, or `cancel` fires. `stdin` stays with the caller: a write
/// not finished keeps it open until the run is over.
async fn wait(
    child: &mut Child,
    stdin: &mut Option<ChildStdin>,
    input: &[u8],
    limit: Duration,
    cancel: &CancellationToken,
) -> Waited {
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut status = None;
    let mut ending = None;
    {
        let io = async {
            let write = async {
                if let Some(pipe) = stdin.as_mut() {
                    // A hook that does not read its input closes the pipe: that is its business.
                    let _ = pipe.write_all(input).await;
                    let _ = pipe.shutdown().await;
                }
                drop(stdin.take());
            };
            tokio::join!(write, read_capped(stdout, &mut out), read_capped(stderr, &mut err));
        };
        tokio::pin!(io);
        let deadline = Instant::now() + limit;
        let mut io_done = false;
        let mut drained_by: Option<Instant> = None;
        loop {
            if io_done && status.is_some() {
                break;
            }
            let drained = async {
                match drained_by {
                    Some(at) => sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = &mut io, if !io_done => io_done = true,
                waited = child.wait(), if status.is_none() => match waited {
                    Ok(s) => {
                        status = Some(s);
                        drained_by = Some(Instant::now() + DRAIN_GRACE);
                    }
                    Err(e) => {
                        ending = Some(Ending::NotStarted(e));
                        break;
                    }
                },
                () = drained => break,
                () = sleep_until(deadline), if status.is_none() => {
                    ending = Some(Ending::TimedOut(limit));
                    break;
                }
                () = cancel.cancelled(), if status.is_none() => {
                    ending = Some(Ending::Cancelled);
                    break;
                }
            }
        }
    }
    Waited {
        status,
        ending,
        stdout: out,
        stderr: err,
    }
}

/// How a hook ended by its exit status: its exit code or the signal that ended it; `None` (it was not reaped even
/// after SIGKILL) counts as not started.
fn ending_of(status: Option<ExitStatus>) -> Ending {
    match status {
        Some(s) => {
            use std::os::unix::process::ExitStatusExt;
            match (s.code(), s.signal()) {
                (Some(code), _) => Ending::Exit(code),
                (None, Some(signal)) => Ending::Signal(signal),
                (None, None) => Ending::Exit(-1),
            }
        }
        None => Ending::NotStarted(io::Error::other("the hook did not exit after SIGKILL")),
    }
}

/// Reads `pipe` to its end, keeping the first `OUTPUT_CAP` bytes.
async fn read_capped<R: AsyncRead + Unpin>(pipe: Option<R>, kept: &mut Vec<u8>) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut buf = vec![0; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

fn masked(bytes: &[u8]) -> String {
    tern_secrets::mask(&String::from_utf8_lossy(bytes)).into_owned()
}

/// The hook's process group; SIGKILLed when dropped, so neither a finished nor a dropped run leaves anything behind.
struct KillOnDrop(Group);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.kill();
    }
}
