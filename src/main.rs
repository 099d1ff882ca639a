//! The `tern` command line: parses flags, loads settings, and starts a frontend.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use tern::config::{self, ConfigFile};
use tern::headless::{self, OutputFormat};
use tern::mcp::auth::{AuthCommand, LoginOptions};
use tern::protocol::ApprovalMode;
use tern::provider::ProviderKind;

/// `println!` through the terminal gate (`tern::terminal_text::clean`): every line tern prints may hold a name, a path,
/// a server's words or an error from elsewhere, which must not reach the terminal as escape sequences.
macro_rules! println_clean {
    ($($arg:tt)*) => {
        println!("{}", tern::terminal_text::clean(&format!($($arg)*)))
    };
}

/// `eprintln!` through the terminal gate.
macro_rules! eprintln_clean {
    ($($arg:tt)*) => {
        eprintln!("{}", tern::terminal_text::clean(&format!($($arg)*)))
    };
}
mod compat;
mod export;
mod interactive;
mod mcp_manage;

use interactive::interactive;

#[derive(Parser)]
#[command(
    name = "tern",
    version,
    about = "A fast, light, safe terminal coding assistant",
    long_about = "tern works in your repository with a language model: it reads, searches, edits and runs things \
                  through tools, asks before any command runs, and shows every edit as a diff.\n\n\
                  Configure a provider with OPENAI_API_KEY, ANTHROPIC_API_KEY, a local Ollama server, or \
                  ~/.config/tern/config.toml (see README.md).",
    after_help = "Run `tern` in a repository to open the full-screen UI; `tern --demo` shows it with a scripted model."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    global: GlobalArgs,
    /// Play a scripted demo (no key or network needed) in a temporary copy of a sample project.
    #[arg(long)]
    demo: bool,
    /// Continue the last session of this workspace.
    #[arg(short = 'c', long = "continue")]
    continue_session: bool,
    /// Reopen a session: pick one, or give its id (as `tern resume`; with -p, continue it with the prompt).
    #[arg(short = 'r', long = "resume", value_name = "ID", num_args = 0..=1, conflicts_with = "continue_session")]
    resume: Option<Option<String>>,
    /// Run the prompt without the UI and print the answer, as `tern run` does (Claude Code's -p).
    #[arg(short = 'p', long = "print")]
    print: bool,
    /// A first prompt for the UI to send; with -p, the prompt to run (read from stdin when absent or "-").
    #[arg(value_name = "PROMPT")]
    prompt: Option<String>,
    /// With -p: how to print the run.
    #[arg(long, value_enum, requires = "print")]
    output_format: Option<FormatArg>,
    /// With -p: model requests allowed in the turn (as `tern run --max-iterations`).
    #[arg(long = "max-turns", value_name = "N", requires = "print",
          value_parser = clap::value_parser!(u32).range(iterations_range()))]
    max_turns: Option<u32>,
}

