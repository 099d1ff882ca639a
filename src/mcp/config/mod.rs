//! MCP server configuration: `[mcp_servers.NAME]` tables in tern's TOML config, the `mcpServers` JSON that Claude
//! Code, Cursor and Claude Desktop use (`.mcp.json` at the project root, and a file given with `--mcp-config`), parsed
//! into typed `ServerConfig`s. Errors name the file, the server and the field.
//!
//! Both spellings peers use are accepted (`toolTimeout` / `tool_timeout_sec`, `enabledTools` / `enabled_tools` ...),
//! `${VAR}` and `${VAR:-default}` are expanded in commands, arguments, environment values, URLs and headers as Claude
//! Code does, and unknown fields are reported as warnings rather than errors so a config written for another client
//! still loads. Later sources replace earlier ones by server name: TOML < `.mcp.json` < `--mcp-config`; a TOML table
//! with neither `command` nor `url` only adjusts (`enabled`, `toolTimeout`, the tool filters) the server of that name
//! defined in JSON, so a project's `.mcp.json` server can be switched off without editing that file.
//!
//! A broken entry (or a broken `.mcp.json`, or a broken `[mcp_servers]` table) costs only itself: it is left out and
//! reported in `McpConfig::errors` while the other servers load. Only a `--mcp-config` file that cannot be read or is
//! not JSON fails the whole load, since the user named it on the command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::names::ToolFilter;

mod raw;

use raw::RawServer;
pub use tern_protocol::mcp::TransportKind;

/// How long one MCP call may take unless the server's `toolTimeout` says otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long starting a server (spawn or connect, handshake, first listing) may take unless its `startup_timeout_sec`
/// says otherwise; codex's default too.
pub(crate) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TOOL_TIMEOUT_SECS: f64 = 24.0 * 3600.0;

/// One configured server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    pub tool_timeout: Duration,
    /// How long one start (spawn or connect, handshake, first listing) may take before the server counts as failed.
    pub startup_timeout: Duration,
    pub filter: ToolFilter,
    /// The file the server was defined in (for messages and `tern mcp list`).
    pub source: String,
    /// Set when the configuration cannot be used as written (an unset `${VAR}`): the server then fails to start
    /// with this reason while the others run.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio(StdioConfig),
    /// Streamable HTTP.
    Http(HttpConfig),
    /// Legacy HTTP+SSE (GET the stream, POST to the endpoint it announces).
    Sse(HttpConfig),
}

#[derive(Debug, Clone, PartialEq)]
pub struct StdioConfig {
    pub command: String,
    pub args: Vec<String>,
    /// Added to tern's own environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The variable holding a bearer token, read when connecting (so the token never sits in the config).
    pub bearer_token_env: Option<String>,
}

impl Transport {
    pub(crate) fn kind(&self) -> TransportKind {
        match self {
            Transport::Stdio(_) => TransportKind::Stdio,
            Transport::Http(_) => TransportKind::Http,
            Transport::Sse(_) => TransportKind::Sse,
        }
    }

    /// The command line or URL, for display.
    pub(crate) fn target(&self) -> String {
        match self {
            Transport::Stdio(s) => std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http(h) | Transport::Sse(h) => h.url.clone(),
        }
    }
}

/// Every server from every source, plus what was ignored along the way.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    pub servers: Vec<ServerConfig>,
    /// Unknown or misplaced fields, one line each, naming file, server and field.
    pub warnings: Vec<String>,
    /// Entries (or whole files) that could not be used and were left out; the other servers still load.
    pub errors: Vec<McpConfigError>,
}

