//! `tern mcp add`, `remove` and `get`: servers written into (and taken out of) the user's `config.toml` or the
//! project's `.tern/config.toml` through `config::write::update` (comments kept, result validated, written
//! atomically), and one server described with its state and tools.
//!
//! What is written is checked as the loader will read it before the file changes, so `add` never leaves a server tern
//! would refuse. Values of secret-looking variables and every header value stay out of what is printed: the user
//! typed them once, and a terminal's scrollback or a CI log is no place to repeat them.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};

use super::ConfigError;
use crate::mcp::config::{McpConfig, TransportKind};

/// The longest server name accepted: it becomes part of every tool name (`mcp_{server}_{tool}`, 64 characters at
/// most), so a long one would leave no room for the tools'.
pub const MAX_SERVER_NAME: usize = 32;

/// Which config file a change goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's own `config.toml`.
    User,
    /// The project's `.tern/config.toml`.
    Project,
}

impl Scope {
    pub fn label(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// A server as `tern mcp add` was given it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewServer {
    pub name: String,
    pub transport: NewTransport,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NewTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP (`kind` Http) or legacy SSE (`kind` Sse).
    Remote {
        url: String,
        kind: TransportKind,
        headers: Vec<(String, String)>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    #[error(
        "invalid server name {0:?}: use letters, digits, `_` and `-` (at most {MAX_SERVER_NAME} characters), e.g. `my-server`"
    )]
    InvalidName(String),
    #[error("invalid {what} {given:?}: write it as KEY=VALUE")]
    InvalidPair { what: &'static str, given: String },
    #[error("an MCP server named {name:?} already exists in {}; remove it first: tern mcp remove {name}", path.display())]
    Exists { name: String, path: PathBuf },
    #[error("no MCP server named {name:?} in {}{hint}", path.display())]
    NotFound { name: String, path: PathBuf, hint: String },
    #[error("no MCP server named {name:?} is configured{hint}")]
    Unknown { name: String, hint: String },
    #[error("the MCP server {name:?} is defined in both {} and {}: say which with --scope user or --scope project", user.display(), project.display())]
    Ambiguous {
        name: String,
        user: PathBuf,
        project: PathBuf,
    },
    #[error(transparent)]
    Server(#[from] crate::mcp::config::McpConfigError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Checks a server name: what `mcp_{server}_...` tool names can carry unchanged.
pub fn validate_name(name: &str) -> Result<(), ManageError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ManageError::InvalidName(name.to_string()))
    }
}

/// Splits `KEY=VALUE` (an `--env` or `--header` argument); `what` names it in the error.
pub fn parse_pair(given: &str, what: &'static str) -> Result<(String, String), ManageError> {
    match given.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.trim().to_string(), value.to_string())),
        _ => Err(ManageError::InvalidPair {
            what,
            given: given.to_string(),
        }),
    }
}

/// Adds `server` as `[mcp_servers.NAME]` to the config file at `path` (created if absent). Fails, leaving the file as
/// it was, when the name is taken there or the entry would not load. `workspace` resolves what the loader resolves
/// against it.
pub fn add(path: &Path, workspace: &Path, server: &NewServer) -> Result<(), ManageError> {
    validate_name(&server.name)?;
    let table = server_table(server);
    check_entry(&server.name, &table, path, workspace)?;
    let refused = RefCell::new(None);
    let result = super::write::update(path, |doc| {
        let servers = servers_table(doc, path)?;
        if servers.contains_key(&server.name) {
            refused.replace(Some(ManageError::Exists {
                name: server.name.clone(),
                path: path.to_path_buf(),
            }));
            return Err(ConfigError::Invalid("exists".into()));
        }
        servers.insert(&server.name, Item::Table(table.clone()));
        Ok(())
    });
    finish(result, refused)
}

/// Removes `[mcp_servers.NAME]` from the config file at `path`; the rest of the file stays as it was.
pub fn remove(path: &Path, name: &str) -> Result<(), ManageError> {
    let refused = RefCell::new(None);
    let result = super::write::update(path, |doc| {
        let removed = doc
            .get_mut("mcp_servers")
            .and_then(Item::as_table_like_mut)
            .and_then(|servers| servers.remove(name));
        if removed.is_none() {
            refused.replace(Some(ManageError::NotFound {
                name: name.to_string(),
                path: path.to_path_buf(),
                hint: String::new(),
            }));
            return Err(ConfigError::Invalid("not found".into()));
        }
        Ok(())
    });
    finish(result, refused)
}

/// Whether the TOML config file at `path` defines `[mcp_servers.NAME]` (an unreadable or absent file does not).
pub fn defines(path: &Path, name: &str) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|t| t.get("mcp_servers")?.as_table()?.get(name).cloned())
        .is_some()
}