#[derive(Args)]
struct GlobalArgs {
    /// The provider's wire format.
    #[arg(long, global = true, value_enum)]
    provider: Option<ProviderArg>,
    /// The model to use (e.g. gpt-4.1, claude-sonnet-4-5, qwen2.5-coder).
    #[arg(short = 'm', long, global = true)]
    model: Option<String>,
    /// The provider's base URL (OpenAI-compatible servers: include /v1).
    #[arg(long, global = true, value_name = "URL")]
    base_url: Option<String>,
    /// What may happen without asking.
    #[arg(long, global = true, value_enum)]
    mode: Option<ModeArg>,
    /// Claude Code's name for --mode: default (ask), acceptEdits (auto-edit), plan or dontAsk (read-only),
    /// bypassPermissions (full-auto).
    #[arg(long, global = true, value_name = "MODE", conflicts_with = "mode")]
    permission_mode: Option<String>,
    /// --mode full-auto, as Claude Code spells it (commands still run in the sandbox; deny rules still hold).
    #[arg(long, global = true, conflicts_with_all = ["mode", "permission_mode"])]
    dangerously_skip_permissions: bool,
    /// --mode full-auto, as codex spells it.
    #[arg(long, global = true, conflicts_with_all = ["mode", "permission_mode", "dangerously_skip_permissions"])]
    full_auto: bool,
    /// Claude Code's allow list: Bash(PREFIX:*) entries become allow rules, mcp__SERVER__TOOL entries MCP rules.
    #[arg(long = "allowedTools", visible_alias = "allowed-tools", global = true, value_name = "TOOLS", num_args = 1..)]
    allowed_tools: Vec<String>,
    /// Claude Code's deny list: Bash(PREFIX) entries become deny rules, mcp__SERVER__TOOL entries MCP deny rules.
    #[arg(long = "disallowedTools", visible_alias = "disallowed-tools", global = true, value_name = "TOOLS", num_args = 1..)]
    disallowed_tools: Vec<String>,
    /// Text added to the end of the system prompt for this run.
    #[arg(long, global = true, value_name = "TEXT")]
    append_system_prompt: Option<String>,
    /// The workspace (default: the current directory).
    #[arg(short = 'C', long = "cd", global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Extra MCP servers: a JSON file with an `mcpServers` object (as Claude Desktop, Cursor and Claude Code use).
    #[arg(long, global = true, value_name = "FILE")]
    mcp_config: Option<PathBuf>,
    /// Let this project's own configuration loosen settings (its .tern/config.toml mode, allow rules and base URL;
    /// its .mcp.json servers), for this run.
    #[arg(long, global = true)]
    trust_project: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProviderArg {
    Openai,
    Anthropic,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    /// Nothing that writes or runs.
    ReadOnly,
    /// Edits and commands ask.
    Ask,
    /// Edits inside the workspace apply; commands ask (default).
    AutoEdit,
    /// Nothing asks (writes outside the workspace still do).
    FullAuto,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// The answer as it streams; tool activity on stderr.
    Text,
    /// One JSON object at the end.
    Json,
    /// Claude Code's stream: system, assistant, user and result JSON lines.
    StreamJson,
    /// tern's own events, one JSON line each (they say more than stream-json).
    Events,
}

impl From<FormatArg> for OutputFormat {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Text => OutputFormat::Text,
            FormatArg::Json => OutputFormat::Json,
            FormatArg::StreamJson => OutputFormat::ClaudeStream,
            FormatArg::Events => OutputFormat::Events,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run one prompt without the UI and print the answer (exit codes: 0 done, 1 error, 2 usage, 130 interrupted,
    /// 128+N ended by signal N: 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT).
    #[command(visible_alias = "exec")]
    Run(RunArgs),
    /// Reopen a session in the UI: pick one of this workspace's sessions, or give its id.
    Resume {
        /// A session id as printed when a session ends (a unique prefix is enough).
        id: Option<String>,
    },
    /// Write a session out as Markdown (default) or JSON: prompts, answers, tool calls with their results, diffs;
    /// keys masked.
    Export(export::ExportArgs),
    /// MCP servers.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Be driven by an editor over the Agent Client Protocol (JSON-RPC on stdin and stdout).
    #[command(long_about = ACP_HELP)]
    Acp,
}

/// `tern acp --help`: what it is and how editors are told to start it.
const ACP_HELP: &str = "Be driven by an editor over the Agent Client Protocol (ACP): JSON-RPC messages, one a line, on \
stdin and stdout. The editor opens sessions (each in its project's directory, with that directory's configuration), \
sends prompts, shows the answer, the tool calls and their diffs as they stream, and answers tern's approval prompts \
(allow once, allow always, reject); it can cancel a turn, switch the approval mode and load an earlier session. The \
flags given here (--model, --mode, --provider, ...) apply to every session.\n\n\
Zed (settings.json):\n\
  \"agent_servers\": { \"tern\": { \"type\": \"custom\", \"command\": \"tern\", \"args\": [\"acp\"] } }\n\n\
Neovim (CodeCompanion, avante), Emacs (agent-shell), JetBrains and other ACP clients: give `tern acp` as the \
agent's command (CodeCompanion: an `adapters.acp` entry extending `gemini_cli` with commands.default = \
{ \"tern\", \"acp\" }).\n\n\
Keys come from tern's configuration and environment as usual (the editor passes its environment on). Nothing but \
protocol messages is written to stdout; warnings go to stderr, logs to tern's log file.";

#[derive(Subcommand)]
enum McpCommand {
    /// Connect to every configured server and list its status and tools.
    List,
    /// Log in to a remote server with OAuth in the browser; the tokens are kept in tern's data directory.
    Login {
        /// The server's name in the configuration.
        server: String,
        /// How long to wait for the browser to come back, in seconds.
        #[arg(long, value_name = "SECS", default_value_t = 300)]
        timeout: u64,
        /// A client id registered with the authorization server beforehand (when it has no dynamic registration).
        #[arg(long, value_name = "ID")]
        client_id: Option<String>,
        /// The environment variable holding that client's secret.
        #[arg(long, value_name = "VAR", requires = "client_id")]
        client_secret_env: Option<String>,
        /// A scope to ask for instead of those the server advertises (repeat for several).
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
        /// The port of the redirect to 127.0.0.1 (for a client registered with a fixed redirect URI).
        #[arg(long, value_name = "PORT")]
        callback_port: Option<u16>,
        /// The https URL of tern's client metadata document, used as the client id where the authorization server
        /// takes URL-based client ids (instead of registering).
        #[arg(long, value_name = "URL", conflicts_with = "client_id")]
        client_metadata_url: Option<String>,
        /// Log in as a machine client (OAuth client credentials), without a browser: needs --client-id and
        /// --client-secret-env or --private-key-file.
        #[arg(long, requires = "client_id")]
        client_credentials: bool,
        /// The PEM file of the private key (PKCS#8, EC P-256 or RSA) that signs the client's assertions
        /// (private_key_jwt), for --client-credentials; it is copied into the login's token file.
        #[arg(
            long,
            value_name = "PATH",
            requires = "client_credentials",
            conflicts_with = "client_secret_env"
        )]
        private_key_file: Option<PathBuf>,
        /// Log in through your organisation's identity provider (cross-app access), without a browser: its token
        /// endpoint; needs --idp-client-id, --id-token-env and --client-id.
        #[arg(long, value_name = "URL", requires_all = ["idp_client_id", "id_token_env", "client_id"],
              conflicts_with = "client_credentials")]
        idp_token_endpoint: Option<String>,
        /// tern's client id at the identity provider.
        #[arg(long, value_name = "ID", requires = "idp_token_endpoint")]
        idp_client_id: Option<String>,
        /// The environment variable holding the ID token the identity provider issued to you.
        #[arg(long, value_name = "VAR", requires = "idp_token_endpoint")]
        id_token_env: Option<String>,
    },
    /// Forget the stored login of a remote server (delete its tokens).
    Logout {
        /// The server's name in the configuration.
        server: String,
    },
    /// Add a server to the user's (or the project's) config.
    Add(mcp_manage::AddArgs),
    /// Add a server given as JSON, as Claude Code's `mcp add-json` takes it.
    AddJson(mcp_manage::AddJsonArgs),
    /// Remove a server from the user's (or the project's) config.
    Remove(mcp_manage::RemoveArgs),
    /// Show one server: its configuration, where it comes from, its state and its tools.
    Get(mcp_manage::GetArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The prompt; read from stdin when absent or "-".
    prompt: Option<String>,
    /// How to print the run.
    #[arg(long, value_enum, default_value = "text")]
    output_format: FormatArg,
    /// tern's events as JSON lines (codex's spelling of --output-format events).
    #[arg(long, conflicts_with = "output_format")]
    json: bool,
    /// Model requests allowed in the turn before the model must summarise (1 to 10000).
    #[arg(long, visible_alias = "max-turns", value_name = "N",
          value_parser = clap::value_parser!(u32).range(iterations_range()))]
    max_iterations: Option<u32>,
    /// Continue the last session of this workspace with this prompt.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    continue_session: bool,
    /// Continue the session with this id (a unique prefix is enough) with this prompt.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
}

