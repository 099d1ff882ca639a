//! Commands the session's holder starts (`launcher::hold`): instead of tern spawning a launcher that joins the holder's
//! namespaces (an exec of the launcher and a fork of tern for every command), tern sends the holder the command over
//! a socket only the two of them hold, and the holder forks the command's launcher, already inside its namespaces.
//!
//! A request is one `SOCK_SEQPACKET` message: the working directory, the environment and the launcher's arguments,
//! each ending in a NUL byte, with the command's stdin, stdout and stderr and a report socket passed as descriptors.
//! The forked launcher (`launcher::serve`) says its process id on the report socket (it leads the command's process
//! group, so tern signals the group as it does for a launcher it spawned), runs the command exactly as a spawned
//! launcher does, then writes the command's wait status and exits. A report socket that ends without a status means
//! the launcher was killed (only SIGKILL can: it ignores the polite signals).
//!
//! Commands cannot reach the control socket: the holder has it as its stdin, and the forked launcher replaces its
//! stdin with the command's before anything else runs.

use std::ffi::{OsStr, OsString};
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};

/// The largest request: the launcher's arguments hold the command's script, so a longer script is run by a launcher
/// tern spawns instead.
pub(super) const MAX_REQUEST: usize = 192 * 1024;
/// Descriptors in a request: stdin, stdout, stderr, report.
const FDS: usize = 4;
/// How long tern waits for the forked launcher to say its process id.
const START_LIMIT: Duration = Duration::from_secs(10);

/// A socket pair for the holder's control channel: (tern's end, the holder's end, which becomes its stdin).
pub(super) fn control_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    socket_pair(SocketType::SEQPACKET)
}

fn socket_pair(kind: SocketType) -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        AddressFamily::UNIX,
        kind,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// A command to start through the holder: its control socket and the launcher's arguments (without `__sandbox`).
pub struct HeldStart {
    pub(super) control: Arc<OwnedFd>,
    pub(super) args: Vec<OsString>,
}

impl HeldStart {
    /// Asks the holder to start the command in `cwd` with `env`, its stdin from `/dev/null` and its output to
    /// `stdout` and `stderr`. `Err` when it could not start (nothing ran then, so the caller may spawn a launcher).
    pub async fn start(
        self,
        cwd: &Path,
        env: &[(OsString, OsString)],
        stdout: OwnedFd,
        stderr: OwnedFd,
    ) -> io::Result<HeldChild> {
        let stdin: OwnedFd = std::fs::File::open("/dev/null")?.into();
        self.start_with(cwd, env, [stdin, stdout, stderr]).await
    }

    /// `start` with the command's stdin too (a live process's pipe or terminal).
    pub async fn start_with(
        self,
        cwd: &Path,
        env: &[(OsString, OsString)],
        [stdin, stdout, stderr]: [OwnedFd; 3],
    ) -> io::Result<HeldChild> {
        let payload = encode(cwd, env, &self.args);
        if payload.len() > MAX_REQUEST {
            return Err(io::Error::other("the command is too long to send to the holder"));
        }
        let (report, theirs) = socket_pair(SocketType::STREAM)?;
        send(
            &self.control,
            &payload,
            [stdin.as_fd(), stdout.as_fd(), stderr.as_fd(), theirs.as_fd()],
        )?;
        // Only the launcher holds these now: tern's copies would keep the pipes open after it ends.
        drop((stdin, stdout, stderr, theirs));
        // Waited for on the runtime, so a holder slow to answer holds up no other task.
        let report = UnixStream::from(report);
        report.set_nonblocking(true)?;
        let mut report = tokio::net::UnixStream::from_std(report)?;
        let mut pid = [0u8; 4];
        let read = tokio::time::timeout(START_LIMIT, tokio::io::AsyncReadExt::read_exact(&mut report, &mut pid))
            .await
            .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time")));
        read.map_err(|e| io::Error::new(e.kind(), format!("the holder did not start the command: {e}")))?;
        let pid = i32::from_ne_bytes(pid);
        if pid <= 0 {
            return Err(io::Error::other("the holder sent no process id"));
        }
        Ok(HeldChild {
            pid,
            report,
            status: Vec::with_capacity(4),
        })
    }
}

/// A command the holder started: its launcher's process id (the leader of its process group) and the socket its wait
/// status comes on.
pub struct HeldChild {
    pub pid: i32,
    report: tokio::net::UnixStream,
    status: Vec<u8>,
}

impl HeldChild {
    /// Waits for the command's wait status, and for its launcher to be gone. Cancel-safe: what was read is kept.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 8];
        loop {
            let n = self.report.read(&mut buf).await?;
            if n == 0 {
                // The launcher is gone; without a full status it was killed before it could write one.
                return Ok(match <[u8; 4]>::try_from(self.status.as_slice()) {
                    Ok(status) => ExitStatus::from_raw(i32::from_ne_bytes(status)),
                    Err(_) => ExitStatus::from_raw(libc::SIGKILL),
                });
            }
            let room = 4usize.saturating_sub(self.status.len());
            self.status.extend_from_slice(&buf[..n.min(room)]);
        }
    }
}

/// A request as the holder receives it.
pub(super) struct Request {
    pub cwd: PathBuf,
    pub env: Vec<OsString>,
    pub args: Vec<OsString>,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub report: OwnedFd,
}

