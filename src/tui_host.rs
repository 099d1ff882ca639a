//! The full-screen UI's session host (`tern_tui::Host`): the UI knows the protocol and asks this for the rest — other
//! sessions started from the configuration as it is then, the session list, a subagent's log, writing trust, and
//! which files the agent's read policy lets the user attach.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::agent::AgentHandle;
use crate::config::Settings;
use crate::host::SessionInfo;
use crate::mcp::McpManager;
use crate::tools::PathPolicy;
use crate::tui::host::{Connection, Host, PictureFormat, Session, Thumbnail, Transcript, TrustOffer};

/// Reads the settings as they are now (the command line's flags over the files).
pub type ReadSettings = Box<dyn Fn() -> Result<Settings, String> + Send + Sync>;

pub struct TuiHost {
    workspace: PathBuf,
    /// `None`: the session cannot switch to another (the demo).
    settings: Option<ReadSettings>,
    /// The workspace's read policy, for attachments; made on the first one.
    policy: OnceLock<Result<PathPolicy, String>>,
    /// The MCP servers of the session on screen, ended after the UI closes.
    mcp: Mutex<Option<Arc<McpManager>>>,
}

impl TuiHost {
    /// A host for sessions in `workspace`; `settings` reads the configuration for the next session (`None`: the
    /// session on screen is the only one).
    pub fn new(workspace: &Path, settings: Option<ReadSettings>) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            settings,
            policy: OnceLock::new(),
            mcp: Mutex::new(None),
        }
    }

    /// The session for the UI, and its servers remembered as the ones on screen.
    pub fn show(&self, info: SessionInfo) -> Session {
        if let Ok(mut mcp) = self.mcp.lock() {
            mcp.clone_from(&info.mcp);
        }
        for_ui(info)
    }

    /// The MCP servers of the session on screen.
    pub fn mcp(&self) -> Option<Arc<McpManager>> {
        self.mcp.lock().ok().and_then(|m| m.clone())
    }
}

/// The UI's ends of an agent's channels.
pub fn connection(handle: AgentHandle) -> Connection {
    let AgentHandle { ops, events, task } = handle;
    Connection { ops, events, task }
}

/// A session as the UI shows it: a fork says what it was forked from, first.
fn for_ui(info: SessionInfo) -> Session {
    let mut notices = info.notices;
    if let Some(from) = info.log_path.as_deref().and_then(|path| forked_note(&info.id, path)) {
        notices.insert(0, from);
    }
    Session {
        id: info.id,
        history: info.history,
        events: info.events,
        log_path: info.log_path,
        warnings: info.warnings,
        notices,
        prices: info.prices,
    }
}

fn forked_note(id: &str, path: &Path) -> Option<String> {
    let meta = crate::session::log::read_meta(path).ok()?;
    let from = meta.forked_from?;
    Some(format!(
        "session {id} — a fork of {from} at {} messages; the original is unchanged",
        meta.forked_messages.unwrap_or(0)
    ))
}

impl Host for TuiHost {
    fn switches(&self) -> bool {
        self.settings.is_some()
    }

    fn resume(&self, path: &Path) -> Result<(Connection, Session), String> {
        let read = self.settings.as_ref().ok_or("this session cannot switch to another")?;
        let settings = read()?;
        let (handle, info) = crate::host::start(&settings, &self.workspace, Some(path)).map_err(|e| e.to_string())?;
        Ok((connection(handle), self.show(info)))
    }

    fn fork(&self, path: &Path) -> Result<PathBuf, String> {
        crate::session::list::fork(&crate::config::data_dir(), path)
            .map_err(|e| format!("cannot fork the session: {e}"))
    }

    fn sessions(&self) -> Vec<tern_protocol::SessionSummary> {
        crate::session::list::list(&crate::config::data_dir(), &self.workspace.display().to_string())
    }

    fn session_details(&self, path: &Path) -> tern_protocol::SessionDetails {
        crate::session::list::details(path).unwrap_or_default()
    }

    fn transcript(&self, path: &Path) -> Result<Transcript, String> {
        let loaded = crate::session::log::load(path).map_err(|e| e.to_string())?;
        Ok((loaded.messages, loaded.events))
    }

    fn trust(&self, offer: &TrustOffer) -> Result<(), String> {
        crate::config::write::trust_project(&offer.user_config, &offer.workspace, &offer.digest)
            .map_err(|e| e.to_string())
    }

    fn trust_offer(&self) -> Option<TrustOffer> {
        crate::config::offer::offer_for(&self.workspace, tern_fs::places::user_config_path()?)
    }

    fn attachable(&self, path: &str) -> Result<PathBuf, String> {
        let policy = self
            .policy
            .get_or_init(|| PathPolicy::new(&self.workspace).map_err(|e| e.to_string()));
        policy.as_ref().map_err(Clone::clone)?.attachable(path)
    }

    fn paste_image(&self) -> Result<PathBuf, String> {
        crate::clipboard::paste_image()
    }

