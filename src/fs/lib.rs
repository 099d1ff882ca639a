//! tern's own file operations on paths the path policy already resolved, without following a symlink swapped in after
//! the check.
//!
//! `PathPolicy::resolve*` follows every symlink and checks where the path really leads; the result holds no symlink.
//! Between that check and the operation, a command running at the same time (a dev server, a watcher, anything a
//! command left behind in the background) can replace a directory on the path with a symlink, and a plain `open` would
//! follow it to wherever it points: a write would land anywhere the user can write. So every path here is opened with
//! `openat2(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`: since a resolved path has no symlink in it, one that appears
//! is a swap, and the operation fails with an error that says so instead of following it. Writes, removals, renames and
//! temp files work on the opened parent directory (`*at` calls), so the entry they touch is in the directory that was
//! opened, and a temp file never leaves it. On kernels without `openat2` (before 5.6) the same walk is made one
//! component at a time with `O_NOFOLLOW`.
//!
//! Must not: be handed paths that were not resolved (relative, with `..`, or through a symlink the user made on
//! purpose): those are refused, not followed. Symlinks as files (restored by undo) are not written here.

use std::ffi::OsStr;
use std::fs::{File, Metadata, Permissions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{AtFlags, CWD, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

mod atomic;
pub mod places;
pub mod search_path;
mod stamp;

pub use atomic::{atomic_write, atomic_write_own, atomic_write_private};
pub use stamp::{PathStamp, path_stamp};

/// Set once the kernel answered `ENOSYS` to `openat2`: every later open walks component by component.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// The error for a path that gained a symlink after it was checked.
pub(crate) fn swapped(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} changed while tern was using it: a directory or file on its path is now a symlink, which tern does not \
         follow (something else on the machine is changing the workspace); nothing was read or written there",
        path.display()
    ))
}

/// The parent directory and the last name of an absolute resolved path.
fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if path.is_absolute() => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not an absolute path to a file", path.display()),
        )),
    }
}

/// Opens `path` (absolute, holding no symlink) with `flags`, refusing any symlink on the way or at its end.
fn open_path(path: &Path, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
    if !path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a resolved absolute path", path.display()),
        ));
    }
    let flags = flags | OFlags::CLOEXEC;
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match openat2(path.as_os_str(), flags, mode) {
            Err(Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            Err(Errno::LOOP) => return Err(swapped(path)),
            other => return other.map_err(io::Error::from),
        }
    }
    walk(path, flags, mode)
}

/// `openat2` from the working directory, refusing any symlink (and /proc's magic links) on the way.
fn openat2(path: &OsStr, flags: OFlags, mode: u32) -> Result<OwnedFd, Errno> {
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    loop {
        match rustix::fs::openat2(CWD, path, flags, Mode::from_raw_mode(mode), resolve) {
            // EAGAIN: the kernel could not do the lookup in one go (a concurrent rename); it asks to try again.
            Err(Errno::INTR | Errno::AGAIN) => continue,
            other => return other,
        }
    }
}

/// The same open without `openat2`: one `openat(O_NOFOLLOW)` per component from `/`.
fn walk(path: &Path, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let mut dir = openat(CWD, OsStr::new("/"), OFlags::PATH | OFlags::DIRECTORY, 0)?;
    let Some((last, parents)) = names.split_last() else {
        return openat(CWD, OsStr::new("/"), flags, mode);
    };
    for name in parents {
        let next = openat(
            dir.as_fd(),
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            0,
        );
        dir = next.map_err(|e| nofollow_error(e, &dir, name, path))?;
    }
    openat(dir.as_fd(), last, flags | OFlags::NOFOLLOW, mode).map_err(|e| nofollow_error(e, &dir, last, path))
}

