//! Which checkpoint records a resumed session starts with. Records are for the work tree they were taken in: a
//! session resumed in another directory starts with none (reverting them would write into this one), and a notice
//! says so. A forked session (`/fork`) lives in a new session directory but keeps its records working: their saved
//! files are absolute paths into the original session's directory, and its shadow repository reads the original's
//! snapshots through git's alternates (nothing is copied; its own snapshots go to its own objects).

use std::path::Path;

use super::shadow;
use tern_session::SessionMeta;
use tern_session::checkpoint::TurnCheckpoint;

/// The records of the session `meta` logged at `log_path` that a resume in `workspace` can use, and a notice when it
/// must leave them out.
pub fn restorable(
    meta: &SessionMeta,
    records: Vec<TurnCheckpoint>,
    log_path: &Path,
    workspace: &Path,
) -> (Vec<TurnCheckpoint>, Option<String>) {
    if records.is_empty() {
        return (records, None);
    }
    if !same_dir(Path::new(&meta.workspace), workspace) {
        let notice = format!(
            "the session's checkpoints are for {}: /undo and /rewind reach only the turns from now on here",
            meta.workspace
        );
        return (Vec::new(), Some(notice));
    }
    if let (Some(from), Some(dir)) = (&meta.forked_from, log_path.parent()) {
        let original = dir.parent().map(|sessions| sessions.join(from).join("shadow.git"));
        // The id comes from the log's first line: only a plain name may lead to a sibling directory.
        let plain = Path::new(from).file_name().is_some_and(|name| name == from.as_str());
        if let Some(original) = original.filter(|o| plain && o.join("objects").is_dir())
            && let Err(e) = shadow::share_objects(&dir.join("shadow.git"), &original)
        {
            tracing::warn!(error = %e, "cannot reach the original session's snapshots from the fork");
        }
    }
    (records, None)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}
