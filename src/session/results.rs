//! Large tool results on disk. The model gets a preview and the path; `read_file` may page through the file (the path
//! policy lets reads into this directory), and the TUI's history browser loads it for the full view. Results hold
//! file contents and command output: the directory is 0700 and each file 0600.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct ToolResultStore {
    dir: PathBuf,
}

impl ToolResultStore {
    /// A store in `dir`; the directory is created on first use.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The store of session `id` under tern's data directory.
    pub fn for_session(data_dir: &Path, id: &str) -> Self {
        Self::new(data_dir.join("sessions").join(id).join("tool-results"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates the directory (so the path policy can resolve it as a read root).
    pub fn ensure_dir(&self) -> std::io::Result<()> {
        tern_fs::private_dir(&self.dir)
    }

    /// Where the full text of one result goes: a name made of the tool's and the call's, safe for any file system.
    pub fn path_for(&self, call_id: &str, tool: &str) -> PathBuf {
        let safe = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect()
        };
        self.dir.join(format!("{}-{}.txt", safe(tool), safe(call_id)))
    }

    /// Saves the full text of one result and returns where it went.
    pub fn save(&self, call_id: &str, tool: &str, text: &str) -> std::io::Result<PathBuf> {
        self.ensure_dir()?;
        let path = self.path_for(call_id, tool);
        tern_fs::atomic_write_private(&path, text.as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_under_safe_names() {
        let dir = tempfile::tempdir().unwrap();
        let store = ToolResultStore::for_session(dir.path(), "s1");
        let p = store.save("call/../1", "exec", "hello").unwrap();
        assert!(p.starts_with(dir.path().join("sessions/s1/tool-results")));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "hello");
        assert!(p.file_name().unwrap().to_str().unwrap().starts_with("exec-call____1"));
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&p), mode(store.dir())), (0o600, 0o700));
    }
}
