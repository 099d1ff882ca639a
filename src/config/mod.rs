//! Settings, merged in increasing priority: built-in defaults < `~/.config/tern/config.toml` < `.tern/config.toml` in
//! the project < environment < command-line flags. Every layer is a `ConfigFile` of optional fields; `Settings` is the
//! resolved result the rest of the program uses. Errors name the file and the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::agent::approval::{ApprovalMode, CommandRule};
use crate::models::{Catalog, ModelEntry};
use crate::provider::{ProviderConfig, ProviderKind, ReasoningEffort, RetryPolicy, Thinking, WireApi};

mod checkpoints;
pub mod claude;
mod compaction;
pub mod detect;
pub mod hooks;
mod lsp;
pub mod mcp_servers;
pub mod offer;
pub mod rules;
mod subagents;
pub mod trust;
pub mod tui;
mod web;
pub mod write;

pub use crate::sandbox::SandboxSettings;
pub use crate::tools::web::WebSettings;
pub use checkpoints::CheckpointsFile;
pub use compaction::Compaction;
pub use hooks::HooksFile;
pub use lsp::{LspFile, LspSettings};
pub use subagents::{SubagentSettings, SubagentsFile};
pub use tern_fs::places::{data_dir, user_config_path};
pub use web::WebFile;

/// The bounds of `max_iterations` (and of `tern run --max-iterations`, which mirrors it): a turn needs at least one
/// request, and more than ten thousand is a runaway, not a budget.
pub const MAX_ITERATIONS: std::ops::RangeInclusive<u32> = 1..=10_000;

/// Where Ollama listens when nothing else is configured.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434/v1";

