//! Running one command: `bash -c` in a session and process group of its own, stdout and stderr read concurrently, and
//! the whole group ended on timeout, interrupt, drop, or when the command finishes with processes still running.
//!
//! The child calls `setsid()` before exec. That gives it its own process group (pgid = its pid, as
//! `process_group(0)` would) and also detaches it from tern's terminal: a program that opens /dev/tty to ask for a
//! password (ssh, sudo, git) fails at once instead of stopping the job in the background until the timeout.
//!
//! Ending a group: SIGTERM (and SIGCONT, so stopped members see it), up to half a second for it to go, then SIGKILL.
//! When bash exits on its own, children it left in the background may still hold the pipes: they get 200 ms to
//! finish, then the group is ended the same way. If the future is dropped mid-run, a guard SIGKILLs the group.
//! A process that calls `setsid()` itself leaves the group and is out of reach of the group signals. In the OS
//! sandbox (`spec.sandbox`) that does not matter: the command runs under tern's sandbox launcher, whose PID namespace
//! ends every process it holds when the command's main process ends or the launcher dies, and the launcher is the
//! group leader here, so everything below applies to it unchanged. The child also gets `PR_SET_PDEATHSIG`, so the
//! launcher (and with it the namespace) dies even when tern is killed with SIGKILL and cannot end the group.
//!
//! Most sandboxed commands are not spawned by tern at all: the session's sandbox holder forks their launcher inside
//! its namespaces (`tern_sandbox::HeldStart`), which saves a fork of tern and an exec of the launcher per command.
//! That launcher calls `setsid()` too, leads the group tern signals, and dies with the holder, which dies with tern;
//! its wait status comes over a socket instead of from `wait`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::time::{Duration, Instant, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

use super::capture::Capture;
use super::live::{LiveOutput, Stream};
use super::spill::{Spill, Stored};
use crate::OutputSink;
use tern_process::env;
use tern_process::group::{Group, Signal, own_group};
use tern_sandbox::{HeldChild, HeldStart, Launch, SandboxPolicy};

/// After bash exits: how long children it left behind may keep the pipes open before they are ended.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// After bash exits and the pipes close: how long exiting children have to disappear before they count as left behind.
const EXIT_SETTLE: Duration = Duration::from_millis(100);
/// After SIGTERM: how long the group has before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// After SIGKILL: how long to wait for bash to be reaped, and for the pipes to give up what they still hold.
const REAP_LIMIT: Duration = Duration::from_secs(2);
const FINAL_DRAIN: Duration = Duration::from_millis(100);
/// How often to look whether a signalled group is gone.
const POLL: Duration = Duration::from_millis(20);
const READ_CHUNK: usize = 64 * 1024;

pub(super) struct Spec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub timeout: Duration,
    pub env_allow: &'a [String],
    /// Bytes kept at each end of each stream.
    pub capture_cap: usize,
    /// Run inside the OS sandbox, for a command in this workspace; `None` runs bash directly.
    pub sandbox: Option<(&'a SandboxPolicy, &'a Path)>,
    /// Where the whole output goes once it passes `capture_cap` bytes (see `spill`); `None` keeps only the capture.
    pub full_output: Option<&'a Path>,
    /// git gets the neutral environment (`git_env`): the command runs unasked from the read-only list.
    pub neutral_git: bool,
}

pub(super) enum Ending {
    Exited(ExitStatus),
    TimedOut,
    Interrupted,
    /// Waiting for bash failed; it was killed.
    Lost(io::Error),
}

pub(super) struct Finished {
    pub ending: Ending,
    pub stdout: Capture,
    pub stderr: Capture,
    pub duration: Duration,
    /// Processes were still running after bash exited and were ended.
    pub killed_leftovers: bool,
    /// Where the whole output went, when it was long.
    pub stored: Option<Stored>,
}

