//! The system-call filter of a sandboxed command: a classic BPF program installed by init just before it starts the
//! command, for the doors Landlock and the namespaces leave open.
//!
//! - `socket(AF_UNIX, ...)` fails with EPERM, so nothing can `connect()` to the user's path-based unix sockets (tmux,
//!   ssh-agent, D-Bus, docker.sock, X11), which Landlock does not mediate. `socketpair` stays allowed: its sockets
//!   are anonymous. With an allowlist of sockets (`[sandbox] allow_unix_sockets`) this rule is left out entirely:
//!   seccomp cannot see which path a `connect` names, see `SandboxPolicy::unix_sockets`.
//! - `io_uring_setup` fails: io_uring performs socket and file operations that never pass through this filter.
//! - `keyctl`, `add_key`, `request_key` fail: the session keyring (and whatever secrets it holds) is inherited.
//! - Any system call made through another architecture's entry (32-bit `int 0x80`, x32) kills the process: its
//!   numbers differ, so the rules above would not match it.
//!
//! This module only builds and installs the filter; it decides nothing about which sockets are allowed.

use std::io;

/// `AUDIT_ARCH_*` of the architecture tern is built for (linux/audit.h; not in the libc crate).
#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7;
/// x32 system calls come through the x86_64 entry with this bit set in the number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offsets into `struct seccomp_data`: the call number, the architecture, the low half of the first argument
/// (little-endian on both architectures).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;

const REFUSE: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;

fn load(offset: u32) -> libc::sock_filter {
    stmt((libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, offset)
}

fn ret(value: u32) -> libc::sock_filter {
    stmt((libc::BPF_RET | libc::BPF_K) as u16, value)
}

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt: 0, jf: 0, k }
}

/// A jump if the accumulator equals `k`: `jt` instructions ahead when it does, `jf` when not.
fn jump_eq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

/// The filter program. `unix_sockets` leaves `socket(AF_UNIX)` allowed.
fn program(unix_sockets: bool) -> Vec<libc::sock_filter> {
    let refused = [
        libc::SYS_io_uring_setup,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ];
    let mut prog = vec![
        load(ARCH),
        jump_eq(NATIVE_ARCH, 1, 0),
        ret(libc::SECCOMP_RET_KILL_PROCESS),
        load(NR),
    ];
    #[cfg(target_arch = "x86_64")]
    prog.push(libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
        jt: 0,
        jf: 1,
        k: X32_SYSCALL_BIT,
    });
    #[cfg(target_arch = "x86_64")]
    prog.push(ret(libc::SECCOMP_RET_KILL_PROCESS));
    for nr in refused {
        // Equal: skip nothing and fall into the refusal; otherwise jump over it.
        prog.push(jump_eq(nr as u32, 0, 1));
        prog.push(ret(REFUSE));
    }
    if !unix_sockets {
        prog.push(jump_eq(libc::SYS_socket as u32, 0, 3));
        prog.push(load(ARG0_LOW));
        prog.push(jump_eq(libc::AF_UNIX as u32, 0, 1));
        prog.push(ret(REFUSE));
    }
    prog.push(ret(libc::SECCOMP_RET_ALLOW));
    prog
}

/// Installs the filter on the calling thread (and so on everything it later starts). Sets `no_new_privs`, which an
/// unprivileged filter requires (Landlock has set it already).
pub(super) fn install(unix_sockets: bool) -> io::Result<()> {
    let prog = program(unix_sockets);
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr().cast_mut(),
    };
    rustix::thread::set_no_new_privs(true)?;
    // SAFETY: seccomp reads a sock_fprog whose filter points to `prog`, which outlives the call; the kernel copies it.
    // It stays a libc call: rustix has no call that installs a filter (`set_secure_computing_mode` sets a mode only).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_TSYNC,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every jump lands inside the program, and the program ends with a return.
    #[test]
    fn jumps_stay_inside_the_program() {
        for unix in [false, true] {
            let prog = program(unix);
            for (i, ins) in prog.iter().enumerate() {
                if ins.code as u32 & 0x07 == libc::BPF_JMP {
                    assert!(i + 1 + (ins.jt.max(ins.jf) as usize) < prog.len(), "{i}");
                }
            }
            assert_eq!(prog.last().map(|i| i.k), Some(libc::SECCOMP_RET_ALLOW));
            assert!(prog.len() < 30);
        }
    }
}
