//! The command line of `tern mcp add`, `remove` and `get`: the arguments as clap reads them, and the handlers that
//! pick the config file (user or project) and call `tern::config::mcp_servers`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{ArgGroup, Args, ValueEnum};
use tern::config::mcp_servers::{self as manage, ManageError, NewServer, NewTransport, Scope};
use tern::config::{self, ConfigFile};
use tern::mcp::TransportKind;

#[derive(Clone, Copy, ValueEnum)]
pub enum ScopeArg {
    /// The user's config.toml (~/.config/tern/config.toml).
    User,
    /// The project's .tern/config.toml.
    Project,
    /// Claude Code's private per-project scope, which tern does not have: refused with what to use instead.
    #[value(hide = true)]
    Local,
}

impl ScopeArg {
    fn scope(self) -> anyhow::Result<Scope> {
        match self {
            ScopeArg::User => Ok(Scope::User),
            ScopeArg::Project => Ok(Scope::Project),
            ScopeArg::Local => anyhow::bail!(
                "tern has no private per-project scope (Claude Code's `local`): use --scope user (your config, every \
                 project) or --scope project (this project's .tern/config.toml, shared with it)"
            ),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum TransportArg {
    /// Streamable HTTP (the default for --url).
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// A local command (the default without --url).
    Stdio,
}

#[derive(Args)]
#[command(
    group(ArgGroup::new("target").required(true).args(["url", "command"])),
    after_help = "Examples:\n  \
        tern mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .\n  \
        tern mcp add github --env GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github\n  \
        tern mcp add docs --url https://example.com/mcp\n  \
        tern mcp add legacy --url https://example.com/sse --transport sse --header 'Authorization=Bearer ${TOKEN}'\n  \
        tern mcp add --scope project lint -- ./tools/lint-mcp --stdio\n\n\
        Claude Code's spelling works too: tern mcp add --transport http -s user -H 'Authorization: Bearer ${TOKEN}' \
        sentry https://mcp.sentry.dev/mcp\n\n\
        `${VAR}` is expanded when the server starts, so a key can stay in the environment rather than in the file."
)]
pub struct AddArgs {
    /// The server's name (letters, digits, `_`, `-`); its tools are offered as mcp_NAME_TOOL.
    pub name: String,
    /// Which config to write.
    #[arg(short = 's', long, value_enum, default_value = "user")]
    pub scope: ScopeArg,
    /// A remote server's URL.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// How to talk to the server.
    #[arg(short = 't', long, value_enum)]
    pub transport: Option<TransportArg>,
    /// An HTTP header for the remote server (repeatable): `K=V`, or Claude Code's `K: V`.
    #[arg(short = 'H', long = "header", value_name = "K=V")]
    pub headers: Vec<String>,
    /// An environment variable for the local server (repeatable).
    #[arg(short = 'e', long = "env", value_name = "K=V", conflicts_with = "url")]
    pub env: Vec<String>,
    /// The local server's command and its arguments (after `--` when they take options), or, as Claude Code writes
    /// it, a remote server's URL.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  tern mcp add-json weather '{\"type\":\"stdio\",\"command\":\"weather-mcp\",\"args\":[\"--units\",\"metric\"]}'"
)]
pub struct AddJsonArgs {
    /// The server's name.
    pub name: String,
    /// The server as Claude Code's `.mcp.json` writes one: {"type": "stdio", "command", "args", "env"} or
    /// {"type": "http" | "sse", "url", "headers"}.
    pub json: String,
    /// Which config to write.
    #[arg(short = 's', long, value_enum, default_value = "user")]
    pub scope: ScopeArg,
}

#[derive(Args)]
#[command(after_help = "Examples:\n  tern mcp remove fs\n  tern mcp remove --scope project lint")]
pub struct RemoveArgs {
    /// The server's name.
    pub name: String,
    /// Which config to change (default: the one that defines it).
    #[arg(long, value_enum)]
    pub scope: Option<ScopeArg>,
}