/// `O_NOFOLLOW` met a symlink: `ELOOP`, or `ENOTDIR` where a directory was asked for (told apart from a plain file
/// by looking at the entry `name` in `dir` itself).
fn nofollow_error(e: io::Error, dir: &OwnedFd, name: &OsStr, path: &Path) -> io::Error {
    let is_link = || {
        openat(dir.as_fd(), name, OFlags::PATH | OFlags::NOFOLLOW, 0)
            .and_then(|fd| File::from(fd).metadata())
            .is_ok_and(|m| m.file_type().is_symlink())
    };
    match Errno::from_io_error(&e) {
        Some(Errno::LOOP) => swapped(path),
        Some(Errno::NOTDIR) if is_link() => swapped(path),
        _ => e,
    }
}

/// `openat` of `name` in `dir` (close-on-exec), again when a signal interrupted it.
fn openat(dir: BorrowedFd<'_>, name: &OsStr, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
    loop {
        match rustix::fs::openat(dir, name, flags | OFlags::CLOEXEC, Mode::from_raw_mode(mode)) {
            Err(Errno::INTR) => continue,
            other => return other.map_err(io::Error::from),
        }
    }
}

/// Opens a file for reading: never blocking on a FIFO swapped in, never as a controlling terminal.
pub fn open(path: &Path) -> io::Result<File> {
    open_path(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY, 0).map(File::from)
}

/// The whole content of a file.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What the entry at `path` is, without following a symlink at its end or on the way.
pub fn metadata(path: &Path) -> io::Result<Metadata> {
    File::from(open_path(path, OFlags::PATH, 0)?).metadata()
}

/// Sets the mode bits of the file at `path`.
pub fn set_permissions(path: &Path, permissions: Permissions) -> io::Result<()> {
    let fd = open_path(path, OFlags::PATH, 0)?;
    // An `O_PATH` descriptor cannot be `fchmod`ed; its magic link in /proc names exactly the opened file.
    std::fs::set_permissions(format!("/proc/self/fd/{}", fd.as_raw_fd()), permissions)
}

/// Removes the file at `path` (a symlink there is removed itself, never followed).
pub fn remove_file(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    Dir::open(parent)?.unlink(name, AtFlags::empty())
}

/// Removes the empty directory at `path`.
pub fn remove_dir(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    Dir::open(parent)?.unlink(name, AtFlags::REMOVEDIR)
}

/// Creates `path` and any missing directories above it, each inside the one opened before it.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    Dir::create_all(path).map(drop)
}

/// An opened directory: entries are created, renamed and removed in it by name.
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    pub(crate) fn open(path: &Path) -> io::Result<Dir> {
        let fd = open_path(path, OFlags::PATH | OFlags::DIRECTORY, 0)?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Opens `path`, creating it and the directories above it that are missing.
    pub(crate) fn create_all(path: &Path) -> io::Result<Dir> {
        match Dir::open(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => return other,
        }
        let (parent, name) = split(path)?;
        let parent = Dir::create_all(parent)?;
        match rustix::fs::mkdirat(&parent.fd, name, Mode::from_raw_mode(0o777)) {
            Err(e) if e != Errno::EXIST => return Err(e.into()),
            _ => {}
        }
        let fd = openat(
            parent.fd.as_fd(),
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            0,
        )
        .map_err(|e| nofollow_error(e, &parent.fd, name, path))?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// What the entry `name` is, without following it.
    pub(crate) fn metadata(&self, name: &OsStr) -> io::Result<Metadata> {
        let fd = openat(self.fd.as_fd(), name, OFlags::PATH | OFlags::NOFOLLOW, 0)?;
        File::from(fd).metadata()
    }

    /// The content of the regular file `name`; a symlink there is refused.
    pub(crate) fn read(&self, name: &OsStr) -> io::Result<Vec<u8>> {
        let fd = openat(
            self.fd.as_fd(),
            name,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW,
            0,
        )
        .map_err(|e| nofollow_error(e, &self.fd, name, &self.path.join(name)))?;
        let mut bytes = Vec::new();
        File::from(fd).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn unlink(&self, name: &OsStr, flags: AtFlags) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, flags)?)
    }

    /// Renames the entry `from` to `to`, both in this directory (`to` is replaced, never followed).
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// A new temp file in this directory, created with `mode` (the umask applies), removed again unless persisted.
    pub(crate) fn temp_file(&self, mode: u32) -> io::Result<TempFile<'_>> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        loop {
            let name = format!(
                ".tern-{}-{}.tmp",
                std::process::id(),
                COUNT.fetch_add(1, Ordering::Relaxed)
            );
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
            match openat(self.fd.as_fd(), OsStr::new(&name), flags, mode) {
                Ok(fd) => {
                    return Ok(TempFile {
                        dir: self,
                        name: name.into(),
                        file: File::from(fd),
                        persisted: false,
                    });
                }
                // Left by an earlier process with the same id: take the next number.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// A temp file in an opened directory; removed on drop unless renamed over its target.
pub(crate) struct TempFile<'a> {
    dir: &'a Dir,
    name: std::ffi::OsString,
    file: File,
    persisted: bool,
}