/// `cwd`, the number of variables, each `KEY=VALUE`, then the arguments: each ends in NUL (none can hold one).
fn encode(cwd: &Path, env: &[(OsString, OsString)], args: &[OsString]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(bytes);
        out.push(0);
    };
    field(cwd.as_os_str().as_bytes());
    field(env.len().to_string().as_bytes());
    for (key, value) in env {
        field(&[key.as_bytes(), b"=", value.as_bytes()].concat());
    }
    for arg in args {
        field(arg.as_bytes());
    }
    out
}

fn decode(bytes: &[u8]) -> Option<(PathBuf, Vec<OsString>, Vec<OsString>)> {
    let mut fields = bytes.strip_suffix(&[0])?.split(|b| *b == 0);
    let cwd = PathBuf::from(OsStr::from_bytes(fields.next()?));
    let count: usize = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    let mut env = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        env.push(OsString::from_vec(fields.next()?.to_vec()));
    }
    let args = fields.map(|f| OsString::from_vec(f.to_vec())).collect();
    Some((cwd, env, args))
}

/// Sends one request: `payload` with `fds` attached.
fn send(control: &OwnedFd, payload: &[u8], fds: [BorrowedFd<'_>; FDS]) -> io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(FDS))];
    let mut ancillary = SendAncillaryBuffer::new(&mut space);
    // The buffer is sized for this one message, so it always fits.
    if !ancillary.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(io::Error::other("no room for the descriptors"));
    }
    let iov = [IoSlice::new(payload)];
    loop {
        match rustix::net::sendmsg(control, &iov, &mut ancillary, SendFlags::NOSIGNAL) {
            Ok(_) => return Ok(()),
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Receives one request on `control` into `payload` (`MAX_REQUEST` bytes, kept between requests): `Ok(None)` at end
/// of file (tern closed its end), `Ok(Some(Err(..)))` for a malformed request (its descriptors are closed), `Err` when
/// the socket fails.
pub(super) fn receive(control: BorrowedFd<'_>, payload: &mut Vec<u8>) -> io::Result<Option<Result<Request, String>>> {
    payload.resize(MAX_REQUEST, 0);
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(FDS))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    // Received descriptors are close-on-exec.
    let received = loop {
        let mut iov = [IoSliceMut::new(payload)];
        match rustix::net::recvmsg(control, &mut iov, &mut ancillary, RecvFlags::CMSG_CLOEXEC) {
            Ok(received) => break received,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    };
    // Each SCM_RIGHTS message carries descriptors now owned by this process; anything else is dropped.
    let fds: Vec<OwnedFd> = ancillary
        .drain()
        .filter_map(|message| match message {
            RecvAncillaryMessage::ScmRights(fds) => Some(fds),
            _ => None,
        })
        .flatten()
        .collect();
    let n = received.bytes;
    if n == 0 && fds.is_empty() {
        return Ok(None);
    }
    if received.flags.intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC) {
        return Ok(Some(Err("request too large".into())));
    }
    let Ok::<[OwnedFd; FDS], _>([stdin, stdout, stderr, report]) = fds.try_into() else {
        return Ok(Some(Err("a request needs four descriptors".into())));
    };
    let Some((cwd, env, args)) = decode(&payload[..n]) else {
        return Ok(Some(Err("malformed request".into())));
    };
    Ok(Some(Ok(Request {
        cwd,
        env,
        args,
        stdin,
        stdout,
        stderr,
        report,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_with_its_descriptors() {
        let (tern, holder) = control_pair().unwrap();
        let env = vec![
            (OsString::from("PATH"), OsString::from("/usr/bin:/bin")),
            ("EMPTY".into(), "".into()),
        ];
        let args: Vec<OsString> = vec![
            "--write".into(),
            "/w".into(),
            "--".into(),
            "bash".into(),
            "-c".into(),
            "".into(),
        ];
        let payload = encode(Path::new("/w/sub dir"), &env, &args);
        let files: Vec<OwnedFd> = (0..4)
            .map(|_| std::fs::File::open("/dev/null").unwrap().into())
            .collect();
        let fds: Vec<BorrowedFd<'_>> = files.iter().map(|f| f.as_fd()).collect();
        send(&tern, &payload, fds.try_into().unwrap()).unwrap();
        let mut buf = Vec::new();
        let request = receive(holder.as_fd(), &mut buf).unwrap().unwrap().unwrap();
        assert_eq!(request.cwd, Path::new("/w/sub dir"));
        assert_eq!(request.env, [OsString::from("PATH=/usr/bin:/bin"), "EMPTY=".into()]);
        assert_eq!(request.args, args);
        // Received descriptors are new ones, closed on exec.
        let flags = rustix::io::fcntl_getfd(&request.report).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        drop(tern);
        assert!(
            receive(holder.as_fd(), &mut buf).unwrap().is_none(),
            "end of file once tern's end closes"
        );
    }

    #[test]
    fn a_request_without_its_descriptors_is_refused() {
        let (tern, holder) = control_pair().unwrap();
        rustix::net::send(&tern, b"x\0", SendFlags::empty()).unwrap();
        assert!(receive(holder.as_fd(), &mut Vec::new()).unwrap().unwrap().is_err());
    }
}