/// `tern -p`'s flags (Claude Code's spelling) as `tern run`'s.
fn print_args(
    prompt: Option<String>,
    output_format: Option<FormatArg>,
    max_turns: Option<u32>,
    continue_session: bool,
    resume: Option<Option<String>>,
) -> RunArgs {
    RunArgs {
        prompt,
        output_format: output_format.unwrap_or(FormatArg::Text),
        json: false,
        max_iterations: max_turns,
        continue_session,
        resume: resume.flatten(),
    }
}

/// `--max-iterations`' bounds, the same as the `max_iterations` config key's.
fn iterations_range() -> std::ops::RangeInclusive<i64> {
    i64::from(*config::MAX_ITERATIONS.start())..=i64::from(*config::MAX_ITERATIONS.end())
}

fn main() -> ExitCode {
    // The sandbox launcher (`tern __sandbox ...`, see tern::sandbox) runs before logging, clap or any thread, and
    // never returns. Its environment was already scrubbed by the tern that started it.
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == tern::sandbox::LAUNCHER_ARG) {
        tern::sandbox::launcher::main(args.collect());
    }
    // SAFETY: still before the runtime or any other thread exists.
    let _ = unsafe { tern::secrets::capture() };
    // SAFETY: as above. A relative `PATH` entry would run a program the project planted, outside the sandbox.
    let _ = unsafe { tern_fs::search_path::drop_relative_entries() };
    // Whether the OS sandbox works is known before the first session needs it: the check (a forked child trying the
    // namespaces, about a millisecond) runs beside start-up instead of in front of the first frame.
    std::thread::spawn(tern::sandbox::probe);
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln_clean!("tern: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The workspace: `-C DIR`, else the current directory, with its links resolved.
fn workspace_of(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    let workspace = match &global.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    std::fs::canonicalize(&workspace).with_context(|| format!("workspace {} is not accessible", workspace.display()))
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    let workspace = workspace_of(&cli.global)?;
    if let Err(usage) = compat_layer(&cli.global) {
        eprintln_clean!("tern: {usage}");
        return Ok(2);
    }
    if cli.print {
        return headless_run(
            &cli.global,
            print_args(
                cli.prompt,
                cli.output_format,
                cli.max_turns,
                cli.continue_session,
                cli.resume,
            ),
            &workspace,
        );
    }
    let command = match (cli.command, cli.resume) {
        (None, Some(id)) => Some(Command::Resume { id }),
        (command, _) => command,
    };
    match command {
        Some(Command::Run(args)) => headless_run(&cli.global, args, &workspace),
        Some(Command::Resume { id: Some(id) }) => {
            let path = tern::host::session_by_id(&id, &workspace)?;
            interactive(&cli.global, &workspace, Some(path), false, None)
        }
        Some(Command::Resume { id: None }) => {
            let sessions = tern::session::list::list(&config::data_dir(), &workspace.display().to_string());
            if sessions.is_empty() {
                anyhow::bail!("no session to resume in {}", workspace.display());
            }
            if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
                eprintln_clean!("tern: the session picker needs a terminal; give an id: tern resume ID");
                return Ok(2);
            }
            let count: tern::tui::picker::ReadDetails =
                Box::new(|path| tern::session::list::details(path).unwrap_or_default());
            match tern::tui::picker::pick(sessions, count).context("cannot show the session picker")? {
                Some(path) => interactive(&cli.global, &workspace, Some(path), false, None),
                None => {
                    println_clean!("No session resumed.");
                    Ok(0)
                }
            }
        }
        Some(Command::Export(args)) => export::export(args, &workspace),
        Some(Command::Mcp(command)) => mcp_command(command, &cli.global, &workspace),
        Some(Command::Acp) => acp(&cli.global),
        None if cli.continue_session => {
            let path = tern::session::list::latest(&config::data_dir(), &workspace.display().to_string())?;
            interactive(&cli.global, &workspace, Some(path), false, cli.prompt)
        }
        None => interactive(&cli.global, &workspace, None, cli.demo, cli.prompt),
    }
}

