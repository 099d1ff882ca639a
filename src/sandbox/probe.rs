//! Whether this kernel can run the sandbox: Landlock, and user, mount, PID and network namespaces in which a fresh
//! `/proc` can be mounted. Checked once per process, in a forked child, so tern itself never changes namespace.

use std::sync::OnceLock;

use rustix::io::Errno;
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::process::{Pid, WaitOptions, WaitStatus};
use rustix::thread::UnshareFlags;

use super::namespaces;

/// Whether commands can run in the sandbox here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    Available,
    /// Why not, for the notice shown to the user.
    Unavailable(String),
}

impl Support {
    pub fn is_available(&self) -> bool {
        matches!(self, Support::Available)
    }
}

/// Exit codes of the probe child, one per step that can fail.
const NO_NAMESPACES: i32 = 10;
const NO_LANDLOCK: i32 = 11;
const NO_FORK: i32 = 12;
const NO_PRIVATE_MOUNTS: i32 = 13;
const NO_PROC: i32 = 14;

/// Checks (once; later calls return the first answer) whether the sandbox works on this kernel.
pub fn probe() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(check)
}

fn check() -> Support {
    // SAFETY: tern may have other threads, so the child only makes system calls (no allocation, no locks) until
    // _exit: each call below is async-signal-safe, and the strings are static.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Support::Unavailable(format!("cannot fork to test it: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see above.
        unsafe { libc::_exit(probe_child()) }
    }
    let Some(status) = wait_for(pid) else {
        return Support::Unavailable("lost the test process".into());
    };
    let Some(code) = status.exit_status() else {
        return Support::Unavailable("the test process was killed".into());
    };
    match code {
        0 => Support::Available,
        NO_NAMESPACES => Support::Unavailable("this kernel does not let tern create user namespaces".into()),
        NO_LANDLOCK => Support::Unavailable("this kernel does not support Landlock".into()),
        NO_PRIVATE_MOUNTS | NO_PROC => {
            Support::Unavailable("this system does not let tern mount /proc in a new namespace".into())
        }
        code => Support::Unavailable(format!("the test process failed (exit code {code})")),
    }
}

/// The forked child: the kernel features the launcher needs, as raw system calls that allocate nothing (rustix's and
/// libc's). Returns the exit code.
fn probe_child() -> i32 {
    let flags = UnshareFlags::NEWUSER
        | UnshareFlags::NEWNS
        | UnshareFlags::NEWPID
        | UnshareFlags::NEWNET
        | UnshareFlags::NEWIPC;
    if namespaces::unshare(flags).is_err() {
        return NO_NAMESPACES;
    }
    // LANDLOCK_CREATE_RULESET_VERSION (1 << 0) asks for the ABI version instead of creating a ruleset.
    // SAFETY: with that flag the kernel reads no attributes (a null pointer, size 0). It stays a libc call: rustix
    // has no Landlock calls.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if abi < 1 {
        return NO_LANDLOCK;
    }
    // Only a process inside the new PID namespace may mount its /proc: that is the next child.
    // SAFETY: as in `check`, this child and the next make only async-signal-safe system calls until _exit.
    let init = unsafe { libc::fork() };
    if init < 0 {
        return NO_FORK;
    }
    if init == 0 {
        // SAFETY: see above.
        unsafe { libc::_exit(mount_proc()) }
    }
    wait_for(init).and_then(WaitStatus::exit_status).unwrap_or(NO_FORK)
}

/// The first process of the new PID namespace: makes every mount private and mounts a fresh `/proc`. Returns the exit
/// code.
fn mount_proc() -> i32 {
    let private = MountPropagationFlags::REC | MountPropagationFlags::PRIVATE;
    if rustix::mount::mount_change(c"/", private).is_err() {
        return NO_PRIVATE_MOUNTS;
    }
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    if rustix::mount::mount(c"proc", c"/proc", c"proc", flags, None).is_err() {
        return NO_PROC;
    }
    0
}

/// Waits for the child `pid` to end, again when interrupted; `None` when it cannot be waited for. Allocates nothing.
fn wait_for(pid: libc::pid_t) -> Option<WaitStatus> {
    let pid = Pid::from_raw(pid)?;
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => return Some(status),
            Err(Errno::INTR) => {}
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The machines tern is built and tested on have Landlock and user namespaces; the answer is cached.
    #[test]
    fn this_kernel_supports_the_sandbox_and_the_answer_is_cached() {
        assert_eq!(probe(), &Support::Available);
        assert!(std::ptr::eq(probe(), probe()));
    }
}
