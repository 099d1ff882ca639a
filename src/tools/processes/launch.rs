//! Starting a live process: `bash -c` exactly as `exec` starts one (the same child environment, the same sandbox
//! launch, a session and process group of its own that dies with tern), but with its stdio on a pseudo-terminal tern
//! opens (which becomes its controlling terminal) or on pipes whose input stays open.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;

use rustix::pty::OpenptFlags;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::process::Command;

use crate::exec::process::Launched;
use tern_process::env;
use tern_process::group::own_group;
use tern_sandbox::{Launch, SandboxPolicy};

/// What to start.
pub(crate) struct Spec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub env_allow: &'a [String],
    pub neutral_git: bool,
    /// Run inside the OS sandbox, for a command in this workspace; `None` runs bash directly.
    pub sandbox: Option<(&'a SandboxPolicy, &'a Path)>,
    /// On a pseudo-terminal of this size (cols, rows); `None`: on pipes.
    pub tty: Option<(u16, u16)>,
}

/// A started process: what tern waits for, its group leader's pid, where its output comes from and where its input
/// goes.
pub(crate) struct Started {
    pub child: Launched,
    pub pid: i32,
    pub output: AsyncFd<OwnedFd>,
    pub input: OwnedFd,
}

/// The child's ends (stdin, stdout, stderr) and tern's (output, input).
struct Ends {
    child: [OwnedFd; 3],
    output: OwnedFd,
    input: OwnedFd,
}

pub(crate) async fn start(spec: &Spec<'_>) -> io::Result<Started> {
    let mut vars = env::child_env(spec.env_allow);
    if spec.neutral_git {
        tern_process::git_env::neutralise(&mut vars);
    }
    if spec.tty.is_some() {
        vars.insert("TERM".into(), "xterm-256color".into());
    }
    let ends = match spec.tty {
        Some((cols, rows)) => terminal(cols, rows)?,
        None => pipes()?,
    };
    let Ends { child, output, input } = ends;
    let tty = spec.tty.is_some();
    let launch = match spec.sandbox {
        Some((policy, workspace)) => tern_sandbox::command_with(policy, workspace, spec.command, tty)?,
        None => {
            let mut bash = std::process::Command::new(tern_fs::search_path::bash());
            bash.arg("-c").arg(spec.command);
            Launch::Spawn(bash)
        }
    };
    let (child, pid) = match launch {
        Launch::Held { start, fallback } => {
            let spare = clone_all(&child)?;
            let list: Vec<(OsString, OsString)> = vars.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            match start.start_with(spec.cwd, &list, child).await {
                Ok(held) => {
                    let pid = held.pid;
                    (Launched::Held(held), pid)
                }
                Err(e) => {
                    tracing::warn!("sandbox holder: {e}; starting a launcher for this process");
                    spawn(fallback, spec.cwd, vars, spare, false)?
                }
            }
        }
        // A sandbox launcher makes the terminal its session's itself (`--tty`).
        Launch::Spawn(cmd) => spawn(cmd, spec.cwd, vars, child, tty && spec.sandbox.is_none())?,
    };
    rustix::io::ioctl_fionbio(&output, true)?;
    rustix::io::ioctl_fionbio(&input, true)?;
    // SAFETY: `output` is an `OwnedFd` the `AsyncFd` owns: it stays open, and the same descriptor, until dropped.
    let output =
        unsafe { AsyncFd::register_with_interest(output, Interest::READABLE) }.map_err(|e| e.into_parts().1)?;
    Ok(Started {
        child,
        pid,
        output,
        input,
    })
}

fn clone_all(fds: &[OwnedFd; 3]) -> io::Result<[OwnedFd; 3]> {
    Ok([fds[0].try_clone()?, fds[1].try_clone()?, fds[2].try_clone()?])
}

/// A pseudo-terminal of `cols` x `rows`: its slave side is the child's stdio, its master side tern's output and input.
fn terminal(cols: u16, rows: u16) -> io::Result<Ends> {
    let master = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let slave = match rustix::pty::ioctl_tiocgptpeer(&master, OpenptFlags::RDWR | OpenptFlags::NOCTTY) {
        Ok(slave) => slave,
        Err(_) => {
            let name = rustix::pty::ptsname(&master, Vec::new())?;
            rustix::fs::open(
                name.as_c_str(),
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?
        }
    };
    let size = rustix::termios::Winsize {
        ws_col: cols,
        ws_row: rows,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(&master, size)?;
    Ok(Ends {
        child: [slave.try_clone()?, slave.try_clone()?, slave],
        input: master.try_clone()?,
        output: master,
    })
}

/// Pipes: one for stdin, kept open, and one for stdout and stderr together (interleaved as a terminal shows them).
fn pipes() -> io::Result<Ends> {
    let flags = rustix::pipe::PipeFlags::CLOEXEC;
    let (stdin, input) = rustix::pipe::pipe_with(flags)?;
    let (output, out) = rustix::pipe::pipe_with(flags)?;
    Ok(Ends {
        child: [stdin, out.try_clone()?, out],
        output,
        input,
    })
}

/// Spawns `cmd` (bash, or a sandbox launcher) as `exec` does, with `stdio`; on a terminal (`tty`) it becomes the
/// controlling terminal of the child's new session.
fn spawn(
    cmd: std::process::Command,
    cwd: &Path,
    vars: BTreeMap<OsString, OsString>,
    [stdin, stdout, stderr]: [OwnedFd; 3],
    tty: bool,
) -> io::Result<(Launched, i32)> {
    let mut cmd = Command::from(cmd);
    cmd.current_dir(cwd)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true);
    cmd.env_clear().envs(vars);
    own_group(&mut cmd);
    if tty {
        // SAFETY: runs between fork and exec, after `own_group`'s `setsid`; it makes one system call through rustix
        // (no allocation, no lock).
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?;
                Ok(())
            });
        }
    }
    let child = cmd.spawn()?;
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("bash exited before its process id could be read"))?;
    Ok((Launched::Spawned(child), pid))
}
