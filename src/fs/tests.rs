//! Each operation on a plain resolved path works, and each refuses a path where a directory was swapped for a symlink
//! after the check, leaving the place the symlink points at untouched. Both the `openat2` road and the walk that
//! older kernels take are tried.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use super::*;

struct Setup {
    _dir: tempfile::TempDir,
    /// The workspace (real, canonical).
    ws: PathBuf,
    /// A directory outside it, where a swapped symlink leads.
    outside: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ws = root.join("ws");
    let outside = root.join("outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("sub/a.txt"), "inside").unwrap();
    std::fs::write(outside.join("a.txt"), "outside").unwrap();
    Setup { _dir: dir, ws, outside }
}

/// Replaces `ws/sub` with a symlink to the outside directory, as a concurrent command would.
fn swap(s: &Setup) {
    std::fs::rename(s.ws.join("sub"), s.ws.join("sub.moved")).unwrap();
    symlink(&s.outside, s.ws.join("sub")).unwrap();
}

fn assert_swapped(result: io::Result<impl std::fmt::Debug>) {
    let err = result.expect_err("a swapped symlink must not be followed");
    assert!(err.to_string().contains("now a symlink"), "{err}");
}

#[test]
fn plain_paths_work() {
    let s = setup();
    let file = s.ws.join("sub/a.txt");
    assert_eq!(read(&file).unwrap(), b"inside");
    assert!(metadata(&file).unwrap().is_file());
    set_permissions(&file, Permissions::from_mode(0o640)).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o640);
    create_dir_all(&s.ws.join("new/deeper")).unwrap();
    assert!(s.ws.join("new/deeper").is_dir());
    remove_dir(&s.ws.join("new/deeper")).unwrap();
    remove_file(&file).unwrap();
    assert!(!file.exists());
    assert_eq!(read(&file).unwrap_err().kind(), io::ErrorKind::NotFound);
}

#[test]
fn a_swapped_directory_is_never_followed() {
    let s = setup();
    let file = s.ws.join("sub/a.txt");
    swap(&s);
    assert_swapped(read(&file));
    assert_swapped(open(&file));
    assert_swapped(metadata(&file));
    assert_swapped(set_permissions(&file, Permissions::from_mode(0o777)));
    assert_swapped(remove_file(&file));
    assert_swapped(create_dir_all(&s.ws.join("sub/made")));
    assert_swapped(parent_dir(&file, true).map(|_| ()));
    let outside = s.outside.join("a.txt");
    assert_eq!(std::fs::read(&outside).unwrap(), b"outside");
    assert_ne!(std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777, 0o777);
    assert!(!s.outside.join("made").exists());
}

#[test]
fn a_file_swapped_for_a_symlink_is_not_followed() {
    let s = setup();
    let file = s.ws.join("sub/a.txt");
    std::fs::remove_file(&file).unwrap();
    symlink(s.outside.join("a.txt"), &file).unwrap();
    assert_swapped(read(&file));
    assert_swapped(metadata(&file));
    // Removing the entry removes the link itself, never what it points at.
    remove_file(&file).unwrap();
    assert_eq!(std::fs::read(s.outside.join("a.txt")).unwrap(), b"outside");
}

#[test]
fn the_walk_without_openat2_refuses_the_same() {
    let s = setup();
    let file = s.ws.join("sub/a.txt");
    let fd = walk(&file, OFlags::RDONLY | OFlags::CLOEXEC, 0).unwrap();
    let mut text = String::new();
    File::from(fd).read_to_string(&mut text).unwrap();
    assert_eq!(text, "inside");
    swap(&s);
    assert_swapped(walk(&file, OFlags::RDONLY | OFlags::CLOEXEC, 0));
    assert_swapped(walk(
        &s.ws.join("sub"),
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        0,
    ));
}

#[test]
fn temp_files_stay_in_the_opened_directory_and_go_unless_persisted() {
    let s = setup();
    let dir = Dir::open(&s.ws.join("sub")).unwrap();
    // The directory is swapped after it was opened: the write still lands in the directory that was opened.
    swap(&s);
    let mut tmp = dir.temp_file(0o600).unwrap();
    tmp.write_all(b"new").unwrap();
    tmp.persist(OsStr::new("a.txt")).unwrap();
    assert_eq!(std::fs::read(s.ws.join("sub.moved/a.txt")).unwrap(), b"new");
    assert_eq!(std::fs::read(s.outside.join("a.txt")).unwrap(), b"outside");
    drop(dir.temp_file(0o600).unwrap());
    let names: Vec<_> = std::fs::read_dir(s.ws.join("sub.moved"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        names,
        vec![OsStr::new("a.txt").to_owned()],
        "a dropped temp file is removed"
    );
}

#[test]
fn unresolved_paths_are_refused() {
    for path in ["relative.txt", "/tmp/../etc/passwd", "./x"] {
        assert_eq!(
            read(Path::new(path)).unwrap_err().kind(),
            io::ErrorKind::InvalidInput,
            "{path}"
        );
    }
}

#[test]
fn a_walk_check_keeps_names_still_there_and_drops_the_rest() {
    use std::os::unix::fs::MetadataExt;
    let s = setup();
    let file = s.ws.join("sub/f");
    std::fs::write(&file, "x").unwrap();
    let ino = std::fs::metadata(&file).unwrap().ino();
    let mut check = WalkCheck::default();
    assert!(check.entry(&file, Some(ino)).is_some());
    // Another file under the same name: not what the walk saw.
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, "y").unwrap();
    let other = std::fs::metadata(&file).unwrap().ino();
    assert!(check.entry(&file, Some(ino)).is_none() || ino == other);
    // A name the walk read through a swapped directory: gone, or behind a symlink now.
    assert!(check.entry(&s.ws.join("sub/missing"), None).is_none());
    std::fs::write(s.outside.join("f"), "outside").unwrap();
    swap(&s);
    let mut fresh = WalkCheck::default();
    assert!(fresh.entry(&s.ws.join("sub/f"), None).is_none());
    // A symlink itself is an entry: its metadata is the link's, and where it points can be read.
    let link = s.ws.join("link");
    symlink("/etc/passwd", &link).unwrap();
    let (dir, meta) = fresh.entry(&link, None).unwrap();
    assert!(meta.file_type().is_symlink());
    assert_eq!(dir.read_link(OsStr::new("link")).unwrap(), Path::new("/etc/passwd"));
}