/// One layer of configuration as written in a file (or built from env and flags). All fields optional.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The key itself is better kept in the environment; a config file may name the variable that holds it.
    pub api_key: Option<String>,
    pub api_key_env: Option<String>,
    pub mode: Option<ApprovalMode>,
    pub max_tokens: Option<u32>,
    pub max_iterations: Option<u32>,
    /// The model's context window in tokens; wins over the model catalog's.
    pub context_window: Option<u64>,
    /// The share of the context window at which the conversation is compacted (default 0.8).
    pub compact_at: Option<f64>,
    /// The share of the context window the most recent messages may fill and stay verbatim when compacting
    /// (default 0.3).
    pub keep_recent: Option<f64>,
    /// Anthropic extended thinking: the tokens a model that can think may think for (per model:
    /// `[models."name"] thinking_budget`). Off when unset.
    pub thinking_budget: Option<u32>,
    /// OpenAI reasoning models: "minimal", "low", "medium" or "high" (per model: `[models."name"] reasoning_effort`).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The OpenAI API to speak: "chat" (Chat Completions, the default) or "responses". Anthropic has one API and
    /// ignores it.
    pub wire_api: Option<WireApi>,
    /// Per-model catalog overrides and additions: `[models."name"] context_window = 32000` (see assets/models.toml).
    #[serde(default)]
    pub models: BTreeMap<String, ModelEntry>,
    #[serde(default)]
    pub retry: RetryFile,
    #[serde(default)]
    pub exec: ExecFile,
    #[serde(default)]
    pub approval: ApprovalFile,
    #[serde(default)]
    pub sandbox: SandboxFile,
    #[serde(default)]
    pub subagents: SubagentsFile,
    /// `[checkpoints]`: how long and how much of the work-tree snapshots is kept.
    #[serde(default)]
    pub checkpoints: CheckpointsFile,
    /// Extra directories writes may go to besides the workspace.
    #[serde(default)]
    pub write_roots: Vec<PathBuf>,
    /// MCP servers, kept raw here and parsed by the MCP client.
    #[serde(default)]
    pub mcp_servers: toml::Table,
    /// Projects whose own configuration (`.tern/config.toml`, `.mcp.json`) may loosen what tern does, each as a bare
    /// path or bound to the files the user saw (see `trust`). Read from the user's config only: a project cannot
    /// trust itself.
    #[serde(default)]
    pub trusted_projects: Vec<trust::TrustedProject>,
    /// User commands run at points of a session (`[[hooks.PreToolUse]]`, ...; see `hooks.rs`).
    #[serde(default)]
    pub hooks: HooksFile,
    /// `[web]`: the web tools (see `web`).
    #[serde(default)]
    pub web: WebFile,
    /// `[tui]`: the full-screen frontend (see `tui`).
    #[serde(default)]
    pub tui: tui::TuiFile,
    /// `[lsp]`: diagnostics from the project's language servers after edits (see `lsp`).
    #[serde(default)]
    pub lsp: LspFile,
    /// A path for `--mcp-config` given as a flag (not read from files).
    #[serde(skip)]
    pub mcp_config: Option<PathBuf>,
    /// The project may loosen settings for this run (`--trust-project`; not read from files).
    #[serde(skip)]
    pub trust_project: bool,
    /// Text added to the end of the system prompt for this run (`--append-system-prompt`; not read from files).
    #[serde(skip)]
    pub append_system_prompt: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    pub max_attempts: Option<u32>,
    pub base_delay_ms: Option<u64>,
    pub max_delay_secs: Option<u64>,
    pub idle_timeout_secs: Option<u64>,
    /// The most one request may take in all, keep-alives or not.
    pub request_timeout_secs: Option<u64>,
    pub connect_timeout_secs: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecFile {
    pub timeout_secs: Option<u64>,
    /// Environment variables passed to commands even though their names look secret.
    #[serde(default)]
    pub env_allow: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalFile {
    /// Command prefixes that run without asking, e.g. "cargo test", "git status".
    #[serde(default)]
    pub allow: Vec<String>,
    /// Command prefixes that are always refused; deny wins over allow.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// `[sandbox]`: the OS sandbox commands run in (see `crate::sandbox`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    /// Run commands in the sandbox (default true). Off, every command runs unconfined and the gate asks for each.
    pub enabled: Option<bool>,
    /// Let sandboxed commands use the network (default false).
    pub network: Option<bool>,
    /// Directories sandboxed commands may write to besides the workspace, the temp directory and `write_roots`.
    #[serde(default)]
    pub writable_roots: Vec<PathBuf>,
    /// Mount the workspace's `.git` read-only inside the sandbox (default false).
    pub git_read_only: Option<bool>,
    /// Files and directories hidden from commands and refused by the file tools, besides the credential stores hidden
    /// by default (`~/.ssh`, `~/.aws`, `~/.netrc` ...; see `crate::secrets::files::HOME_STORES`). `~/` is HOME.
    #[serde(default)]
    pub hide: Vec<PathBuf>,
    /// Default credential stores to show after all, e.g. `["~/.npmrc"]`.
    #[serde(default)]
    pub unhide: Vec<PathBuf>,
    /// Hide the workspace's secret files (`.env`, keys, files holding a known key) from commands (default true).
    pub hide_workspace_secrets: Option<bool>,
    /// Unix sockets sandboxed commands may connect to (default none: no unix sockets at all).
    #[serde(default)]
    pub allow_unix_sockets: Vec<PathBuf>,
    /// Devices under `/dev` commands may open besides the harmless ones (`/dev/kvm`, `/dev/dri`, `/dev/nvidia0`).
    #[serde(default)]
    pub devices: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config in {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// The resolved settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub provider: ProviderConfig,
    pub mode: ApprovalMode,
    pub max_iterations: u32,
    /// The model's context window: the `context_window` setting, else the catalog's, else 128,000.
    pub context_window: u64,
    /// The model's output limit for fitting the prompt: `max_tokens`, else the catalog's (at most 32,000), else
    /// 8,192.
    pub output_limit: u64,
    pub compaction: Compaction,
    pub exec_timeout: Duration,
    pub env_allow: Vec<String>,
    pub allow: Vec<CommandRule>,
    pub deny: Vec<CommandRule>,
    pub write_roots: Vec<PathBuf>,
    pub sandbox: SandboxSettings,
    pub subagents: SubagentSettings,
    /// `[checkpoints]`: how long and how much of the work-tree snapshots is kept.
    pub checkpoints: crate::agent::checkpoint::Retention,
    pub mcp_servers: toml::Table,
    /// A JSON file of `mcpServers` given with `--mcp-config`.
    pub mcp_config: Option<PathBuf>,
    /// Text added to the end of the system prompt (`--append-system-prompt`).
    pub append_system_prompt: Option<String>,
    /// The hooks of the user's config (and a trusted project's), in the order they run.
    pub hooks: Vec<crate::hooks::Hook>,
    /// Whether the project's own configuration (and its `.mcp.json` servers) counts.
    pub project_trusted: bool,
    /// What was ignored from an untrusted project, for a warning.
    pub ignored: Vec<String>,
    /// What the config asks for that tern does not do (a hook of a type tern does not run, a matcher that matches no
    /// tool), for a warning at start.
    pub warnings: Vec<String>,
    /// The first request waits for MCP servers still starting as long as their own start-up timeouts allow, not
    /// only briefly (`tern run`: a server that is not there yet is missing from the whole run).
    pub wait_for_mcp_servers: bool,
    /// Which files were read, for `--help`-style diagnostics.
    pub sources: Vec<PathBuf>,
    /// `[web]`: the web tools.
    pub web: WebSettings,
    /// `[lsp]`: the language servers' settings; `None` when turned off.
    pub lsp: Option<LspSettings>,
}

/// A config file larger than this is not read (a command could leave any file there).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The text of a config file, or `None` when there is none. Only a regular file of at most `MAX_CONFIG_BYTES` is
/// read: opened without blocking, so a FIFO a command left in the project cannot hang the next start.
fn read_config(path: &Path) -> std::io::Result<Option<String>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than a config file may have ({MAX_CONFIG_BYTES})",
            meta.len()
        )));
    }
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES).read_to_string(&mut text)?;
    Ok(Some(text))
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<Option<Self>, ConfigError> {
        let text = read_config(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        text.map(|text| Self::parse(&text, path)).transpose()
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let file: Self = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim().to_string(),
        })?;
        file.check_bounds().map_err(|message| ConfigError::Parse {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(file)
    }

    /// Numbers out of their range are an error naming the key and the range, as the flags that mirror them are.
    fn check_bounds(&self) -> Result<(), String> {
        match self.max_iterations {
            Some(n) if !MAX_ITERATIONS.contains(&n) => Err(format!(
                "max_iterations = {n} is out of range: it must be from {} to {}",
                MAX_ITERATIONS.start(),
                MAX_ITERATIONS.end()
            )),
            _ => Ok(()),
        }
    }

    /// Layer `other` over `self`: every field `other` sets wins; lists and tables are extended.
    pub fn merge(mut self, other: ConfigFile) -> Self {
        macro_rules! take {
            ($($f:ident).+) => { if other.$($f).+.is_some() { self.$($f).+ = other.$($f).+; } };
        }
        take!(provider);
        take!(model);
        take!(base_url);
        take!(api_key);
        take!(api_key_env);
        take!(mode);
        take!(max_tokens);
        take!(max_iterations);
        take!(context_window);
        take!(compact_at);
        take!(keep_recent);
        take!(thinking_budget);
        take!(reasoning_effort);
        take!(wire_api);
        for (name, entry) in other.models {
            self.models.entry(name).or_default().overlay(&entry);
        }
        take!(retry.max_attempts);
        take!(retry.base_delay_ms);
        take!(retry.max_delay_secs);
        take!(retry.idle_timeout_secs);
        take!(retry.request_timeout_secs);
        take!(retry.connect_timeout_secs);
        take!(exec.timeout_secs);
        self.exec.env_allow.extend(other.exec.env_allow);
        self.approval.allow.extend(other.approval.allow);
        self.approval.deny.extend(other.approval.deny);
        self.write_roots.extend(other.write_roots);
        take!(sandbox.enabled);
        take!(sandbox.network);
        take!(sandbox.git_read_only);
        self.sandbox.writable_roots.extend(other.sandbox.writable_roots);
        self.sandbox.hide.extend(other.sandbox.hide);
        self.sandbox.unhide.extend(other.sandbox.unhide);
        take!(sandbox.hide_workspace_secrets);
        self.sandbox.allow_unix_sockets.extend(other.sandbox.allow_unix_sockets);
        self.sandbox.devices.extend(other.sandbox.devices);
        self.subagents.merge(other.subagents);
        self.checkpoints.merge(other.checkpoints);
        self.mcp_servers.extend(other.mcp_servers);
        self.trusted_projects.extend(other.trusted_projects);
        self.hooks.extend(other.hooks);
        take!(mcp_config);
        self.trust_project |= other.trust_project;
        take!(append_system_prompt);
        self.web.merge(other.web);
        self.tui.merge(other.tui);
        self.lsp.merge(other.lsp);
        self
    }

    /// Drops what an untrusted project must not set: anything that would let a cloned repository run commands without
    /// asking, write outside it, start programs (MCP servers, hooks), or send the API key elsewhere. Returns what was dropped.
    pub fn without_loosening(mut self) -> (Self, Vec<&'static str>) {
        let mut dropped = Vec::new();
        macro_rules! drop_if {
            ($cond:expr, $name:literal, $clear:expr) => {
                if $cond {
                    dropped.push($name);
                    $clear;
                }
            };
        }
        // A mode stricter than the default only tightens (the caller keeps the stricter of it and the user's).
        drop_if!(
            self.mode
                .is_some_and(|m| m.stricter(ApprovalMode::default()) == ApprovalMode::default()),
            "mode",
            self.mode = None
        );
        drop_if!(
            !self.approval.allow.is_empty(),
            "approval.allow",
            self.approval.allow.clear()
        );
        drop_if!(!self.write_roots.is_empty(), "write_roots", self.write_roots.clear());
        drop_if!(
            !self.exec.env_allow.is_empty(),
            "exec.env_allow",
            self.exec.env_allow.clear()
        );
        drop_if!(!self.mcp_servers.is_empty(), "mcp_servers", self.mcp_servers.clear());
        drop_if!(!self.hooks.is_empty(), "hooks", self.hooks = HooksFile::default());
        // The sandbox may be tightened by a project (enabled = true, network = false, git_read_only = true), never
        // loosened.
        drop_if!(
            self.sandbox.enabled == Some(false),
            "sandbox.enabled",
            self.sandbox.enabled = None
        );
        drop_if!(
            self.sandbox.network == Some(true),
            "sandbox.network",
            self.sandbox.network = None
        );
        drop_if!(
            !self.sandbox.writable_roots.is_empty(),
            "sandbox.writable_roots",
            self.sandbox.writable_roots.clear()
        );
        drop_if!(
            !self.sandbox.allow_unix_sockets.is_empty(),
            "sandbox.allow_unix_sockets",
            self.sandbox.allow_unix_sockets.clear()
        );
        drop_if!(
            !self.sandbox.devices.is_empty(),
            "sandbox.devices",
            self.sandbox.devices.clear()
        );
        drop_if!(
            self.sandbox.git_read_only == Some(false),
            "sandbox.git_read_only",
            self.sandbox.git_read_only = None
        );
        drop_if!(
            !self.sandbox.unhide.is_empty(),
            "sandbox.unhide",
            self.sandbox.unhide.clear()
        );
        drop_if!(
            self.sandbox.hide_workspace_secrets == Some(false),
            "sandbox.hide_workspace_secrets",
            self.sandbox.hide_workspace_secrets = None
        );
        drop_if!(self.base_url.is_some(), "base_url", self.base_url = None);
        drop_if!(self.api_key.is_some(), "api_key", self.api_key = None);
        drop_if!(self.api_key_env.is_some(), "api_key_env", self.api_key_env = None);
        drop_if!(self.provider.is_some(), "provider", self.provider = None);
        drop_if!(
            self.checkpoints.is_set(),
            "checkpoints",
            self.checkpoints = CheckpointsFile::default()
        );
        self.web.drop_loosening(&mut dropped);
        self.lsp.drop_loosening(&mut dropped);
        self.trusted_projects.clear();
        (self, dropped)
    }

    /// The layer the environment gives. `TERN_*` for tern's own settings, the providers' usual variables for keys.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let mut layer = ConfigFile {
            model: get("TERN_MODEL"),
            ..Default::default()
        };
        if let Some(p) = get("TERN_PROVIDER") {
            layer.provider = Some(
                p.parse()
                    .map_err(|_| ConfigError::Invalid(format!("TERN_PROVIDER={p}: expected openai or anthropic")))?,
            );
        }
        if let Some(m) = get("TERN_MODE") {
            layer.mode = Some(
                m.parse()
                    .map_err(|_| ConfigError::Invalid(format!("TERN_MODE={m}: expected {}", MODES)))?,
            );
        }
        Ok(layer)
    }
}