#[derive(Args)]
#[command(after_help = "Example:\n  tern mcp get fs")]
pub struct GetArgs {
    /// The server's name.
    pub name: String,
}

fn path_of(scope: Scope, workspace: &Path) -> anyhow::Result<PathBuf> {
    match scope {
        Scope::User => config::user_config_path().context("cannot find the user's config directory (HOME is not set)"),
        Scope::Project => Ok(workspace.join(".tern/config.toml")),
    }
}

/// `tern mcp add`.
pub fn add(args: AddArgs, workspace: &Path, flags: ConfigFile) -> anyhow::Result<i32> {
    // Claude Code writes a remote server's URL where the command goes: `--transport http NAME URL`.
    let remote = matches!(args.transport, Some(TransportArg::Http | TransportArg::Sse));
    let url = match (args.url, args.command.as_slice()) {
        (Some(url), _) => Some(url),
        (None, [url]) if remote || url.starts_with("http://") || url.starts_with("https://") => Some(url.clone()),
        _ => None,
    };
    let transport = match (url, args.command.split_first()) {
        (Some(url), _) => NewTransport::Remote {
            url,
            kind: match args.transport {
                Some(TransportArg::Sse) => TransportKind::Sse,
                _ => TransportKind::Http,
            },
            headers: headers(&args.headers)?,
        },
        (None, _) if remote => anyhow::bail!("give the remote server's URL after its name (or with --url)"),
        (None, Some((command, rest))) => {
            if !args.headers.is_empty() {
                anyhow::bail!("--header is for a remote server; a local one takes --env");
            }
            NewTransport::Stdio {
                command: command.clone(),
                args: rest.to_vec(),
                env: pairs(&args.env, "--env")?,
            }
        }
        (None, None) => anyhow::bail!("give the server's command after `--`, or --url for a remote server"),
    };
    let server = NewServer {
        name: args.name,
        transport,
    };
    write_server(server, args.scope.scope()?, workspace, flags)
}

/// `tern mcp add-json NAME JSON`: a server written as Claude Code's `.mcp.json` writes one.
pub fn add_json(args: AddJsonArgs, workspace: &Path, flags: ConfigFile) -> anyhow::Result<i32> {
    let value: serde_json::Value =
        serde_json::from_str(&args.json).context("the server is not valid JSON (write it in single quotes)")?;
    let text = |key: &str| value.get(key).and_then(serde_json::Value::as_str).map(str::to_string);
    let map = |key: &str| -> Vec<(String, String)> {
        value
            .get(key)
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
            .collect()
    };
    let kind = text("type").unwrap_or_else(|| if value.get("url").is_some() { "http" } else { "stdio" }.into());
    let transport = match (kind.as_str(), text("url"), text("command")) {
        ("http" | "streamable-http" | "sse", Some(url), _) => NewTransport::Remote {
            url,
            kind: if kind == "sse" {
                TransportKind::Sse
            } else {
                TransportKind::Http
            },
            headers: map("headers"),
        },
        ("stdio", _, Some(command)) => NewTransport::Stdio {
            command,
            args: value
                .get("args")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
                .collect(),
            env: map("env"),
        },
        (other, _, _) => anyhow::bail!(
            "a server of type {other:?} needs {}",
            if other == "stdio" {
                "a \"command\""
            } else {
                "a \"url\" (types: stdio, http, sse)"
            }
        ),
    };
    let server = NewServer {
        name: args.name,
        transport,
    };
    write_server(server, args.scope.scope()?, workspace, flags)
}

/// Writes `server` into the config of `scope` and says where.
fn write_server(server: NewServer, scope: Scope, workspace: &Path, flags: ConfigFile) -> anyhow::Result<i32> {
    let path = path_of(scope, workspace)?;
    // A trusted project stays trusted after the user's own change to its config.
    let trusted = scope == Scope::Project && config::load_layers(workspace, ConfigFile::default())?.project_trusted;
    manage::add(&path, workspace, &server)?;
    if trusted && let Some(user) = config::user_config_path() {
        config::write::refresh_trust(&user, workspace)?;
    }
    println_clean!("{}", manage::describe_added(&server, &path, scope));
    if scope == Scope::Project && !config::load_layers(workspace, flags)?.project_trusted {
        eprintln_clean!(
            "tern: note: this project is not trusted, so the servers in its config do not start; {}",
            config::TRUST_HINT
        );
    }
    Ok(0)
}

