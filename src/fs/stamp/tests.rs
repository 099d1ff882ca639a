use std::os::unix::fs::symlink;

use super::path_stamp;

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.txt"), "a\n").unwrap();
    (dir, root)
}

#[test]
fn an_untouched_path_stamps_the_same() {
    let (_dir, root) = setup();
    let file = root.join("src/a.txt");
    assert_eq!(path_stamp(&root, &file).unwrap(), path_stamp(&root, &file).unwrap());
}

#[test]
fn a_file_swapped_for_a_symlink_and_back_changes_the_stamp() {
    let (_dir, root) = setup();
    let file = root.join("src/a.txt");
    let before = path_stamp(&root, &file).unwrap();
    // Past the file system clock's tick (a few milliseconds), which the stamp cannot see within.
    std::thread::sleep(std::time::Duration::from_millis(30));
    std::fs::rename(&file, root.join("kept")).unwrap();
    symlink("/etc/hostname", &file).unwrap();
    assert!(path_stamp(&root, &file).is_err(), "a symlink is refused");
    std::fs::remove_file(&file).unwrap();
    std::fs::rename(root.join("kept"), &file).unwrap();
    let after = path_stamp(&root, &file).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\n", "the same file is back");
    assert_eq!(before.file.map(|f| f.1), after.file.map(|f| f.1), "with its inode");
    assert_ne!(before, after);
}

#[test]
fn a_directory_on_the_way_swapped_for_a_symlink_is_refused() {
    let (_dir, root) = setup();
    let file = root.join("src/a.txt");
    std::fs::rename(root.join("src"), root.join("src.old")).unwrap();
    symlink(root.join("src.old"), root.join("src")).unwrap();
    assert!(path_stamp(&root, &file).is_err());
}

#[test]
fn a_missing_file_in_a_real_directory_has_a_stamp() {
    let (_dir, root) = setup();
    let stamp = path_stamp(&root, &root.join("src/new.txt")).unwrap();
    assert!(stamp.file.is_none());
    assert_eq!(stamp.dirs.len(), 2, "the base and src");
}

#[test]
fn a_file_replaced_by_another_changes_the_stamp() {
    let (_dir, root) = setup();
    let file = root.join("src/a.txt");
    let before = path_stamp(&root, &file).unwrap();
    std::fs::write(root.join("src/b.txt"), "a\n").unwrap();
    std::fs::rename(root.join("src/b.txt"), &file).unwrap();
    assert_ne!(before, path_stamp(&root, &file).unwrap(), "another inode");
}

#[test]
fn a_file_in_a_missing_directory_has_a_stamp_up_to_the_last_directory_there() {
    let (_dir, root) = setup();
    let stamp = path_stamp(&root, &root.join("src/new/deeper/x.txt")).unwrap();
    assert_eq!((stamp.dirs.len(), stamp.file), (2, None));
}