/// The approval modes as a user types them.
pub const MODES: &str = tern_protocol::ApprovalMode::NAMES;

/// The merged configuration and where it came from.
#[derive(Debug, Clone)]
pub struct Layers {
    pub file: ConfigFile,
    pub sources: Vec<PathBuf>,
    /// Whether the project's own configuration may loosen settings (see `ConfigFile::without_loosening`).
    pub project_trusted: bool,
    /// The project was trusted, but its files changed since the user looked at them.
    pub trust_changed: bool,
    /// What an untrusted project tried to set and was ignored, for a warning.
    pub ignored: Vec<String>,
    /// What in Claude Code's settings files tern cannot use, for a warning.
    pub warnings: Vec<String>,
}

/// Reads the user and project files and layers env and flags on top. An untrusted project's file may only tighten
/// or tune (model, limits, deny rules); see `ConfigFile::without_loosening`.
pub fn load_layers(workspace: &Path, flags: ConfigFile) -> Result<Layers, ConfigError> {
    let mut merged = ConfigFile::default();
    let mut sources = Vec::new();
    let mut warnings = Vec::new();
    // A Claude Code user's hooks and rules, as Claude Code reads them; tern's own hooks run before them.
    let mut claude = claude::Layer::user(&mut warnings, &mut sources);
    if let Some(path) = user_config_path()
        && let Some(layer) = ConfigFile::load(&path)?
    {
        merged = merged.merge(layer);
        sources.push(path);
    }
    let standing = trust::standing(&merged.trusted_projects, workspace);
    let project_trusted = flags.trust_project || standing == trust::Standing::Trusted;
    let trust_changed = !project_trusted && standing == trust::Standing::Changed;
    // `--trust-project` vouches for the project's files as they are, instruction files a command wrote included.
    if flags.trust_project {
        crate::agent::planted::clear(workspace);
    }
    let mut ignored = Vec::new();
    if trust_changed {
        ignored.push(format!(
            "{}: the project's .tern/config.toml or .mcp.json changed since you trusted it; its settings and servers are \
             ignored until you trust it again",
            workspace.display()
        ));
    }
    // The project's own files, from the repository root down to the workspace: a deeper one wins where they differ.
    let project = Project {
        dirs: tern_fs::places::project_dirs(workspace),
        trusted: project_trusted,
    };
    merged = project.merge_configs(merged, &mut ignored, &mut sources)?;
    claude.add_project(
        &project.dirs,
        project.trusted,
        &mut warnings,
        &mut ignored,
        &mut sources,
    );
    claude.apply(&mut merged);
    let env = ConfigFile::from_env(crate::secrets::var)?;
    Ok(Layers {
        file: merged.merge(env).merge(flags),
        sources,
        project_trusted,
        trust_changed,
        ignored,
        warnings,
    })
}