/// A configuration that cannot be used: `file: MCP server "name": field `x`: what is wrong`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct McpConfigError {
    pub file: String,
    pub server: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for McpConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(server) = &self.server {
            write!(f, "MCP server {server:?}: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Loads the servers of tern's TOML config (`toml`, read from `toml_source`), of the `.mcp.json` files from the
/// repository root down to `workspace` (those that exist) and of `extra_json` (the `--mcp-config` file, which must exist and be JSON). A broken entry is left out and
/// reported in `errors`; only an unreadable or non-JSON `extra_json` is an error.
pub fn load_servers(
    toml: &toml::Table,
    toml_source: &str,
    workspace: &Path,
    extra_json: Option<&Path>,
) -> Result<McpConfig, McpConfigError> {
    let lookup = |name: &str| tern_secrets::var(name);
    let mut out = McpConfig::default();
    let mut overrides = Vec::new();
    let toml_value = match serde_json::to_value(toml) {
        Ok(Value::Object(map)) => map,
        Ok(_) => Map::new(),
        Err(e) => {
            out.errors.push(McpConfigError {
                file: toml_source.to_string(),
                server: None,
                field: Some("mcp_servers".into()),
                message: e.to_string(),
            });
            Map::new()
        }
    };
    for (name, value) in &toml_value {
        let raw = match RawServer::new(toml_source, name, value) {
            Ok(raw) => raw,
            Err(e) => {
                out.errors.push(e);
                continue;
            }
        };
        if raw.is_override() {
            overrides.push(raw);
        } else {
            match raw.parse(workspace, &lookup, &mut out.warnings) {
                Ok(server) => upsert(&mut out.servers, server),
                Err(e) => out.errors.push(e),
            }
        }
    }
    // The project's `.mcp.json` files, from the repository root down to the workspace: a deeper one's server wins.
    for dir in tern_fs::places::project_dirs(workspace) {
        let project = dir.join(".mcp.json");
        let project_file = project.display().to_string();
        match read_optional(&project) {
            Ok(Some(text)) => match parse_entries(&text, &project_file, workspace, &lookup, &mut out.warnings) {
                Ok(entries) => out.take(entries),
                Err(e) => out.errors.push(e),
            },
            Ok(None) => {}
            Err(e) => out.errors.push(e),
        }
    }
    if let Some(path) = extra_json {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| McpConfigError {
            file: file.clone(),
            server: None,
            field: None,
            message: format!("cannot read the MCP config: {e}"),
        })?;
        let entries = parse_entries(&text, &file, workspace, &lookup, &mut out.warnings)?;
        out.take(entries);
    }
    for raw in overrides {
        let Some(server) = out.servers.iter_mut().find(|s| s.name == raw.name) else {
            out.errors
                .push(raw.error(None, "needs `command` (a local server) or `url` (a remote one)"));
            continue;
        };
        if let Err(e) = raw.apply_overrides(server, &mut out.warnings) {
            out.errors.push(e);
        }
    }
    Ok(out)
}

impl McpConfig {
    /// Adds the servers of one file, later ones replacing earlier ones of the same name, and keeps its errors.
    fn take(&mut self, entries: Vec<Result<ServerConfig, McpConfigError>>) {
        for entry in entries {
            match entry {
                Ok(server) => upsert(&mut self.servers, server),
                Err(e) => {
                    // A broken entry also hides an earlier definition of the same name: starting that one instead
                    // would run something the newer file did not ask for.
                    if let Some(name) = &e.server {
                        self.servers.retain(|s| &s.name != name);
                    }
                    self.errors.push(e);
                }
            }
        }
    }
}

/// Parses the `mcpServers` object of a JSON config file (VS Code's `servers` key is accepted too); the first broken
/// entry is the error.
pub fn parse_json(
    text: &str,
    file: &str,
    workspace: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<Vec<ServerConfig>, McpConfigError> {
    parse_entries(text, file, workspace, lookup, warnings)?
        .into_iter()
        .collect()
}

/// Parses a JSON config file entry by entry: the outer error is a file that is not a config at all, the inner ones
/// are entries that cannot be used.
fn parse_entries(
    text: &str,
    file: &str,
    workspace: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Result<ServerConfig, McpConfigError>>, McpConfigError> {
    let err = |field: Option<&str>, message: String| McpConfigError {
        file: file.to_string(),
        server: None,
        field: field.map(String::from),
        message,
    };
    let root: Value = serde_json::from_str(text).map_err(|e| err(None, format!("invalid JSON: {e}")))?;
    let Value::Object(root) = root else {
        return Err(err(None, "expected a JSON object with an `mcpServers` object".into()));
    };
    let (key, servers) = match (root.get("mcpServers"), root.get("servers")) {
        (Some(v), _) => ("mcpServers", v),
        (None, Some(v)) => ("servers", v),
        (None, None) => {
            return Err(err(
                Some("mcpServers"),
                "missing: expected an object of servers by name".into(),
            ));
        }
    };
    let Value::Object(servers) = servers else {
        return Err(err(
            Some(key),
            format!("expected an object of servers by name, found {}", kind_of(servers)),
        ));
    };
    Ok(servers
        .iter()
        .map(|(name, value)| RawServer::new(file, name, value)?.parse(workspace, lookup, warnings))
        .collect())
}

fn upsert(servers: &mut Vec<ServerConfig>, server: ServerConfig) {
    match servers.iter_mut().find(|s| s.name == server.name) {
        Some(existing) => *existing = server,
        None => servers.push(server),
    }
}

fn read_optional(path: &Path) -> Result<Option<String>, McpConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(McpConfigError {
            file: path.display().to_string(),
            server: None,
            field: None,
            message: format!("cannot read: {e}"),
        }),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