/// What `tern mcp add` prints: where the server went and what it runs, without secret values.
pub fn describe_added(server: &NewServer, path: &Path, scope: Scope) -> String {
    let mut out = format!(
        "Added MCP server {:?} to the {} config ({}).\n",
        server.name,
        scope.label(),
        path.display()
    );
    match &server.transport {
        NewTransport::Stdio { command, args, env } => {
            let line = std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            let _ = writeln!(out, "  stdio:   {line}");
            if !env.is_empty() {
                let _ = writeln!(out, "  env:     {}", shown_pairs(env, false));
            }
        }
        NewTransport::Remote { url, kind, headers } => {
            let _ = writeln!(out, "  {kind}:{}{url}", " ".repeat(8 - kind.to_string().len()));
            if !headers.is_empty() {
                let _ = writeln!(out, "  headers: {}", shown_pairs(headers, true));
            }
        }
    }
    out.push_str("Check it with: tern mcp get ");
    out.push_str(&server.name);
    out
}

/// `tern mcp get NAME`: how the server is configured, where, and (after connecting to it alone) its state and tools.
/// `files` are the TOML config files that may define it, in load order.
pub async fn get_report(config: McpConfig, name: &str, files: &[PathBuf]) -> Result<String, ManageError> {
    let McpConfig { servers, errors, .. } = config;
    let Some(server) = servers.into_iter().find(|s| s.name == name) else {
        if let Some(error) = errors.into_iter().find(|e| e.server.as_deref() == Some(name)) {
            return Err(ManageError::Server(error));
        }
        return Err(ManageError::Unknown {
            name: name.to_string(),
            hint: "; see them all with: tern mcp list".to_string(),
        });
    };
    let mut out = String::new();
    let defined: Vec<String> = files
        .iter()
        .filter(|f| defines(f, name))
        .map(|f| f.display().to_string())
        .collect();
    if !defined.is_empty() && !defined.contains(&server.source) {
        let _ = writeln!(out, "  defined in: {}", defined.join(", "));
    }
    match &server.transport {
        crate::mcp::config::Transport::Stdio(stdio) => {
            if !stdio.env.is_empty() {
                let _ = writeln!(out, "  env:    {}", shown_pairs(&stdio.env, false));
            }
            let _ = writeln!(out, "  cwd:    {}", stdio.cwd.display());
        }
        crate::mcp::config::Transport::Http(http) | crate::mcp::config::Transport::Sse(http) => {
            if !http.headers.is_empty() {
                let _ = writeln!(out, "  headers: {}", shown_pairs(&http.headers, true));
            }
            if let Some(var) = &http.bearer_token_env {
                let _ = writeln!(out, "  bearer token from: ${var}");
            }
        }
    }
    let _ = writeln!(out, "  enabled: {}", if server.enabled { "yes" } else { "no" });
    let _ = writeln!(
        out,
        "  timeouts: start {} s, each call {} s",
        server.startup_timeout.as_secs_f64(),
        server.tool_timeout.as_secs_f64()
    );
    let single = McpConfig {
        servers: vec![server],
        ..McpConfig::default()
    };
    let status = crate::mcp::list_report(single).await;
    // The status block first (name, transport, source, state, tools), then the configuration lines.
    let (head, tools) = split_status(&status);
    Ok(format!("{head}{out}{tools}").trim_end().to_string())
}

/// Splits `list_report`'s block after its `from:` line, so the configuration can go between.
fn split_status(status: &str) -> (String, String) {
    let mut head = String::new();
    let mut rest = String::new();
    let mut in_head = true;
    for line in status.lines() {
        let target = if in_head { &mut head } else { &mut rest };
        target.push_str(line);
        target.push('\n');
        if line.trim_start().starts_with("from:") {
            in_head = false;
        }
    }
    (head, rest)
}

/// `K=V, K2=…`: values shown only when nothing about them looks secret (all of them hidden for headers, which carry
/// tokens under any name).
fn shown_pairs(pairs: &[(String, String)], hide_all: bool) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            if hide_all || looks_secret(k, v) {
                format!("{k}=(hidden)")
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A secret-looking name (the rule that keeps such variables from commands), or a long value with no spaces, which
/// is what keys look like whatever they are called. A `${VAR}` reference is not itself a secret.
fn looks_secret(key: &str, value: &str) -> bool {
    let reference = value.starts_with("${") && value.ends_with('}') && !value[2..].contains('$');
    if reference {
        return false;
    }
    tern_secrets::is_secret_name(std::ffi::OsStr::new(key))
        || (value.len() >= 16 && !value.contains(char::is_whitespace))
}

fn server_table(server: &NewServer) -> Table {
    let mut table = Table::new();
    match &server.transport {
        NewTransport::Stdio { command, args, env } => {
            table.insert("command", toml_edit::value(command.as_str()));
            if !args.is_empty() {
                table.insert("args", toml_edit::value(args.iter().collect::<toml_edit::Array>()));
            }
            if !env.is_empty() {
                table.insert("env", toml_edit::value(inline(env)));
            }
        }
        NewTransport::Remote { url, kind, headers } => {
            table.insert("type", toml_edit::value(kind.to_string()));
            table.insert("url", toml_edit::value(url.as_str()));
            if !headers.is_empty() {
                table.insert("headers", toml_edit::value(inline(headers)));
            }
        }
    }
    table
}

fn inline(pairs: &[(String, String)]) -> InlineTable {
    let mut table = InlineTable::new();
    for (k, v) in pairs {
        table.insert(k, Value::from(v.as_str()));
    }
    table
}

/// The `[mcp_servers]` table of a document, created (without a header line of its own) when absent.
fn servers_table<'a>(doc: &'a mut DocumentMut, path: &Path) -> Result<&'a mut dyn toml_edit::TableLike, ConfigError> {
    let item = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    item.as_table_like_mut()
        .ok_or_else(|| ConfigError::Invalid(format!("{}: `mcp_servers` is not a table", path.display())))
}