/// A project's directories (repository root down to the workspace) and whether it is trusted.
struct Project {
    dirs: Vec<PathBuf>,
    trusted: bool,
}

impl Project {
    /// `merged` with each directory's `.tern/config.toml` on top, in order; an untrusted project's without what would
    /// loosen the settings (told in `ignored`).
    fn merge_configs(
        &self,
        mut merged: ConfigFile,
        ignored: &mut Vec<String>,
        sources: &mut Vec<PathBuf>,
    ) -> Result<ConfigFile, ConfigError> {
        for dir in &self.dirs {
            let project = dir.join(".tern/config.toml");
            // An untrusted project's file that cannot be read is ignored with a warning, not an error: a command may
            // have written it, and it must not keep tern from starting. The warning names no text of the file, which
            // may be a link to anything the user can read.
            let loaded = match ConfigFile::load(&project) {
                Err(e) if !self.trusted => {
                    ignored.push(format!("{} ({})", project.display(), unreadable_reason(&e)));
                    None
                }
                loaded => loaded?,
            };
            let Some(layer) = loaded else { continue };
            if self.trusted {
                merged = merged.merge(layer);
            } else {
                let (mut layer, dropped) = layer.without_loosening();
                ignored.extend(dropped.iter().map(|f| format!("{}: {f}", project.display())));
                // A deny rule tern cannot hold is left out with a word, not an error: an untrusted project's file
                // must not keep tern from starting.
                layer.approval.deny.retain(|rule| match rule.parse::<CommandRule>() {
                    Ok(_) => true,
                    Err(e) => {
                        ignored.push(format!("{}: approval.deny {rule:?} ({e})", project.display()));
                        false
                    }
                });
                // What is left of its mode is stricter than the default; it must not loosen the user's either.
                let mode = layer.mode.take();
                merged = merged.merge(layer);
                if let Some(mode) = mode {
                    merged.mode = Some(merged.mode.unwrap_or_default().stricter(mode));
                }
            }
            sources.push(project);
        }
        Ok(merged)
    }
}

