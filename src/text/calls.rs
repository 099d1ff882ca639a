//! How a tool call is named on screen, the same in `tern run`'s progress and in the TUI: the argument that says most
//! about it (a command, a path, a pattern), and the files an edit touched.

/// The argument that says most about a call: the command, path or pattern.
pub fn key_argument(args: &serde_json::Value) -> String {
    let args = call_arguments(args);
    for key in ["command", "pattern", "query", "glob", "path", "url"] {
        if let Some(v) = args.get(key).and_then(|v| v.as_str()) {
            return one_line_summary(v);
        }
    }
    files_label(&edit_paths(&args))
}

/// A call's arguments as an object: some providers send them as a JSON string.
pub fn call_arguments(args: &serde_json::Value) -> serde_json::Value {
    match args {
        serde_json::Value::String(s) => serde_json::from_str(s).unwrap_or(serde_json::Value::Null),
        other => other.clone(),
    }
}

/// The files a call's `edits` name (`apply_patch`), each once, in order.
pub fn edit_paths(args: &serde_json::Value) -> Vec<String> {
    unique_paths(
        args.get("edits")
            .and_then(|e| e.as_array())
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("path").and_then(|p| p.as_str())),
    )
}

/// Non-empty `paths`, each once, in order.
pub fn unique_paths<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for path in paths {
        if !path.is_empty() && !files.iter().any(|f| f == path) {
            files.push(path.to_string());
        }
    }
    files
}

/// "a.rs", or "a.rs, b.rs (2 files)", as a person must see it (`one_line_summary`); empty for no files.
pub fn files_label(files: &[String]) -> String {
    match files {
        [] => String::new(),
        [one] => one_line_summary(one),
        many => one_line_summary(&format!("{} ({} files)", many.join(", "), many.len())),
    }
}

/// The first line of `value` as a person must see it (invisible characters and tabs shown, as in the approval prompt:
/// `terminal_text::reveal`), at most `SUMMARY_CHARS` characters, saying what it leaves out: a command's later lines
/// run too.
fn one_line_summary(value: &str) -> String {
    const SUMMARY_CHARS: usize = 120;
    let mut lines = value.trim_end_matches('\n').split('\n');
    let first = lines.next().unwrap_or("");
    let more = lines.count();
    let (shown, _) = crate::reveal(first);
    let mut out: String = shown.chars().take(SUMMARY_CHARS).collect();
    if shown.chars().nth(SUMMARY_CHARS).is_some() {
        out.push('…');
    }
    match more {
        0 => {}
        1 => out.push_str(" (+1 more line)"),
        n => out.push_str(&format!(" (+{n} more lines)")),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_is_summed_up_by_the_files_it_edits() {
        let args = serde_json::json!({"edits": [{"path": "a.rs"}, {"path": "b.rs"}, {"path": "a.rs"}]});
        assert_eq!(key_argument(&args), "a.rs, b.rs (2 files)");
        let one = serde_json::json!({"edits": [{"path": "x\u{200b}y.rs"}]});
        assert_eq!(key_argument(&one), "x\\u{200b}y.rs");
        assert_eq!(key_argument(&serde_json::json!({"edits": []})), "");
    }

    #[test]
    fn a_calls_summary_shows_hidden_characters_and_says_what_it_leaves_out() {
        let args = serde_json::json!({"command": "echo ok # \u{200b}\tx\nrm -rf ~\n"});
        let shown = key_argument(&args);
        assert!(shown.starts_with("echo ok # \\u{200b}␉x"), "{shown}");
        assert!(shown.ends_with(" (+1 more line)"), "{shown}");
        assert_eq!(key_argument(&serde_json::json!({"path": "a.txt"})), "a.txt");
        let long = key_argument(&serde_json::json!({"pattern": "x".repeat(130)}));
        assert_eq!(long.chars().count(), 121);
        assert!(long.ends_with('…'));
    }
}
