//! The namespace and mount steps of the launcher: entering new user, mount, PID, IPC and network namespaces, a fresh
//! `/proc`, read-only bind mounts, hidden paths, loopback, and dropping capabilities. Linux only; each step is a few system calls.
//!
//! The user namespace maps only the caller's own uid and gid (what an unprivileged user may map), so the launcher
//! works as a normal user too. Capabilities held inside the namespace are used for the mounts and then dropped, so
//! the command runs with none, as root or not.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{CWD, Mode, OFlags, StatVfsMountFlags};
use rustix::io::Errno;
use rustix::mount::{MountFlags, MountPropagationFlags, MoveMountFlags, OpenTreeFlags, UnmountFlags};
use rustix::net::{AddressFamily, SocketFlags, SocketType};
use rustix::thread::{CapabilitySet, CapabilitySets, LinkNameSpaceType, UnshareFlags};

/// Enters new user, mount, PID and IPC namespaces (and a network namespace unless `network`), mapping the caller's
/// uid and gid to themselves. The IPC namespace keeps SysV shared memory, semaphores and message queues of the
/// user's session out of reach. The caller's next child becomes PID 1 of the new PID namespace.
pub(super) fn enter(network: bool) -> io::Result<()> {
    let mut flags = UnshareFlags::NEWUSER | UnshareFlags::NEWNS | UnshareFlags::NEWPID | UnshareFlags::NEWIPC;
    if !network {
        flags |= UnshareFlags::NEWNET;
    }
    unshare_mapped(flags)
}