/// `tern acp`: serves an editor on stdin and stdout until it closes stdin.
fn acp(global: &GlobalArgs) -> anyhow::Result<i32> {
    let _log = init_logging();
    let host = tern::acp_host::AcpHost::new(flag_layer(global));
    // Copies of stdin and stdout as files read and written on the blocking pool (they may be pipes, files or a
    // terminal); nothing else writes to stdout.
    use std::os::fd::AsFd;
    let input = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    let output = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    let runtime = runtime()?;
    runtime.block_on(async {
        let (input, output) = (tokio::fs::File::from_std(input), tokio::fs::File::from_std(output));
        tern::acp::serve(&host, input, output).await;
        host.shut_down().await;
    });
    // Commands the agents could not stop in time are dropped with the runtime, which kills their process groups.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(0)
}

/// `tern mcp …`: needs the configuration files, not a model provider.
fn mcp_command(command: McpCommand, global: &GlobalArgs, workspace: &std::path::Path) -> anyhow::Result<i32> {
    match command {
        McpCommand::List => mcp_list(global, workspace),
        McpCommand::Login {
            server,
            timeout,
            client_id,
            client_secret_env,
            scopes,
            callback_port,
            client_metadata_url,
            client_credentials,
            private_key_file,
            idp_token_endpoint,
            idp_client_id,
            id_token_env,
        } => {
            let enterprise = match (idp_token_endpoint, idp_client_id, id_token_env) {
                (Some(idp_token_endpoint), Some(idp_client_id), Some(id_token_env)) => {
                    Some(tern::mcp::auth::Enterprise {
                        idp_token_endpoint,
                        idp_client_id,
                        id_token_env,
                    })
                }
                _ => None,
            };
            let options = LoginOptions {
                timeout: std::time::Duration::from_secs(timeout),
                client_id,
                client_secret_env,
                scopes,
                callback_port,
                client_metadata_url,
                client_credentials,
                private_key_file,
                enterprise,
            };
            mcp_auth(
                global,
                workspace,
                AuthCommand::Login {
                    server,
                    options: Box::new(options),
                },
            )
        }
        McpCommand::Logout { server } => mcp_auth(global, workspace, AuthCommand::Logout { server }),
        McpCommand::Add(args) => mcp_manage::add(args, workspace, flag_layer(global)),
        McpCommand::AddJson(args) => mcp_manage::add_json(args, workspace, flag_layer(global)),
        McpCommand::Remove(args) => mcp_manage::remove(args, workspace),
        McpCommand::Get(args) => {
            let _log = init_logging();
            mcp_manage::get(args, workspace, flag_layer(global))
        }
    }
}

