//! Whether this kernel can run the sandbox: Landlock, and user, mount, PID and network namespaces in which a fresh
//! `/proc` can be mounted. Checked once per process, in a forked child, so tern itself never changes namespace.

use std::sync::OnceLock;

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
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes the status into a valid i32.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Support::Unavailable("lost the test process".into());
        }
    }
    if !libc::WIFEXITED(status) {
        return Support::Unavailable("the test process was killed".into());
    }
    match libc::WEXITSTATUS(status) {
        0 => Support::Available,
        NO_NAMESPACES => Support::Unavailable("this kernel does not let tern create user namespaces".into()),
        NO_LANDLOCK => Support::Unavailable("this kernel does not support Landlock".into()),
        NO_PRIVATE_MOUNTS | NO_PROC => {
            Support::Unavailable("this system does not let tern mount /proc in a new namespace".into())
        }
        code => Support::Unavailable(format!("the test process failed (exit code {code})")),
    }
}

/// The forked child: the kernel features the launcher needs, as raw system calls. Returns the exit code.
fn probe_child() -> i32 {
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWIPC;
    // SAFETY (this whole function): async-signal-safe system calls on static strings and local integers.
    unsafe {
        if libc::unshare(flags) != 0 {
            return NO_NAMESPACES;
        }
        // LANDLOCK_CREATE_RULESET_VERSION (1 << 0) asks for the ABI version instead of creating a ruleset.
        let abi = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        );
        if abi < 1 {
            return NO_LANDLOCK;
        }
        // Only a process inside the new PID namespace may mount its /proc: that is the next child.
        let init = libc::fork();
        if init < 0 {
            return NO_FORK;
        }
        if init == 0 {
            let none = std::ptr::null();
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                libc::_exit(NO_PRIVATE_MOUNTS);
            }
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                flags,
                std::ptr::null(),
            ) != 0
            {
                libc::_exit(NO_PROC);
            }
            libc::_exit(0);
        }
        let mut status = 0;
        while libc::waitpid(init, &mut status, 0) != init {
            if *libc::__errno_location() != libc::EINTR {
                return NO_FORK;
            }
        }
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            NO_FORK
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
