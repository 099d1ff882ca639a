//! Where tern keeps its own files: the user's config and tern's data (sessions, tool results, logins). The sandbox
//! hides both from commands; nothing here creates them.

use std::path::{Path, PathBuf};

/// Where the user's own config lives: `$XDG_CONFIG_HOME/tern/config.toml` or `~/.config/tern/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("tern/config.toml"));
    }
    std::env::home_dir().map(|h| h.join(".config/tern/config.toml"))
}

/// Where tern keeps its data (sessions, tool results): `$XDG_DATA_HOME/tern` or `~/.local/share/tern`, outside any
/// repository.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TERN_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("tern");
    }
    match std::env::home_dir() {
        Some(home) => home.join(".local/share/tern"),
        None => std::env::temp_dir().join("tern"),
    }
}

/// Where images pasted from the clipboard are kept (`data_dir()/pasted`, 0700, each file 0600): outside the
/// workspace, hidden from commands like the rest of tern's data, so only the user puts images there.
pub fn pasted_images_dir() -> PathBuf {
    data_dir().join("pasted")
}

/// The file `path` names when it is an image the user pasted from the clipboard (Ctrl+V): directly inside tern's
/// pasted-images directory, which only tern writes (it is outside the workspace and hidden from commands).
pub fn pasted_image(path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    let dir = pasted_images_dir();
    let name = path.file_name()?.to_str()?;
    (path.parent() == Some(dir.as_path()) && name.starts_with("clip-")).then(|| dir.join(name))
}

/// The repository `workspace` is in: its nearest ancestor (itself included) with a `.git`, else the workspace.
pub fn repository_root(workspace: &Path) -> PathBuf {
    workspace
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(workspace)
        .to_path_buf()
}

/// The directories a project's own files are looked up in for a session in `workspace`: from the repository root
/// down to the workspace, the most general first (one directory when tern runs at the root, or outside a repository).
pub fn project_dirs(workspace: &Path) -> Vec<PathBuf> {
    let root = repository_root(workspace);
    let mut dirs: Vec<PathBuf> = workspace
        .ancestors()
        .take_while(|dir| dir.starts_with(&root))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}
