//! What the model may send to a process: text, and named keys as a terminal sends them.

/// The bytes a terminal sends for the key `name` (case and spaces do not matter: `Enter`, `ctrl+c`, `Ctrl-C`).
pub(crate) fn key_bytes(name: &str) -> Option<Vec<u8>> {
    let key: String = name
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let fixed: &[u8] = match key.as_str() {
        "enter" | "return" => b"\r",
        "tab" => b"\t",
        "esc" | "escape" => b"\x1b",
        "backspace" => b"\x7f",
        "space" => b" ",
        "up" => b"\x1b[A",
        "down" => b"\x1b[B",
        "right" => b"\x1b[C",
        "left" => b"\x1b[D",
        "home" => b"\x1b[H",
        "end" => b"\x1b[F",
        "pageup" => b"\x1b[5~",
        "pagedown" => b"\x1b[6~",
        "delete" => b"\x1b[3~",
        _ => return ctrl(&key).map(|b| vec![b]),
    };
    Some(fixed.to_vec())
}

/// `ctrl+x` / `ctrl-x` / `c-x`: the control character of a letter (Ctrl+C is 0x03), or of `[ \ ] ^ _`.
fn ctrl(key: &str) -> Option<u8> {
    let rest = key
        .strip_prefix("ctrl+")
        .or_else(|| key.strip_prefix("ctrl-"))
        .or_else(|| key.strip_prefix("c-"))?;
    match rest.as_bytes() {
        [c @ b'a'..=b'z'] => Some(c - b'a' + 1),
        [c @ (b'[' | b'\\' | b']' | b'^' | b'_')] => Some(c & 0x1f),
        _ => None,
    }
}

/// The names `key_bytes` knows, for the tool's description and its errors.
pub(crate) const KEY_NAMES: &str = "Enter, Tab, Esc, Backspace, Space, Up, Down, Left, Right, Home, End, PageUp, \
                                    PageDown, Delete, Ctrl+A … Ctrl+Z (Ctrl+C interrupts, Ctrl+D ends input, Ctrl+Z \
                                    suspends)";