/// `tern mcp list`: needs the configuration files, not a model provider.
fn mcp_list(global: &GlobalArgs, workspace: &std::path::Path) -> anyhow::Result<i32> {
    let layers = config::load_layers(workspace, flag_layer(global))?;
    let _log = init_logging();
    runtime()?.block_on(async {
        let config = tern::host::mcp_servers_of(&layers, workspace)?;
        for warning in &config.warnings {
            eprintln_clean!("tern: warning: {warning}");
        }
        let report = tern::mcp::list_report(config).await;
        println_clean!("{}", report.trim_end());
        anyhow::Ok(0)
    })
}

/// `tern mcp login` and `tern mcp logout`: need the configuration files, not a model provider.
fn mcp_auth(global: &GlobalArgs, workspace: &std::path::Path, command: AuthCommand) -> anyhow::Result<i32> {
    let layers = config::load_layers(workspace, flag_layer(global))?;
    let _log = init_logging();
    runtime()?.block_on(async {
        let config = tern::host::mcp_servers_of(&layers, workspace)?;
        let tell = |line: &str| eprintln_clean!("{line}");
        match tern::mcp::auth::run_command(&config, &command, &tell).await {
            Ok(done) => {
                println_clean!("{done}");
                anyhow::Ok(0)
            }
            Err(e) => {
                eprintln_clean!("tern: {e}");
                anyhow::Ok(1)
            }
        }
    })
}

