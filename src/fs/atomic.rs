//! Writing a file whole or not at all: a temp file in the same directory, fsync, then a rename over the target, all
//! inside the directory opened without following a swapped symlink (see the crate's doc).

use std::path::{Path, PathBuf};

use crate as strict_fs;

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, then rename over the target, so a
/// crash leaves either the old or the new content, never half of it. Parent directories are created. An existing file
/// keeps its permissions; a new one gets the user's umask (0666 & !umask), as if an editor had created it. When
/// `expected` is given, the write is refused if the file's current content no longer matches it (someone changed the
/// file after we read it), instead of silently losing their change.
pub fn atomic_write(path: &Path, bytes: &[u8], expected: Option<&[u8]>) -> std::io::Result<()> {
    write_via_temp(path, bytes, expected, NewMode::Umask)
}

/// Like `atomic_write`, for tern's own private files (session data, stored tool results): the file ends up 0600
/// whatever mode it had before.
pub fn atomic_write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temp(&own_path(path)?, bytes, None, NewMode::Private)
}

/// Like `atomic_write`, for tern's own files that keep their mode (the user's config).
pub fn atomic_write_own(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temp(&own_path(path)?, bytes, None, NewMode::Umask)
}

/// tern's own files are not paths the model gave, so the path policy never resolved them: they are made real here
/// (symlinks the user made, such as a dotfiles link to the config, followed; missing directories created), and then
/// written like a resolved path.
fn own_path(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    if let Ok(real) = std::fs::canonicalize(&absolute) {
        return Ok(real);
    }
    match (absolute.parent(), absolute.file_name()) {
        (Some(parent), Some(name)) => {
            std::fs::create_dir_all(parent)?;
            Ok(std::fs::canonicalize(parent)?.join(name))
        }
        _ => Ok(absolute),
    }
}

#[derive(Clone, Copy)]
enum NewMode {
    Umask,
    Private,
}

fn write_via_temp(path: &Path, bytes: &[u8], expected: Option<&[u8]>, mode: NewMode) -> std::io::Result<()> {
    write_via_temp_inner(path, bytes, expected, mode).map_err(|e| {
        if e.kind() == std::io::ErrorKind::StorageFull {
            // The temp file is gone with the error, so the target is exactly as it was: say both plainly.
            std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                format!("the disk is full ({e}); nothing was written and the file is unchanged"),
            )
        } else {
            e
        }
    })
}

fn write_via_temp_inner(path: &Path, bytes: &[u8], expected: Option<&[u8]>, mode: NewMode) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // The directory is opened (and made) without following a symlink swapped in after the path was checked, and the
    // temp file, the check and the rename all happen in it by name (see `strict_fs`).
    let (dir, name) = strict_fs::parent_dir(path, true)?;
    let existing = match dir.metadata(name) {
        Ok(meta) if meta.file_type().is_symlink() => return Err(strict_fs::swapped(path)),
        Ok(meta) => Some(meta),
        Err(_) => None,
    };
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"));
    }
    // The temp file is created with the final mode's bits (the kernel applies the umask), so its content is never
    // readable by more people than the finished file will be.
    let final_mode = match (mode, &existing) {
        (NewMode::Private, _) => Some(0o600),
        (NewMode::Umask, Some(meta)) => Some(meta.permissions().mode() & 0o7777),
        (NewMode::Umask, None) => None,
    };
    let mut tmp = dir.temp_file(final_mode.map_or(0o666, |m| m & 0o777))?;
    tmp.write_all(bytes)?;
    tmp.sync_all()?;
    // The umask may have taken bits an existing file had: put them back exactly.
    if let Some(mode) = final_mode {
        tmp.set_mode(mode)?;
    }
    if let Some(expected) = expected {
        let current = dir.read(name).unwrap_or_default();
        if current != expected {
            return Err(std::io::Error::other(
                "the file changed on disk while it was being edited; read it again and redo the edit",
            ));
        }
    }
    tmp.persist(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn atomic_write_creates_parents_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.txt");
        atomic_write(&p, b"one", None).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
        atomic_write(&p, b"two", Some(b"one")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o751);
        // no temp files left behind
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }

    /// The process umask, read without changing it (changing it would race with other threads creating files).
    fn current_umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).unwrap()
    }

    #[test]
    fn new_files_get_the_umask_and_private_files_are_0600() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.txt");
        atomic_write(&p, b"x", None).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !current_umask());
        // An existing file keeps an unusual mode, setuid-style bits included.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o2640)).unwrap();
        atomic_write(&p, b"y", Some(b"x")).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777, 0o2640);
        // Private files end up 0600 whether new or already there with looser bits.
        let q = dir.path().join("private.txt");
        atomic_write_private(&q, b"secret").unwrap();
        assert_eq!(std::fs::metadata(&q).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::set_permissions(&q, std::fs::Permissions::from_mode(0o644)).unwrap();
        atomic_write_private(&q, b"secret 2").unwrap();
        assert_eq!(std::fs::metadata(&q).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&q).unwrap(), b"secret 2");
    }

    #[test]
    fn atomic_write_refuses_when_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "theirs").unwrap();
        let err = atomic_write(&p, b"ours", Some(b"original")).unwrap_err();
        assert!(err.to_string().contains("changed on disk"));
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(atomic_write(dir.path(), b"x", None).is_err());
    }
}
