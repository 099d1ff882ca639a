//! The sandbox's settings, as the configuration resolved them (`[sandbox]`).

use std::path::PathBuf;

/// The resolved `[sandbox]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    pub enabled: bool,
    pub network: bool,
    pub writable_roots: Vec<PathBuf>,
    pub git_read_only: bool,
    /// Extra places to hide (`[sandbox] hide`).
    pub hide: Vec<PathBuf>,
    /// Default credential stores not to hide (`[sandbox] unhide`).
    pub unhide: Vec<PathBuf>,
    pub hide_workspace_secrets: bool,
    pub allow_unix_sockets: Vec<PathBuf>,
    pub devices: Vec<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            network: false,
            writable_roots: Vec::new(),
            git_read_only: false,
            hide: Vec::new(),
            unhide: Vec::new(),
            hide_workspace_secrets: true,
            allow_unix_sockets: Vec::new(),
            devices: Vec::new(),
        }
    }
}

impl SandboxSettings {
    /// The credential stores hidden from commands and refused by the file tools, for the current HOME.
    pub fn credential_stores(&self) -> Vec<PathBuf> {
        tern_secrets::files::home_stores(std::env::home_dir().as_deref(), &self.hide, &self.unhide)
    }
}
