//! `/export [FILE]`: the session on screen written out as Markdown (or JSON, for a `.json` name) by the host, which
//! reads its log; the transcript says where it went, or why it did not.

use std::path::Path;

use super::app::App;
use super::host::Host;
use super::state::Level;

/// Exports the session logged at `log` to what the user typed after `/export`.
pub(crate) fn run(app: &mut App, host: &dyn Host, log: Option<&Path>, typed: &str) {
    let Some(log) = log else {
        app.state.notice(
            "this session has no log to export (it is kept in memory only)",
            Level::Error,
        );
        return;
    };
    match host.export(log, typed) {
        Ok(path) => app
            .state
            .notice(format!("session exported to {}", path.display()), Level::Info),
        Err(e) => app
            .state
            .notice(format!("cannot export the session: {e}"), Level::Error),
    }
}

#[cfg(test)]
mod tests;
