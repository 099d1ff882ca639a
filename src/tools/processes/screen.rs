//! Output as the model reads it: escape codes removed and progress lines collapsed. A line redrawn with `\r` (a
//! progress bar, a spinner) keeps only its last state; a backspace takes back the character before it; what remains
//! goes through `tern_text::ansi::strip`, so no escape sequence reaches the model.

/// `bytes` (a process's output, possibly cut mid-character at its start) as plain lines for the model.
pub(crate) fn for_model(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = tern_text::ansi::strip(&text);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&last_state(line));
    }
    out
}

/// One line as a terminal would leave it: each `\r` starts over at its beginning (later text overwrites earlier,
/// what a shorter redraw does not cover stays), each backspace moves back one character.
fn last_state(line: &str) -> String {
    if !line.contains(['\r', '\u{8}']) {
        return line.to_string();
    }
    let mut cells: Vec<char> = Vec::new();
    let mut at: usize = 0;
    for c in line.chars() {
        match c {
            '\r' => at = 0,
            '\u{8}' => at = at.saturating_sub(1),
            c => {
                if at < cells.len() {
                    cells[at] = c;
                } else {
                    cells.push(c);
                }
                at += 1;
            }
        }
    }
    cells.into_iter().collect::<String>().trim_end().to_string()
}

/// The last `n` non-empty lines of `text`.
pub(crate) fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}