/// The namespaces a session's holder keeps for its commands (see `launcher::hold`): user, mount, IPC and network.
pub(super) fn enter_held() -> io::Result<()> {
    unshare_mapped(UnshareFlags::NEWUSER | UnshareFlags::NEWNS | UnshareFlags::NEWIPC | UnshareFlags::NEWNET)
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
        (c"ns/user", LinkNameSpaceType::User),
        (c"ns/mnt", LinkNameSpaceType::Mount),
        (c"ns/ipc", LinkNameSpaceType::InterProcessCommunication),
    ];
    if !network {
        kinds.push((c"ns/net", LinkNameSpaceType::Network));
    }
    let Ok(dir) = std::fs::File::open(format!("/proc/{}", holder.pid)) else {
        return Ok(false);
    };
    let at = |name: &CStr| -> io::Result<OwnedFd> {
        Ok(rustix::fs::openat(
            &dir,
            name,
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
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
        rustix::thread::move_into_link_name_space(file.as_fd(), Some(*kind))?;
    }
    std::env::set_current_dir(&cwd)?;
    unshare_command()?;
    Ok(true)
}

/// A mount namespace of its own (copied from the holder's) and a new PID namespace for the caller's next child: what a
/// command gets inside its session's holder.
pub(super) fn unshare_command() -> io::Result<()> {
    Ok(unshare(UnshareFlags::NEWNS | UnshareFlags::NEWPID)?)
}

/// `unshare(2)` of namespaces: one system call that allocates nothing, so a forked child of a threaded process may
/// make it too.
pub(super) fn unshare(namespaces: UnshareFlags) -> rustix::io::Result<()> {
    if namespaces.contains(UnshareFlags::FILES) {
        return Err(Errno::INVAL);
    }
    // SAFETY: rustix marks `unshare` unsafe only for `UnshareFlags::FILES`, after which threads would no longer share
    // one descriptor table and could be handed descriptors that are not theirs; that flag is refused above.
    unsafe { rustix::thread::unshare_unsafe(namespaces) }
}

/// Enters new namespaces (`flags`, a new user namespace among them), mapping the caller's uid and gid to themselves.
fn unshare_mapped(flags: UnshareFlags) -> io::Result<()> {
    let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
    unshare(flags)?;
    // An unprivileged process may map its gid only after giving up setgroups(2).
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// Makes every mount private: nothing done here reaches the rest of the system.
pub(super) fn make_private() -> io::Result<()> {
    Ok(rustix::mount::mount_change(
        c"/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )?)
}

/// Makes every mount private (nothing done here reaches the rest of the system) and mounts a `/proc` that shows only
/// the namespace's processes, so tern's own `/proc/<pid>/environ` is not even visible. Must run as PID 1.
pub(super) fn mount_proc() -> io::Result<()> {
    make_private()?;
    mount_new(
        c"proc",
        c"/proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
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
        mount_new(
            c"tmpfs",
            &c_path(path)?,
            MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        )?;
    }
    if files.is_empty() {
        return Ok(());
    }
    const SCRATCH: &CStr = c"/dev/shm";
    mount_new(
        c"tmpfs",
        SCRATCH,
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
    )?;
    let empty = Path::new("/dev/shm/empty");
    let covered = std::fs::File::create(empty).and_then(|_| {
        files
            .iter()
            .try_for_each(|path| bind(&c_path(empty)?, &c_path(path)?, true))
    });
    let unmounted = rustix::mount::unmount(SCRATCH, UnmountFlags::DETACH);
    covered?;
    Ok(unmounted?)
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
    let flags = OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC | OpenTreeFlags::AT_SYMLINK_NOFOLLOW;
    let tree = rustix::mount::open_tree(CWD, link, flags)?;
    // Without `MOVE_MOUNT_T_SYMLINKS` the target's last symlink is not followed.
    rustix::mount::move_mount(&tree, c"", CWD, link, MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH)?;
    Ok(())
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}

/// Bind-mounts `source` (recursively) onto `target`, read-only when `read_only`.
pub(super) fn bind(source: &CStr, target: &CStr, read_only: bool) -> io::Result<()> {
    rustix::mount::mount_bind_recursive(source, target)?;
    if read_only {
        remount_read_only(target)?;
    }
    Ok(())
}

/// Makes the bind mount at `target` read-only.
pub(super) fn remount_read_only(target: &CStr) -> io::Result<()> {
    // A remount inside a user namespace must keep the flags the original mount was locked with (nosuid, nodev, ...).
    let flags = rustix::fs::statvfs(target)?.f_flag;
    let kept = [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ]
    .iter()
    .filter(|(st, _)| flags.contains(*st))
    .fold(MountFlags::empty(), |kept, (_, ms)| kept | *ms);
    // `MS_REMOUNT | MS_BIND` changes only the mount's flags: the kernel reads no data (rustix passes an empty string).
    Ok(rustix::mount::mount_remount(
        target,
        MountFlags::BIND | MountFlags::RDONLY | kept,
        c"",
    )?)
}

/// Mounts a new filesystem of type `fstype` (`proc`, `tmpfs`) at `target`, without options.
fn mount_new(fstype: &CStr, target: &CStr, flags: MountFlags) -> io::Result<()> {
    Ok(rustix::mount::mount(fstype, target, fstype, flags, None)?)
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
    let socket = rustix::net::socket_with(AddressFamily::INET, SocketType::DGRAM, SocketFlags::CLOEXEC, None)?;
    let mut request = IfFlagsRequest {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short,
        _rest: [0; 22],
    };
    request.name[..2].copy_from_slice(b"lo");
    // SAFETY: SIOCSIFFLAGS reads an ifreq-sized struct that lives across the call, on a socket this function owns.
    // It stays a libc call: rustix has no safe call that sets an interface's flags (`rustix::net::netdevice` only
    // maps names and indexes, and `rustix::ioctl::ioctl` is unsafe as well).
    if unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &mut request) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Drops every capability: the bounding set (so executing a program as uid 0 grants none), the ambient set, and the
/// effective, permitted and inheritable sets.
pub(super) fn drop_capabilities() -> io::Result<()> {
    for cap in 0..64 {
        match rustix::thread::remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(1 << cap)) {
            Ok(()) => {}
            // Capabilities are numbered from 0 up: the first this kernel does not know is past the last one.
            Err(Errno::INVAL) => break,
            Err(e) => return Err(e.into()),
        }
    }
    rustix::thread::clear_ambient_capability_set()?;
    // capset(2), version 3, for this thread.
    let none = CapabilitySet::empty();
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: none,
            permitted: none,
            inheritable: none,
        },
    )?;
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
