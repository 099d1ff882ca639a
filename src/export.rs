//! `tern export ID`: a session written out as Markdown or JSON (`tern_session::export`), to stdout or a new file.
//! The session is found as `tern resume` finds it (an id or a unique prefix), or `last`: this workspace's latest.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use tern::config;
use tern::session::export::{self, Format};

#[derive(Args)]
pub(super) struct ExportArgs {
    /// The session: its id as printed when it ends (a unique prefix is enough), or `last` for this workspace's latest.
    id: String,
    /// What to write: Markdown to read, or JSON of a stable shape (see `tern_session::export`).
    #[arg(long, value_enum)]
    format: Option<ExportFormat>,
    /// Write to this new file instead of stdout (an existing file is never overwritten); `.json` means --format json.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    Markdown,
    Json,
}

/// Runs `tern export`.
pub(super) fn export(args: ExportArgs, workspace: &Path) -> anyhow::Result<i32> {
    let path = match args.id.as_str() {
        "last" => tern::session::list::latest(&config::data_dir(), &workspace.display().to_string())?,
        id => tern::session::list::find(&config::data_dir(), id)?,
    };
    register_config_keys(workspace);
    let format = match (args.format, &args.output) {
        (Some(ExportFormat::Markdown), _) => Format::Markdown,
        (Some(ExportFormat::Json), _) => Format::Json,
        (None, Some(file)) => Format::for_file(file),
        (None, None) => Format::Markdown,
    };
    let prices = tern::models::Catalog::builtin();
    let text =
        export::export(&path, format, Some(prices)).with_context(|| format!("cannot read {}", path.display()))?;
    match &args.output {
        Some(file) => {
            export::write_new(file, &text).with_context(|| format!("cannot write {}", file.display()))?;
            eprintln_clean!("tern: session exported to {}", file.display());
        }
        // Already cleaned and masked: printed as it is.
        None => print!("{text}"),
    }
    Ok(0)
}

/// A key written in a config file was never in the environment (where start-up captured the others): masked too.
fn register_config_keys(workspace: &Path) {
    if let Ok(layers) = config::load_layers(workspace, config::ConfigFile::default())
        && let Some(key) = &layers.file.api_key
    {
        tern::secrets::register(key);
    }
}
