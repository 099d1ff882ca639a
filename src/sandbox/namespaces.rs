//! The namespace and mount steps of the launcher: entering new user, mount, PID, IPC and network namespaces, a fresh
//! `/proc`, read-only bind mounts, hidden paths, loopback, and dropping capabilities. Linux only; each step is a few system calls.
//!
//! The user namespace maps only the caller's own uid and gid (what an unprivileged user may map), so the launcher
//! works as a normal user too. Capabilities held inside the namespace are used for the mounts and then dropped, so
//! the command runs with none, as root or not.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Enters new user, mount, PID and IPC namespaces (and a network namespace unless `network`), mapping the caller's
/// uid and gid to themselves. The IPC namespace keeps SysV shared memory, semaphores and message queues of the
/// user's session out of reach. The caller's next child becomes PID 1 of the new PID namespace.
pub(super) fn enter(network: bool) -> io::Result<()> {
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if !network {
        flags |= libc::CLONE_NEWNET;
    }
    unshare_mapped(flags)
}

/// The namespaces a session's holder keeps for its commands (see `launcher::hold`): user, mount, IPC and network.
pub(super) fn enter_held() -> io::Result<()> {
    unshare_mapped(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWNET)
}

/// A process for the whole of its life: its id, and when it started (in clock ticks after boot). An id alone may name
/// another process once the first has ended and been reaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcessKey {
    pub pid: u32,
    pub start: u64,
}

impl ProcessKey {
    /// The key of the running process `pid`.
    pub(crate) fn of(pid: u32) -> io::Result<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
        let start = start_time(&stat).ok_or_else(|| io::Error::other("unreadable /proc stat"))?;
        Ok(Self { pid, start })
    }

    /// `PID:START`, as `Display` writes it.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (pid, start) = text.split_once(':')?;
        Some(Self {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        })
    }
}

impl std::fmt::Display for ProcessKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.pid, self.start)
    }
}