impl TempFile<'_> {
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }

    pub(crate) fn sync_all(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    /// Sets the exact mode bits (the umask may have taken some at creation).
    pub(crate) fn set_mode(&self, mode: u32) -> io::Result<()> {
        self.file.set_permissions(Permissions::from_mode(mode))
    }

    /// Renames the temp file over `name` in the same directory.
    pub(crate) fn persist(mut self, name: &OsStr) -> io::Result<()> {
        self.dir.rename(&self.name, name)?;
        self.persisted = true;
        Ok(())
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = self.dir.unlink(&self.name, AtFlags::empty());
        }
    }
}

impl Dir {
    /// Creates the empty file `name` with `mode` (the umask applies) unless something is there already, which is left
    /// as it is.
    pub fn create_empty(&self, name: &OsStr, mode: u32) -> io::Result<()> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        match openat(self.fd.as_fd(), name, flags, mode) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// Where the symlink `name` in this directory points.
    pub fn read_link(&self, name: &OsStr) -> io::Result<PathBuf> {
        let target = rustix::fs::readlinkat(&self.fd, name, Vec::new())?;
        Ok(PathBuf::from(std::ffi::OsString::from_vec(target.into_bytes())))
    }
}

/// Checks the names a directory walk found. The `ignore` walker opens each directory by its path, so a directory
/// swapped for a symlink during the walk is listed where the link points. A name is kept only if it is still there
/// when reached from the walk's (resolved) root without following any symlink, as the same file (inode) the walk saw:
/// no name from outside the walked tree reaches the model. One parent directory is kept open, so the entries of one
/// directory, which a walk yields together, cost one `openat` and one `fstat` each.
#[derive(Default)]
pub struct WalkCheck {
    parent: Option<Dir>,
}

impl WalkCheck {
    /// What the entry at `path` is (not following a symlink there), if it is still the file numbered `ino`.
    pub fn entry(&mut self, path: &Path, ino: Option<u64>) -> Option<(&Dir, Metadata)> {
        use std::os::unix::fs::MetadataExt;
        let (parent, name) = split(path).ok()?;
        if self.parent.as_ref().is_none_or(|dir| dir.path != parent) {
            self.parent = Some(Dir::open(parent).ok()?);
        }
        let dir = self.parent.as_ref()?;
        let meta = dir.metadata(name).ok()?;
        (ino.is_none_or(|ino| ino == meta.ino())).then_some((dir, meta))
    }
}

/// Splits a resolved path into its opened (created if missing) parent directory and its name.
pub fn parent_dir(path: &Path, create: bool) -> io::Result<(Dir, &OsStr)> {
    let (parent, name) = split(path)?;
    let dir = if create {
        Dir::create_all(parent)?
    } else {
        Dir::open(parent)?
    };
    Ok((dir, name))
}

/// Creates `dir` (and missing parents) and makes it 0700, whatever it was.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(test)]
mod tests;