/// The async runtime: one worker thread unless `TOKIO_WORKER_THREADS` says otherwise. What runs on it waits (the
/// agent loop, tool processes' pipes, MCP servers, timers); filesystem and CPU work goes to the blocking pool
/// (`tools::run_blocking`) and model streams to their own thread. A second worker added nothing but wake-ups: tokio
/// wakes another parked worker whenever one finds work, so each batch of a streamed answer woke both (about 7% of
/// the CPU the answer cost).
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(1);
    }
    builder.enable_all().build().context("cannot start the async runtime")
}

fn settings(
    global: &GlobalArgs,
    workspace: &std::path::Path,
    max_iterations: Option<u32>,
) -> anyhow::Result<config::Settings> {
    let mut flags = flag_layer(global);
    flags.max_iterations = max_iterations;
    Ok(config::settings(workspace, flags)?)
}

fn headless_run(global: &GlobalArgs, args: RunArgs, workspace: &std::path::Path) -> anyhow::Result<i32> {
    let prompt = match args.prompt.as_deref() {
        Some(p) if p != "-" => p.to_string(),
        _ => {
            if std::io::stdin().is_terminal() {
                eprintln_clean!("tern: no prompt given. Usage: tern run \"PROMPT\" (or pipe the prompt on stdin)");
                return Ok(2);
            }
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the prompt from stdin")?;
            text
        }
    };
    if prompt.trim().is_empty() {
        eprintln_clean!("tern: the prompt is empty");
        return Ok(2);
    }
    let resume = match (&args.resume, args.continue_session) {
        (Some(id), _) => Some(tern::host::session_by_id(id, workspace)?),
        (None, true) => Some(tern::session::list::latest(
            &config::data_dir(),
            &workspace.display().to_string(),
        )?),
        (None, false) => None,
    };
    let mut settings = settings(global, workspace, args.max_iterations)?;
    settings.wait_for_mcp_servers = true;
    // `tern run "/name args"` sends what the command file `name` says, as the TUI would.
    let planted = !tern::agent::planted::withheld(workspace).is_empty();
    let trusted = settings.project_trusted;
    let (first, notices) = tern::commands::expand_for_run(
        &prompt,
        workspace,
        &tern::tui::app::builtin_names(),
        planted,
        |commands| commands.grant(trusted, config::claude::tool_rule_allowed),
    );
    for notice in notices {
        eprintln_clean!("tern: {notice}");
    }
    let _log = init_logging();
    let format = if args.json {
        OutputFormat::Events
    } else {
        args.output_format.into()
    };
    let runtime = runtime()?;
    let code = runtime.block_on(async move {
        // Before anything starts: a signal that arrives while the agent starts up is then handled, not fatal.
        let mut stops = forward_signals()?;
        let (handle, session) = tern::host::start(&settings, workspace, resume.as_deref())?;
        for notice in &session.notices {
            eprintln_clean!("tern: {notice}");
        }
        for warning in &session.warnings {
            eprintln_clean!("tern: warning: {warning}");
        }
        let mut out = std::io::stdout();
        let mut err = std::io::stderr();
        // The id `tern resume` and `tern run --resume` take, when the session has a log to resume from.
        let session_id = session.log_path.is_some().then(|| session.id.clone());
        let code = headless::run_session(
            headless_session(handle, session.prices.clone()),
            session.mcp.is_some().then_some(session.mcp_wait),
            session_id,
            first,
            format,
            &mut stops,
            &mut out,
            &mut err,
        )
        .await;
        if let Some(mcp) = &session.mcp {
            // A further signal while the servers are asked to exit kills them at once.
            tokio::select! {
                () = mcp.shutdown() => {}
                Some(_) = stops.recv() => mcp.kill_now(),
            }
        }
        anyhow::Ok(code)
    });
    // Commands the agent could not stop in time are dropped with the runtime, which kills their process groups.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}

/// What `tern run` gets of a session: where its ops go and where its events come from.
fn headless_session(
    handle: tern::agent::runner::AgentHandle,
    prices: std::sync::Arc<tern::models::Catalog>,
) -> headless::Session {
    headless::Session {
        ops: handle.ops,
        events: handle.events,
        prices: Some(prices),
    }
}

/// Turns SIGINT, SIGTERM, SIGHUP and SIGQUIT into `Stop`s for the headless run. While the handlers are installed
/// these signals no longer kill tern outright: it stops its turn, its commands and its servers first.
fn forward_signals() -> anyhow::Result<tokio::sync::mpsc::UnboundedReceiver<headless::Stop>> {
    use tokio::signal::unix::{SignalKind, signal};
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let kinds = [
        (SignalKind::interrupt(), headless::Stop::Interrupt),
        (
            SignalKind::terminate(),
            headless::Stop::Terminate { signal: libc::SIGTERM },
        ),
        (SignalKind::hangup(), headless::Stop::Terminate { signal: libc::SIGHUP }),
        (SignalKind::quit(), headless::Stop::Terminate { signal: libc::SIGQUIT }),
    ];
    for (kind, stop) in kinds {
        let mut stream = signal(kind).context("cannot install a signal handler")?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if tx.send(stop).is_err() {
                    break;
                }
            }
        });
    }
    Ok(rx)
}

