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

use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata, Permissions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

mod atomic;
pub mod places;

pub use atomic::{atomic_write, atomic_write_own, atomic_write_private};

/// Set once the kernel answered `ENOSYS` to `openat2`: every later open walks component by component.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// `struct open_how` of `linux/openat2.h` (libc's is non-exhaustive, so it cannot be built here).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;

/// The error for a path that gained a symlink after it was checked.
pub(crate) fn swapped(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} changed while tern was using it: a directory or file on its path is now a symlink, which tern does not \
         follow (something else on the machine is changing the workspace); nothing was read or written there",
        path.display()
    ))
}

fn cstring(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
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
fn open_path(path: &Path, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
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
    let flags = flags | libc::O_CLOEXEC;
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match openat2(libc::AT_FDCWD, path.as_os_str(), flags, mode) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(swapped(path)),
            other => return other,
        }
    }
    walk(path, flags, mode)
}

fn openat2(dir: libc::c_int, path: &OsStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let c_path = cstring(path)?;
    let how = OpenHow {
        flags: flags as u64,
        mode: u64::from(mode),
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    loop {
        // SAFETY: a valid C string and an `open_how` of the size passed; the returned descriptor is owned here.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir,
                c_path.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            // SAFETY: the kernel just gave us this descriptor.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) });
        }
        let e = io::Error::last_os_error();
        // EAGAIN: the kernel could not do the lookup in one go (a concurrent rename); it asks to try again.
        if !matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) {
            return Err(e);
        }
    }
}

/// The same open without `openat2`: one `openat(O_NOFOLLOW)` per component from `/`.
fn walk(path: &Path, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let mut dir = openat(
        libc::AT_FDCWD,
        OsStr::new("/"),
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )?;
    let Some((last, parents)) = names.split_last() else {
        return openat(libc::AT_FDCWD, OsStr::new("/"), flags, mode);
    };
    for name in parents {
        let next = openat(
            dir.as_raw_fd(),
            name,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0,
        );
        dir = next.map_err(|e| nofollow_error(e, &dir, name, path))?;
    }
    openat(dir.as_raw_fd(), last, flags | libc::O_NOFOLLOW, mode).map_err(|e| nofollow_error(e, &dir, last, path))
}

/// `O_NOFOLLOW` met a symlink: `ELOOP`, or `ENOTDIR` where a directory was asked for (told apart from a plain file
/// by looking at the entry `name` in `dir` itself).
fn nofollow_error(e: io::Error, dir: &OwnedFd, name: &OsStr, path: &Path) -> io::Error {
    let is_link = || {
        openat(dir.as_raw_fd(), name, libc::O_PATH | libc::O_NOFOLLOW, 0)
            .and_then(|fd| File::from(fd).metadata())
            .is_ok_and(|m| m.file_type().is_symlink())
    };
    match e.raw_os_error() {
        Some(libc::ELOOP) => swapped(path),
        Some(libc::ENOTDIR) if is_link() => swapped(path),
        _ => e,
    }
}

fn openat(dir: libc::c_int, name: &OsStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let c_name = cstring(name)?;
    loop {
        // SAFETY: a valid C string; the returned descriptor is owned here.
        let fd = unsafe { libc::openat(dir, c_name.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) };
        if fd >= 0 {
            // SAFETY: the kernel just gave us this descriptor.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Opens a file for reading: never blocking on a FIFO swapped in, never as a controlling terminal.
pub fn open(path: &Path) -> io::Result<File> {
    open_path(path, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY, 0).map(File::from)
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
    File::from(open_path(path, libc::O_PATH, 0)?).metadata()
}

/// Sets the mode bits of the file at `path`.
pub fn set_permissions(path: &Path, permissions: Permissions) -> io::Result<()> {
    let fd = open_path(path, libc::O_PATH, 0)?;
    // An `O_PATH` descriptor cannot be `fchmod`ed; its magic link in /proc names exactly the opened file.
    std::fs::set_permissions(format!("/proc/self/fd/{}", fd.as_raw_fd()), permissions)
}

/// Removes the file at `path` (a symlink there is removed itself, never followed).
pub fn remove_file(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    Dir::open(parent)?.unlink(name, 0)
}

/// Removes the empty directory at `path`.
pub fn remove_dir(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    Dir::open(parent)?.unlink(name, libc::AT_REMOVEDIR)
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
        let fd = open_path(path, libc::O_PATH | libc::O_DIRECTORY, 0)?;
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
        let c_name = cstring(name)?;
        // SAFETY: a valid directory descriptor and C string.
        match check(unsafe { libc::mkdirat(parent.fd.as_raw_fd(), c_name.as_ptr(), 0o777) }) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let fd = openat(
            parent.fd.as_raw_fd(),
            name,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
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
        let fd = openat(self.fd.as_raw_fd(), name, libc::O_PATH | libc::O_NOFOLLOW, 0)?;
        File::from(fd).metadata()
    }

    /// The content of the regular file `name`; a symlink there is refused.
    pub(crate) fn read(&self, name: &OsStr) -> io::Result<Vec<u8>> {
        let fd = openat(
            self.fd.as_raw_fd(),
            name,
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW,
            0,
        )
        .map_err(|e| nofollow_error(e, &self.fd, name, &self.path.join(name)))?;
        let mut bytes = Vec::new();
        File::from(fd).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn unlink(&self, name: &OsStr, flags: libc::c_int) -> io::Result<()> {
        let c_name = cstring(name)?;
        // SAFETY: a valid directory descriptor and C string.
        check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c_name.as_ptr(), flags) })
    }

    /// Renames the entry `from` to `to`, both in this directory (`to` is replaced, never followed).
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (c_from, c_to) = (cstring(from)?, cstring(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: a valid directory descriptor and C strings.
        check(unsafe { libc::renameat(fd, c_from.as_ptr(), fd, c_to.as_ptr()) })
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
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            match openat(self.fd.as_raw_fd(), OsStr::new(&name), flags, mode) {
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
            let _ = self.dir.unlink(&self.name, 0);
        }
    }
}

impl Dir {
    /// Creates the empty file `name` with `mode` (the umask applies) unless something is there already, which is left
    /// as it is.
    pub fn create_empty(&self, name: &OsStr, mode: u32) -> io::Result<()> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        match openat(self.fd.as_raw_fd(), name, flags, mode) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// Where the symlink `name` in this directory points.
    pub fn read_link(&self, name: &OsStr) -> io::Result<PathBuf> {
        let c_name = cstring(name)?;
        let mut buf = vec![0u8; libc::PATH_MAX as usize];
        // SAFETY: a valid directory descriptor, C string and buffer of the length passed.
        let len = unsafe { libc::readlinkat(self.fd.as_raw_fd(), c_name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if len < 0 {
            return Err(io::Error::last_os_error());
        }
        buf.truncate(len as usize);
        Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
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
