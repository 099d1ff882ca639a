//! The full-screen frontend. It turns agent `Event`s into state (`state/`) and state into frames (`view/`, layers); it
//! never calls a provider or a tool. Nothing here blocks the render path: file walks and loads run in the background.

pub mod app;
mod blocks;
mod cell_guard;
pub mod composer;
pub mod diff;
mod export;
pub mod graphics;
mod heap;
pub mod highlight;
pub mod history;
pub mod host;
pub mod hunks;
mod key_bytes;
pub mod keymap;
pub mod layer;
mod line;
pub mod markdown;
pub mod memory;
pub mod notify;
pub mod picker;
pub mod screen;
pub mod state;
mod subagents;
pub mod switch;
pub mod terminal;
#[cfg(test)]
mod testing;
pub mod theme;
pub mod view;
pub mod wrap;

use std::path::PathBuf;
use std::sync::Arc;

pub use host::{Connection, Host, Session};
use tern_protocol::Op;

/// What the UI starts with, gathered by the host before the first frame.
pub struct Launch {
    /// The session's agent and the session on screen.
    pub connection: Connection,
    pub session: Session,
    pub host: Arc<dyn Host>,
    /// The directory the session works in.
    pub workspace: PathBuf,
    pub context_window: u64,
    /// Sent at once (the demo plays itself).
    pub first_prompt: Option<String>,
    /// The prompt files that are slash commands too.
    pub custom: tern_commands::CustomCommands,
    /// The instruction files (AGENTS.md, CLAUDE.md) the session's prompt carries, for the start screen.
    pub context_files: Vec<String>,
    /// The custom agents `spawn` offers (`.claude/agents`, `.tern/agents`), by name, for the start screen.
    pub agents: Vec<String>,
    /// Whether mouse capture starts on.
    pub mouse: bool,
    /// The session on screen is a long one still loading: its events are the last turns (from its log's tail).
    pub pending: Option<terminal::Pending>,
    /// The project's configuration waits to be trusted: the prompt opens at start.
    pub trust: Option<host::TrustOffer>,
    /// How and when to tell the user that tern needs them (`[tui] notify`, `notify_after`).
    pub notify: notify::Settings,
    /// Whether attached images show as thumbnails where the terminal can draw them (`[tui] images`).
    pub images: graphics::Setting,
}

/// Starts the full-screen UI and returns when the user quits or a signal in `signals` ends it. `/resume` and `/fork`
/// switch sessions through the host; the summary says which session was on screen when the UI ended.
pub async fn launch(launch: Launch, signals: &mut terminal::Signals) -> std::io::Result<terminal::Summary> {
    let Launch {
        connection,
        mut session,
        host,
        workspace,
        context_window,
        first_prompt,
        custom,
        context_files,
        agents,
        mouse,
        pending,
        trust,
        notify,
        images,
    } = launch;
    let (notify_tx, notify_rx) = tokio::sync::mpsc::unbounded_channel();
    let highlight_ready = notify_tx.clone();
    // Started below the repository root, the project's files are read from the root down: the start screen says so.
    let root = tern_fs::places::repository_root(&workspace);
    let project_root = (root != workspace).then(|| root.display().to_string());
    let pictures = graphics::detect(images, &|name| std::env::var(name).ok())
        .map(|protocol| app::thumbs::Pictures::new(protocol, app::thumbs::cell_size(protocol), notify_tx.clone()));
    let composer = composer::Composer::new(workspace, app::all_commands(&custom), notify_tx, host.clone());
    let keymap_path = tern_fs::places::user_config_path().and_then(|p| p.parent().map(|d| d.join("keymap.toml")));
    let (keymap, keymap_error) = match keymap::Keymap::load(keymap_path.as_deref()) {
        Ok(map) => (map, None),
        Err(e) => (keymap::Keymap::default(), Some(e.to_string())),
    };
    let mut app = app::App::new(
        connection.ops.clone(),
        composer,
        keymap,
        theme::Theme::dark(),
        context_window,
    );
    for notice in &custom.notices {
        session.warnings.push(format!("custom commands: {notice}"));
    }
    app.custom = custom;
    app.pictures = pictures;
    app.notifier = notify::Notifier::new(notify, &|name| std::env::var(name).ok());
    app.start = view::start::StartInfo {
        context_files,
        project_root,
        agents,
    };
    if let Some(error) = keymap_error {
        session.warnings.push(format!("keymap ignored: {error}"));
    }
    if pending.is_some() {
        app.state.status.prices = Some(session.prices.clone());
        app.state.preview(std::mem::take(&mut session.events));
        for warning in &session.warnings {
            app.state.notice(warning.clone(), state::Level::Warning);
        }
    } else {
        switch::show(&mut app, &mut session);
    }
    // Loading the syntax definitions takes ~14 ms and megabytes: it starts when code may first be shown (a turn, a
    // resumed transcript), frames show code plain until it ends, and its end asks for a frame that shows it
    // highlighted.
    highlight::set_notify(&highlight_ready);
    // Asked before anything else: the answer decides which configuration the session runs on.
    if let Some(offer) = trust {
        app.layers
            .push(Box::new(view::trust::TrustLayer::new(offer, host.clone())));
    }
    if let Some(prompt) = first_prompt {
        let _ = connection.ops.send(Op::UserTurn { text: prompt });
    }
    let sessions = terminal::Sessions { session, host, pending };
    terminal::run(app, connection, notify_rx, mouse, signals, sessions).await
}
