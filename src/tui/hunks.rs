//! Editing one hunk of a proposed change in the user's `$EDITOR` (`e` in the approval prompt's hunk review): the
//! hunk's new side goes to a private temp file, the editor runs on the real terminal while the TUI steps aside, and
//! what the user saved comes back. The terminal is handed over and taken back by the event loop (`terminal.rs`),
//! which also stops reading keys meanwhile, so the editor gets every key.

use std::io::Write;
use std::process::Command;

/// The editor command: `$VISUAL`, then `$EDITOR`, then `vi`. It may carry arguments (`code -w`), so it runs through
/// `sh` with the file as a separate argument (never spliced into the command text).
fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Runs the editor on `text` and returns what was saved. The caller has left the alternate screen and raw mode.
pub(crate) fn edit(text: &str) -> Result<String, String> {
    edit_with(&editor_command(), text)
}

fn edit_with(editor: &str, text: &str) -> Result<String, String> {
    let mut file = tempfile::Builder::new()
        .prefix("tern-hunk-")
        .suffix(".txt")
        .tempfile()
        .map_err(|e| format!("cannot create a temp file: {e}"))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("cannot write the temp file: {e}"))?;
    // The user's editor runs outside the sandbox: never one a command planted in a directory on PATH it may write.
    let mut shell = Command::new("sh");
    for (name, value) in tern_fs::search_path::own_lists() {
        match value {
            Some(value) => shell.env(name, value),
            None => shell.env_remove(name),
        };
    }
    let status = shell
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file.path())
        .status()
        .map_err(|e| format!("cannot start {editor}: {e}"))?;
    if !status.success() {
        return Err(format!("{editor} exited with {status}; the hunk was left as proposed"));
    }
    std::fs::read_to_string(file.path()).map_err(|e| format!("cannot read the edited hunk back: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_edits_the_text_in_place() {
        // A real program stands in for the person at the editor: sed rewrites the file in place.
        assert_eq!(edit_with("sed -i s/two/2/", "one\ntwo\n").unwrap(), "one\n2\n");
        let failed = edit_with("false", "x\n").unwrap_err();
        assert!(failed.contains("left as proposed"), "{failed}");
    }
}
