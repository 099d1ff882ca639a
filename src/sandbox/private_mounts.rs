//! The launcher's private places: a `/dev` of its own (harmless devices, its own devpts), and the session's own temp
//! directory mounted over `/tmp` (and `/var/tmp`, `$TMPDIR`) and `/dev/shm`. Runs in init, inside the new
//! mount namespace, before Landlock; nothing here is visible outside the namespace.
//!
//! The workspace, writable roots and working directory often live under `/tmp` (every test's tempdir does): they are
//! opened before `/tmp` is covered and bound back in at the same path. The mount points for that are made inside the
//! private temp, which commands write to, so they are created one component at a time without following symlinks
//! and mounted through `/proc/self/fd`: a symlink planted by an earlier command cannot redirect a mount.
//!
//! This module must not decide what is kept or hidden: the launcher's arguments say.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use rustix::mount::MountFlags;

use super::namespaces::remount_read_only;

/// Opens `path` as an `O_PATH` descriptor (following symlinks: the launcher's paths are resolved by tern).
pub(super) fn open_path(path: &Path) -> io::Result<OwnedFd> {
    let c = c_path(path)?;
    Ok(rustix::fs::open(&c, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())?)
}

/// Mounts `private/tmp` over each of `temp_mounts` and `private/shm` over `/dev/shm`, then binds each of `keep` that
/// lies under a temp mount point back at its own path, read-only when its flag says so (else the private temp's
/// Landlock rule, which covers everything beneath it, would make it writable). `keep` paths that do not exist are
/// skipped.
pub(super) fn private_temp(private: &Path, temp_mounts: &[PathBuf], keep: &[(PathBuf, bool)]) -> io::Result<()> {
    let tmp = open_path(&private.join("tmp"))?;
    let shm = open_path(&private.join("shm"))?;
    let mut kept: Vec<(&PathBuf, bool, OwnedFd, bool)> = keep
        .iter()
        .filter(|(path, _)| temp_mounts.iter().any(|m| path.starts_with(m)))
        .filter_map(|(path, read_only)| {
            let is_dir = std::fs::metadata(path).ok()?.is_dir();
            Some(open_path(path).map(|fd| (path, *read_only, fd, is_dir)))
        })
        .collect::<io::Result<_>>()?;
    for (i, point) in temp_mounts.iter().enumerate() {
        // A mount point under an earlier one (a `$TMPDIR` under `/tmp`) is made inside the private temp; the others
        // are the host's own directories (tern passes only those that exist).
        let target = if temp_mounts[..i].iter().any(|m| point.starts_with(m)) {
            mount_point(point, true)?
        } else {
            open_path(point)?
        };
        bind_fds(&tmp, &target, false)?;
    }
    // Parents before children, so a kept directory inside another kept one is not covered by it.
    kept.sort_by_key(|(path, ..)| path.as_os_str().len());
    for (i, (path, read_only, fd, is_dir)) in kept.iter().enumerate() {
        // Inside a kept directory bound the same way already (the working directory inside the workspace): adding a
        // mount would only stop it being renamed.
        if kept[..i]
            .iter()
            .any(|(parent, ro, ..)| path.starts_with(parent) && ro == read_only)
        {
            continue;
        }
        bind_fds(fd, &mount_point(path, *is_dir)?, true)?;
        if *read_only {
            // Walked again the same careful way, which now ends in the mount just made.
            remount_read_only(&fd_path(&mount_point(path, *is_dir)?))?;
        }
    }
    bind_fds(&shm, &open_path(Path::new("/dev/shm"))?, false)
}