/// Reads the entry as the loader will, so a server tern would refuse is never written.
fn check_entry(name: &str, table: &Table, path: &Path, workspace: &Path) -> Result<(), ManageError> {
    let mut doc = DocumentMut::new();
    doc.insert(name, Item::Table(table.clone()));
    let parsed: toml::Table = doc
        .to_string()
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Invalid(e.to_string()))?;
    let entry = parsed
        .get(name)
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or_default();
    let json = serde_json::json!({ "mcpServers": { name: entry } }).to_string();
    let mut warnings = Vec::new();
    crate::mcp::config::parse_json(
        &json,
        &path.display().to_string(),
        workspace,
        &|var| crate::secrets::var(var),
        &mut warnings,
    )?;
    Ok(())
}

fn finish(result: Result<(), ConfigError>, refused: RefCell<Option<ManageError>>) -> Result<(), ManageError> {
    match (result, refused.into_inner()) {
        (Err(_), Some(why)) => Err(why),
        (Err(e), None) => Err(e.into()),
        (Ok(()), _) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(name: &str) -> NewServer {
        NewServer {
            name: name.into(),
            transport: NewTransport::Stdio {
                command: "node".into(),
                args: vec!["server.js".into(), "--port".into(), "1".into()],
                env: vec![("DEBUG".into(), "1".into()), ("API_KEY".into(), "sk-abc".into())],
            },
        }
    }

    #[test]
    fn names_are_checked() {
        for good in ["a", "my-server", "fs_2", &"x".repeat(MAX_SERVER_NAME)] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in ["", "a b", "a.b", "ü", &"x".repeat(MAX_SERVER_NAME + 1)] {
            assert!(matches!(validate_name(bad), Err(ManageError::InvalidName(_))), "{bad}");
        }
    }

    #[test]
    fn pairs_need_a_key() {
        assert_eq!(parse_pair("A=b=c", "--env").unwrap(), ("A".into(), "b=c".into()));
        assert_eq!(parse_pair("A=", "--env").unwrap(), ("A".into(), String::new()));
        assert!(parse_pair("=b", "--env").is_err());
        assert!(parse_pair("AB", "--env").is_err());
    }

    #[test]
    fn add_then_remove_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "# mine\nmode = \"ask\" # keep\n\n[mcp_servers.old]\ncommand = \"old-server\" # note\n";
        std::fs::write(&path, original).unwrap();
        add(&path, dir.path(), &stdio("new")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(original), "{text}");
        assert!(text.contains("[mcp_servers.new]\ncommand = \"node\""), "{text}");
        assert!(defines(&path, "new"));
        assert!(matches!(
            add(&path, dir.path(), &stdio("new")),
            Err(ManageError::Exists { .. })
        ));
        remove(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        assert!(matches!(remove(&path, "new"), Err(ManageError::NotFound { .. })));
    }

    #[test]
    fn an_entry_the_loader_refuses_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let bad = NewServer {
            name: "web".into(),
            transport: NewTransport::Remote {
                url: "ftp://example.com".into(),
                kind: TransportKind::Http,
                headers: Vec::new(),
            },
        };
        let err = add(&path, dir.path(), &bad).unwrap_err();
        assert!(err.to_string().contains("unsupported scheme"), "{err}");
        assert!(!path.exists());
    }

    #[test]
    fn secret_values_are_not_shown() {
        let server = stdio("s");
        let text = describe_added(&server, Path::new("/c.toml"), Scope::User);
        assert!(text.contains("DEBUG=1") && text.contains("API_KEY=(hidden)"), "{text}");
        assert!(!text.contains("sk-abc"), "{text}");
        assert!(looks_secret("OTHER", "abcdefghijklmnopqrstuvwxyz"));
        assert!(!looks_secret("API_KEY", "${API_KEY}"));
        let remote = NewServer {
            name: "r".into(),
            transport: NewTransport::Remote {
                url: "https://x.example/mcp".into(),
                kind: TransportKind::Sse,
                headers: vec![("X-Team".into(), "a".into())],
            },
        };
        let text = describe_added(&remote, Path::new("/c.toml"), Scope::Project);
        assert!(text.contains("sse:") && text.contains("X-Team=(hidden)"), "{text}");
    }
}
