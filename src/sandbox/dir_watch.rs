//! Watches on a workspace's directories (inotify), so that after a command `RepoScan::refresh` reads only what was
//! created or moved in, instead of a `stat` of every directory. Watches follow directories, not names: a directory
//! moved within the workspace is reported where it arrived, and walking it there again gives its watches their new
//! paths.
//!
//! Anything the watches cannot vouch for (no inotify, the per-user limit on watches reached, events dropped because
//! the queue overflowed) makes `changes` answer `None`, and the caller looks at every directory instead.

use std::collections::HashMap;
use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Something created in, or moved into, a watched directory.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Arrived {
    pub path: PathBuf,
    pub is_dir: bool,
}

#[derive(Debug)]
pub(super) struct DirWatch {
    fd: OwnedFd,
    /// Each watch's directory, as last walked.
    dirs: HashMap<i32, PathBuf>,
    /// How many watches it may hold: a quarter of the user's limit, which editors and file watchers share.
    budget: usize,
}

const EVENTS: u32 =
    libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_ONLYDIR | libc::IN_DONT_FOLLOW | libc::IN_EXCL_UNLINK;

impl DirWatch {
    /// `None` when inotify is not available.
    pub(super) fn new() -> Option<Self> {
        // SAFETY: inotify_init1 takes flags only.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        Some(Self {
            // SAFETY: a new descriptor nothing else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            dirs: HashMap::new(),
            budget: watch_budget(),
        })
    }

    /// Whether `count` more directories fit in its budget.
    pub(super) fn has_room_for(&self, count: usize) -> bool {
        self.dirs.len() + count <= self.budget
    }

    /// Watches `dir` (again, under this path, if it is watched already); false when it cannot be watched (the budget
    /// or the kernel's limit reached).
    pub(super) fn add(&mut self, dir: &Path) -> bool {
        let Ok(path) = CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: a valid inotify descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), path.as_ptr(), EVENTS) };
        if wd < 0 {
            return false;
        }
        if !self.dirs.contains_key(&wd) && !self.has_room_for(1) {
            // SAFETY: removes the watch just added, on this process's own descriptor.
            unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
            return false;
        }
        self.dirs.insert(wd, dir.to_path_buf());
        true
    }

    /// What arrived in the watched directories since the last call, or `None` when events were lost.
    pub(super) fn changes(&mut self) -> Option<Vec<Arrived>> {
        let mut arrived = Vec::new();
        let mut lost = false;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: reads into a buffer of the length given.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) => break,
                    Some(libc::EINTR) => continue,
                    _ => return None,
                }
            }
            let n = n as usize;
            if n == 0 {
                break;
            }
            let mut at = 0;
            while at + HEADER <= n {
                let event = Event::read(&buf[at..n]);
                at += HEADER + event.len;
                if event.mask & libc::IN_Q_OVERFLOW != 0 {
                    lost = true;
                } else if event.mask & libc::IN_IGNORED != 0 {
                    self.dirs.remove(&event.wd);
                } else if let Some(dir) = self.dirs.get(&event.wd)
                    && !event.name.is_empty()
                {
                    arrived.push(Arrived {
                        path: dir.join(OsStr::from_bytes(event.name)),
                        is_dir: event.mask & libc::IN_ISDIR != 0,
                    });
                }
            }
        }
        (!lost).then_some(arrived)
    }
}

/// A quarter of the user's limit on inotify watches (`fs.inotify.max_user_watches`; 8,192 where it cannot be read).
fn watch_budget() -> usize {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|limit| limit.trim().parse::<usize>().ok())
        .unwrap_or(8192)
        / 4
}

/// The fixed part of a `struct inotify_event`: wd, mask, cookie, len.
const HEADER: usize = 16;

struct Event<'a> {
    wd: i32,
    mask: u32,
    /// The length of the name field (NUL-padded).
    len: usize,
    name: &'a [u8],
}

impl<'a> Event<'a> {
    /// The event at the start of `bytes`, which holds at least its header (the kernel writes whole events).
    fn read(bytes: &'a [u8]) -> Self {
        let word = |i: usize| u32::from_ne_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let len = word(12) as usize;
        let name = bytes.get(HEADER..HEADER + len).unwrap_or_default();
        let name = &name[..name.iter().position(|b| *b == 0).unwrap_or(name.len())];
        Self {
            wd: word(0) as i32,
            mask: word(4),
            len,
            name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_arrives_is_reported_where_its_directory_now_is() {
        let root = tempfile::tempdir().unwrap();
        let a = root.path().join("a");
        fs_mkdir(&a);
        let mut watch = DirWatch::new().unwrap();
        assert!(watch.add(root.path()) && watch.add(&a));
        std::fs::write(a.join("file"), "x").unwrap();
        fs_mkdir(&root.path().join("new"));
        let mut got = watch.changes().unwrap();
        got.sort_by(|x, y| x.path.cmp(&y.path));
        assert_eq!(
            got,
            [
                Arrived {
                    path: a.join("file"),
                    is_dir: false
                },
                Arrived {
                    path: root.path().join("new"),
                    is_dir: true
                },
            ]
        );
        // Moved: the move is reported; watched again under its new name, what arrives in it is reported there.
        let b = root.path().join("b");
        std::fs::rename(&a, &b).unwrap();
        assert_eq!(
            watch.changes().unwrap(),
            [Arrived {
                path: b.clone(),
                is_dir: true
            }]
        );
        assert!(watch.add(&b));
        fs_mkdir(&b.join(".git"));
        assert_eq!(
            watch.changes().unwrap(),
            [Arrived {
                path: b.join(".git"),
                is_dir: true
            }]
        );
        assert_eq!(watch.changes().unwrap(), []);
    }

    #[test]
    fn it_takes_no_more_watches_than_its_budget() {
        let root = tempfile::tempdir().unwrap();
        let mut watch = DirWatch::new().unwrap();
        assert!(
            watch.budget >= 2048,
            "a quarter of this machine's limit: {}",
            watch.budget
        );
        watch.budget = 1;
        assert!(watch.add(root.path()));
        assert!(watch.add(root.path()), "the same directory again takes no more");
        let other = tempfile::tempdir().unwrap();
        assert!(!watch.has_room_for(1) && !watch.add(other.path()));
    }

    fn fs_mkdir(dir: &Path) {
        std::fs::create_dir(dir).unwrap();
    }
}
