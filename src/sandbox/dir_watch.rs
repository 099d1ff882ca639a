//! Watches on a workspace's directories (inotify), so that after a command `RepoScan::refresh` reads only what was
//! created or moved in, instead of a `stat` of every directory. Watches follow directories, not names: a directory
//! moved within the workspace is reported where it arrived, and walking it there again gives its watches their new
//! paths.
//!
//! Anything the watches cannot vouch for (no inotify, the per-user limit on watches reached, events dropped because
//! the queue overflowed) makes `changes` answer `None`, and the caller looks at every directory instead.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

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

const EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::ONLYDIR)
    .union(WatchFlags::DONT_FOLLOW)
    .union(WatchFlags::EXCL_UNLINK);

impl DirWatch {
    /// `None` when inotify is not available.
    pub(super) fn new() -> Option<Self> {
        Some(Self {
            fd: inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?,
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
        let Ok(wd) = inotify::add_watch(&self.fd, dir, EVENTS) else {
            return false;
        };
        if !self.dirs.contains_key(&wd) && !self.has_room_for(1) {
            // The watch just added goes again.
            let _ = inotify::remove_watch(&self.fd, wd);
            return false;
        }
        self.dirs.insert(wd, dir.to_path_buf());
        true
    }

    /// What arrived in the watched directories since the last call, or `None` when events were lost.
    pub(super) fn changes(&mut self) -> Option<Vec<Arrived>> {
        let mut arrived = Vec::new();
        let mut lost = false;
        let mut buf = vec![MaybeUninit::uninit(); 64 * 1024];
        // Reads whole events into `buf` (the kernel writes no partial one), and reads again once they are used up.
        let mut events = inotify::Reader::new(&self.fd, &mut buf);
        loop {
            let event = match events.next() {
                Ok(event) => event,
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                Err(_) => return None,
            };
            let mask = event.events();
            if mask.contains(ReadFlags::QUEUE_OVERFLOW) {
                lost = true;
            } else if mask.contains(ReadFlags::IGNORED) {
                self.dirs.remove(&event.wd());
            } else if let Some(dir) = self.dirs.get(&event.wd())
                && let Some(name) = event.file_name().filter(|name| !name.is_empty())
            {
                arrived.push(Arrived {
                    path: dir.join(OsStr::from_bytes(name.to_bytes())),
                    is_dir: mask.contains(ReadFlags::ISDIR),
                });
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
