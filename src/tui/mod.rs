//! The full-screen frontend. It turns agent `Event`s into state (`state/`) and state into frames (`view/`, layers); it
//! never calls a provider or a tool. Nothing here blocks the render path: file walks and loads run in the background.

pub mod app;
mod cell_guard;
pub mod composer;
pub mod diff;
pub mod highlight;
pub mod history;
pub mod hunks;
pub mod keymap;
pub mod layer;
pub mod markdown;
pub mod memory;
pub mod picker;
pub mod screen;
pub mod state;
mod subagents;
pub mod switch;
pub mod terminal;
pub mod theme;
pub mod view;
pub mod wrap;

use std::path::PathBuf;

use crate::agent::AgentHandle;
use crate::protocol::Op;

/// Starts the full-screen UI on a running agent and returns when the user quits or a signal in `signals` ends it.
/// `first_prompt` is sent at once (the demo plays itself). With `sessions.start`, `/resume` and `/fork` can switch
/// sessions; `sessions.session` is then the one on screen when the UI ended. With `sessions.pending`, the session on
/// screen is a long one still loading: its events are the last turns (from its log's tail).
pub async fn launch(
    agent: AgentHandle,
    workspace: PathBuf,
    context_window: u64,
    first_prompt: Option<String>,
    mut sessions: terminal::Sessions<'_>,
    signals: &mut terminal::Signals,
) -> std::io::Result<terminal::Summary> {
    let trust = sessions.trust.take();
    let session = &mut *sessions.session;
    let (notify_tx, notify_rx) = tokio::sync::mpsc::unbounded_channel();
    let highlight_ready = notify_tx.clone();
    let planted = !crate::agent::planted::withheld(&workspace).is_empty();
    let custom = crate::commands::CustomCommands::load(&workspace, &app::builtin_names(), planted);
    let start = view::start::StartInfo::for_workspace(&workspace);
    let mouse = crate::config::tui::load(&workspace).mouse();
    let composer = composer::Composer::new(workspace, app::all_commands(&custom), notify_tx);
    let keymap_path = tern_fs::places::user_config_path().and_then(|p| p.parent().map(|d| d.join("keymap.toml")));
    let (keymap, keymap_error) = match keymap::Keymap::load(keymap_path.as_deref()) {
        Ok(map) => (map, None),
        Err(e) => (keymap::Keymap::default(), Some(e.to_string())),
    };
    let mut app = app::App::new(
        agent.ops.clone(),
        composer,
        keymap,
        theme::Theme::dark(),
        context_window,
    );
    for notice in &custom.notices {
        session.warnings.push(format!("custom commands: {notice}"));
    }
    app.custom = custom;
    app.start = start;
    if let Some(error) = keymap_error {
        session.warnings.push(format!("keymap ignored: {error}"));
    }
    if sessions.pending.is_some() {
        app.state.status.prices = Some(session.prices.clone());
        app.state.preview(std::mem::take(&mut session.events));
        for warning in &session.warnings {
            app.state.notice(warning.clone(), state::Level::Warning);
        }
    } else {
        switch::show(&mut app, session);
    }
    // Loading the syntax definitions takes ~14 ms and megabytes: it starts when code may first be shown (a turn, a
    // resumed transcript), frames show code plain until it ends, and its end asks for a frame that shows it
    // highlighted.
    highlight::set_notify(&highlight_ready);
    // Asked before anything else: the answer decides which configuration the session runs on.
    if let Some(offer) = trust {
        app.layers.push(Box::new(view::trust::TrustLayer::new(offer)));
    }
    if let Some(prompt) = first_prompt {
        let _ = agent.ops.send(Op::UserTurn { text: prompt });
    }
    terminal::run(app, agent, notify_rx, mouse, signals, sessions).await
}
