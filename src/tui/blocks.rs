//! The attachment blocks a sent message ends with (`composer::attach` writes them): their markers, and the message
//! as the transcript shows it, without them.

pub(crate) const OPEN: &str = "<attachment source=\"";
pub(crate) const CLOSE: &str = "</attachment>";
pub(crate) const CLOSE_ESCAPED: &str = "<\\/attachment>";

/// A message as the transcript shows it: without the attachment blocks at its end (their chips stay in the text).
/// Text that only looks like a block is kept.
pub(crate) fn strip_blocks(message: &str) -> &str {
    let mut search = 0;
    while let Some(found) = message[search..].find(&format!("\n\n{OPEN}")) {
        let start = search + found;
        if only_blocks(&message[start..]) {
            return &message[..start];
        }
        search = start + 2;
    }
    message
}

/// True when `rest` is nothing but `\n\n<block>` repeated.
fn only_blocks(mut rest: &str) -> bool {
    while !rest.is_empty() {
        let Some(block) = rest.strip_prefix("\n\n") else {
            return false;
        };
        if !block.starts_with(OPEN) {
            return false;
        }
        // The content never holds a bare closing tag (it is escaped), so the first one ends the block.
        let Some(end) = block.find(&format!("\n{CLOSE}")) else {
            return false;
        };
        rest = &block[end + 1 + CLOSE.len()..];
    }
    true
}
