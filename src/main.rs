//! The `tern` command line: parses flags, loads settings, and starts a frontend.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use tern::config::{self, ConfigFile};
use tern::headless::{self, OutputFormat};
use tern::protocol::ApprovalMode;
use tern::provider::ProviderKind;

#[derive(Parser)]
#[command(
    name = "tern",
    version,
    about = "A fast, light, safe terminal coding assistant",
    long_about = "tern works in your repository with a language model: it reads, searches, edits and runs things \
                  through tools, asks before any command runs, and shows every edit as a diff.\n\n\
                  Configure a provider with OPENAI_API_KEY, ANTHROPIC_API_KEY, a local Ollama server, or \
                  ~/.config/tern/config.toml (see README.md).",
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: GlobalArgs,
}

#[derive(Args)]
struct GlobalArgs {
    /// The provider's wire format.
    #[arg(long, global = true, value_enum)]
    provider: Option<ProviderArg>,
    /// The model to use (e.g. gpt-4.1, claude-sonnet-4-5, qwen2.5-coder).
    #[arg(long, global = true)]
    model: Option<String>,
    /// The provider's base URL (OpenAI-compatible servers: include /v1).
    #[arg(long, global = true, value_name = "URL")]
    base_url: Option<String>,
    /// What may happen without asking.
    #[arg(long, global = true, value_enum)]
    mode: Option<ModeArg>,
    /// The workspace (default: the current directory).
    #[arg(short = 'C', long = "cd", global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,
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
    /// Every event as a JSON line.
    StreamJson,
}

#[derive(Subcommand)]
enum Command {
    /// Run one prompt without the UI and print the answer (exit codes: 0 done, 1 error, 2 usage, 130 interrupted).
    Run(RunArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The prompt; read from stdin when absent or "-".
    prompt: Option<String>,
    /// How to print the run.
    #[arg(long, value_enum, default_value = "text")]
    output_format: FormatArg,
    /// Model requests allowed in the turn before the model must summarise.
    #[arg(long, value_name = "N")]
    max_iterations: Option<u32>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("tern: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    let workspace = match &cli.global.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let workspace = std::fs::canonicalize(&workspace)
        .with_context(|| format!("workspace {} is not accessible", workspace.display()))?;
    let Command::Run(args) = cli.command;
    let prompt = match args.prompt.as_deref() {
        Some(p) if p != "-" => p.to_string(),
        _ => {
            if std::io::stdin().is_terminal() {
                eprintln!("tern: no prompt given. Usage: tern run \"PROMPT\" (or pipe the prompt on stdin)");
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
        eprintln!("tern: the prompt is empty");
        return Ok(2);
    }
    let mut flags = flag_layer(&cli.global);
    flags.max_iterations = args.max_iterations;
    let (layers, sources) = config::load_layers(&workspace, flags)?;
    let settings = config::resolve(
        layers,
        sources,
        |k| std::env::var(k).ok(),
        config::detect::default_ollama,
    )?;
    let _log = init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let format = match args.output_format {
        FormatArg::Text => OutputFormat::Text,
        FormatArg::Json => OutputFormat::Json,
        FormatArg::StreamJson => OutputFormat::StreamJson,
    };
    runtime.block_on(async move {
        let handle = tern::agent::start(&settings, &workspace)?;
        let (tx, mut interrupts) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                if tx.send(()).is_err() {
                    break;
                }
            }
        });
        let mut out = std::io::stdout();
        let mut err = std::io::stderr();
        Ok(headless::run(handle, prompt, format, &mut interrupts, &mut out, &mut err).await)
    })
}

fn flag_layer(global: &GlobalArgs) -> ConfigFile {
    ConfigFile {
        provider: global.provider.map(|p| match p {
            ProviderArg::Openai => ProviderKind::OpenAi,
            ProviderArg::Anthropic => ProviderKind::Anthropic,
        }),
        model: global.model.clone(),
        base_url: global.base_url.clone(),
        mode: global.mode.map(|m| match m {
            ModeArg::ReadOnly => ApprovalMode::ReadOnly,
            ModeArg::Ask => ApprovalMode::Ask,
            ModeArg::AutoEdit => ApprovalMode::AutoEdit,
            ModeArg::FullAuto => ApprovalMode::FullAuto,
        }),
        ..Default::default()
    }
}

/// Logs go to a file under tern's data directory (never to the terminal); `TERN_LOG` sets the filter.
fn init_logging() -> Option<()> {
    let dir = config::data_dir().join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("tern.log"))
        .ok()?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("TERN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("tern=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .try_init()
        .ok()
}
