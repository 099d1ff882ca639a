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
}

impl From<ScopeArg> for Scope {
    fn from(scope: ScopeArg) -> Self {
        match scope {
            ScopeArg::User => Scope::User,
            ScopeArg::Project => Scope::Project,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum TransportArg {
    /// Streamable HTTP (the default for --url).
    Http,
    /// Legacy HTTP+SSE.
    Sse,
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
        `${VAR}` is expanded when the server starts, so a key can stay in the environment rather than in the file."
)]
pub struct AddArgs {
    /// The server's name (letters, digits, `_`, `-`); its tools are offered as mcp_NAME_TOOL.
    pub name: String,
    /// Which config to write.
    #[arg(long, value_enum, default_value = "user")]
    pub scope: ScopeArg,
    /// A remote server's URL.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// How to talk to the remote server.
    #[arg(long, value_enum, requires = "url")]
    pub transport: Option<TransportArg>,
    /// An HTTP header for the remote server (repeatable).
    #[arg(long = "header", value_name = "K=V", requires = "url")]
    pub headers: Vec<String>,
    /// An environment variable for the local server (repeatable).
    #[arg(long = "env", value_name = "K=V", conflicts_with = "url")]
    pub env: Vec<String>,
    /// The local server's command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
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
    let transport = match (args.url, args.command.split_first()) {
        (Some(url), _) => NewTransport::Remote {
            url,
            kind: match args.transport {
                Some(TransportArg::Sse) => TransportKind::Sse,
                _ => TransportKind::Http,
            },
            headers: pairs(&args.headers, "--header")?,
        },
        (None, Some((command, rest))) => NewTransport::Stdio {
            command: command.clone(),
            args: rest.to_vec(),
            env: pairs(&args.env, "--env")?,
        },
        (None, None) => anyhow::bail!("give the server's command after `--`, or --url for a remote server"),
    };
    let server = NewServer {
        name: args.name,
        transport,
    };
    let scope = Scope::from(args.scope);
    let path = path_of(scope, workspace)?;
    manage::add(&path, workspace, &server)?;
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
    let scope = match args.scope.map(Scope::from) {
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
    match manage::remove(&path, &args.name) {
        Ok(()) => {
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
