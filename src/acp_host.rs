//! The session host of `tern acp`: each session the editor opens is started from the configuration of its own
//! directory (so a project's settings apply only when it is trusted, as anywhere), with the command line's flags on
//! top. What a start has to tell the user (warnings, notices) goes to stderr, which editors keep as the agent's log:
//! stdout is the protocol's.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::acp::{EditorServer, Host, Offer, Started};
use crate::config::{self, ConfigFile};
use crate::mcp::McpManager;

pub struct AcpHost {
    flags: ConfigFile,
    /// The sessions' MCP servers, shut down when the editor goes away (`shut_down`).
    mcp: Mutex<Vec<Arc<McpManager>>>,
}

impl AcpHost {
    pub fn new(flags: ConfigFile) -> Self {
        Self {
            flags,
            mcp: Mutex::new(Vec::new()),
        }
    }

    /// Asks every session's MCP servers to exit.
    pub async fn shut_down(&self) {
        let managers = self.mcp.lock().map(|mut m| std::mem::take(&mut *m)).unwrap_or_default();
        for manager in managers {
            manager.shutdown().await;
        }
    }

    fn started(&self, workspace: &Path, resume: Option<PathBuf>, offer: &Offer) -> Result<Started, String> {
        let mut settings = config::settings(workspace, self.flags.clone()).map_err(|e| e.to_string())?;
        for server in &offer.servers {
            settings.mcp_servers.insert(server.name.clone(), server_table(server));
        }
        let (config, info) =
            crate::host::config_for(&settings, workspace, resume.as_deref()).map_err(|e| e.to_string())?;
        // Edits go through the editor only when it also gives them the text it shows.
        let config = config
            .with_editor_buffers(offer.editor_reads)
            .with_editor_writes(offer.editor_reads && offer.editor_writes);
        let handle = crate::agent::spawn(config);
        for line in info
            .warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .chain(info.notices.clone())
        {
            eprintln!("tern: {}", crate::terminal_text::clean(&line));
        }
        if let (Some(manager), Ok(mut managers)) = (info.mcp, self.mcp.lock()) {
            managers.push(manager);
        }
        Ok(Started {
            id: info.id,
            ops: handle.ops,
            events: handle.events,
            mode: settings.mode,
            history: info.events.into_iter().map(|(_, event)| event).collect(),
        })
    }
}

impl Host for AcpHost {
    fn start(&self, cwd: &Path, offer: &Offer) -> Result<Started, String> {
        self.started(&workspace(cwd)?, None, offer)
    }

    fn load(&self, id: &str, cwd: &Path, offer: &Offer) -> Result<Started, String> {
        let workspace = workspace(cwd)?;
        let path = crate::host::session_by_id(id, &workspace).map_err(|e| format!("{e:#}"))?;
        self.started(&workspace, Some(path), offer)
    }
}

/// An editor's MCP server as an `[mcp_servers.NAME]` table of tern's configuration.
fn server_table(server: &EditorServer) -> toml::Value {
    let pairs = |pairs: &[(String, String)]| {
        let table: toml::Table = pairs
            .iter()
            .map(|(k, v)| (k.clone(), toml::Value::String(v.clone())))
            .collect();
        toml::Value::Table(table)
    };
    let mut table = toml::Table::new();
    if server.transport == "stdio" {
        table.insert("command".into(), server.command.clone().into());
        let args = server.args.iter().cloned().map(toml::Value::String).collect();
        table.insert("args".into(), toml::Value::Array(args));
        table.insert("env".into(), pairs(&server.env));
    } else {
        table.insert("type".into(), server.transport.clone().into());
        table.insert("url".into(), server.url.clone().into());
        table.insert("headers".into(), pairs(&server.headers));
    }
    toml::Value::Table(table)
}

/// The session's directory with its links resolved, as `tern -C` takes it.
fn workspace(cwd: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(cwd).map_err(|e| format!("workspace {} is not accessible: {e}", cwd.display()))
}