/// Runs `spec.command` to the end. `Err` only when bash could not be started.
pub(super) async fn run(spec: &Spec<'_>, cancel: &CancellationToken, sink: &OutputSink) -> io::Result<Finished> {
    let start = Instant::now();
    let mut vars = env::child_env(spec.env_allow);
    if spec.neutral_git {
        tern_process::git_env::neutralise(&mut vars);
    }
    let launch = match spec.sandbox {
        Some((policy, workspace)) => tern_sandbox::command(policy, workspace, spec.command)?,
        None => {
            let mut bash = std::process::Command::new(tern_fs::search_path::bash());
            bash.arg("-c").arg(spec.command);
            Launch::Spawn(bash)
        }
    };
    let (child, pid, out, err) = match launch {
        Launch::Held { start, fallback } => match start_held(start, spec.cwd, &vars).await {
            Ok(started) => started,
            Err(e) => {
                tracing::warn!("sandbox holder: {e}; starting a launcher for this command");
                spawn(fallback, spec.cwd, vars)?
            }
        },
        Launch::Spawn(cmd) => spawn(cmd, spec.cwd, vars)?,
    };
    let group = GroupGuard {
        group: u32::try_from(pid).ok().and_then(Group::led_by),
        armed: true,
    };
    let pipes = Pipes {
        out: Some(out),
        err: Some(err),
        out_buf: vec![0; READ_CHUNK],
        err_buf: vec![0; READ_CHUNK],
    };
    let sinks = Sinks {
        out: Capture::new(spec.capture_cap),
        err: Capture::new(spec.capture_cap),
        spill: Spill::new(spec.full_output, spec.capture_cap),
        live: sink.is_connected().then(|| LiveOutput::new(sink.clone(), start)),
    };

    let mut run = Running {
        child,
        group,
        pipes,
        sinks,
        status: None,
        ending: None,
    };
    run.pump(start + spec.timeout, cancel).await;
    let leftovers = run.end_group().await;
    run.reap_and_drain().await;
    let Running {
        sinks, status, ending, ..
    } = run;
    let ending = match (ending, status) {
        (Some(ending), _) => ending,
        (None, Some(status)) => Ending::Exited(status),
        (None, None) => Ending::Lost(io::Error::other("bash did not exit after SIGKILL")),
    };
    Ok(Finished {
        killed_leftovers: leftovers && matches!(ending, Ending::Exited(_)),
        ending,
        stdout: sinks.out,
        stderr: sinks.err,
        duration: start.elapsed(),
        stored: sinks.spill.finish(),
    })
}

/// A pipe tern reads a command's output from.
type Output = Box<dyn AsyncRead + Unpin + Send>;

/// Spawns `cmd` (bash, or a sandbox launcher) in `cwd` with exactly `vars`, in a session and process group of its own;
/// returns it, its process id and its stdout and stderr.
fn spawn(
    cmd: std::process::Command,
    cwd: &Path,
    vars: BTreeMap<OsString, OsString>,
) -> io::Result<(Launched, i32, Output, Output)> {
    let mut cmd = Command::from(cmd);
    cmd.current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd.env_clear().envs(vars);
    // For a sandboxed command the child is the launcher, so its whole PID namespace dies with tern too.
    own_group(&mut cmd);
    let mut child = cmd.spawn()?;
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    let Some(pid) = pid else {
        return Err(io::Error::other("bash exited before its process id could be read"));
    };
    let out = child.stdout.take().ok_or_else(|| io::Error::other("no stdout"))?;
    let err = child.stderr.take().ok_or_else(|| io::Error::other("no stderr"))?;
    Ok((Launched::Spawned(child), pid, Box::new(out), Box::new(err)))
}

/// Has the session's sandbox holder start the command (see `tern_sandbox::HeldStart`): its launcher leads a session
/// and process group of its own and dies with the holder, which dies with tern.
async fn start_held(
    start: HeldStart,
    cwd: &Path,
    vars: &BTreeMap<OsString, OsString>,
) -> io::Result<(Launched, i32, Output, Output)> {
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let vars: Vec<(OsString, OsString)> = vars.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let child = start.start(cwd, &vars, out_write, err_write).await?;
    let pid = child.pid;
    let out = tokio::net::unix::pipe::Receiver::from_owned_fd(out_read)?;
    let err = tokio::net::unix::pipe::Receiver::from_owned_fd(err_read)?;
    Ok((Launched::Held(child), pid, Box::new(out), Box::new(err)))
}

