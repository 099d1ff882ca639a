//! Switching the running UI to another session (`/resume`, `/fork`): the new session's agent is started first (a
//! failure leaves the current one running), then the old agent is shut down cleanly, its MCP servers stopped, and the
//! screen rebuilt from the new session's record. A reload (after the project was trusted) restarts the agent on the
//! same session with the configuration read again; the old agent stops first, as both would write the same log.

use super::app::App;
pub(crate) use super::host::SessionSwitch;
use super::host::{Connection, Host, Session};
use super::state::{AppState, Level};
use super::view::transcript::TranscriptView;

/// Starts the agent `switch` asks for through `host` and makes `session` the new session; returns the old session
/// with the new agent. On an error nothing changed.
pub(crate) fn start(
    switch: SessionSwitch,
    host: &dyn Host,
    session: &mut Session,
) -> Result<(Connection, Session), String> {
    let path = match switch {
        SessionSwitch::Reload => {
            let path = session
                .log_path
                .clone()
                .ok_or("this session has no log to continue from (it is kept in memory only)")?;
            let (connection, info) = host.resume(&path)?;
            let old = std::mem::replace(session, info);
            return Ok((connection, old));
        }
        SessionSwitch::Resume(path) => path,
        SessionSwitch::Fork => {
            let current = session
                .log_path
                .as_deref()
                .ok_or("this session has no log to fork (it is kept in memory only)")?;
            host.fork(current)?
        }
    };
    if session.log_path.as_deref() == Some(path.as_path()) {
        return Err("that is the session on screen".into());
    }
    let (connection, info) = host.resume(&path)?;
    let old = std::mem::replace(session, info);
    Ok((connection, old))
}

/// A fresh screen for the new session: the composer, keymap, theme, custom commands and notifications (the same
/// terminal, its focus as last told) carry over; the transcript is the session's.
pub(crate) fn rebuild(old: App, connection: &Connection, session: &mut Session) -> App {
    let App {
        composer,
        keymap,
        theme,
        context_window,
        custom,
        start,
        notifier,
        pictures,
        ..
    } = old;
    let mut app = App::new(connection.ops.clone(), composer, keymap, theme, context_window);
    app.custom = custom;
    app.start = start;
    app.notifier = notifier;
    app.pictures = pictures;
    app.state = AppState::new();
    app.transcript = TranscriptView::new();
    show(&mut app, session);
    app
}

/// The whole record of a session whose first frame showed only its last turns (`AppState::preview`): the screen is
/// rebuilt from it, and the warnings shown so far are kept.
pub(crate) fn loaded(app: &mut App, session: &mut Session, mut info: Session) {
    info.warnings.splice(0..0, std::mem::take(&mut session.warnings));
    *session = info;
    app.state = AppState::new();
    app.transcript = TranscriptView::new();
    show(app, session);
}

/// Puts a session on screen: its recorded transcript, what a resume did not restore, and the warnings.
pub(crate) fn show(app: &mut App, session: &mut Session) {
    // The events are taken, not copied: a day's session holds thousands of them.
    app.state.replay(&session.history, std::mem::take(&mut session.events));
    for notice in &session.notices {
        app.state.notice(notice.clone(), Level::Info);
    }
    for warning in &session.warnings {
        app.state.notice(warning.clone(), Level::Warning);
    }
    app.mcp_watch = Default::default();
    app.state.status.prices = Some(session.prices.clone());
}

#[cfg(test)]
mod tests;
