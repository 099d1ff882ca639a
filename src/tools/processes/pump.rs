//! A live process's pump: one task per process that reads its output into the table (and, throttled, to the
//! frontends as `Event::ProcessOutput`) until it ends, then ends whatever it left running in its group and records
//! how it ended.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant, sleep_until};

use super::table::{Live, WeakTable};
use crate::OutputSink;
use crate::exec::live::{LiveOutput, Stream};
use crate::exec::process::Launched;
use tern_process::group::Group;
use tern_protocol::Event;
use tern_protocol::process::ProcessEnd;

/// After the process exits: how long what it left running may keep its output open before the group is killed.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
const READ_CHUNK: usize = 64 * 1024;

/// Kills the group when the pump is dropped before the process ended (the runtime shut down under it).
struct KillOnDrop(Option<Group>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            group.kill();
        }
    }
}

/// Runs until the process has ended; `group` is the group its launcher or bash leads.
pub(crate) async fn pump(
    table: WeakTable,
    live: Arc<Live>,
    mut child: Launched,
    output: AsyncFd<OwnedFd>,
    group: Option<Group>,
) {
    let mut guard = KillOnDrop(group);
    let (mut frontend, forwarder) = table
        .upgrade()
        .and_then(|table| frontend(table.emitter(), &live.info.id))
        .unzip();
    let mut buf = vec![0; READ_CHUNK];
    let mut open = true;
    let mut status = None;
    let far = Instant::now() + Duration::from_secs(86_400 * 365);
    let drained = sleep_until(far);
    let tick = sleep_until(far);
    tokio::pin!(drained, tick);
    let mut tick_at = None;
    loop {
        if status.is_some() && !open {
            break;
        }
        let next = frontend.as_ref().and_then(LiveOutput::deadline);
        if next != tick_at {
            if let Some(at) = next {
                tick.as_mut().reset(at);
            }
            tick_at = next;
        }
        tokio::select! {
            n = read(&output, &mut buf), if open => match n {
                Ok(n) if n > 0 => {
                    live.push(&buf[..n]);
                    if let Some(frontend) = &mut frontend {
                        frontend.push(Stream::Out, &buf[..n], Instant::now());
                    }
                }
                _ => open = false,
            },
            waited = child.wait(), if status.is_none() => {
                status = Some(waited);
                drained.as_mut().reset(Instant::now() + DRAIN_GRACE);
            }
            () = &mut drained, if status.is_some() => break,
            () = &mut tick, if tick_at.is_some() => {
                if let Some(frontend) = &mut frontend {
                    frontend.flush(Instant::now());
                }
                tick_at = None;
            }
        }
    }
    // Nothing outlives its process: what it left running in its group ends now.
    if let Some(group) = guard.0.take() {
        group.kill();
    }
    // What the pipe or terminal still holds.
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(50), read(&output, &mut buf)).await {
        if n == 0 {
            break;
        }
        live.push(&buf[..n]);
        if let Some(frontend) = &mut frontend {
            frontend.push(Stream::Out, &buf[..n], Instant::now());
        }
    }
    if let Some(frontend) = &mut frontend {
        frontend.finish();
    }
    // The last output reaches the frontends before the exit does.
    drop(frontend);
    if let Some(forwarder) = forwarder {
        let _ = forwarder.await;
    }
    let end = match (live.stopped_by(), status) {
        (Some(by), _) => ProcessEnd::Stopped { by },
        (None, Some(Ok(status))) => ended(status),
        (None, Some(Err(e))) => ProcessEnd::Lost { reason: e.to_string() },
        (None, None) => ProcessEnd::Lost {
            reason: "its output closed before it exited".into(),
        },
    };
    match table.upgrade() {
        Some(table) => table.ended(&live, end),
        None => live.finish(end),
    }
}

fn ended(status: std::process::ExitStatus) -> ProcessEnd {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ProcessEnd::Exited { code },
        (None, Some(signal)) => ProcessEnd::Signalled { signal },
        (None, None) => ProcessEnd::Lost {
            reason: "no exit status".into(),
        },
    }
}

/// The throttled live output for the frontends (as `exec` streams a command's to its pane), when anyone listens, and
/// the task that hands it on (it ends once the output is dropped and all of it went out).
fn frontend(emit: Option<super::Emit>, id: &str) -> Option<(LiveOutput, tokio::task::JoinHandle<()>)> {
    let emit = emit?;
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let id = id.to_string();
    let forwarder = tokio::spawn(async move {
        while let Some(chunk) = rx.recv().await {
            emit(Event::ProcessOutput {
                id: id.clone(),
                chunk: masked(chunk),
            });
        }
    });
    Some((LiveOutput::new(OutputSink::new(tx), Instant::now()), forwarder))
}

/// `chunk` with the registered secrets masked. They are looked for in the text without escapes, so a colour code
/// inside a key cannot hide it; a chunk that holds one goes out plain (masked, without its escapes).
fn masked(chunk: String) -> String {
    let plain = tern_text::ansi::strip(&chunk);
    match tern_secrets::mask(&plain) {
        std::borrow::Cow::Borrowed(_) => chunk,
        std::borrow::Cow::Owned(masked) => masked,
    }
}

/// Reads what the terminal or pipe has. A terminal whose every slave is closed reads as `EIO`: its end.
async fn read(fd: &AsyncFd<OwnedFd>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        let mut ready = fd.readable().await?;
        match ready.try_io(|inner| rustix::io::read(inner.get_ref(), &mut *buf).map_err(io::Error::from)) {
            Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Ok(0),
            Ok(result) => return result,
            Err(_would_block) => continue,
        }
    }
}