/// A pipe whose ends close on exec, as (read, write).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// The process tern waits for: bash or a launcher it spawned, or a launcher the sandbox holder started.
pub(crate) enum Launched {
    Spawned(Child),
    Held(HeldChild),
}

impl Launched {
    /// Its wait status once it has ended. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Self::Spawned(child) => child.wait().await,
            Self::Held(child) => child.wait().await,
        }
    }
}

/// A started command and what is known about it so far.
struct Running {
    child: Launched,
    group: GroupGuard,
    pipes: Pipes,
    sinks: Sinks,
    status: Option<ExitStatus>,
    /// Set when the run ended other than by bash exiting.
    ending: Option<Ending>,
}

impl Running {
    /// Reads output until bash exits and the pipes close (or the drain grace after its exit ends), the timeout
    /// passes, or `cancel` fires.
    async fn pump(&mut self, timeout_at: Instant, cancel: &CancellationToken) {
        let Self {
            child,
            pipes,
            sinks,
            status,
            ending,
            ..
        } = self;
        // The futures live across iterations: re-creating timers and the wait each time a pipe has data would cost
        // more than reading it.
        let wait = child.wait();
        let cancelled = cancel.cancelled();
        let timed_out = sleep_until(timeout_at);
        let drained = sleep_until(timeout_at);
        let live_timer = sleep_until(timeout_at);
        tokio::pin!(wait, cancelled, timed_out, drained, live_timer);
        let mut draining = false;
        let mut live_at: Option<Instant> = None;
        loop {
            if status.is_some() && pipes.closed() {
                return;
            }
            let next_live = sinks.live_deadline();
            if next_live != live_at {
                if let Some(at) = next_live {
                    live_timer.as_mut().reset(at);
                }
                live_at = next_live;
            }
            tokio::select! {
                () = &mut cancelled => {
                    if status.is_none() {
                        *ending = Some(Ending::Interrupted);
                    }
                    return;
                }
                () = &mut timed_out, if status.is_none() => {
                    *ending = Some(Ending::TimedOut);
                    return;
                }
                () = &mut drained, if draining => return,
                waited = &mut wait, if status.is_none() => match waited {
                    Ok(s) => {
                        *status = Some(s);
                        drained.as_mut().reset(Instant::now() + DRAIN_GRACE);
                        draining = true;
                    }
                    Err(e) => {
                        *ending = Some(Ending::Lost(e));
                        return;
                    }
                },
                n = read_some(&mut pipes.out, &mut pipes.out_buf), if pipes.out.is_some() => {
                    pipes.took(Stream::Out, n, sinks);
                }
                n = read_some(&mut pipes.err, &mut pipes.err_buf), if pipes.err.is_some() => {
                    pipes.took(Stream::Err, n, sinks);
                }
                () = &mut live_timer, if live_at.is_some() => {
                    sinks.tick();
                    live_at = None;
                }
            }
        }
    }

    /// Ends whatever is left of the group: after a timeout or an interrupt that is the command itself; after a normal
    /// exit, whatever it left running in the background. SIGTERM, output still read while the group has
    /// `TERM_GRACE` to go, then SIGKILL. Returns whether anything was left running.
    async fn end_group(&mut self) -> bool {
        // A child that just closed the pipes may still be exiting, so after a normal exit the group gets a moment to
        // empty before what is left counts as left behind.
        let settle = if self.status.is_some() && self.ending.is_none() {
            EXIT_SETTLE
        } else {
            Duration::ZERO
        };
        let leftovers = self.group.alive_after(settle).await;
        if leftovers {
            self.group.signal(Signal::TERM);
            self.group.signal(Signal::CONT);
            let deadline = Instant::now() + TERM_GRACE;
            let mut next_poll = Instant::now() + POLL;
            let Self {
                child,
                group,
                pipes,
                sinks,
                status,
                ending,
            } = self;
            loop {
                if status.is_some() && pipes.closed() && !group.alive().await {
                    break;
                }
                tokio::select! {
                    () = sleep_until(deadline) => break,
                    () = sleep_until(next_poll) => next_poll += POLL,
                    waited = child.wait(), if status.is_none() => match waited {
                        Ok(s) => *status = Some(s),
                        Err(e) => {
                            ending.get_or_insert(Ending::Lost(e));
                            break;
                        }
                    },
                    n = read_some(&mut pipes.out, &mut pipes.out_buf), if pipes.out.is_some() => {
                        pipes.took(Stream::Out, n, sinks);
                    }
                    n = read_some(&mut pipes.err, &mut pipes.err_buf), if pipes.err.is_some() => {
                        pipes.took(Stream::Err, n, sinks);
                    }
                }
            }
        }
        self.group.signal(Signal::KILL);
        self.group.armed = false;
        leftovers
    }