    fn thumbnail(&self, path: &str, max: (u32, u32), format: PictureFormat) -> Result<Thumbnail, String> {
        let file = match tern_fs::places::pasted_image(path) {
            Some(pasted) => pasted,
            None => self.attachable(path)?,
        };
        let data = read_bounded(&file, MAX_THUMBNAIL_SOURCE)?;
        let format = match format {
            PictureFormat::Png => tern_image::Format::Png,
            PictureFormat::Sixel => tern_image::Format::Sixel,
        };
        let thumb = tern_image::thumbnail(&data, max.0, max.1, format)?;
        Ok(Thumbnail {
            data: thumb.data,
            width: thumb.width,
            height: thumb.height,
        })
    }

    fn export(&self, log: &Path, typed: &str) -> Result<PathBuf, String> {
        let meta = crate::session::log::read_meta(log).map_err(|e| format!("cannot read the session: {e}"))?;
        let path = crate::session::export::destination(&self.workspace, &meta.id, typed);
        crate::session::export::save(log, &path, Some(crate::models::Catalog::builtin()))?;
        Ok(path)
    }
}

/// The most bytes of an image file read for a thumbnail (the decoder's pixel budget bounds the rest).
const MAX_THUMBNAIL_SOURCE: u64 = 20 * 1024 * 1024;

/// The first `max` bytes of `file`, or why it cannot be read (or is larger).
fn read_bounded(file: &Path, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let opened = tern_fs::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut data = Vec::new();
    opened
        .take(max + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if data.len() as u64 > max {
        return Err(format!("{} is larger than {} MB", file.display(), max >> 20));
    }
    Ok(data)
}

/// The instruction files (AGENTS.md, CLAUDE.md) a session in `workspace` loads, as paths: the same search the agent's
/// prompt makes, for the start screen.
pub fn context_files(workspace: &Path) -> Vec<String> {
    let sources = crate::agent::prompt::ContextSources::for_workspace(workspace);
    let (files, _) =
        crate::agent::prompt::files::collect(workspace, sources.user_dir.as_deref(), sources.claude_dir.as_deref());
    files.into_iter().map(|f| f.path.display().to_string()).collect()
}

/// The names of the custom agents a session in `workspace` offers, for the start screen.
pub fn agents(workspace: &Path) -> Vec<String> {
    let sources = crate::agent::prompt::ContextSources::for_workspace(workspace);
    let (agents, _) = crate::agent::subagent::agents::collect(&sources);
    agents.into_iter().map(|a| a.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::trust::{Standing, digest, standing};

    #[test]
    fn trusting_writes_the_user_config_bound_to_the_projects_digest() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("config/tern/config.toml");
        let host = TuiHost::new(dir.path(), None);
        let offer = crate::config::offer::TrustOffer {
            workspace: dir.path().to_path_buf(),
            user_config: user.clone(),
            files: vec![".tern/config.toml".into()],
            servers: Vec::new(),
            changes: Vec::new(),
            digest: digest(dir.path()),
        };
        host.trust(&offer).unwrap();
        let written = crate::config::ConfigFile::load(&user).unwrap().unwrap();
        let trusted = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(written.trusted_projects.len(), 1);
        assert_eq!(written.trusted_projects[0].path(), trusted);
        assert_eq!(standing(&written.trusted_projects, &trusted), Standing::Trusted);
    }

    #[test]
    fn attachments_come_from_the_workspace_through_the_read_policy() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "alpha\n").unwrap();
        std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
        let host = TuiHost::new(dir.path(), None);
        let resolved = host.attachable("notes.txt").unwrap();
        assert_eq!(resolved, std::fs::canonicalize(dir.path().join("notes.txt")).unwrap());
        assert!(host.attachable("../outside.txt").is_err());
        assert!(
            host.attachable(".env").is_err(),
            "a file that may hold secrets is not attached"
        );
        assert!(!host.switches(), "a host without settings is the only session");
        assert!(host.resume(&dir.path().join("log.jsonl")).is_err());
    }

    /// A PNG of `w`×`h` pixels.
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::new_rgb8(w, h)
            .write_to(&mut out, image::ImageFormat::Png)
            .unwrap();
        out.into_inner()
    }

    #[test]
    fn thumbnails_come_only_from_images_the_read_policy_lets_the_user_attach() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shot.png"), png(480, 240)).unwrap();
        std::fs::write(dir.path().join(".env"), png(8, 8)).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("other.png"), png(8, 8)).unwrap();
        let host = TuiHost::new(dir.path(), None);
        let thumb = host.thumbnail("shot.png", (240, 160), PictureFormat::Png).unwrap();
        assert_eq!((thumb.width, thumb.height), (240, 120));
        assert_eq!(image::guess_format(&thumb.data).unwrap(), image::ImageFormat::Png);
        let sixel = host.thumbnail("shot.png", (192, 128), PictureFormat::Sixel).unwrap();
        assert_eq!((sixel.width, sixel.height), (192, 96));
        assert!(sixel.data.starts_with(b"\"1;1;192;96#"));
        let home = std::env::var("HOME").unwrap();
        for refused in [
            "~/.ssh/id_rsa.png".to_string(),
            format!("{home}/.ssh/id_rsa.png"),
            ".env".to_string(),
            outside.path().join("other.png").display().to_string(),
        ] {
            for format in [PictureFormat::Png, PictureFormat::Sixel] {
                let why = host.thumbnail(&refused, (240, 160), format).unwrap_err();
                assert!(!why.contains("cannot read"), "{refused} was opened: {why}");
            }
        }
    }
}
