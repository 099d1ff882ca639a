//! The session's holder process (`launcher::hold`): started on a session's first sandboxed command, it keeps the
//! namespaces and shared mounts of the session's commands, starts them when tern asks over its control socket
//! (`held`), and ends with the session. A command it cannot start (one that keeps tern's network, or too long to send)
//! gets a launcher of its own that joins its namespaces (`--join PID:START`).
//!
//! A holder is started for one set of shared arguments (the private temp, the temp directories it covers, what stays
//! visible under them, devices); a command with another set gets a new one. When a holder cannot be started (an old
//! kernel, a launcher that cannot join) commands make their own namespaces, as they did before holders existed: the
//! same sandbox at a higher cost per command.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use super::launcher::HOLDER_READY;
use super::namespaces::ProcessKey;

/// The session's holder, or why there is none.
#[derive(Debug, Default)]
pub(crate) struct HolderSlot {
    current: Option<Holder>,
}

#[derive(Debug)]
struct Holder {
    /// The shared arguments it was started with.
    key: Vec<OsString>,
    /// `None`: starting it failed for this key; commands make their own namespaces.
    process: Option<Running>,
}

#[derive(Debug)]
struct Running {
    /// Taken only on drop.
    child: Option<Child>,
    /// Read before anything could reap it, so its id cannot have been reused yet.
    key: ProcessKey,
    /// tern's end of the control socket (the holder's stdin): requests go here, and the holder ends at end of file.
    control: Arc<OwnedFd>,
}

impl Drop for Running {
    /// Closing the control socket ends the holder once the commands it started have finished (a command running when
    /// the holder is replaced is not cut short); it is reaped off this thread.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take()
            && matches!(child.try_wait(), Ok(None))
        {
            std::thread::spawn(move || child.wait());
        }
    }
}

impl HolderSlot {
    /// The running holder for `args` (the launcher's arguments with `--hold`), started by `launcher` in `workspace` if
    /// there is none yet: its key and its control socket. `None` when one cannot be started.
    pub(crate) fn get(
        &mut self,
        launcher: &Path,
        workspace: &Path,
        args: Vec<OsString>,
    ) -> Option<(ProcessKey, Arc<OwnedFd>)> {
        let usable = self.current.as_mut().is_some_and(|holder| {
            holder.key == args
                && holder
                    .process
                    .as_mut()
                    .is_none_or(|running| running.child.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None))))
        });
        if !usable {
            // The old one (if any) ends before the new one starts.
            self.current = None;
            let process = match start(launcher, workspace, &args) {
                Ok(running) => Some(running),
                Err(e) => {
                    tracing::warn!("sandbox holder: {e}; each command makes its own namespaces");
                    None
                }
            };
            self.current = Some(Holder { key: args, process });
        }
        let running = self.current.as_ref()?.process.as_ref()?;
        Some((running.key, running.control.clone()))
    }
}

fn start(launcher: &Path, workspace: &Path, args: &[OsString]) -> io::Result<Running> {
    let (control, holders_end) = super::held::control_pair()?;
    let mut child = Command::new(launcher)
        .args(args)
        .current_dir(workspace)
        .env_clear()
        .stdin(Stdio::from(holders_end))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Not in tern's process group: a Ctrl+C at the terminal is not for it.
        .process_group(0)
        .spawn()?;
    let mut stdout = child.stdout.take().ok_or_else(|| io::Error::other("no stdout"))?;
    let mut said = vec![0u8; HOLDER_READY.len()];
    // The holder says ready or exits (end of file): this cannot wait forever.
    let ready = stdout.read_exact(&mut said).is_ok() && said == HOLDER_READY;
    if !ready {
        let mut stderr = String::new();
        if let Some(mut err) = child.stderr.take() {
            let _ = child.kill();
            let _ = err.read_to_string(&mut stderr);
        }
        let _ = child.wait();
        return Err(io::Error::other(format!("could not start: {}", stderr.trim())));
    }
    match ProcessKey::of(child.id()) {
        Ok(key) => Ok(Running {
            child: Some(child),
            key,
            control: Arc::new(control),
        }),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(io::Error::other(format!("cannot read its start time: {e}")))
        }
    }
}