/// The host devices every command may open: the harmless ones, and `/dev/tty` (its own controlling terminal, if any).
const DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// A `/dev` of the namespace's own: a small tmpfs holding `DEVICES` and the user's `[sandbox] devices` bound from the
/// host, the usual links (`fd`, `stdin`, `stdout`, `stderr`, `ptmx`), an empty `shm`, and a devpts instance of its
/// own at `pts`. Nothing else of the host's `/dev` is reachable: not its consoles (`/dev/tty1`, `/dev/console`, which
/// root could read), not the user's terminals (`/dev/pts/N`), disks, input devices or `/dev/mqueue`. Programs can
/// still open new pseudo-terminals (`script`, Python's `pty`). The tmpfs is read-only once built.
pub(super) fn private_dev(extra: &[PathBuf]) -> io::Result<()> {
    let wanted = DEVICES
        .iter()
        .map(|name| Path::new("/dev").join(name))
        .chain(extra.iter().cloned());
    // Opened before `/dev` is covered; a device this host lacks is left out.
    let sources: Vec<(PathBuf, OwnedFd, bool)> = wanted
        .filter(|path| path.starts_with("/dev/"))
        .filter_map(|path| {
            let is_dir = std::fs::metadata(&path).ok()?.is_dir();
            open_path(&path).ok().map(|fd| (path, fd, is_dir))
        })
        .collect();
    rustix::mount::mount(
        c"tmpfs",
        c"/dev",
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        c"mode=0755,size=64k",
    )?;
    for (path, fd, is_dir) in &sources {
        bind_fds(fd, &mount_point(path, *is_dir)?, *is_dir)?;
    }
    let dev = open_path(Path::new("/dev"))?;
    for (name, target) in [
        (c"fd", c"/proc/self/fd"),
        (c"stdin", c"/proc/self/fd/0"),
        (c"stdout", c"/proc/self/fd/1"),
        (c"stderr", c"/proc/self/fd/2"),
        (c"ptmx", c"pts/ptmx"),
    ] {
        rustix::fs::symlinkat(target, &dev, name)?;
    }
    for (name, mode) in [(c"pts", 0o755), (c"shm", 0o1777)] {
        rustix::fs::mkdirat(&dev, name, Mode::from_raw_mode(mode))?;
    }
    rustix::mount::mount(
        c"devpts",
        c"/dev/pts",
        c"devpts",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        c"newinstance,ptmxmode=0666,mode=0620",
    )?;
    remount_read_only(c"/dev")
}

/// Bind-mounts what `source` refers to onto what `target` refers to (recursively when `recursive`).
fn bind_fds(source: &OwnedFd, target: &OwnedFd, recursive: bool) -> io::Result<()> {
    let src = fd_path(source);
    let dst = fd_path(target);
    if recursive {
        rustix::mount::mount_bind_recursive(&src, &dst)?;
    } else {
        rustix::mount::mount_bind(&src, &dst)?;
    }
    Ok(())
}

fn fd_path(fd: &OwnedFd) -> CString {
    // A decimal number never holds a NUL byte.
    CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default()
}

/// Opens (creating it when missing) the mount point `path`: a directory when `dir`, else an empty file. Each
/// component is opened relative to the last without following symlinks, so a symlink fails instead of redirecting.
fn mount_point(path: &Path, dir: bool) -> io::Result<OwnedFd> {
    let mut at = open_path(Path::new("/"))?;
    let names: Vec<&std::ffi::OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        let name = CString::new(name.as_bytes()).map_err(io::Error::other)?;
        at = if last && !dir {
            file_at(&at, &name)?
        } else {
            dir_at(&at, &name)?
        };
    }
    Ok(at)
}

fn dir_at(parent: &OwnedFd, name: &CStr) -> io::Result<OwnedFd> {
    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    // ENOTDIR for a symlink.
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(rustix::fs::openat(parent, name, flags, Mode::empty())?)
}

fn file_at(parent: &OwnedFd, name: &CStr) -> io::Result<OwnedFd> {
    let create = OFlags::CREATE | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    // Made when missing and closed right away; a failure here shows in the open below.
    drop(rustix::fs::openat(parent, name, create, Mode::from_raw_mode(0o600)));
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(parent, name, flags, Mode::empty())?;
    // Whatever is there must be a plain file (not a symlink, which O_PATH | O_NOFOLLOW would open as itself).
    if FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) != FileType::RegularFile {
        return Err(io::Error::other(
            "a mount point in the private temp is not a plain file",
        ));
    }
    Ok(fd)
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}