/// Why a config file was not used, without quoting it.
fn unreadable_reason(error: &ConfigError) -> String {
    match error {
        ConfigError::Read { source, .. } => format!("cannot read it: {source}"),
        ConfigError::Parse { .. } | ConfigError::Invalid(_) => "it is not a valid config".to_string(),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

/// How to let a project's own configuration count, for messages.
pub const TRUST_HINT: &str =
    "trust the project with --trust-project, or add it to trusted_projects in ~/.config/tern/config.toml";

/// Loads and resolves everything: the files, the environment, the flags, and (when nothing is configured) Ollama.
pub fn settings(workspace: &Path, flags: ConfigFile) -> Result<Settings, ConfigError> {
    let layers = load_layers(workspace, flags)?;
    // Keys were taken out of the environment at start-up (`crate::secrets`): read them from the store.
    let mut settings = resolve(layers.file, layers.sources, crate::secrets::var, detect::default_ollama)?;
    // A key written in a config file was never in the environment: mask it from here on too.
    if let Some(key) = &settings.provider.api_key {
        crate::secrets::register(key);
    }
    settings.project_trusted = layers.project_trusted;
    settings.ignored = layers.ignored;
    settings.warnings.extend(layers.warnings);
    Ok(settings)
}

/// Turns merged layers into settings. `env` reads variables (the keys); `ollama_up` is asked only when no provider or
/// key is configured at all.
pub fn resolve(
    file: ConfigFile,
    sources: Vec<PathBuf>,
    env: impl Fn(&str) -> Option<String>,
    ollama: impl FnOnce() -> Option<String>,
) -> Result<Settings, ConfigError> {
    let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let openai_key = env("OPENAI_API_KEY");
    let anthropic_key = env("ANTHROPIC_API_KEY");
    let named_key = match &file.api_key_env {
        Some(var) => Some(
            env(var).ok_or_else(|| ConfigError::Invalid(format!("api_key_env names {var}, but {var} is not set")))?,
        ),
        None => None,
    };
    let explicit_key = file.api_key.clone().or(named_key);

    let kind = match file.provider {
        Some(kind) => kind,
        None if explicit_key.is_some() || file.base_url.is_some() => ProviderKind::OpenAi,
        None if openai_key.is_some() => ProviderKind::OpenAi,
        None if anthropic_key.is_some() => ProviderKind::Anthropic,
        None if env("OPENAI_BASE_URL").is_some() => ProviderKind::OpenAi,
        None if env("ANTHROPIC_BASE_URL").is_some() => ProviderKind::Anthropic,
        None => {
            let Some(model) = ollama() else {
                return Err(ConfigError::Invalid(no_provider_help()));
            };
            return finish(
                file.clone(),
                sources,
                ProviderKind::OpenAi,
                OLLAMA_BASE_URL.to_string(),
                None,
                file.model.clone().unwrap_or(model),
            );
        }
    };
    let (key, base_env, default_base, default_model) = match kind {
        ProviderKind::OpenAi => (openai_key, "OPENAI_BASE_URL", "https://api.openai.com/v1", "gpt-4.1"),
        ProviderKind::Anthropic => (
            anthropic_key,
            "ANTHROPIC_BASE_URL",
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
        ),
    };
    let base_url = file
        .base_url
        .clone()
        .or_else(|| env(base_env))
        .unwrap_or_else(|| default_base.to_string());
    let key = explicit_key.or(key);
    let model = file.model.clone().unwrap_or_else(|| default_model.to_string());
    finish(file, sources, kind, base_url, key, model)
}

/// The settings of the resolved provider `kind` at `base_url` with `api_key` and `model`, and everything else from
/// `file` with its defaults.
fn finish(
    file: ConfigFile,
    sources: Vec<PathBuf>,
    kind: ProviderKind,
    base_url: String,
    api_key: Option<String>,
    model: String,
) -> Result<Settings, ConfigError> {
    let retry = retry_policy(&file.retry);
    let models = Catalog::builtin().with_overrides(&file.models);
    let compaction = compaction::resolve(&file)?;
    let hooks = file.hooks.compile()?;
    let web = web::resolve(&file.web)?;
    let lsp = lsp::resolve(&file.lsp)?;
    let context_window = file
        .context_window
        .or_else(|| models.context_window(&model))
        .unwrap_or(128_000);
    let thinking = Thinking {
        budget: file.thinking_budget,
        effort: file.reasoning_effort,
    };
    let output_limit = output_limit(file.max_tokens, &models, &model, thinking, context_window);
    Ok(Settings {
        provider: ProviderConfig {
            kind,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            model,
            max_tokens: file.max_tokens,
            retry,
            headers: Vec::new(),
            thinking,
            wire_api: file.wire_api.unwrap_or_default(),
            // The provider knows models by the same catalog the user's settings extend.
            catalog: std::sync::Arc::new(models),
        },
        mode: file.mode.unwrap_or_default(),
        max_iterations: file.max_iterations.unwrap_or(100).max(1),
        context_window,
        output_limit,
        compaction,
        exec_timeout: Duration::from_secs(file.exec.timeout_secs.unwrap_or(120).clamp(1, 600)),
        env_allow: file.exec.env_allow.clone(),
        allow: command_rules(&file.approval.allow, "allow")?,
        deny: command_rules(&file.approval.deny, "deny")?,
        write_roots: file.write_roots,
        sandbox: sandbox_settings(file.sandbox),
        subagents: subagents::resolve(&file.subagents),
        checkpoints: file.checkpoints.retention(),
        mcp_servers: file.mcp_servers,
        mcp_config: file.mcp_config,
        append_system_prompt: file.append_system_prompt,
        hooks: hooks.hooks,
        warnings: hooks.warnings,
        wait_for_mcp_servers: false,
        project_trusted: false,
        ignored: Vec::new(),
        sources,
        web,
        lsp,
    })
}

/// The retry policy of the `[retry]` table, its defaults where a key is not set (at least one attempt).
fn retry_policy(retry: &RetryFile) -> RetryPolicy {
    let defaults = RetryPolicy::default();
    RetryPolicy {
        max_attempts: retry.max_attempts.unwrap_or(defaults.max_attempts).max(1),
        base_delay: retry
            .base_delay_ms
            .map(Duration::from_millis)
            .unwrap_or(defaults.base_delay),
        max_delay: retry
            .max_delay_secs
            .map(Duration::from_secs)
            .unwrap_or(defaults.max_delay),
        idle_timeout: retry
            .idle_timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(defaults.idle_timeout),
        request_timeout: retry
            .request_timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(defaults.request_timeout),
        connect_timeout: retry
            .connect_timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(defaults.connect_timeout),
    }
}

/// The command rules of the list `approval.<what>`, or the first that does not parse.
fn command_rules(list: &[String], what: &str) -> Result<Vec<CommandRule>, ConfigError> {
    list.iter()
        .map(|s| {
            s.parse::<CommandRule>()
                .map_err(|e| ConfigError::Invalid(format!("approval.{what}: rule {s:?}: {e}")))
        })
        .collect()
}

/// The tokens kept free for the answer and the model's thinking: the configured output limit, or the model's (at
/// most 32k), plus the thinking budget, and never more than half of `context_window`.
fn output_limit(
    max_tokens: Option<u32>,
    models: &Catalog,
    model: &str,
    thinking: Thinking,
    context_window: u64,
) -> u64 {
    // Most answers are far below a model's largest; reserving all of 64k or 128k would compact far too early.
    // Thinking comes on top of the answer (and Anthropic refuses a prompt that leaves no room for both).
    let thinking_budget = models.thinking(model, thinking).budget.map(u64::from).unwrap_or(0);
    max_tokens
        .map(u64::from)
        .or_else(|| models.max_output(model).map(|m| m.min(32_000)))
        .unwrap_or(8_192)
        .saturating_add(thinking_budget)
        .min(context_window / 2)
}

/// The OS sandbox settings of the `[sandbox]` table, with its defaults where a key is not set.
fn sandbox_settings(sandbox: SandboxFile) -> SandboxSettings {
    SandboxSettings {
        enabled: sandbox.enabled.unwrap_or(true),
        network: sandbox.network.unwrap_or(false),
        writable_roots: sandbox.writable_roots,
        git_read_only: sandbox.git_read_only.unwrap_or(false),
        hide: sandbox.hide,
        unhide: sandbox.unhide,
        hide_workspace_secrets: sandbox.hide_workspace_secrets.unwrap_or(true),
        allow_unix_sockets: sandbox.allow_unix_sockets,
        devices: sandbox.devices,
    }
}

/// What to tell a user who has configured nothing and has no local Ollama.
pub fn no_provider_help() -> String {
    let user = user_config_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "~/.config/tern/config.toml".into());
    format!(
        "no model provider is configured, and no Ollama server answers on 127.0.0.1:11434.\n\
         Configure one of:\n  \
         export OPENAI_API_KEY=sk-...          # OpenAI (or OPENAI_BASE_URL for any OpenAI-compatible server)\n  \
         export ANTHROPIC_API_KEY=sk-ant-...   # Anthropic\n  \
         ollama serve                          # a local model through Ollama\n\
         or write {user} (or .tern/config.toml in a trusted project), for example:\n  \
         provider = \"openai\"\n  base_url = \"http://127.0.0.1:8080/v1\"\n  model = \"qwen2.5-coder\"\n\
         Flags override everything: --provider, --model, --base-url.\n\
         To look around first, `tern --demo` plays a scripted session with no key or network."
    )
}

#[cfg(test)]
mod tests;