/// The start time in a `/proc/PID/stat` line: its 22nd field, counted after the command name (which may hold spaces
/// and parentheses, so the last `)` ends it).
fn start_time(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Joins the user, mount and IPC namespaces of the holder (and its network namespace unless `network`), goes back to
/// the working directory (entering a mount namespace leaves it at its root), then enters a mount namespace of its own
/// (a copy of the holder's, for this command's mounts and `/proc`) and a new PID namespace for the next child.
/// `Ok(false)`: the holder is gone, and nothing was changed.
///
/// The holder's `/proc` directory is opened once and everything is read through it: if its id was reused by another
/// process before it was opened, the start time differs; if after, the directory no longer answers.
pub(super) fn join(holder: ProcessKey, network: bool) -> io::Result<bool> {
    let cwd = std::env::current_dir()?;
    let mut kinds = vec![
        (c"ns/user", libc::CLONE_NEWUSER),
        (c"ns/mnt", libc::CLONE_NEWNS),
        (c"ns/ipc", libc::CLONE_NEWIPC),
    ];
    if !network {
        kinds.push((c"ns/net", libc::CLONE_NEWNET));
    }
    let Ok(dir) = std::fs::File::open(format!("/proc/{}", holder.pid)) else {
        return Ok(false);
    };
    let at = |name: &CStr| -> io::Result<OwnedFd> {
        // SAFETY: a valid directory descriptor and a NUL-terminated relative path; the result is owned below.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let same = at(c"stat")
        .and_then(|fd| io::read_to_string(std::fs::File::from(fd)))
        .is_ok_and(|stat| start_time(&stat) == Some(holder.start));
    if !same {
        return Ok(false);
    }
    // All opened first: once in the holder's user namespace, its files are still reachable, but one order is simpler.
    let Ok(files) = kinds
        .iter()
        .map(|(name, kind)| Ok((at(name)?, *kind)))
        .collect::<io::Result<Vec<_>>>()
    else {
        return Ok(false);
    };
    for (file, kind) in &files {
        // SAFETY: setns takes a valid namespace descriptor and its kind.
        if unsafe { libc::setns(file.as_raw_fd(), *kind) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    std::env::set_current_dir(&cwd)?;
    unshare_command()?;
    Ok(true)
}

/// A mount namespace of its own (copied from the holder's) and a new PID namespace for the caller's next child: what a
/// command gets inside its session's holder.
pub(super) fn unshare_command() -> io::Result<()> {
    // SAFETY: unshare takes flags only.
    if unsafe { libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Enters new namespaces (`flags`, a new user namespace among them), mapping the caller's uid and gid to themselves.
fn unshare_mapped(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: getuid and getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // SAFETY: unshare takes flags only.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // An unprivileged process may map its gid only after giving up setgroups(2).
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// Makes every mount private: nothing done here reaches the rest of the system.
pub(super) fn make_private() -> io::Result<()> {
    mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE)
}

/// Makes every mount private (nothing done here reaches the rest of the system) and mounts a `/proc` that shows only
/// the namespace's processes, so tern's own `/proc/<pid>/environ` is not even visible. Must run as PID 1.
pub(super) fn mount_proc() -> io::Result<()> {
    make_private()?;
    mount(
        Some(c"proc"),
        c"/proc",
        Some(c"proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    )
}

/// Makes each of `paths` unreadable: a directory is covered by an empty read-only tmpfs, anything else by an empty
/// file bound read-only. A path that does not exist is left alone.
///
/// The empty file is made on a scratch tmpfs mounted over `/dev/shm` (a mount point every sandbox has) and that mount
/// is taken away again once the files are covered: the covers keep the scratch filesystem alive, and nothing else in
/// the sandbox can reach it. (A bind's source must be a mount of this namespace, so a file tern opened outside cannot
/// serve when the command joins a holder's namespaces.)
pub(super) fn hide_all(paths: &[std::path::PathBuf]) -> io::Result<()> {
    let mut files = Vec::new();
    for path in paths {
        // Followed: the mount lands on what a symlink points to, so that decides between tmpfs and file.
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        if !meta.is_dir() {
            files.push(path);
            continue;
        }
        mount(
            Some(c"tmpfs"),
            &c_path(path)?,
            Some(c"tmpfs"),
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        )?;
    }
    if files.is_empty() {
        return Ok(());
    }
    const SCRATCH: &CStr = c"/dev/shm";
    mount(
        Some(c"tmpfs"),
        SCRATCH,
        Some(c"tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    )?;
    let empty = Path::new("/dev/shm/empty");
    let covered = std::fs::File::create(empty).and_then(|_| {
        files
            .iter()
            .try_for_each(|path| bind(&c_path(empty)?, &c_path(path)?, true))
    });
    // SAFETY: umount2 takes a NUL-terminated path and flags.
    let unmounted = unsafe { libc::umount2(SCRATCH.as_ptr(), libc::MNT_DETACH) };
    covered?;
    if unmounted != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Bind-mounts `path` onto itself read-only. A path that does not exist is left alone (a workspace without `.git`).
pub(super) fn bind_read_only(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    let target = c_path(path)?;
    bind(&target, &target, true)
}

/// Bind-mounts `path` onto itself, writable: it becomes a mount point, which cannot be renamed, removed or replaced (a
/// `.git` whose hooks are read-only cannot be moved aside and replaced). A symlink is pinned itself, not what it points
/// at (so it cannot be pointed elsewhere). A path that does not exist is left alone.
pub(super) fn pin(path: &Path) -> io::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let target = c_path(path)?;
    if meta.is_symlink() {
        return pin_symlink(&target);
    }
    bind(&target, &target, false)
}

/// Binds the symlink `link` onto itself. `mount(2)` follows a symlink at the end of either path; the mount API of
/// `open_tree` and `move_mount` can be told not to.
fn pin_symlink(link: &CStr) -> io::Result<()> {
    // SAFETY: a NUL-terminated path and plain flags; the descriptor returned is owned below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            link.as_ptr(),
            libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `open_tree` returned a new descriptor that nothing else owns.
    let tree = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    // Without `MOVE_MOUNT_T_SYMLINKS` the target's last symlink is not followed.
    // SAFETY: a valid descriptor, an empty and a NUL-terminated path.
    let moved = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            link.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if moved < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}

/// Bind-mounts `source` (recursively) onto `target`, read-only when `read_only`.
pub(super) fn bind(source: &CStr, target: &CStr, read_only: bool) -> io::Result<()> {
    mount(Some(source), target, None, libc::MS_BIND | libc::MS_REC)?;
    if read_only {
        remount_read_only(target)?;
    }
    Ok(())
}

/// Makes the bind mount at `target` read-only.
pub(super) fn remount_read_only(target: &CStr) -> io::Result<()> {
    // A remount inside a user namespace must keep the flags the original mount was locked with (nosuid, nodev, ...).
    let mut stat: libc::statvfs = unsafe_zeroed_statvfs();
    // SAFETY: statvfs fills a valid statvfs struct from a NUL-terminated path.
    if unsafe { libc::statvfs(target.as_ptr(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let kept = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ]
    .iter()
    .filter(|(st, _)| stat.f_flag & st != 0)
    .fold(0, |flags, (_, ms)| flags | ms);
    mount(
        None,
        target,
        None,
        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept,
    )
}

fn unsafe_zeroed_statvfs() -> libc::statvfs {
    // SAFETY: statvfs is a plain C struct of integers, for which all zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}

pub(super) fn mount(
    source: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
) -> io::Result<()> {
    let ptr = |s: Option<&CStr>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string that outlives the call; no data argument.
    let rc = unsafe { libc::mount(ptr(source), target.as_ptr(), ptr(fstype), flags, std::ptr::null()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `struct ifreq` as SIOCSIFFLAGS reads it: the interface name, then the flags in the request union.
#[repr(C)]
struct IfFlagsRequest {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _rest: [u8; 22],
}

/// Brings the new network namespace's loopback interface up, so a command can talk to servers it starts itself.
pub(super) fn loopback_up() -> io::Result<()> {
    // SAFETY: socket takes plain values.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut request = IfFlagsRequest {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short,
        _rest: [0; 22],
    };
    request.name[..2].copy_from_slice(b"lo");
    // SAFETY: SIOCSIFFLAGS reads an ifreq-sized struct that lives across the call.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &mut request) };
    let result = if rc != 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    };
    // SAFETY: closes the socket opened above.
    unsafe { libc::close(fd) };
    result
}

/// The `capset(2)` header and data (version 3: two 32-bit words per set).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAP_VERSION_3: u32 = 0x2008_0522;

/// Drops every capability: the bounding set (so executing a program as uid 0 grants none), the ambient set, and the
/// effective, permitted and inheritable sets.
pub(super) fn drop_capabilities() -> io::Result<()> {
    for cap in 0..64 {
        // SAFETY: prctl takes plain values.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let e = io::Error::last_os_error();
            // Capabilities are numbered from 0 up: the first this kernel does not know is past the last one.
            if e.raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            return Err(e);
        }
    }
    // SAFETY: prctl takes plain values.
    if unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let header = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a version-3 header and two data structs, all valid for the call.
    if unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_are_read_after_the_command_name() {
        let stat = "42 (a) b (c) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 200";
        assert_eq!(start_time(stat), Some(123456));
        let me = ProcessKey::of(std::process::id()).unwrap();
        assert_eq!(ProcessKey::parse(&me.to_string()), Some(me));
        assert_eq!(ProcessKey::parse("12"), None);
    }
}