/// Chains a hook that writes the panic to the log before the default one prints it to stderr (the TUI's hook restores
/// the terminal before both).
fn log_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let location = info.location().map(|l| l.to_string()).unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
        tracing::error!(%thread, %location, "panic: {message}");
        previous(info);
    }));
}

/// What the Claude Code and codex spellings among the flags set: the mode and the command rules.
#[derive(Default)]
struct CompatFlags {
    mode: Option<ApprovalMode>,
    rules: config::ApprovalFile,
}

/// The Claude Code and codex spellings among the flags, or what is wrong with them.
fn compat_layer(global: &GlobalArgs) -> Result<CompatFlags, String> {
    let mode = match &global.permission_mode {
        Some(name) => Some(compat::permission_mode(name)?),
        None if global.dangerously_skip_permissions || global.full_auto => Some(ApprovalMode::FullAuto),
        None => None,
    };
    let (allow, deny) = compat::tool_rules(&global.allowed_tools, &global.disallowed_tools)?;
    Ok(CompatFlags {
        mode,
        rules: config::ApprovalFile { allow, deny },
    })
}

fn flag_layer(global: &GlobalArgs) -> ConfigFile {
    // Checked before anything runs (`run`): an error here cannot happen.
    let compat = compat_layer(global).unwrap_or_default();
    ConfigFile {
        approval: compat.rules,
        append_system_prompt: global.append_system_prompt.clone(),
        provider: global.provider.map(|p| match p {
            ProviderArg::Openai => ProviderKind::OpenAi,
            ProviderArg::Anthropic => ProviderKind::Anthropic,
        }),
        model: global.model.clone(),
        base_url: global.base_url.clone(),
        mcp_config: global.mcp_config.clone(),
        trust_project: global.trust_project,
        mode: global
            .mode
            .map(|m| match m {
                ModeArg::ReadOnly => ApprovalMode::ReadOnly,
                ModeArg::Ask => ApprovalMode::Ask,
                ModeArg::AutoEdit => ApprovalMode::AutoEdit,
                ModeArg::FullAuto => ApprovalMode::FullAuto,
            })
            .or(compat.mode),
        ..Default::default()
    }
}

/// Logs go to a file under tern's data directory (never to the terminal), private to the user; `TERN_LOG` sets the
/// filter. A panic is logged there too, before it is printed.
fn init_logging() -> Option<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    log_panics();
    let dir = config::data_dir().join("logs");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(dir.join("tern.log"))
        .ok()?;
    let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    let filter = tracing_subscriber::EnvFilter::try_from_env("TERN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("tern=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::sync::Mutex::new(tern::secrets::MaskingWriter::new(file)))
        .with_ansi(false)
        .try_init()
        .ok()
}