    /// After SIGKILL: reaps bash and reads what the pipes still hold. Everything in the group is dead, so the pipes
    /// end as soon as their buffers are read; only a process that left the group could keep them open.
    async fn reap_and_drain(&mut self) {
        if self.status.is_none()
            && let Ok(Ok(s)) = timeout(REAP_LIMIT, self.child.wait()).await
        {
            self.status = Some(s);
        }
        let Self { pipes, sinks, .. } = self;
        let _ = timeout(FINAL_DRAIN, async {
            while !pipes.closed() {
                tokio::select! {
                    n = read_some(&mut pipes.out, &mut pipes.out_buf), if pipes.out.is_some() => {
                        pipes.took(Stream::Out, n, sinks);
                    }
                    n = read_some(&mut pipes.err, &mut pipes.err_buf), if pipes.err.is_some() => {
                        pipes.took(Stream::Err, n, sinks);
                    }
                }
            }
        })
        .await;
        if let Some(live) = &mut sinks.live {
            live.finish();
        }
    }
}

struct Pipes {
    out: Option<Output>,
    err: Option<Output>,
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
}

impl Pipes {
    fn closed(&self) -> bool {
        self.out.is_none() && self.err.is_none()
    }

    /// Hands a read's bytes on; end of file or a read error closes the pipe.
    fn took(&mut self, stream: Stream, n: io::Result<usize>, sinks: &mut Sinks) {
        match (stream, n) {
            (Stream::Out, Ok(n)) if n > 0 => sinks.push(stream, &self.out_buf[..n]),
            (Stream::Err, Ok(n)) if n > 0 => sinks.push(stream, &self.err_buf[..n]),
            (Stream::Out, _) => self.out = None,
            (Stream::Err, _) => self.err = None,
        }
    }
}

async fn read_some<R: AsyncRead + Unpin>(pipe: &mut Option<R>, buf: &mut [u8]) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

struct Sinks {
    out: Capture,
    err: Capture,
    spill: Spill,
    live: Option<LiveOutput>,
}

impl Sinks {
    fn push(&mut self, stream: Stream, data: &[u8]) {
        match stream {
            Stream::Out => self.out.push(data),
            Stream::Err => self.err.push(data),
        }
        self.spill.push(data);
        if let Some(live) = &mut self.live {
            live.push(stream, data, Instant::now());
        }
    }

    fn live_deadline(&self) -> Option<Instant> {
        self.live.as_ref().and_then(LiveOutput::deadline)
    }

    fn tick(&mut self) {
        if let Some(live) = &mut self.live {
            live.flush(Instant::now());
        }
    }
}

/// The command's process group. Dropped while armed (the future was dropped mid-run), it SIGKILLs the group.
struct GroupGuard {
    group: Option<Group>,
    armed: bool,
}

impl GroupGuard {
    /// Sends `signal` to every process in the group; false when the group no longer exists.
    fn signal(&self, signal: Signal) -> bool {
        self.group.is_some_and(|group| group.signal(signal))
    }

    async fn alive(&self) -> bool {
        let Some(group) = self.group else {
            return false;
        };
        tokio::task::spawn_blocking(move || group.alive()).await.unwrap_or(true)
    }

    /// Whether the group still runs after up to `settle`; answers as soon as it is empty.
    async fn alive_after(&self, settle: Duration) -> bool {
        let deadline = Instant::now() + settle;
        loop {
            if !self.alive().await {
                return false;
            }
            if Instant::now() >= deadline {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.signal(Signal::KILL);
        }
    }
}