/// `tern mcp remove`.
pub fn remove(args: RemoveArgs, workspace: &Path) -> anyhow::Result<i32> {
    let user = path_of(Scope::User, workspace)?;
    let project = path_of(Scope::Project, workspace)?;
    let scope = match args.scope.map(ScopeArg::scope).transpose()? {
        Some(scope) => scope,
        None => match (
            manage::defines(&user, &args.name),
            manage::defines(&project, &args.name),
        ) {
            (true, true) => {
                return Err(ManageError::Ambiguous {
                    name: args.name,
                    user,
                    project,
                }
                .into());
            }
            (false, true) => Scope::Project,
            _ => Scope::User,
        },
    };
    let path = path_of(scope, workspace)?;
    let trusted = scope == Scope::Project && config::load_layers(workspace, ConfigFile::default())?.project_trusted;
    match manage::remove(&path, &args.name) {
        Ok(()) => {
            if trusted && let Some(user) = config::user_config_path() {
                config::write::refresh_trust(&user, workspace)?;
            }
            println_clean!(
                "Removed MCP server {:?} from the {} config ({}).",
                args.name,
                scope.label(),
                path.display()
            );
            Ok(0)
        }
        Err(ManageError::NotFound { name, path, .. }) => {
            let hint = elsewhere(&name, scope, workspace);
            Err(ManageError::NotFound { name, path, hint }.into())
        }
        Err(e) => Err(e.into()),
    }
}

/// Where else a server of that name is defined, as a hint for a `remove` that found nothing.
fn elsewhere(name: &str, scope: Scope, workspace: &Path) -> String {
    let other = match scope {
        Scope::User => Scope::Project,
        Scope::Project => Scope::User,
    };
    if let Ok(path) = path_of(other, workspace)
        && manage::defines(&path, name)
    {
        return format!("; it is in the {} config: add --scope {}", other.label(), other.label());
    }
    let mcp_json = workspace.join(".mcp.json");
    let in_json = std::fs::read_to_string(&mcp_json)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("mcpServers").and_then(|s| s.get(name)).is_some());
    if in_json {
        return format!(
            "; it comes from {}, which tern does not edit: turn it off with `[mcp_servers.{name}]` `enabled = false`",
            mcp_json.display()
        );
    }
    String::new()
}

/// `tern mcp get`: the server's configuration, where it comes from, and (connecting to it alone) its state and tools.
pub fn get(args: GetArgs, workspace: &Path, flags: ConfigFile) -> anyhow::Result<i32> {
    manage::validate_name(&args.name)?;
    let layers = config::load_layers(workspace, flags)?;
    let files = vec![path_of(Scope::User, workspace)?, path_of(Scope::Project, workspace)?];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let config = tern::host::mcp_servers_of(&layers, workspace)?;
        let report = manage::get_report(config, &args.name, &files).await?;
        println_clean!("{report}");
        anyhow::Ok(0)
    })
}

fn pairs(given: &[String], what: &'static str) -> Result<Vec<(String, String)>, ManageError> {
    given.iter().map(|g| manage::parse_pair(g, what)).collect()
}

/// Headers as `K=V` or Claude Code's `K: V`.
fn headers(given: &[String]) -> Result<Vec<(String, String)>, ManageError> {
    given
        .iter()
        .map(|g| match g.split_once(':') {
            Some((name, value)) if !name.contains('=') && !name.trim().is_empty() && !name.contains(' ') => {
                Ok((name.trim().to_string(), value.trim().to_string()))
            }
            _ => manage::parse_pair(g, "--header"),
        })
        .collect()
}
